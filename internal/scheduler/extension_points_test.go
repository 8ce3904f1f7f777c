package scheduler_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// gatekeeper reserves and makes every pod wait at Permit.
type gatekeeper struct {
	reserved, unreserved atomic.Int32
}

func (*gatekeeper) Name() string { return "Gatekeeper" }
func (g *gatekeeper) Reserve(context.Context, *framework.CycleState, *v1.Pod, string) *framework.Status {
	g.reserved.Add(1)
	return nil
}
func (g *gatekeeper) Unreserve(context.Context, *framework.CycleState, *v1.Pod, string) {
	g.unreserved.Add(1)
}
func (*gatekeeper) Permit(context.Context, *framework.CycleState, *v1.Pod, string) (*framework.Status, time.Duration) {
	return framework.NewStatus(framework.Wait), 10 * time.Second
}

func permitEnv(t *testing.T) (*env, *gatekeeper) {
	g := &gatekeeper{}
	registry := plugins.NewInTreeRegistry()
	registry["Gatekeeper"] = func(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) { return g, nil }
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Gatekeeper"}}}}}}}
	e := newEnv(t, registry, cfg)
	e.add(t, st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4"}).Obj(), st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1"}).Obj())
	return e, g
}

func TestAPodAllowedAtPermitIsBound(t *testing.T) {
	e, g := permitEnv(t)
	if !e.sched.TryScheduleOne(context.Background()) {
		t.Fatal("nothing to schedule")
	}
	fwk, _ := e.sched.Profile("default-scheduler")
	waiting := 0
	fwk.IterateOverWaitingPods(func(wp framework.WaitingPod) {
		waiting++
		wp.Allow("Gatekeeper")
	})
	if waiting != 1 {
		t.Fatalf("%d pods waiting at Permit, want 1", waiting)
	}
	e.sched.WaitForBindings()
	e.store.Flush()
	if got := e.pod(t, "p").Spec.NodeName; got != "n" {
		t.Errorf("pod bound to %q, want n", got)
	}
	if g.reserved.Load() != 1 || g.unreserved.Load() != 0 {
		t.Errorf("reserve/unreserve = %d/%d, want 1/0", g.reserved.Load(), g.unreserved.Load())
	}
}

// endWaitAndCheckUnbound runs end, which ends p's wait at Permit without
// an Allow, lets p's binding cycle finish, checks p is unbound and
// unreserved, and returns its PodScheduled condition.
func endWaitAndCheckUnbound(t *testing.T, e *env, g *gatekeeper, end func()) *v1.PodCondition {
	t.Helper()
	end()
	e.sched.WaitForBindings()
	e.store.Flush()
	if got := e.pod(t, "p").Spec.NodeName; got != "" {
		t.Errorf("pod bound to %q after its wait at Permit ended without an Allow", got)
	}
	if g.unreserved.Load() != 1 {
		t.Errorf("unreserve ran %d times, want 1", g.unreserved.Load())
	}
	return condition(e.pod(t, "p"))
}

func TestAPodTimingOutAtPermitIsUnreservedAndRequeued(t *testing.T) {
	e, g := permitEnv(t)
	if !e.sched.TryScheduleOne(context.Background()) {
		t.Fatal("nothing to schedule")
	}
	// Permit registered the waiting pod within the scheduling cycle.
	fwk, _ := e.sched.Profile("default-scheduler")
	if fwk.GetWaitingPod("uid-p") == nil {
		t.Fatal("the pod is not waiting at Permit")
	}
	c := endWaitAndCheckUnbound(t, e, g, func() { e.clock.Step(10 * time.Second) })
	if c == nil || !strings.Contains(c.Message, "rejected due to timeout after waiting 10s at plugin Gatekeeper") {
		t.Errorf("condition = %+v, want upstream's timeout message", c)
	}
	if ni := e.sched.Cache.Dump()["n"]; ni.Requested().MilliCPU != 0 {
		t.Errorf("node n has %dm requested after the rejection, want 0", ni.Requested().MilliCPU)
	}
	if !e.sched.Queue.Has(e.pod(t, "p")) {
		t.Error("the rejected pod is not back in the queue")
	}
}

