package questions_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// The search never simulates a type no pod can use, and still answers
// with the type the pending pods need.
func TestCheapestNodesNeverSimulatesATypeNoPodCanUse(t *testing.T) {
	res := map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "16Gi"}
	general := st.MakeNode().Name("m6i.xlarge").Label("pool", "general").Capacity(res).Obj()
	general.Annotations = map[string]string{questions.HourlyCostAnnotation: "0.2"}
	gpuRes := map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "16Gi", "nvidia.com/gpu": "1"}
	gpu := st.MakeNode().Name("g5.xlarge").Label("pool", "gpu").Capacity(gpuRes).Taint("nvidia.com/gpu", "present", v1.TaintEffectNoSchedule).Obj()
	gpu.Annotations = map[string]string{questions.HourlyCostAnnotation: "0.1"} // cheaper: the search would try it first
	objs := []runtime.Object{st.MakeNode().Name("node-1").Capacity(res).Obj()}
	for i := range 6 {
		objs = append(objs, st.MakePod().Name(fmt.Sprintf("web-%d", i)).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1500m"}).Obj())
	}
	load := func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }
	var mu sync.Mutex
	simulatedGPU := 0
	newWorld := func(c *cluster.Cluster) (*simulator.World, error) {
		for _, n := range c.Nodes {
			if strings.HasPrefix(n.Name, "g5.xlarge") {
				mu.Lock()
				simulatedGPU++
				mu.Unlock()
				break
			}
		}
		return simtest.NewWorld(t, c, 1), nil
	}
	types := []questions.NodeType{{Type: "m6i.xlarge", Node: general, Cost: 0.2, Limit: 10}, {Type: "g5.xlarge", Node: gpu, Cost: 0.1, Limit: 10}}
	got, err := questions.CheapestNodes(context.Background(), load, newWorld, types, questions.NodeTypesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if simulatedGPU > 0 {
		t.Errorf("%d simulations held nodes of the type no pod can use", simulatedGPU)
	}
	// node-1 holds 2 of the 6 pods; 2 new general nodes hold the other 4.
	if len(got.Add) != 1 || got.Add[0].Type != "m6i.xlarge" || got.Add[0].Count != 2 || got.Scheduled != 4 || len(got.Pending) != 0 {
		t.Errorf("answer %+v, want 2 m6i.xlarge placing the 4 pending pods", got)
	}
}
