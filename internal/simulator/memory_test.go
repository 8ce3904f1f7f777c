package simulator_test

import (
	"context"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"runtime"
	"testing"

	"github.com/kubesched/kubesched/internal/testing/clustergen"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// TestRepeatedSimulationsDoNotGrowTheHeap: an autoscaler or a capacity
// planner embeds the simulation and runs it again and again in one
// process; nothing a run leaves behind (metrics, caches, the equivalence
// cache, goroutines) may pile up. After the first runs (which fill
// process-wide registries once), the live heap stays flat.
func TestRepeatedSimulationsDoNotGrowTheHeap(t *testing.T) {
	c := clusterFromObjects(t, clustergen.Options{Nodes: 300, Pods: 1500, RunningFraction: 0.2, Seed: 5, Workload: "spread"})
	live := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	var after []uint64
	goroutines := runtime.NumGoroutine()
	for i := 0; i < 6; i++ {
		cc := *c
		cc.Pods = clonePods(c)
		w, err := simulator.NewWorld(context.Background(), &cc, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
		if err != nil {
			t.Fatal(err)
		}
		w.Run(context.Background())
		if w.Report().Summary.Scheduled == 0 {
			t.Fatal("nothing was scheduled")
		}
		w = nil
		after = append(after, live())
	}
	base, last := after[1], after[len(after)-1]
	if last > base+base/10+1<<20 {
		t.Errorf("the live heap grew from %d to %d bytes over %d repeated runs: %v", base, last, len(after)-2, after)
	}
	if g := runtime.NumGoroutine(); g > goroutines+2 {
		t.Errorf("%d goroutines before the runs, %d after", goroutines, g)
	}
}
