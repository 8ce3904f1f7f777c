package framework

import (
	"context"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// Pod groups (the GenericWorkload feature gate, beta and off by default in
// kube-scheduler v1.37): a pod names its group in
// spec.schedulingGroup.podGroupName; the scheduling queue holds the group's
// pending pods as one entity and the scheduler schedules them in one cycle
// (docs/podgroups.md).

// PodGroupEvent is the resource of PodGroup events (upstream's
// "scheduling.k8s.io/PodGroup").
const PodGroupEvent EventResource = "scheduling.k8s.io/PodGroup"

// PodGroupName is the group a pod belongs to, "" for none.
func PodGroupName(pod *v1.Pod) string {
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		return *g.PodGroupName
	}
	return ""
}

// PodGroupKey identifies a group: namespace/name.
func PodGroupKey(namespace, name string) string { return namespace + "/" + name }

// PodGroupPriority is a group's priority (0 when unset, as upstream's
// util.PodGroupPriority).
func PodGroupPriority(pg *schedulingv1beta1.PodGroup) int32 {
	if pg.Spec.Priority != nil {
		return *pg.Spec.Priority
	}
	return 0
}

// MinCount is the number of pods a group needs scheduled together: the
// gang policy's minCount, 1 for the basic policy.
func MinCount(pg *schedulingv1beta1.PodGroup) int {
	if g := pg.Spec.SchedulingPolicy.Gang; g != nil {
		return int(g.MinCount)
	}
	return 1
}

// PodGroupInfo is a group being scheduled: its object and its pods not
// scheduled yet, in the order they are tried.
type PodGroupInfo struct {
	Namespace, Name string
	PodGroup        *schedulingv1beta1.PodGroup
	UnscheduledPods []*v1.Pod
}

// QueuedPodGroupInfo is a group as the scheduling queue holds it: one
// entity with its own queueing state, and its queued pods.
type QueuedPodGroupInfo struct {
	*PodGroupInfo
	// Members are the group's queued pods, in upstream's member order
	// (PodGroupMemberLess).
	Members []*QueuedPodInfo
}

// Add inserts a member in member order.
func (g *QueuedPodGroupInfo) Add(p *QueuedPodInfo) {
	i := sort.Search(len(g.Members), func(i int) bool { return PodGroupMemberLess(p, g.Members[i]) })
	g.Members = slices.Insert(g.Members, i, p)
	g.SyncUnscheduled()
}

// Remove takes out the member with pod's namespace and name; nil when none.
func (g *QueuedPodGroupInfo) Remove(pod *v1.Pod) *QueuedPodInfo {
	for i, m := range g.Members {
		if m.Pod.Name == pod.Name && m.Pod.Namespace == pod.Namespace {
			g.Members = slices.Delete(g.Members, i, i+1)
			g.SyncUnscheduled()
			return m
		}
	}
	return nil
}

// Get returns the member with pod's namespace and name.
func (g *QueuedPodGroupInfo) Get(pod *v1.Pod) (*QueuedPodInfo, bool) {
	for _, m := range g.Members {
		if m.Pod.Name == pod.Name && m.Pod.Namespace == pod.Namespace {
			return m, true
		}
	}
	return nil, false
}

// SyncUnscheduled sets UnscheduledPods to the members' pods.
func (g *QueuedPodGroupInfo) SyncUnscheduled() {
	g.UnscheduledPods = make([]*v1.Pod, 0, len(g.Members))
	for _, m := range g.Members {
		g.UnscheduledPods = append(g.UnscheduledPods, m.Pod)
	}
}

// PodGroupMemberLess is the order of a group's pods in its cycle
// (upstream's PodGroupMemberPodsOrderingFunc): higher priority first, then
// more attempts, then earlier arrival, then name.
func PodGroupMemberLess(a, b *QueuedPodInfo) bool {
	pa, pb := corev1helpers.PodPriority(a.Pod), corev1helpers.PodPriority(b.Pod)
	if pa != pb {
		return pa > pb
	}
	if a.Attempts != b.Attempts {
		return a.Attempts > b.Attempts
	}
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.Before(b.Timestamp)
	}
	if a.Pod.Name != b.Pod.Name {
		return a.Pod.Name < b.Pod.Name
	}
	return a.Seq < b.Seq
}

// PodGroupState is what the scheduler knows of a group's pods: all it has
// seen, which are bound, assumed or not scheduled yet.
type PodGroupState interface {
	AllPodsCount() int
	// ScheduledPodsCount counts the bound and assumed pods.
	ScheduledPodsCount() int
	ScheduledPods() []*v1.Pod
	// UnscheduledPods are the pods neither bound nor assumed, by name.
	UnscheduledPods() map[string]*v1.Pod
	AssumedPods() sets.Set[types.UID]
	PodGroup() *schedulingv1beta1.PodGroup
}

