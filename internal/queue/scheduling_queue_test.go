package queue

import (
	"context"
	"slices"
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
	nodeAdd       = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	nodeLabel     = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel}
	nodeCondition = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeCondition}
	podDeletion   = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}
	podUpdate     = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Update}
)

func newQueue(opts Options) (*PriorityQueue, *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts.Clock = clk
	if opts.EventInterest == nil {
		opts.EventInterest = map[string][]framework.ClusterEventWithHint{
			"NodeResourcesFit": framework.Events(framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add},
				framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}),
			"NodeAffinity":    framework.Events(framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}),
			"TaintToleration": framework.Events(framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodToleration}),
			"SchedulingGates": framework.Events(framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodSchedulingGatesEliminated}),
			// As DefaultPreemption registers it with asynchronous preemption.
			"DefaultPreemption": {{Event: podDeletion,
				QueueingHintFn: func(klog.Logger, *v1.Pod, interface{}, interface{}) (framework.QueueingHint, error) {
					return framework.QueueSkip, nil
				}}},
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
	if _, ok := q.errorBackoffQ.Get(key); ok {
		return "errorBackoff"
	}
	if _, ok := q.unschedulable.get(key); ok {
		return "unschedulable"
	}
	if _, ok := q.inFlightPods[pod.UID]; ok {
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

func TestBackoffGrowsWithFailuresToTheMax(t *testing.T) {
	// The clock starts on a whole second. A pod whose backoff ends at T
	// (aligned to the second) leaves backoff in the window after T, when
	// the flush that runs on whole seconds finds T before the current window.
	tests := []struct {
		name     string
		failures int
		// errors: the attempts failed with an error rather than a rejection.
		errors bool
		want   time.Duration
	}{
		{name: "the first rejection backs off the initial second", failures: 1, want: time.Second},
		{name: "the second rejection doubles it", failures: 2, want: 2 * time.Second},
		{name: "the fourth rejection backs off 8s", failures: 4, want: 8 * time.Second},
		{name: "the fifth rejection is capped at the 10s max", failures: 5, want: 10 * time.Second},
		{name: "the twentieth rejection stays at the max", failures: 20, want: 10 * time.Second},
		{name: "the first error backs off the initial second", failures: 1, errors: true, want: time.Second},
		{name: "the third error in a row backs off 4s", failures: 3, errors: true, want: 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(Options{})
			pod := st.MakePod().Name("p").Obj()
			q.Add(pod)
			wantQueue := "backoff"
			for i := 0; i < tt.failures; i++ {
				p, ok := q.TryPop()
				if !ok {
					t.Fatalf("failure %d: nothing to pop", i)
				}
				if !tt.errors {
					p.UnschedulablePlugins = sets.New("NodeResourcesFit")
					// An event it may help with, so it goes to backoff
					// rather than waiting in unschedulablePods.
					q.MoveAllToActiveOrBackoffQueue(podDeletion, nil, nil, nil)
				} else {
					wantQueue = "errorBackoff"
				}
				q.AddUnschedulableIfNotPresent(p, q.SchedulingCycle())
				if i < tt.failures-1 {
					clk.Step(time.Hour)
					q.FlushBackoffQCompleted()
				}
			}
			clk.Step(tt.want + time.Second - time.Millisecond)
			q.FlushBackoffQCompleted()
			if got := where(q, pod); got != wantQueue {
				t.Fatalf("1ms before the window after %v the pod is in %s, want %s", tt.want, got, wantQueue)
			}
			clk.Step(time.Millisecond)
			q.FlushBackoffQCompleted()
			if got := where(q, pod); got != "active" {
				t.Fatalf("in the window after %v the pod is in %s, want active", tt.want, got)
			}
		})
	}
}

func TestARejectionAfterAnErrorStartsTheBackoffOverFromTheRejections(t *testing.T) {
	q, clk := newQueue(Options{})
	pod := st.MakePod().Name("p").Obj()
	q.Add(pod)
	for i := 0; i < 3; i++ { // three errors: 4s
		p, _ := q.TryPop()
		q.AddUnschedulableIfNotPresent(p, 0)
		clk.Step(time.Hour)
		q.FlushBackoffQCompleted()
	}
	p, _ := q.TryPop()
	p.UnschedulablePlugins = sets.New("NodeResourcesFit")
	q.MoveAllToActiveOrBackoffQueue(podDeletion, nil, nil, nil)
	q.AddUnschedulableIfNotPresent(p, 0)
	if p.ConsecutiveErrorsCount != 0 || p.UnschedulableCount != 1 {
		t.Fatalf("errors %d, rejections %d; want 0 and 1", p.ConsecutiveErrorsCount, p.UnschedulableCount)
	}
	clk.Step(2 * time.Second) // 1s backoff, out in the window after
	q.FlushBackoffQCompleted()
	if got := where(q, pod); got != "active" {
		t.Errorf("the pod is in %s, want active: its backoff counts the one rejection, not the earlier errors", got)
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
		{name: "a generic update wakes nobody who registered only specific updates", plugins: []string{"NodeResourcesFit", "NodeAffinity"}, event: podUpdate, want: "unschedulable"},
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
			q.MoveAllToActiveOrBackoffQueue(tt.event, nil, tt.node, nil)
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
	q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil)
	if got := where(q, pod); got != "backoff" {
		t.Fatalf("moved during its backoff the pod is in %s, want backoff", got)
	}
	clk.Step(time.Second) // 1.5s: still the window its backoff ends in
	q.FlushBackoffQCompleted()
	if got := where(q, pod); got != "backoff" {
		t.Fatalf("in the window its backoff ends in, the pod is in %s, want backoff", got)
	}
	clk.Step(500 * time.Millisecond)
	q.FlushBackoffQCompleted()
	if got := where(q, pod); got != "active" {
		t.Fatalf("after its backoff the pod is in %s, want active", got)
	}
}

