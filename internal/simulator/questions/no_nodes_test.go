package questions_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// noNodesMessage is kube-scheduler v1.37.2's ErrNoNodesAvailable
// (schedule_one.go), the condition of a pod tried on a cluster without
// nodes: no filter runs, no preemption is tried.
const noNodesMessage = "no nodes available to schedule pods"

func TestPodsOfAClusterWithoutNodesArePendingForLackOfNodesAtOnce(t *testing.T) {
	pods := []runtime.Object{
		st.MakePod().Name("a").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"}).Obj(),
		st.MakePod().Name("b").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"}).Obj(),
	}
	t.Run("simulate ends at once with every pod pending for lack of nodes", func(t *testing.T) {
		w, rep := simtest.Simulate(t, simtest.LoadObjects(t, pods), 1)
		if got := w.Clock.Since(simulator.Epoch); got > time.Minute {
			t.Errorf("the run took %s of virtual time, want it to end at once", got)
		}
		if len(rep.Pods) != 2 {
			t.Fatalf("%d pods in the report, want 2", len(rep.Pods))
		}
		for _, p := range rep.Pods {
			if p.Node != "" || p.Message != noNodesMessage {
				t.Errorf("pod %s: node %q, message %q; want pending with %q", p.Name, p.Node, p.Message, noNodesMessage)
			}
		}
	})
	t.Run("explain says no nodes are available, with no node verdict and no preemption", func(t *testing.T) {
		c := simtest.LoadObjects(t, pods[1:])
		w := simtest.NewWorld(t, c, 1)
		rep, err := questions.Explain(context.Background(), w, pods[0].(*v1.Pod))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Message != noNodesMessage || len(rep.Nodes) != 0 || rep.Preemption != nil {
			t.Errorf("explain: message %q, %d nodes, preemption %v; want %q, none, none", rep.Message, len(rep.Nodes), rep.Preemption, noNodesMessage)
		}
	})
}
