package runtime_test

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/framework/runtime"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// TestScoringDoesNotAllocatePerNode: running the default profile's Score
// plugins over 100 nodes allocates hardly more than over 10: the per-cycle
// slices, and the parallelizer's chunks (about sqrt(nodes)). A plugin
// passed by value into an interface once cost an allocation per node and
// plugin (630 more here).
func TestScoringDoesNotAllocatePerNode(t *testing.T) {
	f, err := build(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	pod := st.MakePod().Name("p").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m", v1.ResourceMemory: "128Mi"}).Obj()
	allocs := func(n int) float64 {
		nodes := make([]*framework.NodeInfo, n)
		for i := range nodes {
			nodes[i] = st.NodeInfo(st.MakeNode().Name(fmt.Sprintf("n%d", i)).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj())
		}
		ctx := context.Background()
		state := framework.NewCycleState()
		if s := f.RunPreScorePlugins(ctx, state, pod, nodes); !s.IsSuccess() {
			t.Fatal(s)
		}
		var buf runtime.ScoreBuffers
		return testing.AllocsPerRun(20, func() {
			if _, s := f.RunScorePlugins(ctx, state, pod, nodes, &buf); !s.IsSuccess() {
				t.Fatal(s)
			}
		})
	}
	if a10, a100 := allocs(10), allocs(100); a100 > a10+20 {
		t.Errorf("scoring 100 nodes allocates %v times, 10 nodes %v: something allocates per node", a100, a10)
	}
}
