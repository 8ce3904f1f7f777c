package queue

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestActivate(t *testing.T) {
	tests := []struct {
		name string
		// setup leaves "p" (and maybe "other") somewhere in the queue;
		// it returns the pod to activate.
		setup func(t *testing.T, q *PriorityQueue, p, other *v1.Pod) *v1.Pod
		// wantP and wantOther are where "p" and "other" are after
		// Activate and, for pods in flight, their failed attempt.
		wantP, wantOther string
	}{
		{
			name: "an unschedulable pod goes to activeQ at once",
			setup: func(t *testing.T, q *PriorityQueue, p, _ *v1.Pod) *v1.Pod {
				q.Add(p)
				failOnce(t, q, "NodeResourcesFit")
				return p
			},
			wantP: "active", wantOther: "absent",
		},
		{
			name: "a backing-off pod goes to activeQ without waiting out its backoff",
			setup: func(t *testing.T, q *PriorityQueue, p, _ *v1.Pod) *v1.Pod {
				q.Add(p)
				failOnce(t, q, "NodeResourcesFit")
				q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
				if got := where(q, p); got != "backoff" {
					t.Fatalf("setup: the pod is in %s, want backoff", got)
				}
				return p
			},
			wantP: "active", wantOther: "absent",
		},
		{
			name: "a pod backing off after an error goes to activeQ at once",
			setup: func(t *testing.T, q *PriorityQueue, p, _ *v1.Pod) *v1.Pod {
				q.Add(p)
				failOnce(t, q)
				if got := where(q, p); got != "errorBackoff" {
					t.Fatalf("setup: the pod is in %s, want errorBackoff", got)
				}
				return p
			},
			wantP: "active", wantOther: "absent",
		},
		{
			name: "a pod in flight is retried when its attempt fails, not parked",
			setup: func(t *testing.T, q *PriorityQueue, p, _ *v1.Pod) *v1.Pod {
				q.Add(p)
				popped, _ := q.TryPop()
				q.Activate(p)
				popped.UnschedulablePlugins = sets.New("NodeResourcesFit")
				q.AddUnschedulableIfNotPresent(popped, 0)
				return nil
			},
			wantP: "backoff", wantOther: "absent",
		},
		{
			name: "activating one pod in flight leaves another in flight alone",
			setup: func(t *testing.T, q *PriorityQueue, p, other *v1.Pod) *v1.Pod {
				q.Add(p)
				q.Add(other)
				a, _ := q.TryPop()
				b, _ := q.TryPop()
				q.Activate(p)
				for _, qp := range []*framework.QueuedPodInfo{a, b} {
					qp.UnschedulablePlugins = sets.New("NodeResourcesFit")
					q.AddUnschedulableIfNotPresent(qp, 0)
				}
				return nil
			},
			wantP: "backoff", wantOther: "unschedulable",
		},
		{
			name: "a pod not in the queue is ignored",
			setup: func(t *testing.T, q *PriorityQueue, p, _ *v1.Pod) *v1.Pod {
				return p
			},
			wantP: "absent", wantOther: "absent",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newQueue(Options{})
			p := st.MakePod().Name("p").UID("p").Priority(10).Obj()
			other := st.MakePod().Name("other").UID("other").Obj()
			if pod := tc.setup(t, q, p, other); pod != nil {
				q.Activate(pod)
			}
			if got := where(q, p); got != tc.wantP {
				t.Errorf("p is in %s, want %s", got, tc.wantP)
			}
			if got := where(q, other); got != tc.wantOther {
				t.Errorf("other is in %s, want %s", got, tc.wantOther)
			}
		})
	}
}

// TestAGatedPreemptorIsWokenByTheDeletionOfItsVictim: a pod that failed on
// NodeResourcesFit and is then held back by a PreEnqueue plugin (async
// preemption) keeps NodeResourcesFit among its rejectors, so the victim's
// deletion still moves it, as upstream's runPreEnqueuePlugin inserts the
// gating plugin rather than replacing the rejectors.
func TestAGatedPreemptorIsWokenByTheDeletionOfItsVictim(t *testing.T) {
	preempting := true
	gate := func(_ context.Context, pod *v1.Pod) *framework.Status {
		if preempting {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting").WithPlugin("DefaultPreemption")
		}
		return nil
	}
	q, clk := newQueue(Options{PreEnqueue: gate})
	p := st.MakePod().Name("p").UID("p").Obj()
	preempting = false
	q.Add(p)
	preempting = true
	failOnce(t, q, "NodeResourcesFit")
	clk.Step(time.Minute) // past its backoff
	q.MoveAllToActiveOrBackoffQueue(podDeletion, nil, nil, nil)
	if got := where(q, p); got != "unschedulable" {
		t.Fatalf("while preempting, a victim's deletion moved the pod to %s; PreEnqueue must hold it", got)
	}
	preempting = false
	// A node added is NodeResourcesFit's event but not the gating
	// plugin's: the gated pod is not even looked at (upstream's
	// moveEntitiesToActiveOrBackoffQueue), so it waits for its victim.
	q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
	if got := where(q, p); got != "unschedulable" {
		t.Fatalf("a node added moved the gated pod to %s; only the gating plugin's events may", got)
	}
	q.MoveAllToActiveOrBackoffQueue(podDeletion, nil, nil, nil)
	if got := where(q, p); got != "active" {
		t.Fatalf("after the preemption, the last victim's deletion left the pod in %s, want active", got)
	}
}
