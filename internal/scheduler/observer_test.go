package scheduler_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/scheduler"
	st "github.com/kubesched/kubesched/internal/testing"
)

// seen is what a test keeps of an Attempt.
type seen struct {
	Pod       string
	Attempts  int
	Node      string
	Failed    bool
	Message   string
	Nominated string
}

func TestTheObserverSeesEveryAttemptInOrder(t *testing.T) {
	tests := []struct {
		name     string
		failBind []string
		objs     []interface{}
		want     []seen
	}{
		{
			name: "a bound pod is seen with its node and no status",
			objs: []interface{}{st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1"}).Obj()},
			want: []seen{{Pod: "p", Attempts: 1, Node: "n"}},
		},
		{
			name: "an unschedulable pod is seen with the FitError and no node",
			objs: []interface{}{st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "1"}).Obj(), st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "2"}).Obj()},
			want: []seen{{Pod: "p", Attempts: 1, Failed: true, Nominated: "",
				Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."}},
		},
		{
			name:     "a failed binding is seen with the node it was meant for",
			failBind: []string{"p"},
			objs:     []interface{}{st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1"}).Obj()},
			want:     []seen{{Pod: "p", Attempts: 1, Node: "n", Failed: true, Message: "injected bind failure"}},
		},
		{
			name: "a preemptor is seen failing with the node it nominated",
			objs: []interface{}{
				st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "2"}).Obj(),
				st.MakePod().Name("low").Node("n").Req(rl{v1.ResourceCPU: "2"}).Obj(),
				st.MakePod().Name("high").Priority(100).Req(rl{v1.ResourceCPU: "2"}).Obj(),
			},
			want: []seen{
				{Pod: "high", Attempts: 1, Failed: true, Nominated: "n",
					Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node n, preempting 1 victims"},
				{Pod: "high", Attempts: 2, Node: "n"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []seen
			observe := func(a scheduler.Attempt) {
				s := seen{Pod: a.Pod.Name, Attempts: a.Attempts, Node: a.Node}
				if a.Status != nil {
					s.Failed, s.Message = true, a.Status.Message()
					if a.Node == "" {
						s.Nominated = "<nil>"
						if a.Nominated != nil {
							s.Nominated = *a.Nominated
						}
					}
				}
				got = append(got, s)
			}
			e := newEnvWith(t, nil, nil, []scheduler.Option{scheduler.WithAttemptObserver(observe)}, tt.failBind...)
			e.add(t, tt.objs...)
			e.drain()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("observed attempts (-want,+got):\n%s", diff)
			}
		})
	}
}
