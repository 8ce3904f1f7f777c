// Package framework is the integration harness: it builds etcd,
// kube-apiserver and kubesched from Go modules into a cache folder, starts
// a control plane on loopback with free ports, generated certificates and
// service-account keys, and runs kubesched processes against it.
package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// Binaries are the built programs.
type Binaries struct {
	Etcd, APIServer, Kubesched string
	// KubeschedNoRace is kubesched built without the race detector, for
	// the benchmarks (built on first use by BuildNoRace).
	KubeschedNoRace string
	// KubeScheduler is upstream's, the oracle of the differential tests.
	KubeScheduler string
	// KubeControllerManager is upstream's, the oracle of the simulator's
	// workload expansion.
	KubeControllerManager string
}

var (
	buildOnce sync.Once
	built     Binaries
	buildErr  error
)

// CacheDir is where binaries are kept between runs:
// $KUBESCHED_INTEGRATION_CACHE, else the user cache dir.
func CacheDir() string {
	if d := os.Getenv("KUBESCHED_INTEGRATION_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "kubesched-integration")
}

// moduleDir is test/integration, where this package's go.mod lives.
func moduleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// Build builds the three programs once per test binary. The Go build cache
// makes a rebuild with nothing changed take seconds.
func Build() (Binaries, error) {
	buildOnce.Do(func() {
		dir := CacheDir()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		built = Binaries{
			Etcd:            filepath.Join(dir, "etcd"),
			APIServer:       filepath.Join(dir, "kube-apiserver"),
			Kubesched:       filepath.Join(dir, "kubesched"),
			KubeschedNoRace: filepath.Join(dir, "kubesched-norace"),
			KubeScheduler:   filepath.Join(dir, "kube-scheduler"),

			KubeControllerManager: filepath.Join(dir, "kube-controller-manager"),
		}
		for _, b := range []struct {
			out, pkg string
			flags    []string
		}{
			{built.Etcd, "./cmd/etcd", nil},
			{built.APIServer, "k8s.io/kubernetes/cmd/kube-apiserver", nil},
			{built.KubeScheduler, "k8s.io/kubernetes/cmd/kube-scheduler", nil},
			{built.KubeControllerManager, "k8s.io/kubernetes/cmd/kube-controller-manager", nil},
			// kubesched runs with the race detector: a race in the cluster
			// mode fails the test that triggers it.
			{built.Kubesched, "github.com/kubesched/kubesched/cmd/kubesched", []string{"-race"}},
		} {
			start := time.Now()
			args := append(append([]string{"build"}, b.flags...), "-o", b.out, b.pkg)
			cmd := exec.Command("go", args...)
			cmd.Dir = moduleDir()
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
				return
			}
			fmt.Fprintf(os.Stderr, "integration: built %s in %s\n", b.pkg, time.Since(start).Round(time.Second))
		}
	})
	return built, buildErr
}

var noRaceOnce sync.Once
var noRaceErr error

// BuildNoRace builds (once) kubesched without the race detector, as it
// would be deployed: the benchmarks measure that one.
func BuildNoRace() error {
	if _, err := Build(); err != nil {
		return err
	}
	noRaceOnce.Do(func() {
		cmd := exec.Command("go", "build", "-o", built.KubeschedNoRace, "github.com/kubesched/kubesched/cmd/kubesched")
		cmd.Dir = moduleDir()
		if out, err := cmd.CombinedOutput(); err != nil {
			noRaceErr = fmt.Errorf("go build kubesched: %v\n%s", err, out)
		}
	})
	return noRaceErr
}
