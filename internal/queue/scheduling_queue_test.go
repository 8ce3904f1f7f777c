package queue

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/queuesort"
)

var (
	nodeAdd     = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add, Label: "NodeAdd"}
	nodeLabel   = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel, Label: "NodeLabel"}
	podDeletion = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete, Label: "AssignedPodDelete"}
)

func newQueue(opts Options) (*PriorityQueue, *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.Clock = clk
	if opts.EventInterest == nil {
		opts.EventInterest = map[string][]framework.ClusterEventWithHint{
			"NodeResourcesFit": framework.Events(framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add},
				framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}),
			"NodeAffinity": framework.Events(framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}),
			// Hinted queues only for nodes labelled ok=true.
			"Hinted": {{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel},
				QueueingHintFn: func(_ klog.Logger, _ *v1.Pod, _, newObj interface{}) (framework.QueueingHint, error) {
					if n, ok := newObj.(*v1.Node); ok && n.Labels["ok"] == "true" {
						return framework.Queue, nil
					}
					return framework.QueueSkip, nil
				}}},
		}
	}
	return New(klog.Background(), (&queuesort.PrioritySort{}).Less, opts), clk
}

// where reports which part of the queue holds the pod.
func where(q *PriorityQueue, pod *v1.Pod) string {
	q.lock.Lock()
	defer q.lock.Unlock()
	key := Key(pod)
	if _, ok := q.activeQ.Get(key); ok {
		return "active"
	}
	if _, ok := q.backoffQ.Get(key); ok {
		return "backoff"
	}
	if _, ok := q.unschedulable[key]; ok {
		return "unschedulable"
	}
	if _, ok := q.inFlight[key]; ok {
		return "inflight"
	}
	return "absent"
}

// failOnce pops the pod and reports it back as rejected by plugins.
func failOnce(t *testing.T, q *PriorityQueue, plugins ...string) *framework.QueuedPodInfo {
	t.Helper()
	p, err := q.Pop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p.UnschedulablePlugins = sets.New(plugins...)
	q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle())
	return p
}

func TestBackoffDurationsGrowToTheMax(t *testing.T) {
	tests := []struct {
		name     string
		attempts int
		want     time.Duration
	}{
		{name: "the first failure backs off the initial second", attempts: 1, want: time.Second},
		{name: "the second failure doubles it", attempts: 2, want: 2 * time.Second},
		{name: "the fourth failure backs off 8s", attempts: 4, want: 8 * time.Second},
		{name: "the fifth failure is capped at the 10s max", attempts: 5, want: 10 * time.Second},
		{name: "the twentieth failure stays at the max", attempts: 20, want: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(Options{})
			pod := st.MakePod().Name("p").Obj()
			q.Add(pod)
			for i := 0; i < tt.attempts; i++ {
				p, err := q.Pop(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				// An error (no rejecting plugin) goes straight to backoff.
				q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle())
				if i < tt.attempts-1 {
					clk.Step(time.Hour)
					q.FlushBackoffQCompleted()
				}
			}
			clk.Step(tt.want - time.Millisecond)
			q.FlushBackoffQCompleted()
			if got := where(q, pod); got != "backoff" {
				t.Fatalf("1ms before %v the pod is in %s, want backoff", tt.want, got)
			}
			clk.Step(time.Millisecond)
			q.FlushBackoffQCompleted()
			if got := where(q, pod); got != "active" {
				t.Fatalf("at %v the pod is in %s, want active", tt.want, got)
			}
		})
	}
}

