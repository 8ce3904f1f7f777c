package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics/testutil"
	configv1 "k8s.io/kube-scheduler/config/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubesched/kubesched/internal/cluster/memory"
	"github.com/kubesched/kubesched/internal/config"
	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/internal/scheduler"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

type rl = map[v1.ResourceName]string

type env struct {
	sched *scheduler.Scheduler
	store *memory.Store
	clock *testingclock.FakeClock
}

// failingStore fails Bind for the pods named in fail; for pods named
// "deleted-*" it deletes the pod first, as a user racing the binding would.
type failingStore struct {
	*memory.Store
	fail map[string]bool
}

func (f *failingStore) Bind(ctx context.Context, b *v1.Binding) error {
	if strings.HasPrefix(b.Name, "deleted-") {
		if err := f.Store.DeletePod(b.Namespace, b.Name); err != nil {
			return err
		}
	}
	if f.fail[b.Name] {
		return errors.New("injected bind failure")
	}
	return f.Store.Bind(ctx, b)
}

// tryEnv builds a scheduler and returns New's error.
func tryEnv(registry fwkruntime.Registry, cfg *configv1.KubeSchedulerConfiguration) (*scheduler.Scheduler, error) {
	config.SetDefaults(cfg, scheduler.Known(registry))
	if errs := config.Validate(cfg, scheduler.Known(registry)); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	return scheduler.New(context.Background(), cfg, registry, memory.NewStore(clk), scheduler.WithClock(clk))
}

func newEnv(t *testing.T, registry fwkruntime.Registry, cfg *configv1.KubeSchedulerConfiguration, failBind ...string) *env {
	t.Helper()
	return newEnvWith(t, registry, cfg, nil, failBind...)
}

