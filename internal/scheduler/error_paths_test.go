package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/scheduler"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
	"github.com/kubesched/kubesched/pkg/plugins/gangscheduling"
)

// reserver records Reserve and Unreserve, with whether Unreserve's context
// can be cancelled; its Reserve panics for pods named "crash-*", its
// Permit holds pods named "hold-*" and panics for pods named "boom-*".
type reserver struct {
	mu    sync.Mutex
	calls []string
}

func (*reserver) Name() string { return "Reserver" }
func (r *reserver) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}
func (r *reserver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}
func (r *reserver) Reserve(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) *framework.Status {
	r.record("Reserve " + pod.Name)
	if strings.HasPrefix(pod.Name, "crash-") {
		panic("Reserve exploded")
	}
	return nil
}
func (r *reserver) Unreserve(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) {
	r.record(fmt.Sprintf("Unreserve %s (cancellable: %v)", pod.Name, ctx.Done() != nil))
}
func (r *reserver) Permit(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) (*framework.Status, time.Duration) {
	switch {
	case strings.HasPrefix(pod.Name, "hold-"):
		return framework.NewStatus(framework.Wait), 10 * time.Minute
	case strings.HasPrefix(pod.Name, "boom-"):
		panic("Permit exploded")
	}
	return nil, 0
}

func reserverEnv(t *testing.T, r *reserver) *env {
	t.Helper()
	registry := plugins.NewInTreeRegistry()
	registry["Reserver"] = func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) { return r, nil }
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Reserver"}}}}}}}
	e := newEnv(t, registry, cfg)
	e.add(t, st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "10", v1.ResourcePods: "10"}).Obj())
	return e
}

func TestWhatReservePluginsHoldIsReleasedOnEveryErrorPath(t *testing.T) {
	tests := []struct {
		name string
		pod  string
		// then acts once the pod's cycle ran.
		then      func(t *testing.T, e *env)
		wantCalls []string
		wantCond  string
	}{
		{
			name: "a pod deleted while it waits at Permit is unreserved with a context its deletion does not cancel",
			pod:  "hold-a",
			then: func(t *testing.T, e *env) {
				if err := e.store.DeletePod("default", "hold-a"); err != nil {
					t.Fatal(err)
				}
				e.store.Flush()
			},
			wantCalls: []string{"Reserve hold-a", "Unreserve hold-a (cancellable: false)"},
		},
		{
			name:      "a Permit plugin's panic unreserves the pod before it is forgotten",
			pod:       "boom-a",
			wantCalls: []string{"Reserve boom-a", "Unreserve boom-a (cancellable: false)"},
			wantCond:  "SchedulerError: running Permit plugin \"Reserver\": plugin Reserver panicked in Permit: Permit exploded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &reserver{}
			e := reserverEnv(t, r)
			e.add(t, st.MakePod().Name(tt.pod).UID("uid-"+tt.pod).Req(rl{v1.ResourceCPU: "1"}).Obj())
			for e.sched.TryScheduleOne(context.Background()) {
			}
			if tt.then != nil {
				tt.then(t, e)
			}
			e.sched.WaitForBindings()
			e.store.Flush()
			if got := fmt.Sprint(r.got()); got != fmt.Sprint(tt.wantCalls) {
				t.Errorf("calls %v, want %v", got, tt.wantCalls)
			}
			if _, pods := e.sched.Cache.Counts(); pods != 0 {
				t.Errorf("cache holds %d pods, want none", pods)
			}
			if tt.wantCond != "" {
				c := condition(e.pod(t, tt.pod))
				if c == nil || c.Reason+": "+c.Message != tt.wantCond {
					t.Errorf("condition %+v, want %q", c, tt.wantCond)
				}
			}
		})
	}
}

// brokenGroupPostFilter fails every PodGroupPostFilter with an error.
type brokenGroupPostFilter struct{}

func (brokenGroupPostFilter) Name() string { return "Broken" }
func (brokenGroupPostFilter) PodGroupPostFilter(context.Context, *framework.PodGroupCycleState, *framework.QueuedPodGroupInfo, framework.PodGroupSchedulingFunc) (*framework.PodGroupPostFilterResult, *framework.Status) {
	return nil, framework.AsStatus(errors.New("out of order"))
}