// PodGroupManager reads the groups and their states. The live one
// (Handle.PodGroupManager) follows the world; the snapshot's is the cycle's.
type PodGroupManager interface {
	// PodGroup returns an observed group; ok is false when none.
	PodGroup(namespace, name string) (pg *schedulingv1beta1.PodGroup, ok bool)
	// PodGroupState returns a group's state; ok is false when the
	// scheduler has seen neither the group nor any of its pods.
	PodGroupState(namespace, name string) (st PodGroupState, ok bool)
}

// PlacementProgress is how far a group's cycle went: pods not tried yet,
// and pods scheduled (bound, assumed, or placed in this cycle).
type PlacementProgress struct {
	Remaining int
	Scheduled int
}

// PlacementFeasiblePlugin says whether a group can still meet its
// constraints: Success, Wait (not yet, go on), or Unschedulable (never,
// stop).
type PlacementFeasiblePlugin interface {
	Plugin
	PlacementFeasible(ctx context.Context, state *CycleState, pgi *PodGroupInfo, progress PlacementProgress) *Status
}

// ProposedAssignment is where a group's scheduling function placed one
// member: its pod, the node, and the member's cycle state (PreFilter run
// with the members before it placed).
type ProposedAssignment struct {
	PodInfo *PodInfo
	Node    string
	State   *CycleState
}

// PodGroupSchedulingFunc runs the group's algorithm on the snapshot as it
// is (a PodGroupPostFilter plugin changes it first) and undoes its own
// placements before it returns; the assignments are the members placed.
type PodGroupSchedulingFunc func(ctx context.Context) ([]ProposedAssignment, *Status)

// PodGroupPostFilterResult: the node each member is nominated to, by
// namespace/name.
type PodGroupPostFilterResult struct {
	Nominations map[types.NamespacedName]string
}

// PodGroupCycleState is a group's cycle as its PodGroupPostFilter plugins
// see it: each member's cycle state from the algorithm that just failed
// (its PreFilter and Filter ran there; upstream keeps them in the group's
// cycle state, as DynamicResources' podsStateData).
type PodGroupCycleState struct {
	members map[types.NamespacedName]*CycleState
}

// NewPodGroupCycleState starts an empty one.
func NewPodGroupCycleState() *PodGroupCycleState {
	return &PodGroupCycleState{members: map[types.NamespacedName]*CycleState{}}
}

// SetMember records a member's cycle state.
func (s *PodGroupCycleState) SetMember(pod *v1.Pod, state *CycleState) {
	s.members[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = state
}

// Member is a member's cycle state; nil when the member was not tried (or
// s is nil).
func (s *PodGroupCycleState) Member(namespace, name string) *CycleState {
	if s == nil {
		return nil
	}
	return s.members[types.NamespacedName{Namespace: namespace, Name: name}]
}

// PodGroupPostFilterPlugin runs for a group that did not fit (upstream's
// PodGroupPostFilter extension point: preemption for a whole group,
// deallocation of its members' claims). It may change the snapshot's
// NodeInfos (removing victims, adding members): the scheduler refreshes
// the snapshot from the cache afterwards.
type PodGroupPostFilterPlugin interface {
	Plugin
	PodGroupPostFilter(ctx context.Context, state *PodGroupCycleState, g *QueuedPodGroupInfo, schedule PodGroupSchedulingFunc) (*PodGroupPostFilterResult, *Status)
}

// Preemptor is who preempts a victim: a pod, or a pod group (upstream's
// ExecutorPreemptor, whose Type is "pod" or "podgroup").
type Preemptor struct {
	// Kind is "pod" or "podgroup".
	Kind            string
	Namespace, Name string
	UID             types.UID
	SchedulerName   string
	// Object is the preemptor's API object (the related object of the
	// victim's Preempted event).
	Object runtime.Object
}

// PodPreemptor is the Preemptor for a pod.
func PodPreemptor(p *v1.Pod) Preemptor {
	return Preemptor{Kind: "pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID, SchedulerName: p.Spec.SchedulerName, Object: p}
}

// MutableSnapshot is the cycle's snapshot as a PodGroupPostFilter plugin
// may change it (SnapshotSharedLister implements it in the scheduler).
type MutableSnapshot interface {
	AddPodInfo(node string, pi *PodInfo) error
	RemovePod(node string, pod *v1.Pod) error
}