func TestPopTakesFromBackoffQWhenActiveQIsEmpty(t *testing.T) {
	tests := []struct {
		name string
		// rejected: the attempt was rejected by a plugin (else: an error).
		rejected bool
		wantPop  bool
	}{
		{name: "a rejected pod backing off is popped at once when nothing else waits", rejected: true, wantPop: true},
		{name: "a pod that failed with an error waits its backoff out", rejected: false, wantPop: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newQueue(Options{})
			pod := st.MakePod().Name("p").Obj()
			q.Add(pod)
			p, _ := q.TryPop()
			if tt.rejected {
				p.UnschedulablePlugins = sets.New("NodeResourcesFit")
				q.MoveAllToActiveOrBackoffQueue(podDeletion, nil, nil, nil)
			}
			q.AddUnschedulableIfNotPresent(p, 0)
			_, got := q.TryPop()
			if got != tt.wantPop {
				t.Errorf("TryPop = %v, want %v", got, tt.wantPop)
			}
		})
	}
}

func TestActiveQGoesBeforeBackoffQ(t *testing.T) {
	q, _ := newQueue(Options{})
	backingOff, fresh := st.MakePod().Name("backing-off").Priority(100).Obj(), st.MakePod().Name("fresh").Obj()
	q.Add(backingOff)
	p, _ := q.TryPop()
	p.UnschedulablePlugins = sets.New("NodeResourcesFit")
	q.MoveAllToActiveOrBackoffQueue(podDeletion, nil, nil, nil)
	q.AddUnschedulableIfNotPresent(p, 0)
	q.Add(fresh)
	got := popAll(q)
	if want := []string{"fresh", "backing-off"}; !slices.Equal(got, want) {
		t.Errorf("pop order = %v, want %v", got, want)
	}
}

// popAll pops until activeQ and backoffQ are empty, returning the names.
func popAll(q *PriorityQueue) []string {
	var got []string
	for {
		p, ok := q.TryPop()
		if !ok {
			return got
		}
		got = append(got, p.Pod.Name)
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

func TestEventsDuringTheCycleAreAskedWhenThePodComesBack(t *testing.T) {
	okNode := st.MakeNode().Name("n").Label("ok", "true").Obj()
	badNode := st.MakeNode().Name("n").Label("ok", "false").Obj()
	tests := []struct {
		name    string
		plugins []string
		// during runs while the pod is in flight.
		during func(q *PriorityQueue)
		want   string
	}{
		{name: "an event the rejecting plugin registered sends the pod to backoff", plugins: []string{"NodeResourcesFit"},
			during: func(q *PriorityQueue) { q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil) }, want: "backoff"},
		{name: "an event no plugin registered (a node heartbeat) leaves the pod unschedulable", plugins: []string{"NodeResourcesFit"},
			during: func(q *PriorityQueue) { q.MoveAllToActiveOrBackoffQueue(nodeCondition, nil, nil, nil) }, want: "unschedulable"},
		{name: "an event only another plugin registered leaves the pod unschedulable", plugins: []string{"NodeResourcesFit"},
			during: func(q *PriorityQueue) { q.MoveAllToActiveOrBackoffQueue(nodeLabel, nil, nil, nil) }, want: "unschedulable"},
		{name: "a registered event whose hint says QueueSkip leaves the pod unschedulable", plugins: []string{"Hinted"},
			during: func(q *PriorityQueue) { q.MoveAllToActiveOrBackoffQueue(nodeLabel, nil, badNode, nil) }, want: "unschedulable"},
		{name: "a registered event whose hint says Queue sends the pod to backoff", plugins: []string{"Hinted"},
			during: func(q *PriorityQueue) { q.MoveAllToActiveOrBackoffQueue(nodeLabel, nil, okNode, nil) }, want: "backoff"},
		{name: "with no event at all the pod waits in unschedulablePods", plugins: []string{"NodeResourcesFit"},
			during: func(q *PriorityQueue) {}, want: "unschedulable"},
		{name: "a pod that failed with an error backs off whatever happened", plugins: nil,
			during: func(q *PriorityQueue) {}, want: "errorBackoff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newQueue(Options{})
			pod := st.MakePod().Name("p").Obj()
			q.Add(pod)
			p, _ := q.TryPop()
			tt.during(q)
			p.UnschedulablePlugins = sets.New(tt.plugins...)
			q.AddUnschedulableIfNotPresent(p, 0)
			if got := where(q, pod); got != tt.want {
				t.Errorf("the pod is in %s, want %s", got, tt.want)
			}
			if n := q.InFlightEvents(); n != 0 {
				t.Errorf("%d events kept after the last pod in flight came back, want 0", n)
			}
		})
	}
}