func TestUnschedulablePodsMoveOnlyOnEventsTheirPluginsRegistered(t *testing.T) {
	tests := []struct {
		name    string
		plugins []string
		event   framework.ClusterEvent
		// node is the changed object the event carries.
		node *v1.Node
		want string
	}{
		{name: "a pod rejected for resources moves when a pod is deleted", plugins: []string{"NodeResourcesFit"}, event: podDeletion, want: "active"},
		{name: "a pod rejected for resources ignores a node label change", plugins: []string{"NodeResourcesFit"}, event: nodeLabel, want: "unschedulable"},
		{name: "a pod rejected by node affinity moves on a node label change", plugins: []string{"NodeAffinity"}, event: nodeLabel, want: "active"},
		{name: "a pod rejected by two plugins moves on either's event", plugins: []string{"NodeAffinity", "NodeResourcesFit"}, event: podDeletion, want: "active"},
		{name: "a pod rejected by a plugin that registered no events waits for the flush", plugins: []string{"Unknown"}, event: nodeLabel, want: "unschedulable"},
		{name: "a registered event whose hint says QueueSkip leaves the pod where it is", plugins: []string{"Hinted"}, event: nodeLabel,
			node: st.MakeNode().Name("n").Label("ok", "false").Obj(), want: "unschedulable"},
		{name: "a registered event whose hint says Queue moves the pod", plugins: []string{"Hinted"}, event: nodeLabel,
			node: st.MakeNode().Name("n").Label("ok", "true").Obj(), want: "active"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(Options{})
			pod := st.MakePod().Name("p").Obj()
			q.Add(pod)
			failOnce(t, q, tt.plugins...)
			if got := where(q, pod); got != "unschedulable" {
				t.Fatalf("after rejection the pod is in %s, want unschedulable", got)
			}
			clk.Step(time.Minute) // past backoff
			q.MoveAllToActiveOrBackoffQueue(tt.event, nil, tt.node)
			if got := where(q, pod); got != tt.want {
				t.Errorf("after %s the pod is in %s, want %s", tt.event, got, tt.want)
			}
		})
	}
}

func TestAMovedPodStillBacksOff(t *testing.T) {
	q, clk := newQueue(Options{})
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	failOnce(t, q, "NodeResourcesFit")
	clk.Step(500 * time.Millisecond)
	q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil)
	if got := where(q, pod); got != "backoff" {
		t.Fatalf("moved during its backoff the pod is in %s, want backoff", got)
	}
	clk.Step(500 * time.Millisecond)
	q.FlushBackoffQCompleted()
	if got := where(q, pod); got != "active" {
		t.Fatalf("after its backoff the pod is in %s, want active", got)
	}
}

func TestUnschedulablePodsAreFlushedAfterFiveMinutes(t *testing.T) {
	q, clk := newQueue(Options{})
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	failOnce(t, q, "NodeResourcesFit")
	clk.Step(DefaultPodMaxInUnschedulablePodsDuration - time.Second)
	q.FlushUnschedulablePodsLeftover()
	if got := where(q, pod); got != "unschedulable" {
		t.Fatalf("before 5 minutes the pod is in %s, want unschedulable", got)
	}
	clk.Step(time.Second)
	q.FlushUnschedulablePodsLeftover()
	if got := where(q, pod); got != "active" {
		t.Fatalf("after 5 minutes the pod is in %s, want active", got)
	}
}

func TestAnEventDuringTheCycleSendsTheRejectedPodToBackoff(t *testing.T) {
	q, _ := newQueue(Options{})
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	p, _ := q.Pop(context.Background())
	cycle := q.SchedulingCycle()
	q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil) // the cluster changed while p was being scheduled
	p.UnschedulablePlugins = sets.New("NodeResourcesFit")
	q.AddUnschedulableIfNotPresent(p, cycle)
	if got := where(q, pod); got != "backoff" {
		t.Errorf("the pod is in %s, want backoff: the event it missed may have helped it", got)
	}
}

func TestGatedPodsWaitUntilTheGateIsRemoved(t *testing.T) {
	gate := func(_ context.Context, pod *v1.Pod) *framework.Status {
		if len(pod.Spec.SchedulingGates) > 0 {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, "gated").WithPlugin("SchedulingGates")
		}
		return nil
	}
	q, clk := newQueue(Options{PreEnqueue: gate})
	gated := st.MakePod().Name("p").SchedulingGates("wait").Obj()
	q.Add(gated)
	if got := where(q, gated); got != "unschedulable" {
		t.Fatalf("a gated pod is in %s, want unschedulable", got)
	}
	clk.Step(time.Hour)
	q.FlushUnschedulablePodsLeftover()
	if got := where(q, gated); got != "unschedulable" {
		t.Fatalf("the flush moved a gated pod to %s; it must wait for its gate", got)
	}
	ungated := gated.DeepCopy()
	ungated.Spec.SchedulingGates = nil
	q.Update(gated, ungated)
	if got := where(q, ungated); got != "active" {
		t.Fatalf("an ungated pod is in %s, want active", got)
	}
}

