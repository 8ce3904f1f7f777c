package testing

import (
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/pkg/framework"
)

// FakePodGroups is a framework.PodGroupManager over fixed groups: each
// group's scheduled pods are those given.
type FakePodGroups map[string]FakePodGroupState

// PodGroup implements framework.PodGroupManager.
func (f FakePodGroups) PodGroup(ns, name string) (*schedulingv1beta1.PodGroup, bool) {
	st, ok := f[ns+"/"+name]
	return st.Group, ok && st.Group != nil
}

// PodGroupState implements framework.PodGroupManager.
func (f FakePodGroups) PodGroupState(ns, name string) (framework.PodGroupState, bool) {
	st, ok := f[ns+"/"+name]
	return st, ok
}

// FakePodGroupState is a group's object and its scheduled pods.
type FakePodGroupState struct {
	Group     *schedulingv1beta1.PodGroup
	Scheduled []*v1.Pod
}

// AllPodsCount implements framework.PodGroupState.
func (s FakePodGroupState) AllPodsCount() int { return len(s.Scheduled) }

// ScheduledPodsCount implements framework.PodGroupState.
func (s FakePodGroupState) ScheduledPodsCount() int { return len(s.Scheduled) }

// ScheduledPods implements framework.PodGroupState.
func (s FakePodGroupState) ScheduledPods() []*v1.Pod { return s.Scheduled }

// UnscheduledPods implements framework.PodGroupState.
func (s FakePodGroupState) UnscheduledPods() map[string]*v1.Pod { return nil }

// AssumedPods implements framework.PodGroupState.
func (s FakePodGroupState) AssumedPods() sets.Set[types.UID] { return nil }

// PodGroup implements framework.PodGroupState.
func (s FakePodGroupState) PodGroup() *schedulingv1beta1.PodGroup { return s.Group }