// newEnvWith is newEnv with extra scheduler options.
func newEnvWith(t *testing.T, registry fwkruntime.Registry, cfg *configv1.KubeSchedulerConfiguration, opts []scheduler.Option, failBind ...string) *env {
	t.Helper()
	if registry == nil {
		registry = plugins.NewInTreeRegistry()
	}
	if cfg == nil {
		cfg = &configv1.KubeSchedulerConfiguration{}
	}
	config.SetDefaults(cfg, scheduler.Known(registry))
	if errs := config.Validate(cfg, scheduler.Known(registry)); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store := memory.NewStore(clk)
	fail := map[string]bool{}
	for _, n := range failBind {
		fail[n] = true
	}
	sched, err := scheduler.New(context.Background(), cfg, registry, &failingStore{Store: store, fail: fail}, append([]scheduler.Option{scheduler.WithClock(clk), scheduler.WithSeed(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	store.SetHandler(sched)
	return &env{sched: sched, store: store, clock: clk}
}

func (e *env) add(t *testing.T, objs ...interface{}) {
	t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *v1.Node:
			err = e.store.AddNode(o)
		case *v1.Pod:
			err = e.store.AddPod(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	e.store.Flush()
}

// drain schedules until activeQ is empty, finishing each binding.
func (e *env) drain() {
	for e.sched.TryScheduleOne(context.Background()) {
		e.sched.WaitForBindings()
		e.store.Flush()
	}
}

func (e *env) pod(t *testing.T, name string) *v1.Pod {
	t.Helper()
	p, ok := e.store.GetPod("default", name)
	if !ok {
		t.Fatalf("pod %s not found", name)
	}
	return p
}

func condition(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func TestUnschedulablePodGetsUpstreamsMessageConditionAndEvent(t *testing.T) {
	e := newEnv(t, nil, nil)
	small := func(n string) *v1.Node {
		return st.MakeNode().Name(n).Capacity(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj()
	}
	e.add(t, small("a"), small("b"), small("c"),
		st.MakeNode().Name("gpu-1").Capacity(rl{v1.ResourceCPU: "8", v1.ResourceMemory: "8Gi"}).Taint("gpu", "true", v1.TaintEffectNoSchedule).Obj(),
		st.MakeNode().Name("gpu-2").Capacity(rl{v1.ResourceCPU: "8", v1.ResourceMemory: "8Gi"}).Taint("gpu", "true", v1.TaintEffectNoSchedule).Obj(),
		st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "2"}).Obj())
	e.drain()
	// No node could ever hold 2 cpus (unresolvable), so preemption cannot help;
	// upstream's message ends with its part, double period included.
	want := "0/5 nodes are available: 2 node(s) had untolerated taint(s), 3 Insufficient cpu. " +
		"preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling."
	c := condition(e.pod(t, "p"))
	if c == nil || c.Status != v1.ConditionFalse || c.Reason != v1.PodReasonUnschedulable || c.Message != want {
		t.Errorf("PodScheduled condition = %+v, want False/Unschedulable/%q", c, want)
	}
	evs := e.store.Events()
	if len(evs) != 1 || evs[0].Reason != "FailedScheduling" || evs[0].Type != v1.EventTypeWarning || evs[0].Message != want {
		t.Errorf("events = %+v, want one FailedScheduling warning with the message", evs)
	}
}

func TestScheduledPodIsBoundWithAnEvent(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.add(t, st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1"}).Obj())
	e.drain()
	if got := e.pod(t, "p").Spec.NodeName; got != "n" {
		t.Fatalf("pod bound to %q, want n", got)
	}
	evs := e.store.Events()
	if len(evs) != 1 || evs[0].Reason != "Scheduled" || evs[0].Message != "Successfully assigned default/p to n" {
		t.Errorf("events = %+v, want Scheduled: Successfully assigned default/p to n", evs)
	}
	if e.sched.Cache.IsAssumedPod(e.pod(t, "p")) {
		t.Error("the pod is still only assumed after the world confirmed its binding")
	}
}

func TestAPodWaitingForRoomIsScheduledWhenANodeIsAdded(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.add(t, st.MakeNode().Name("small").Capacity(rl{v1.ResourceCPU: "1"}).Obj(), st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "2"}).Obj())
	e.drain()
	if _, _, u := e.sched.Queue.Counts(); u != 1 {
		t.Fatalf("unschedulablePods holds %d pods, want 1", u)
	}
	e.clock.Step(2 * time.Second) // past the first backoff, far before the 5-minute flush
	e.add(t, st.MakeNode().Name("big").Capacity(rl{v1.ResourceCPU: "4"}).Obj())
	e.drain()
	if got := e.pod(t, "p").Spec.NodeName; got != "big" {
		t.Errorf("pod bound to %q after the node event, want big", got)
	}
}

func TestABindingFailureForgetsThePodAndRetriesWithBackoff(t *testing.T) {
	e := newEnv(t, nil, nil, "p")
	e.add(t, st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "3"}).Obj())
	e.drain()
	if got := e.pod(t, "p").Spec.NodeName; got != "" {
		t.Fatalf("pod bound to %q despite the failure", got)
	}
	if ni := e.sched.Cache.Dump()["n"]; ni.Requested().MilliCPU != 0 {
		t.Errorf("node n has %dm requested after the failed binding, want 0 (no phantom usage)", ni.Requested().MilliCPU)
	}
	if _, b, _ := e.sched.Queue.Counts(); b != 1 {
		t.Errorf("backoffQ holds %d pods, want the failed pod", b)
	}
	c := condition(e.pod(t, "p"))
	if c == nil || c.Reason != v1.PodReasonSchedulerError || !strings.Contains(c.Message, "injected bind failure") {
		t.Errorf("condition = %+v, want SchedulerError with the bind error", c)
	}
}

func TestAPodNamingAMissingNodeIsRejectedByNodeName(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.add(t, st.MakeNode().Name("a").Obj(), st.MakeNode().Name("b").Obj())
	pod := st.MakePod().Name("p").Obj()
	ex, err := e.sched.Explain(context.Background(), withNodeName(pod, "gone"))
	if err != nil {
		t.Fatal(err)
	}
	// Explain runs PostFilter as a cycle would: preemption cannot help a node
	// cut by a PreFilter restriction.
	want := "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeName]. " +
		"preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
	if ex.FitError != want {
		t.Errorf("message = %q, want %q", ex.FitError, want)
	}
	for _, n := range ex.Nodes {
		if n.Plugin != "NodeName" {
			t.Errorf("node %s rejected by %q, want NodeName", n.Name, n.Plugin)
		}
	}
}

func TestPreFilterRestrictionsThatExcludeEachOtherAreNamedInSortedOrder(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.add(t, st.MakeNode().Name("a").Obj(), st.MakeNode().Name("b").Obj())
	// NodeName (first in the profile) keeps a, NodeAffinity's matchFields b.
	pod := st.MakePod().Name("p").RequiredNodeAffinityTerm(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
		{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}}).Obj()
	ex, err := e.sched.Explain(context.Background(), withNodeName(pod, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0/2 nodes are available: node(s) didn't satisfy plugin(s) [NodeAffinity NodeName] simultaneously."; !strings.HasPrefix(ex.FitError, want) {
		t.Errorf("message = %q, want it to start with %q (kube-scheduler lists the plugins as a sorted set)", ex.FitError, want)
	}
}

func TestNodesLeftOutByTwoPreFilterRestrictionsNameThemSorted(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.add(t, st.MakeNode().Name("a").Obj(), st.MakeNode().Name("b").Obj())
	// NodeName and NodeAffinity's matchFields both keep only a node that
	// does not exist.
	pod := st.MakePod().Name("p").RequiredNodeAffinityTerm(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{
		{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"gone"}}}}).Obj()
	ex, err := e.sched.Explain(context.Background(), withNodeName(pod, "gone"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity NodeName]."; !strings.HasPrefix(ex.FitError, want) {
		t.Errorf("message = %q, want it to start with %q (kube-scheduler lists the plugins as a sorted set)", ex.FitError, want)
	}
	for _, n := range ex.Nodes {
		if n.Plugin != "NodeAffinity,NodeName" {
			t.Errorf("node %s rejected by %q, want NodeAffinity,NodeName", n.Name, n.Plugin)
		}
	}
}

