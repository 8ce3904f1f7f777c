package runtime_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/framework/runtime"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

type rl = map[v1.ResourceName]string

// BenchmarkFilterAndScoreOneNode measures the per-node cost of the default
// profile's Filter and Score plugins (the work done N times per pod).
func BenchmarkFilterAndScoreOneNode(b *testing.B) {
	f, err := build(&testing.T{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	node := st.MakeNode().Name("n").Label("pool", "general").Capacity(rl{v1.ResourceCPU: "8", v1.ResourceMemory: "32Gi"}).
		Taint("spot", "true", v1.TaintEffectPreferNoSchedule).Obj()
	ni := st.NodeInfo(node, st.MakePod().Name("e").Node("n").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj())
	pods := map[string]*v1.Pod{
		"plain":         st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "500m", v1.ResourceMemory: "1Gi"}).Obj(),
		"node-affinity": st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "500m"}).RequiredNodeAffinityIn("pool", "general").PreferredNodeAffinityIn(10, "pool", "general").Obj(),
	}
	ctx := context.Background()
	for name, pod := range pods {
		b.Run("filter/"+name, func(b *testing.B) {
			state := framework.NewCycleState()
			f.RunPreFilterPlugins(ctx, state, pod, []*framework.NodeInfo{ni})
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if st := f.RunFilterPlugins(ctx, state, pod, ni); !st.IsSuccess() {
					b.Fatal(st)
				}
			}
		})
		b.Run("score/"+name, func(b *testing.B) {
			state := framework.NewCycleState()
			f.RunPreFilterPlugins(ctx, state, pod, []*framework.NodeInfo{ni})
			f.RunPreScorePlugins(ctx, state, pod, []*framework.NodeInfo{ni})
			nodes := []*framework.NodeInfo{ni}
			var buf runtime.ScoreBuffers
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				f.RunScorePlugins(ctx, state, pod, nodes, &buf)
			}
		})
	}
}
