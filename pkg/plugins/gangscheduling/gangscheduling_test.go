package gangscheduling

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// fakeHandle answers PodGroupManager; any other Handle method panics.
type fakeHandle struct {
	framework.Handle
	groups framework.PodGroupManager
}

func (h fakeHandle) PodGroupManager() framework.PodGroupManager { return h.groups }

// fakeGroups knows PodGroups and how many pods each has.
type fakeGroups struct {
	pgs  map[string]*schedulingv1beta1.PodGroup
	pods map[string]int
}

func (f fakeGroups) PodGroup(ns, name string) (*schedulingv1beta1.PodGroup, bool) {
	pg, ok := f.pgs[ns+"/"+name]
	return pg, ok
}

func (f fakeGroups) PodGroupState(ns, name string) (framework.PodGroupState, bool) {
	n, ok := f.pods[ns+"/"+name]
	return fakeState(n), ok
}

type fakeState int

func (s fakeState) AllPodsCount() int                     { return int(s) }
func (s fakeState) ScheduledPodsCount() int               { return 0 }
func (s fakeState) ScheduledPods() []*v1.Pod              { return nil }
func (s fakeState) UnscheduledPods() map[string]*v1.Pod   { return nil }
func (s fakeState) AssumedPods() sets.Set[types.UID]      { return nil }
func (s fakeState) PodGroup() *schedulingv1beta1.PodGroup { return nil }

func TestPreEnqueue(t *testing.T) {
	gang := st.MakePodGroup("train").Gang(3).Obj()
	basic := st.MakePodGroup("web").Obj()
	groups := fakeGroups{
		pgs:  map[string]*schedulingv1beta1.PodGroup{"default/train": gang, "default/web": basic},
		pods: map[string]int{"default/train": 2, "default/web": 1},
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		groups   fakeGroups
		wantCode framework.Code
		wantMsg  string
	}{
		{name: "a pod outside any group is let in", pod: st.MakePod().Name("p").Obj(), groups: groups, wantCode: framework.Success},
		{name: "a member of a group not seen yet waits for it", pod: st.MakePod().Name("p").InGroup("missing").Obj(), groups: groups,
			wantCode: framework.UnschedulableAndUnresolvable, wantMsg: `waiting for pods's pod group "missing" to appear in scheduling queue`},
		{name: "a member of a gang with fewer pods than minCount waits for them", pod: st.MakePod().Name("p").InGroup("train").Obj(), groups: groups,
			wantCode: framework.UnschedulableAndUnresolvable, wantMsg: "waiting for minCount pods from a gang to appear in scheduling queue"},
		{name: "a member of a gang with minCount pods is let in", pod: st.MakePod().Name("p").InGroup("train").Obj(),
			groups:   fakeGroups{pgs: groups.pgs, pods: map[string]int{"default/train": 3}},
			wantCode: framework.Success},
		{name: "a member of a basic group is let in alone", pod: st.MakePod().Name("p").InGroup("web").Obj(), groups: groups, wantCode: framework.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &GangScheduling{handle: fakeHandle{groups: tt.groups}}
			got := pl.PreEnqueue(context.Background(), tt.pod)
			if got.Code() != tt.wantCode || got.Message() != tt.wantMsg {
				t.Errorf("PreEnqueue = %v %q, want %v %q", got.Code(), got.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestPlacementFeasible(t *testing.T) {
	pgi := &framework.PodGroupInfo{Namespace: "default", Name: "train", PodGroup: st.MakePodGroup("train").Gang(3).Obj()}
	tests := []struct {
		name     string
		progress framework.PlacementProgress
		wantCode framework.Code
		wantMsg  string
	}{
		{name: "minCount reachable but not reached asks to go on", progress: framework.PlacementProgress{Remaining: 2, Scheduled: 1},
			wantCode: framework.Wait, wantMsg: "minCount (3) is not yet satisfied: 1 scheduled, 2 remaining"},
		{name: "minCount out of reach stops the cycle", progress: framework.PlacementProgress{Remaining: 1, Scheduled: 1},
			wantCode: framework.Unschedulable, wantMsg: "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"},
		{name: "minCount scheduled succeeds", progress: framework.PlacementProgress{Remaining: 0, Scheduled: 3}, wantCode: framework.Success},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := (&GangScheduling{}).PlacementFeasible(context.Background(), nil, pgi, tt.progress)
			if got.Code() != tt.wantCode || got.Message() != tt.wantMsg {
				t.Errorf("PlacementFeasible = %v %q, want %v %q", got.Code(), got.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestQueueingHints(t *testing.T) {
	member := st.MakePod().Name("w1").InGroup("train").Obj()
	tests := []struct {
		name string
		hint func() (framework.QueueingHint, error)
		want framework.QueueingHint
	}{
		{name: "another member's arrival wakes a member",
			hint: func() (framework.QueueingHint, error) {
				return isSchedulableAfterPodAdded(klog.Background(), member, nil, st.MakePod().Name("w2").InGroup("train").Obj())
			}, want: framework.Queue},
		{name: "a pod of another group does not",
			hint: func() (framework.QueueingHint, error) {
				return isSchedulableAfterPodAdded(klog.Background(), member, nil, st.MakePod().Name("x").InGroup("other").Obj())
			}, want: framework.QueueSkip},
		{name: "the member's PodGroup created wakes it",
			hint: func() (framework.QueueingHint, error) {
				return isSchedulableAfterPodGroupAdded(klog.Background(), member, nil, st.MakePodGroup("train").Gang(2).Obj())
			}, want: framework.Queue},
		{name: "a lower minCount wakes it",
			hint: func() (framework.QueueingHint, error) {
				return isSchedulableAfterPodGroupUpdated(klog.Background(), member, st.MakePodGroup("train").Gang(3).Obj(), st.MakePodGroup("train").Gang(2).Obj())
			}, want: framework.Queue},
		{name: "a higher minCount does not",
			hint: func() (framework.QueueingHint, error) {
				return isSchedulableAfterPodGroupUpdated(klog.Background(), member, st.MakePodGroup("train").Gang(2).Obj(), st.MakePodGroup("train").Gang(3).Obj())
			}, want: framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.hint()
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