func withNodeName(p *v1.Pod, n string) *v1.Pod { p.Spec.NodeName = n; return p }

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		name       string
		percentage int32
		nodes      int32
		want       int32
	}{
		{name: "below 100 nodes all are searched", nodes: 99, want: 99},
		{name: "at 1000 nodes the adaptive percentage is 42%", nodes: 1000, want: 420},
		{name: "at 5000 nodes the adaptive percentage is 10%", nodes: 5000, want: 500},
		{name: "the adaptive percentage never goes below 5%", nodes: 10000, want: 500},
		{name: "never fewer than 100 nodes", percentage: 1, nodes: 1000, want: 100},
		{name: "a configured 100% searches every node", percentage: 100, nodes: 5000, want: 5000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scheduler.NumFeasibleNodesToFind(tt.percentage, tt.nodes); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTiesAreBrokenBySeededRandomness(t *testing.T) {
	choose := func(seed int64) []string {
		e := newEnv(t, nil, nil)
		for i := 0; i < 8; i++ {
			e.add(t, st.MakeNode().Name(fmt.Sprintf("n%d", i)).Capacity(rl{v1.ResourceCPU: "100"}).Obj())
		}
		for i := 0; i < 8; i++ {
			e.add(t, st.MakePod().Name(fmt.Sprintf("p%d", i)).Obj())
		}
		e.drain()
		var out []string
		for i := 0; i < 8; i++ {
			out = append(out, e.pod(t, fmt.Sprintf("p%d", i)).Spec.NodeName)
		}
		return out
	}
	a, b := choose(1), choose(1)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the same seed chose %v then %v", a, b)
	}
}

// panicky panics at one extension point for the pod named "bad".
type panicky struct{ at string }

func (panicky) Name() string { return "Panicky" }
func (p panicky) boom(point string, pod *v1.Pod) {
	if p.at == point && pod.Name == "bad" {
		panic("boom")
	}
}
func (p panicky) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ *framework.NodeInfo) *framework.Status {
	p.boom("Filter", pod)
	return nil
}
func (p panicky) Score(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ *framework.NodeInfo) (int64, *framework.Status) {
	p.boom("Score", pod)
	return 0, nil
}
func (panicky) ScoreExtensions() framework.ScoreExtensions { return nil }
func (p panicky) Reserve(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) *framework.Status {
	p.boom("Reserve", pod)
	return nil
}
func (panicky) Unreserve(context.Context, *framework.CycleState, *v1.Pod, string) {}
func (p panicky) PreBind(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) *framework.Status {
	p.boom("PreBind", pod)
	return nil
}

func TestAPanickingPluginFailsTheCycleNotTheScheduler(t *testing.T) {
	for _, at := range []string{"Filter", "Score", "Reserve", "PreBind"} {
		t.Run("a panic in "+at+" fails only that pod", func(t *testing.T) {
			registry := plugins.NewInTreeRegistry()
			registry["Panicky"] = func(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
				return panicky{at: at}, nil
			}
			cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
				MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Panicky"}}}}}}}
			e := newEnv(t, registry, cfg)
			e.add(t, st.MakeNode().Name("n1").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakeNode().Name("n2").Capacity(rl{v1.ResourceCPU: "4"}).Obj(),
				st.MakePod().Name("bad").Req(rl{v1.ResourceCPU: "1"}).Obj())
			e.drain()
			c := condition(e.pod(t, "bad"))
			if c == nil || c.Reason != v1.PodReasonSchedulerError || !strings.Contains(c.Message, "panicked") {
				t.Errorf("condition = %+v, want a SchedulerError naming the panic", c)
			}
			for _, n := range []string{"n1", "n2"} {
				if ni := e.sched.Cache.Dump()[n]; ni.Requested().MilliCPU != 0 {
					t.Errorf("node %s has %dm requested after the failed cycle, want 0", n, ni.Requested().MilliCPU)
				}
			}
			e.add(t, st.MakePod().Name("q").Obj())
			e.drain()
			if got := e.pod(t, "q").Spec.NodeName; got == "" {
				t.Error("the scheduler stopped scheduling after a plugin panic")
			}
		})
	}
}

