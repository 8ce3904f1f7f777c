package simulator_test

import (
	"context"
	"fmt"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/testing/clustergen"
	"github.com/kubesched/kubesched/internal/testing/perfgen"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// BenchmarkSimulate measures end-to-end scheduling throughput (pods/s) of
// the core on generated clusters, all pods pending.
func BenchmarkSimulate(b *testing.B) {
	for _, size := range []struct {
		nodes, pods int
		workload    string
	}{{100, 1000, ""}, {1000, 2000, ""}, {5000, 2000, ""}, {1000, 1000, "anti-affinity"}, {1000, 1000, "spread"}} {
		name := fmt.Sprintf("nodes=%d/pods=%d", size.nodes, size.pods)
		if size.workload != "" {
			name += "/" + size.workload
		}
		b.Run(name, func(b *testing.B) {
			benchmarkRun(b, clusterFromObjects(b, clustergen.Options{Nodes: size.nodes, Pods: size.pods, Seed: 1, Workload: size.workload}), size.pods)
		})
	}
}

// benchmarkRun times World.Run on fresh copies of c (building the world
// untimed) and reports pods/s for pending pods.
func benchmarkRun(b *testing.B, c *cluster.Cluster, pending int) {
	cfg := simtest.DefaultConfig(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cc := *c
		cc.Pods = clonePods(c)
		w, err := simulator.NewWorld(context.Background(), &cc, cfg, plugins.NewInTreeRegistry(), 1)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		w.Run(context.Background())
	}
	b.ReportMetric(float64(pending)*float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}

func clonePods(c *cluster.Cluster) []*v1.Pod {
	out := make([]*v1.Pod, len(c.Pods))
	for i, p := range c.Pods {
		out[i] = p.DeepCopy()
	}
	return out
}

// BenchmarkSimulatePerfWorkloads runs simulate's core (loading excluded)
// on scheduler_perf's workloads at a fifth of their size.
func BenchmarkSimulatePerfWorkloads(b *testing.B) {
	for _, w := range perfgen.All() {
		if w.Churn != nil {
			continue // wall-time churn: the real-cluster benchmark's
		}
		w := w.Scaled(5)
		b.Run(w.Name, func(b *testing.B) {
			benchmarkRun(b, simtest.LoadObjects(b, w.Objects()), w.MeasurePods)
		})
	}
}
