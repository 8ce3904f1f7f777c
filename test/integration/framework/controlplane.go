package framework

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ControlPlane is etcd plus kube-apiserver on loopback.
type ControlPlane struct {
	t       testing.TB
	bins    Binaries
	dir     string
	etcd    *exec.Cmd
	api     *exec.Cmd
	apiPort int
	etcdURL string
	token   string
	// apiArgs are extra kube-apiserver flags (StartControlPlaneWith).
	apiArgs []string
	// Kubeconfig is a kubeconfig file for the admin user.
	Kubeconfig string
	// Client is an admin clientset.
	Client kubernetes.Interface
}

// FreePort asks the kernel for a free loopback port.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// StartControlPlane builds (once) and starts etcd and kube-apiserver; they
// stop when the test ends.
func StartControlPlane(t testing.TB) *ControlPlane {
	t.Helper()
	return StartControlPlaneWith(t)
}

// StartControlPlaneWith is StartControlPlane with extra kube-apiserver
// flags (e.g. --runtime-config and --feature-gates for an API that is off
// by default).
func StartControlPlaneWith(t testing.TB, apiArgs ...string) *ControlPlane {
	t.Helper()
	bins, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	cp := &ControlPlane{t: t, bins: bins, dir: t.TempDir(), token: "admin-token-" + strconv.FormatInt(time.Now().UnixNano(), 36), apiArgs: apiArgs}
	cp.startEtcd()
	cp.writeFiles()
	cp.apiPort = FreePort(t)
	cp.StartAPIServer()
	t.Cleanup(cp.Stop)
	return cp
}

func (cp *ControlPlane) logFile(name string) *os.File {
	f, err := os.Create(filepath.Join(cp.dir, name+".log"))
	if err != nil {
		cp.t.Fatal(err)
	}
	return f
}

func (cp *ControlPlane) startEtcd() {
	client, peer := FreePort(cp.t), FreePort(cp.t)
	cp.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", client)
	log := cp.logFile("etcd")
	cmd := exec.Command(cp.bins.Etcd,
		"--data-dir", filepath.Join(cp.dir, "etcd-data"),
		"--listen-client-urls", cp.etcdURL, "--advertise-client-urls", cp.etcdURL,
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peer),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", peer),
		"--log-level", "warn", "--quota-backend-bytes", "1073741824")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cp.t.Fatal(err)
	}
	cp.etcd = cmd
	cp.waitHTTP(cp.etcdURL+"/health", nil, 30*time.Second, "etcd")
}

func (cp *ControlPlane) writeFiles() {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		cp.t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		cp.t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	for name, data := range map[string][]byte{
		"sa.key":     keyPEM,
		"sa.pub":     pubPEM,
		"tokens.csv": []byte(cp.token + ",admin,admin,system:masters\n"),
	} {
		if err := os.WriteFile(filepath.Join(cp.dir, name), data, 0o600); err != nil {
			cp.t.Fatal(err)
		}
	}
}

// StartAPIServer starts kube-apiserver (again, after StopAPIServer) on the
// same port and etcd, and waits for /readyz.
func (cp *ControlPlane) StartAPIServer() {
	log := cp.logFile("kube-apiserver-" + strconv.FormatInt(time.Now().UnixNano(), 36))
	args := []string{"--etcd-servers", cp.etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(cp.apiPort),
		"--endpoint-reconciler-type", "none",
		"--cert-dir", filepath.Join(cp.dir, "apiserver-certs"),
		"--token-auth-file", filepath.Join(cp.dir, "tokens.csv"),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", filepath.Join(cp.dir, "sa.pub"),
		"--service-account-signing-key-file", filepath.Join(cp.dir, "sa.key"),
		"--service-cluster-ip-range", "10.0.0.0/24",
		// Without kube-controller-manager nothing removes the not-ready
		// taint or creates default service accounts; as upstream's own
		// scheduler benchmarks do, those admission plugins are off.
		"--disable-admission-plugins", "ServiceAccount,TaintNodesByCondition,Priority",
		"--allow-privileged",
		"--v", "1"}
	cmd := exec.Command(cp.bins.APIServer, append(args, cp.apiArgs...)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cp.t.Fatal(err)
	}
	cp.api = cmd
	cp.waitHTTP(cp.URL()+"/readyz", &tls.Config{InsecureSkipVerify: true}, 120*time.Second, "kube-apiserver")
	if cp.Kubeconfig == "" {
		cp.Kubeconfig = cp.KubeconfigForToken("admin", cp.token)
		client, err := kubernetes.NewForConfig(cp.RestConfig())
		if err != nil {
			cp.t.Fatal(err)
		}
		cp.Client = client
	}
}

// KubeconfigForToken writes a kubeconfig that authenticates with token.
func (cp *ControlPlane) KubeconfigForToken(name, token string) string {
	path := filepath.Join(cp.dir, "kubeconfig-"+name)
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
`, cp.URL(), token)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		cp.t.Fatal(err)
	}
	return path
}

// AdminToken is the bearer token of the admin user (system:masters).
func (cp *ControlPlane) AdminToken() string { return cp.token }

// URL is the API server's address.
func (cp *ControlPlane) URL() string { return fmt.Sprintf("https://127.0.0.1:%d", cp.apiPort) }

// RestConfig is an admin client configuration.
func (cp *ControlPlane) RestConfig() *rest.Config {
	return &rest.Config{Host: cp.URL(), BearerToken: cp.token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 200, Burst: 400}
}

// StopAPIServer stops kube-apiserver (etcd keeps the data).
func (cp *ControlPlane) StopAPIServer() {
	stopProcess(cp.api)
	cp.api = nil
}

// Stop stops everything.
func (cp *ControlPlane) Stop() {
	stopProcess(cp.api)
	stopProcess(cp.etcd)
	if cp.t.Failed() {
		cp.t.Logf("control plane logs are in %s", cp.dir)
	}
}

func stopProcess(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func (cp *ControlPlane) waitHTTP(url string, tlsCfg *tls.Config, timeout time.Duration, what string) {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if tlsCfg != nil {
			req.Header.Set("Authorization", "Bearer "+cp.token)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			cp.t.Fatalf("%s did not become ready at %s within %s (last error %v); logs in %s", what, url, timeout, err, cp.dir)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