func TestAPodDeletedWhileBindingIsNeitherRequeuedNorCounted(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.add(t, st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakePod().Name("deleted-p").Req(rl{v1.ResourceCPU: "3"}).Obj())
	e.drain()
	if _, ok := e.store.GetPod("default", "deleted-p"); ok {
		t.Fatal("the pod was not deleted")
	}
	if a, b, u := e.sched.Queue.Counts(); a+b+u != 0 || e.sched.Queue.InFlight() != 0 {
		t.Errorf("queue holds %d/%d/%d pods and %d in flight after the pod was deleted, want none", a, b, u, e.sched.Queue.InFlight())
	}
	if ni := e.sched.Cache.Dump()["n"]; ni.Requested().MilliCPU != 0 {
		t.Errorf("node n has %dm requested, want 0 (no phantom usage)", ni.Requested().MilliCPU)
	}
	if _, pods := e.sched.Cache.Counts(); pods != 0 {
		t.Errorf("cache holds %d pods, want 0", pods)
	}
}

// TestAPodHelpedOnlyByTheFlushIsCounted: a pod rejected by NodeAffinity
// waits for node events; here the node changes without an event reaching
// the queue (as when no rejecting plugin registered for it), so only the
// five-minute flush retries the pod, and its success is counted in
// scheduler_pods_scheduled_after_flush_total.
func TestAPodHelpedOnlyByTheFlushIsCounted(t *testing.T) {
	metrics.Register()
	before, _ := testutil.GetCounterMetricValue(metrics.PodsScheduledAfterFlush)
	e := newEnv(t, nil, nil)
	e.add(t, st.MakeNode().Name("n").Label("pool", "a").Obj(), st.MakePod().Name("p").NodeSelector("pool", "b").Obj())
	e.drain()
	if _, _, u := e.sched.Queue.Counts(); u != 1 {
		t.Fatalf("unschedulablePods holds %d pods, want 1", u)
	}
	// Change the node behind the scheduler's back (no event), as a
	// missing queueing hint would look: only the flush retries the pod.
	e.sched.Cache.UpdateNode(nil, st.MakeNode().Name("n").Label("pool", "b").Obj())
	e.clock.Step(5 * time.Minute)
	e.sched.Queue.FlushUnschedulablePodsLeftover()
	e.drain()
	if got := e.pod(t, "p").Spec.NodeName; got != "n" {
		t.Fatalf("pod bound to %q after the flush, want n", got)
	}
	after, _ := testutil.GetCounterMetricValue(metrics.PodsScheduledAfterFlush)
	if after-before != 1 {
		t.Errorf("scheduler_pods_scheduled_after_flush_total grew by %v, want 1", after-before)
	}
}

func TestANominatedPodGoesToItsNominatedNodeWhenItFitsThere(t *testing.T) {
	tests := []struct {
		name      string
		nominated string
		want      string
	}{
		// LeastAllocated prefers the big node; the nomination wins.
		{name: "a pod nominated to the small node lands there although the big one scores higher", nominated: "small", want: "small"},
		{name: "a pod without a nomination lands on the best-scored node", nominated: "", want: "big"},
		{name: "a pod nominated to a node that is gone is scheduled as usual", nominated: "gone", want: "big"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil, nil)
			p := st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "500m"}).Obj()
			p.Status.NominatedNodeName = tt.nominated
			e.add(t, st.MakeNode().Name("big").Capacity(rl{v1.ResourceCPU: "16", v1.ResourceMemory: "32Gi"}).Obj(),
				st.MakeNode().Name("small").Capacity(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).Obj(), p)
			e.drain()
			if got := e.pod(t, "p").Spec.NodeName; got != tt.want {
				t.Errorf("bound to %q, want %q", got, tt.want)
			}
		})
	}
}

// rejecting rejects every pod at one extension point, with "no room here".
type rejecting struct{ at string }

