package scheduler_test

import (
	"context"
	"fmt"
	"sort"
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

// holder's Permit holds the pods named "hold-*" (a gang's first members
// waiting for the last, shortened to one pod).
type holder struct{}

func (holder) Name() string { return "Holder" }
func (holder) Permit(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) (*framework.Status, time.Duration) {
	if len(pod.Name) > 5 && pod.Name[:5] == "hold-" {
		return framework.NewStatus(framework.Wait), 10 * time.Minute
	}
	return nil, 0
}

// hook's PreFilter calls fn for each pod it sees (members of a group's
// cycle included).
type hook struct{ fn func(pod *v1.Pod) }

func (hook) Name() string { return "Hook" }
func (h *hook) PreFilter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if h.fn != nil {
		h.fn(pod)
	}
	return nil, nil
}
func (hook) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// groupEnv is a scheduler with the GenericWorkload gate on, GangScheduling
// and the test plugins Waiter (PreBind), Holder (Permit) and Hook
// (PreFilter), over one roomy node.
func groupEnv(t *testing.T, w *waiter, h *hook) *env {
	t.Helper()
	registry := plugins.NewInTreeRegistry()
	registry[gangscheduling.Name] = gangscheduling.New
	registry["Waiter"] = func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) { return w, nil }
	registry["Holder"] = func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) {
		return holder{}, nil
	}
	registry["Hook"] = func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) { return h, nil }
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Waiter"}, {Name: "Holder"}, {Name: "Hook"}}}}}}}
	e := newEnvWith(t, registry, cfg, []scheduler.Option{scheduler.WithPluginFeatures(framework.Features{GenericWorkload: true})})
	e.add(t, st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "100", v1.ResourcePods: "100"}).Obj())
	return e
}

// groupMembers lists a group's pods in the cache's state: all, and the
// unscheduled ones by name (name/uid, sorted).
func groupMembers(t *testing.T, e *env, group string) (all int, unscheduled []string) {
	t.Helper()
	st, ok := e.sched.Cache.PodGroupState("default", group)
	if !ok {
		return 0, nil
	}
	for name, p := range st.UnscheduledPods() {
		unscheduled = append(unscheduled, name+"/"+string(p.UID))
	}
	sort.Strings(unscheduled)
	return st.AllPodsCount(), unscheduled
}

func TestAGroupMemberDeletedWhileItsBindingCycleWaitsLeavesItsGroup(t *testing.T) {
	tests := []struct {
		name string
		// prefix of the member that waits (wait-: in PreBind; hold-: at
		// Permit) and is deleted.
		prefix string
	}{
		{name: "a member deleted while its PreBind waits is removed from its group, not put back as unscheduled", prefix: "wait-"},
		{name: "a member deleted while it waits at Permit is removed from its group when its binding cycle ends", prefix: "hold-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &waiter{}
			e := groupEnv(t, w, &hook{})
			if err := e.store.AddPodGroup(st.MakePodGroup("g").Obj()); err != nil {
				t.Fatal(err)
			}
			doomed := tt.prefix + "a"
			e.add(t,
				st.MakePod().Name(doomed).UID("uid-1").InGroup("g").Req(rl{v1.ResourceCPU: "1"}).Obj(),
				st.MakePod().Name("b").UID("uid-b").InGroup("g").Req(rl{v1.ResourceCPU: "1"}).Obj())
			for e.sched.TryScheduleOne(context.Background()) {
			}
			eventually(t, "pod b bound", func() bool {
				p, ok := e.store.GetPod("default", "b")
				return ok && p.Spec.NodeName == "n"
			})
			eventually(t, doomed+" assumed and waiting", func() bool {
				p, ok := e.sched.Cache.GetPod(st.MakePod().Name(doomed).UID("uid-1").Obj())
				return ok && e.sched.Cache.IsAssumedPod(p) && (tt.prefix != "wait-" || w.waiting.Load() == 1)
			})
			if err := e.store.DeletePod("default", doomed); err != nil {
				t.Fatal(err)
			}
			e.store.Flush()
			e.sched.WaitForBindings()
			e.store.Flush()
			if all, unscheduled := groupMembers(t, e, "g"); all != 1 || len(unscheduled) != 0 {
				t.Errorf("group g holds %d pods, unscheduled %v; want only b, bound", all, unscheduled)
			}
			// The same name again: one unscheduled member, the new one.
			e.add(t, st.MakePod().Name(doomed).UID("uid-2").InGroup("g").Req(rl{v1.ResourceCPU: "1"}).Obj())
			if all, unscheduled := groupMembers(t, e, "g"); all != 2 || fmt.Sprint(unscheduled) != "["+doomed+"/uid-2]" {
				t.Errorf("after %s is created again, group g holds %d pods, unscheduled %v; want 2, [%s/uid-2]", doomed, all, unscheduled, doomed)
			}
		})
	}
}

func TestAGroupsMembersAreAssumedInItsCyclesSnapshotNotInTheCache(t *testing.T) {
	tests := []struct {
		name string
		// deleteFirst: member a is deleted (and its event handled) while
		// member b's filters run.
		deleteFirst bool
		wantAll     int
		wantBound   []string
	}{
		{name: "a member placed earlier in the cycle is not assumed in the cache while the next member is tried", wantAll: 2, wantBound: []string{"a", "b"}},
		{name: "a member deleted while its group's cycle runs leaves its group at once and is not bound", deleteFirst: true, wantAll: 1, wantBound: []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hook{}
			e := groupEnv(t, &waiter{}, h)
			a := st.MakePod().Name("a").UID("uid-a").InGroup("g").Req(rl{v1.ResourceCPU: "1"}).Obj()
			var seen []string
			h.fn = func(pod *v1.Pod) {
				if pod.Name != "b" {
					return
				}
				cached, ok := e.sched.Cache.GetPod(a)
				seen = append(seen, fmt.Sprintf("a in the cache: %v", ok && e.sched.Cache.IsAssumedPod(cached)))
				if tt.deleteFirst {
					if err := e.store.DeletePod("default", "a"); err != nil {
						t.Error(err)
					}
					e.store.Flush()
				}
			}
			if err := e.store.AddPodGroup(st.MakePodGroup("g").Gang(1).Obj()); err != nil {
				t.Fatal(err)
			}
			e.add(t, a, st.MakePod().Name("b").UID("uid-b").InGroup("g").Req(rl{v1.ResourceCPU: "1"}).Obj())
			e.drain()
			if fmt.Sprint(seen) != "[a in the cache: false]" {
				t.Errorf("while b's filters ran: %v, want [a in the cache: false]", seen)
			}
			var bound []string
			for _, p := range e.store.Pods() {
				if p.Spec.NodeName != "" {
					bound = append(bound, p.Name)
				}
			}
			sort.Strings(bound)
			if fmt.Sprint(bound) != fmt.Sprint(tt.wantBound) {
				t.Errorf("bound %v, want %v", bound, tt.wantBound)
			}
			if all, unscheduled := groupMembers(t, e, "g"); all != tt.wantAll || len(unscheduled) != 0 {
				t.Errorf("group g holds %d pods, unscheduled %v; want %d, none", all, unscheduled, tt.wantAll)
			}
			if _, pods := e.sched.Cache.Counts(); pods != len(tt.wantBound) {
				t.Errorf("cache holds %d pods, want %d", pods, len(tt.wantBound))
			}
		})
	}
}