func TestAPodGroupPostFilterErrorFailsTheMembersButTheGroupBacksOffAsUnschedulable(t *testing.T) {
	registry := plugins.NewInTreeRegistry()
	registry[gangscheduling.Name] = gangscheduling.New
	registry["Broken"] = func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) {
		return brokenGroupPostFilter{}, nil
	}
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
		PodGroupPostFilter: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Broken"}}, Disabled: []configv1.Plugin{{Name: "*"}}}}}}}
	e := newEnvWith(t, registry, cfg, []scheduler.Option{scheduler.WithPluginFeatures(framework.Features{GenericWorkload: true})})
	e.add(t, st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "100", v1.ResourcePods: "100"}).Obj())
	if err := e.store.AddPodGroup(st.MakePodGroup("g").Gang(2).Obj()); err != nil {
		t.Fatal(err)
	}
	e.add(t,
		st.MakePod().Name("a").UID("uid-a").InGroup("g").Req(rl{v1.ResourceCPU: "60"}).Obj(),
		st.MakePod().Name("b").UID("uid-b").InGroup("g").Req(rl{v1.ResourceCPU: "60"}).Obj())
	e.drain()
	for _, name := range []string{"a", "b"} {
		c := condition(e.pod(t, name))
		if c == nil || c.Reason != v1.PodReasonSchedulerError || !strings.Contains(c.Message, "out of order") {
			t.Errorf("pod %s: condition %+v, want SchedulerError with the plugin's error", name, c)
		}
	}
	if !e.sched.Queue.OnlyRejectedGroupsBackingOff() {
		active, backoff, unsched := e.sched.Queue.Counts()
		t.Errorf("the group backs off as after an error (queue %d/%d/%d); want the algorithm's Unschedulable, as upstream's rootStatus", active, backoff, unsched)
	}
}

// panickyGroupPostFilter panics in every PodGroupPostFilter.
type panickyGroupPostFilter struct{}

func (panickyGroupPostFilter) Name() string { return "Panicky" }
func (panickyGroupPostFilter) PodGroupPostFilter(context.Context, *framework.PodGroupCycleState, *framework.QueuedPodGroupInfo, framework.PodGroupSchedulingFunc) (*framework.PodGroupPostFilterResult, *framework.Status) {
	panic("PodGroupPostFilter exploded")
}

func TestAPanicInAGroupsCycleFailsItsMembersReleasesTheirReservationsAndTheSchedulerGoesOn(t *testing.T) {
	tests := []struct {
		name      string
		members   []string
		cpu       string
		wantCalls []string
		wantMsg   string
	}{
		{
			name:    "a Reserve plugin's panic for one member fails the group and unreserves every member placed before",
			members: []string{"a", "crash-b"}, cpu: "1",
			wantCalls: []string{"Reserve a", "Reserve crash-b", "Unreserve crash-b (cancellable: false)", "Unreserve a (cancellable: false)"},
			wantMsg:   "plugin Reserver panicked in Reserve: Reserve exploded",
		},
		{
			name:    "a PodGroupPostFilter plugin's panic fails the group that did not fit",
			members: []string{"a", "b"}, cpu: "60",
			wantCalls: []string{"Reserve a", "Unreserve a (cancellable: false)"},
			wantMsg:   "pod group post filter panicked: PodGroupPostFilter exploded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &reserver{}
			registry := plugins.NewInTreeRegistry()
			registry[gangscheduling.Name] = gangscheduling.New
			registry["Reserver"] = func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) { return r, nil }
			registry["Panicky"] = func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) {
				return panickyGroupPostFilter{}, nil
			}
			cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
				MultiPoint:         configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Reserver"}}},
				PodGroupPostFilter: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Panicky"}}, Disabled: []configv1.Plugin{{Name: "*"}}}}}}}
			e := newEnvWith(t, registry, cfg, []scheduler.Option{scheduler.WithPluginFeatures(framework.Features{GenericWorkload: true})})
			e.add(t, st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "100", v1.ResourcePods: "100"}).Obj())
			if err := e.store.AddPodGroup(st.MakePodGroup("g").Gang(2).Obj()); err != nil {
				t.Fatal(err)
			}
			for _, m := range tt.members {
				e.add(t, st.MakePod().Name(m).UID("uid-"+m).InGroup("g").Req(rl{v1.ResourceCPU: tt.cpu}).Obj())
			}
			e.drain()
			if got := fmt.Sprint(r.got()); got != fmt.Sprint(tt.wantCalls) {
				t.Errorf("calls %v, want %v", got, tt.wantCalls)
			}
			for _, m := range tt.members {
				c := condition(e.pod(t, m))
				if c == nil || c.Reason != v1.PodReasonSchedulerError || !strings.Contains(c.Message, tt.wantMsg) {
					t.Errorf("pod %s: condition %+v, want SchedulerError with %q", m, c, tt.wantMsg)
				}
			}
			if _, pods := e.sched.Cache.Counts(); pods != 0 {
				t.Errorf("cache holds %d pods, want none", pods)
			}
			// The scheduler goes on: a plain pod is bound after it.
			e.add(t, st.MakePod().Name("plain").UID("uid-plain").Req(rl{v1.ResourceCPU: "1"}).Obj())
			e.drain()
			if p := e.pod(t, "plain"); p.Spec.NodeName != "n" {
				t.Errorf("pod plain on %q after the group's failure, want n", p.Spec.NodeName)
			}
		})
	}
}