func (rejecting) Name() string { return "Rejecting" }
func (r rejecting) status(point string) *framework.Status {
	if r.at == point {
		return framework.NewStatus(framework.Unschedulable, "no room here")
	}
	return nil
}
func (r rejecting) Reserve(context.Context, *framework.CycleState, *v1.Pod, string) *framework.Status {
	return r.status("Reserve")
}
func (rejecting) Unreserve(context.Context, *framework.CycleState, *v1.Pod, string) {}
func (r rejecting) Permit(context.Context, *framework.CycleState, *v1.Pod, string) (*framework.Status, time.Duration) {
	return r.status("Permit"), 0
}
func (r rejecting) PreBind(context.Context, *framework.CycleState, *v1.Pod, string) *framework.Status {
	return r.status("PreBind")
}

func TestRejectionsAfterFilterAreReportedAsUpstream(t *testing.T) {
	tests := []struct {
		at          string
		wantMessage string
		// wantWaiting: the pod waits in unschedulablePods for an event of
		// the rejecting plugin; otherwise it backs off as after an error.
		wantWaiting bool
	}{
		{at: "Reserve", wantMessage: "0/1 nodes are available: 1 no room here.", wantWaiting: true},
		{at: "Permit", wantMessage: "0/1 nodes are available: 1 no room here.", wantWaiting: true},
		{at: "PreBind", wantMessage: "no room here", wantWaiting: false},
	}
	for _, tt := range tests {
		t.Run("a rejection at "+tt.at+" reads "+tt.wantMessage, func(t *testing.T) {
			registry := plugins.NewInTreeRegistry()
			registry["Rejecting"] = func(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
				return rejecting{at: tt.at}, nil
			}
			cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
				MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Rejecting"}}}}}}}
			e := newEnv(t, registry, cfg)
			e.add(t, st.MakeNode().Name("n1").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakePod().Name("p").Obj())
			e.drain()
			c := condition(e.pod(t, "p"))
			if c == nil || c.Reason != v1.PodReasonUnschedulable || c.Message != tt.wantMessage {
				t.Fatalf("condition = %+v, want Unschedulable %q", c, tt.wantMessage)
			}
			_, backoff, unschedulable := e.sched.Queue.Counts()
			if got := unschedulable == 1; got != tt.wantWaiting || backoff+unschedulable != 1 {
				t.Errorf("backoff %d, unschedulable %d; want waiting for an event = %v", backoff, unschedulable, tt.wantWaiting)
			}
			if ni := e.sched.Cache.Dump()["n1"]; ni.Requested().MilliCPU != 0 || len(ni.Pods()) != 0 {
				t.Errorf("the rejected pod is still counted on n1")
			}
		})
	}
}

// panickyPostBind panics in PostBind, after the pod is bound.
type panickyPostBind struct{}

func (panickyPostBind) Name() string { return "PanickyPostBind" }
func (panickyPostBind) PostBind(context.Context, *framework.CycleState, *v1.Pod, string) {
	panic("boom after binding")
}

func TestAPanicInPostBindLeavesTheBoundPodAlone(t *testing.T) {
	registry := plugins.NewInTreeRegistry()
	registry["PanickyPostBind"] = func(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
		return panickyPostBind{}, nil
	}
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "PanickyPostBind"}}}}}}}
	e := newEnv(t, registry, cfg)
	e.add(t, st.MakeNode().Name("n1").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1"}).Obj())
	// Before the world's confirmation arrives (a watch that lags), the
	// pod must still be counted where it was bound.
	e.sched.TryScheduleOne(context.Background())
	e.sched.WaitForBindings()
	if ni := e.sched.Cache.Dump()["n1"]; ni.Requested().MilliCPU != 1000 {
		t.Errorf("before the confirmation n1 has %dm requested, want the bound pod's 1000m", ni.Requested().MilliCPU)
	}
	e.store.Flush()
	e.drain()
	p := e.pod(t, "p")
	if p.Spec.NodeName != "n1" {
		t.Fatalf("the pod is on %q, want n1", p.Spec.NodeName)
	}
	if c := condition(p); c != nil && c.Status == v1.ConditionFalse {
		t.Errorf("a bound pod got a failure condition: %+v", c)
	}
	if a, b, u := e.sched.Queue.Counts(); a+b+u != 0 {
		t.Errorf("the bound pod was requeued: active %d, backoff %d, unschedulable %d", a, b, u)
	}
	if ni := e.sched.Cache.Dump()["n1"]; ni.Requested().MilliCPU != 1000 {
		t.Errorf("n1 has %dm requested, want the bound pod's 1000m", ni.Requested().MilliCPU)
	}
}
