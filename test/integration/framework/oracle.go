package framework

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Implementation names a scheduler under test: upstream's kube-scheduler
// (the oracle) or kubesched. A differential scenario runs once with each.
type Implementation string

// The two implementations.
const (
	Upstream  Implementation = "kube-scheduler"
	Kubesched Implementation = "kubesched"
)

// Running is a scheduler process of either implementation.
type Running interface {
	// Metrics returns the Prometheus text of /metrics.
	Metrics() (string, error)
	// Log returns the tail of its log.
	Log() string
	// WholeLog returns its log so far.
	WholeLog() string
}

// StartImplementation starts impl against cp with the default profile
// (schedulerName default-scheduler) and no leader election; kubeconfig,
// when set, is the one the scheduler talks to the API with (a proxy).
func StartImplementation(t testing.TB, cp *ControlPlane, impl Implementation, kubeconfig string) Running {
	t.Helper()
	return StartImplementationWith(t, cp, impl, kubeconfig, "")
}

// StartImplementationWith is StartImplementation with extra top-level
// KubeSchedulerConfiguration fields (YAML, e.g. "extenders: ...") in both
// schedulers' configuration.
func StartImplementationWith(t testing.TB, cp *ControlPlane, impl Implementation, kubeconfig, extra string) Running {
	t.Helper()
	return StartImplementationFlags(t, cp, impl, kubeconfig, extra)
}

// StartImplementationFlags is StartImplementationWith with extra command
// line flags for both schedulers (--feature-gates=...).
func StartImplementationFlags(t testing.TB, cp *ControlPlane, impl Implementation, kubeconfig, extra string, flags ...string) Running {
	t.Helper()
	if kubeconfig == "" {
		kubeconfig = cp.Kubeconfig
	}
	if impl == Upstream {
		return StartKubeSchedulerWith(t, cp, kubeSchedulerConfig(kubeconfig)+extra, "2", flags...)
	}
	cfg := SchedulerConfig(t, "default-scheduler", false)
	if extra != "" {
		b, err := os.ReadFile(cfg)
		if err == nil {
			err = os.WriteFile(cfg, append(b, extra...), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	s := StartScheduler(t, cp, cfg, append([]string{"--kubeconfig", kubeconfig}, flags...)...)
	// As for kube-scheduler: the script starts once the scheduler is ready
	// (its informers synced), so both see the same events in the same order.
	Eventually(t, 60*time.Second, "kubesched /readyz", func() (bool, error) {
		code, _, err := s.Get("/readyz")
		return code == http.StatusOK, err
	})
	return s
}

// Metrics implements Running.
func (s *Scheduler) Metrics() (string, error) {
	code, body, err := s.Get("/metrics")
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("GET /metrics: %d", code)
	}
	return body, err
}

// Log implements Running.
func (s *Scheduler) Log() string { return tail(s.LogPath, 80) }

// WholeLog implements Running.
func (s *Scheduler) WholeLog() string { return readLog(s.LogPath) }

// KubeScheduler is upstream's kube-scheduler v1.37 process.
type KubeScheduler struct {
	cmd     *exec.Cmd
	done    chan struct{}
	port    int
	token   string
	logPath string
}

// StartKubeScheduler runs upstream's kube-scheduler with a configuration
// like kubesched's in these tests: default profile, no leader election,
// the admin kubeconfig, metrics on its secure port. It stops when the test
// ends.
func StartKubeScheduler(t testing.TB, cp *ControlPlane, kubeconfig string) *KubeScheduler {
	t.Helper()
	return StartKubeSchedulerWith(t, cp, kubeSchedulerConfig(kubeconfig), "2")
}

func kubeSchedulerConfig(kubeconfig string) string {
	return fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: %s
  qps: 100
  burst: 200
`, kubeconfig)
}

// StartKubeSchedulerWith runs kube-scheduler with this configuration (its
// clientConnection.kubeconfig set) and log verbosity.
func StartKubeSchedulerWith(t testing.TB, cp *ControlPlane, config, verbosity string, flags ...string) *KubeScheduler {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	k := &KubeScheduler{done: make(chan struct{}), port: FreePort(t), token: cp.token, logPath: filepath.Join(dir, "kube-scheduler.log")}
	log, err := os.Create(k.logPath)
	if err != nil {
		t.Fatal(err)
	}
	k.cmd = exec.Command(cp.bins.KubeScheduler, append([]string{
		"--config", cfg,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(k.port),
		"--cert-dir", filepath.Join(dir, "certs"),
		"--authentication-kubeconfig", cp.Kubeconfig, "--authorization-kubeconfig", cp.Kubeconfig,
		"--authorization-always-allow-paths", "/healthz,/readyz,/livez,/metrics",
		"-v", verbosity}, flags...)...)
	k.cmd.Stdout, k.cmd.Stderr = log, log
	if err := k.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = k.cmd.Wait()
		log.Close()
		close(k.done)
	}()
	t.Cleanup(func() {
		stopProcess(k.cmd)
		<-k.done
		if t.Failed() {
			t.Logf("kube-scheduler log %s:\n%s", k.logPath, tail(k.logPath, 60))
		}
	})
	Eventually(t, 60*time.Second, "kube-scheduler /readyz", func() (bool, error) {
		code, _, err := k.get("/readyz")
		return code == http.StatusOK, err
	})
	return k
}

func (k *KubeScheduler) get(path string) (int, string, error) {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", k.port, path), nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+k.token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Metrics implements Running.
func (k *KubeScheduler) Metrics() (string, error) {
	code, body, err := k.get("/metrics")
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("GET /metrics: %d", code)
	}
	return body, err
}

// Log implements Running.
func (k *KubeScheduler) Log() string { return tail(k.logPath, 80) }

// WholeLog implements Running.
func (k *KubeScheduler) WholeLog() string { return readLog(k.logPath) }

// MetricSum adds up the samples of a metric whose labels contain every
// given name="value" pair, from Prometheus text.
func MetricSum(text, name string, labels ...string) float64 {
	var sum float64
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name) || strings.HasPrefix(line, "#") {
			continue
		}
		rest := line[len(name):]
		if rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue // a longer name with this prefix
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		f := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// PID is the kube-scheduler process's.
func (k *KubeScheduler) PID() int { return k.cmd.Process.Pid }

// PID is the kubesched process's.
func (s *Scheduler) PID() int { return s.cmd.Process.Pid }

// APIServerPID is kube-apiserver's process id.
func (cp *ControlPlane) APIServerPID() int { return cp.api.Process.Pid }

// EtcdPID is etcd's process id.
func (cp *ControlPlane) EtcdPID() int { return cp.etcd.Process.Pid }

// ProcessCPU is the user plus system CPU time a live process has used so
// far (from /proc/PID/stat, in clock ticks of 10 ms).
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