func TestAnEventBeforeThePopDoesNotCountForTheCycle(t *testing.T) {
	q, _ := newQueue(Options{})
	a, b := st.MakePod().Name("a").Obj(), st.MakePod().Name("b").Obj()
	q.Add(a)
	q.Add(b)
	pa, _ := q.TryPop()
	q.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, nil, nil) // while only a is in flight
	pb, _ := q.TryPop()
	for _, p := range []*framework.QueuedPodInfo{pa, pb} {
		p.UnschedulablePlugins = sets.New("NodeResourcesFit")
	}
	q.AddUnschedulableIfNotPresent(pb, 0)
	q.AddUnschedulableIfNotPresent(pa, 0)
	if got := where(q, a); got != "backoff" {
		t.Errorf("a, in flight during the event, is in %s, want backoff", got)
	}
	if got := where(q, b); got != "unschedulable" {
		t.Errorf("b, popped after the event, is in %s, want unschedulable", got)
	}
}

func TestAnUpdateOfThePodInFlightIsAskedWhenItComesBack(t *testing.T) {
	tests := []struct {
		name   string
		update func(p *v1.Pod)
		want   string
	}{
		{name: "a toleration added while TaintToleration rejected it sends it to backoff",
			update: func(p *v1.Pod) {
				p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: "k", Operator: v1.TolerationOpExists})
			}, want: "backoff"},
		{name: "a status-only update (our own condition) leaves it unschedulable",
			update: func(p *v1.Pod) {
				p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse}}
			}, want: "unschedulable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newQueue(Options{})
			pod := st.MakePod().Name("p").Obj()
			q.Add(pod)
			p, _ := q.TryPop()
			updated := pod.DeepCopy()
			tt.update(updated)
			q.Update(pod, updated)
			p.UnschedulablePlugins = sets.New("TaintToleration")
			q.AddUnschedulableIfNotPresent(p, 0)
			if got := where(q, pod); got != tt.want {
				t.Errorf("the pod is in %s, want %s", got, tt.want)
			}
		})
	}
}

func TestARecreatedPodIsNotTheOneInFlight(t *testing.T) {
	q, _ := newQueue(Options{})
	old := st.MakePod().Name("p").UID("old").Obj()
	q.Add(old)
	p, _ := q.TryPop()
	q.Delete(old)
	recreated := st.MakePod().Name("p").UID("new").Obj()
	q.Add(recreated)
	q.Done(p.Pod) // the old incarnation's cycle ends
	got, ok := q.TryPop()
	if !ok || got.Pod.UID != "new" {
		t.Fatalf("TryPop = %v, %v; want the recreated pod", got, ok)
	}
	if where(q, recreated) != "inflight" {
		t.Errorf("the recreated pod is not in flight after its pop")
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

func TestPodsAddedAtTheSameInstantPopInArrivalOrder(t *testing.T) {
	q, _ := newQueue(Options{}) // the clock never moves
	var want []string
	for i := 0; i < 20; i++ {
		name := string(rune('a' + i))
		q.Add(st.MakePod().Name(name).Obj())
		want = append(want, name)
	}
	got := popAll(q)
	if !slices.Equal(got, want) {
		t.Errorf("pop order = %v, want arrival order %v", got, want)
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
			q.MoveAllToActiveOrBackoffQueue(podDeletion, nil, nil, nil)
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

func TestUpdatesOfAnUnschedulablePodMoveItOnlyWhenTheyCanHelp(t *testing.T) {
	tests := []struct {
		name   string
		update func(p *v1.Pod)
		want   string
	}{
		{name: "a new status (a nominated node) is taken but the pod stays",
			update: func(p *v1.Pod) { p.Status.NominatedNodeName = "n1" }, want: "unschedulable"},
		{name: "an added toleration moves a pod TaintToleration rejected",
			update: func(p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}} }, want: "active"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(Options{})
			pod := st.MakePod().Name("p").Obj()
			q.Add(pod)
			failOnce(t, q, "TaintToleration")
			clk.Step(time.Minute)
			updated := pod.DeepCopy()
			tt.update(updated)
			q.Update(pod, updated)
			if got := where(q, pod); got != tt.want {
				t.Fatalf("after the update the pod is in %s, want %s", got, tt.want)
			}
			for _, p := range q.PendingPods() {
				if p.Status.NominatedNodeName != updated.Status.NominatedNodeName || len(p.Spec.Tolerations) != len(updated.Spec.Tolerations) {
					t.Errorf("the queued pod was not replaced by the update")
				}
			}
		})
	}
}
