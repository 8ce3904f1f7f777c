package questions_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// A new node gets the DaemonSet pods a joining node gets: the room the
// answers buy holds them too. One 4-cpu node runs its 1-cpu agent and one
// web pod of 1.6 cpu; a new 4-cpu node holds its agent and one more web
// pod (1 + 1.6 + 1.6 > 4): the 3 pending web pods need 3 nodes, not the
// 2 that hold them with the agents left pending.
func TestNodesToAddHaveRoomForTheirDaemonSetPods(t *testing.T) {
	cpu := func(q string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: q} }
	objs := []runtime.Object{
		st.MakeNode().Name("n1").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj(),
		st.MakeDaemonSet("agent", st.MakePod().Label("app", "agent").Req(cpu("1"))),
		st.MakeDeployment("web", 4, st.MakePod().Label("app", "web").Req(cpu("1600m"))),
	}
	load := func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }
	node := st.MakeNode().Name("m4").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj()
	t.Run("--add-nodes counts the agents of the nodes it adds", func(t *testing.T) {
		res, err := questions.AddNodes(context.Background(), load, worldMaker(t), node, 8)
		if err != nil {
			t.Fatal(err)
		}
		if res.AddNodes != 3 {
			t.Errorf("%d nodes, want 3: each new node holds its agent and one web pod", res.AddNodes)
		}
	})
	t.Run("--node-types counts the agents of the nodes it buys", func(t *testing.T) {
		types := []questions.NodeType{{Type: "m4", Node: node, Cost: 0.2, Limit: 10}}
		res, err := questions.CheapestNodes(context.Background(), load, worldMaker(t), types, questions.NodeTypesOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Add) != 1 || res.Add[0].Count != 3 || len(res.Pending) != 0 {
			t.Errorf("answer %+v, want 3 m4 with nothing pending", res)
		}
	})
}