func TestPopOrdersByPriorityThenArrival(t *testing.T) {
	q, clk := newQueue(Options{})
	for _, p := range []*v1.Pod{
		st.MakePod().Name("low").Priority(1).Obj(),
		st.MakePod().Name("high-late").Priority(10).Obj(),
		st.MakePod().Name("mid").Priority(5).Obj(),
	} {
		q.Add(p)
		clk.Step(time.Millisecond)
	}
	q.Add(st.MakePod().Name("high-later").Priority(10).Obj())
	var got []string
	for i := 0; i < 4; i++ {
		p, err := q.Pop(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.Pod.Name)
	}
	want := []string{"high-late", "high-later", "mid", "low"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pop order = %v, want %v", got, want)
		}
	}
}

func TestDeleteRemovesThePodWhereverItWaits(t *testing.T) {
	q, _ := newQueue(Options{})
	a, b := st.MakePod().Name("a").Obj(), st.MakePod().Name("b").Obj()
	q.Add(a)
	q.Add(b)
	failOnce(t, q, "NodeResourcesFit")
	q.Delete(a)
	q.Delete(b)
	if x, y := where(q, a), where(q, b); x != "absent" || y != "absent" {
		t.Errorf("after Delete the pods are in %s and %s, want absent", x, y)
	}
	if a, b, u := q.Counts(); a+b+u != 0 {
		t.Errorf("counts = %d %d %d, want empty", a, b, u)
	}
}

func TestPopReturnsOnClose(t *testing.T) {
	q, _ := newQueue(Options{})
	done := make(chan error)
	go func() {
		_, err := q.Pop(context.Background())
		done <- err
	}()
	q.Close()
	if err := <-done; err == nil {
		t.Error("Pop on a closed queue returned no error")
	}
}

func TestUpdatingAPodInFlightLeavesItsCycleAlone(t *testing.T) {
	q, _ := newQueue(Options{})
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	p, err := q.Pop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before := p.PodInfo
	updated := pod.DeepCopy()
	updated.Labels = map[string]string{"new": "label"}
	done := make(chan struct{})
	go func() {
		q.Update(pod, updated) // concurrently with the cycle reading p (run with -race)
		close(done)
	}()
	_ = p.Pod.Name
	<-done
	if p.PodInfo != before {
		t.Error("Update replaced the PodInfo of a pod whose cycle is running")
	}
	if got := where(q, updated); got != "inflight" {
		t.Errorf("the updated in-flight pod is in %s, want still in flight", got)
	}
}

func TestThePodsTheFlushMovesAreMarked(t *testing.T) {
	tests := []struct {
		name      string
		move      func(q *PriorityQueue, clk *testingclock.FakeClock)
		wantFlush bool
	}{
		{name: "a pod moved by a registered event is not marked", move: func(q *PriorityQueue, clk *testingclock.FakeClock) {
			clk.Step(time.Minute)
			q.MoveAllToActiveOrBackoffQueue(podDeletion, nil, nil)
		}},
		{name: "a pod moved by the five-minute flush is marked", wantFlush: true, move: func(q *PriorityQueue, clk *testingclock.FakeClock) {
			clk.Step(DefaultPodMaxInUnschedulablePodsDuration)
			q.FlushUnschedulablePodsLeftover()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(Options{})
			q.Add(st.MakePod().Name("p").Obj())
			failOnce(t, q, "NodeResourcesFit")
			tt.move(q, clk)
			p, err := q.Pop(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if p.MovedByFlush != tt.wantFlush {
				t.Errorf("MovedByFlush = %v, want %v", p.MovedByFlush, tt.wantFlush)
			}
		})
	}
}

func TestRefreshTakesTheNewStatusWithoutMovingThePod(t *testing.T) {
	q, _ := newQueue(Options{})
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	failOnce(t, q, "NodeResourcesFit")
	nominated := pod.DeepCopy()
	nominated.Status.NominatedNodeName = "n1"
	q.Refresh(nominated)
	if got := where(q, pod); got != "unschedulable" {
		t.Fatalf("after Refresh the pod is in %s, want unschedulable (a status change is no reason to retry)", got)
	}
	q.lock.Lock()
	got := q.unschedulable[Key(pod)].Pod.Status.NominatedNodeName
	q.lock.Unlock()
	if got != "n1" {
		t.Errorf("queued pod's nominated node = %q, want n1", got)
	}
}
