package framework

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// StartControllerManager runs upstream's kube-controller-manager against
// cp with only the given controllers (a --controllers list), without
// leader election or a serving port, until the test ends; extra are more
// flags (e.g. client rate limits).
func StartControllerManager(t testing.TB, cp *ControlPlane, controllers string, extra ...string) {
	t.Helper()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "kube-controller-manager.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{
		"--kubeconfig", cp.Kubeconfig,
		"--controllers", controllers,
		"--leader-elect=false",
		"--secure-port=0",
		"-v", "2"}, extra...)
	cmd := exec.Command(cp.bins.KubeControllerManager, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(done)
	}()
	t.Cleanup(func() {
		stopProcess(cmd)
		<-done
		if t.Failed() {
			t.Logf("kube-controller-manager log %s:\n%s", logPath, tail(logPath, 60))
		}
	})
}
