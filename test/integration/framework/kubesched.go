package framework

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Scheduler is a kubesched process.
type Scheduler struct {
	t        testing.TB
	cmd      *exec.Cmd
	done     chan struct{}
	exitErr  error
	LogPath  string
	HTTPAddr string
}

// SchedulerConfig is a KubeSchedulerConfiguration for tests: a short
// lease, so hand-over tests are quick, and the given schedulerName.
func SchedulerConfig(t testing.TB, schedulerName string, leaderElect bool) string {
	t.Helper()
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: %v
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
  resourceNamespace: default
  resourceName: kubesched-test
clientConnection:
  qps: 100
  burst: 200
profiles:
- schedulerName: %s
`, leaderElect, schedulerName)
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// StartScheduler runs kubesched --config cfg --kubeconfig cp.Kubeconfig;
// it is stopped when the test ends.
func StartScheduler(t testing.TB, cp *ControlPlane, cfg string, extraArgs ...string) *Scheduler {
	t.Helper()
	return StartSchedulerArgs(t, cp, append([]string{"--config", cfg, "--kubeconfig", cp.Kubeconfig}, extraArgs...)...)
}

// StartSchedulerArgs runs kubesched with exactly these arguments, plus
// the serving flags the harness needs.
func StartSchedulerArgs(t testing.TB, cp *ControlPlane, extraArgs ...string) *Scheduler {
	t.Helper()
	return startScheduler(t, cp, cp.bins.Kubesched, extraArgs...)
}

// StartSchedulerNoRace is StartSchedulerArgs with kubesched built without
// the race detector (BuildNoRace), for benchmarks.
func StartSchedulerNoRace(t testing.TB, cp *ControlPlane, extraArgs ...string) *Scheduler {
	t.Helper()
	return StartSchedulerNoRaceEnv(t, cp, nil, extraArgs...)
}

// StartSchedulerNoRaceEnv is StartSchedulerNoRace with env added to the
// process's environment (benchmarks compare runtime settings with it).
func StartSchedulerNoRaceEnv(t testing.TB, cp *ControlPlane, env []string, extraArgs ...string) *Scheduler {
	t.Helper()
	if err := BuildNoRace(); err != nil {
		t.Fatal(err)
	}
	return startSchedulerEnv(t, cp, cp.bins.KubeschedNoRace, env, extraArgs...)
}

func startScheduler(t testing.TB, cp *ControlPlane, binary string, extraArgs ...string) *Scheduler {
	t.Helper()
	return startSchedulerEnv(t, cp, binary, nil, extraArgs...)
}

func startSchedulerEnv(t testing.TB, cp *ControlPlane, binary string, env []string, extraArgs ...string) *Scheduler {
	t.Helper()
	s := &Scheduler{t: t, done: make(chan struct{}), HTTPAddr: fmt.Sprintf("127.0.0.1:%d", FreePort(t))}
	s.LogPath = filepath.Join(t.TempDir(), "kubesched.log")
	log, err := os.Create(s.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	verbosity := "2"
	if v := os.Getenv("KUBESCHED_TEST_VERBOSITY"); v != "" {
		verbosity = v
	}
	args := append([]string{"--secure-port", "0", "--http-address", s.HTTPAddr, "-v", verbosity}, extraArgs...)
	s.cmd = exec.Command(binary, args...)
	if len(env) > 0 {
		s.cmd.Env = append(os.Environ(), env...)
	}
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.exitErr = s.cmd.Wait()
		log.Close()
		close(s.done)
	}()
	t.Cleanup(func() {
		s.Kill()
		if dir := os.Getenv("KUBESCHED_KEEP_LOGS"); dir != "" {
			if b, err := os.ReadFile(s.LogPath); err == nil {
				_ = os.WriteFile(filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+".log"), b, 0o644)
			}
		}
		if b, err := os.ReadFile(s.LogPath); err == nil && strings.Contains(string(b), "WARNING: DATA RACE") {
			t.Errorf("kubesched reported a data race; log %s", s.LogPath)
		}
		if t.Failed() {
			t.Logf("kubesched log %s:\n%s", s.LogPath, tail(s.LogPath, 60))
		}
	})
	return s
}

// readLog returns a log file's text, or the error reading it.
func readLog(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func tail(path string, lines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// Terminate sends SIGTERM and waits for the exit; it returns the exit code.
func (s *Scheduler) Terminate(timeout time.Duration) (int, error) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return s.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		return -1, fmt.Errorf("kubesched did not exit within %s of SIGTERM", timeout)
	}
}

// Signal sends a signal to the process.
func (s *Scheduler) Signal(sig os.Signal) { _ = s.cmd.Process.Signal(sig) }

// Kill sends SIGKILL and waits.
func (s *Scheduler) Kill() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Exited reports whether the process has exited.
func (s *Scheduler) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Get fetches a path from the scheduler's plain HTTP endpoint.
func (s *Scheduler) Get(path string) (int, string, error) {
	return s.GetWithin(path, 2*time.Second)
}

// GetWithin is Get with another timeout.
func (s *Scheduler) GetWithin(path string, timeout time.Duration) (int, string, error) {
	client := &http.Client{Timeout: timeout}
	resp, err := client.Get("http://" + s.HTTPAddr + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Eventually polls cond every 100ms until it returns true or timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var lastErr error
	for {
		ok, err := cond()
		if ok {
			return
		}
		lastErr = err
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