func TestProfilesScheduleTheirOwnPods(t *testing.T) {
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{
		{SchedulerName: ptr.To("default-scheduler")},
		{SchedulerName: ptr.To("packer"), PluginConfig: []configv1.PluginConfig{{Name: "NodeResourcesFit",
			Args: runtime.RawExtension{Object: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated}}}}}},
	}}
	e := newEnv(t, nil, cfg)
	e.add(t,
		st.MakeNode().Name("busy").Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj(),
		st.MakeNode().Name("idle").Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj(),
		st.MakePod().Name("existing").Node("busy").Req(rl{v1.ResourceCPU: "2", v1.ResourceMemory: "4Gi"}).Obj(),
		st.MakePod().Name("spread").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj(),
		st.MakePod().Name("packed").SchedulerName("packer").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj(),
		st.MakePod().Name("foreign").SchedulerName("someone-else").Obj(),
	)
	e.drain()
	if got := e.pod(t, "spread").Spec.NodeName; got != "idle" {
		t.Errorf("default profile placed its pod on %q, want idle (LeastAllocated)", got)
	}
	if got := e.pod(t, "packed").Spec.NodeName; got != "busy" {
		t.Errorf("packer profile placed its pod on %q, want busy (MostAllocated)", got)
	}
	if e.sched.Queue.Has(e.pod(t, "foreign")) || e.pod(t, "foreign").Spec.NodeName != "" {
		t.Error("a pod of another scheduler was queued or bound")
	}
}

func TestProfilesMustShareTheQueueSort(t *testing.T) {
	registry := plugins.NewInTreeRegistry()
	registry["OtherSort"] = func(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
		return otherSort{}, nil
	}
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{
		{SchedulerName: ptr.To("a")},
		{SchedulerName: ptr.To("b"), Plugins: &configv1.Plugins{QueueSort: configv1.PluginSet{
			Enabled: []configv1.Plugin{{Name: "OtherSort"}}, Disabled: []configv1.Plugin{{Name: "*"}}}}},
	}}
	_, err := tryEnv(registry, cfg)
	if err == nil || !strings.Contains(err.Error(), "profiles[1].plugins.queueSort") || !strings.Contains(err.Error(), "must be the same for all profiles") {
		t.Errorf("error = %v, want profiles[1].plugins.queueSort ... must be the same for all profiles", err)
	}
}

type otherSort struct{}

func (otherSort) Name() string                            { return "OtherSort" }
func (otherSort) Less(a, b *framework.QueuedPodInfo) bool { return a.Pod.Name < b.Pod.Name }

// A pod preempted while it waits at Permit (upstream's waitingPod.Preempt)
// fails with an error, not a rejection: it backs off and is retried,
// rather than waiting in unschedulablePods for an event its preemptor's
// plugin never registered.
func TestAPodPreemptedAtPermitBacksOffAsAfterAnError(t *testing.T) {
	e, g := permitEnv(t)
	if !e.sched.TryScheduleOne(context.Background()) {
		t.Fatal("nothing to schedule")
	}
	fwk, _ := e.sched.Profile("default-scheduler")
	wp := fwk.GetWaitingPod("uid-p")
	if wp == nil {
		t.Fatal("the pod is not waiting at Permit")
	}
	c := endWaitAndCheckUnbound(t, e, g, func() {
		if !wp.Preempt("DefaultPreemption", "preempted") {
			t.Fatal("Preempt of a waiting pod = false, want true")
		}
		if wp.Preempt("DefaultPreemption", "preempted") {
			t.Error("a second Preempt = true; the wait had already ended")
		}
	})
	if c == nil || c.Reason != v1.PodReasonSchedulerError || c.Message != "waiting on permit for pod: preempted" {
		t.Errorf("condition = %+v, want reason %s and upstream's message", c, v1.PodReasonSchedulerError)
	}
	if active, backoff, unschedulable := e.sched.Queue.Counts(); active != 0 || backoff != 1 || unschedulable != 0 {
		t.Errorf("queue active/backoff/unschedulable = %d/%d/%d, want 0/1/0", active, backoff, unschedulable)
	}
}
