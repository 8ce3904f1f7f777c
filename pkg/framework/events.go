package framework

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/component-helpers/resource"
)

// The events the scheduler's own handlers emit.
var (
	EventAssignedPodAdd    = ClusterEvent{Resource: AssignedPod, ActionType: Add}
	EventAssignedPodUpdate = ClusterEvent{Resource: AssignedPod, ActionType: Update}
	EventAssignedPodDelete = ClusterEvent{Resource: AssignedPod, ActionType: Delete}
	EventUnscheduledPodAdd = ClusterEvent{Resource: UnscheduledPod, ActionType: Add}
	EventNodeAdd           = ClusterEvent{Resource: Node, ActionType: Add}
	EventNodeDelete        = ClusterEvent{Resource: Node, ActionType: Delete}
)

// podResourceOptions are the request options of v1.37's defaults
// (InPlacePodVerticalScaling and InPlacePodLevelResourcesVerticalScaling on).
var podResourceOptions = resource.PodResourcesOptions{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true}

// PodSchedulingPropertiesChange works out what an update of a pod changed
// for scheduling, as upstream's function of the same name: one event per
// kind of change (labels, scale down, scale up, gates removed,
// tolerations added, generated claims), or a generic Update when none of
// them changed, which wakes only plugins that registered Update. isTarget
// says the pod is the one being scheduled (TargetPod) rather than another
// unscheduled pod; a bound pod is an AssignedPod either way.
func PodSchedulingPropertiesChange(newPod, oldPod *v1.Pod, isTarget bool) []ClusterEvent {
	r := UnscheduledPod
	switch {
	case newPod.Spec.NodeName != "":
		r = AssignedPod
	case isTarget:
		r = TargetPod
	}
	var events []ClusterEvent
	add := func(a ActionType) { events = append(events, ClusterEvent{Resource: r, ActionType: a}) }
	if !equality.Semantic.DeepEqual(newPod.Labels, oldPod.Labels) {
		add(UpdatePodLabel)
	}
	if down, up := requestsChange(newPod, oldPod); down || up {
		if down {
			add(UpdatePodScaleDown)
		}
		if up {
			add(UpdatePodScaleUp)
		}
	}
	if len(newPod.Spec.SchedulingGates) == 0 && len(oldPod.Spec.SchedulingGates) != 0 {
		add(UpdatePodSchedulingGatesEliminated)
	}
	if len(newPod.Spec.Tolerations) != len(oldPod.Spec.Tolerations) {
		add(UpdatePodToleration)
	}
	if !equality.Semantic.DeepEqual(newPod.Status.ResourceClaimStatuses, oldPod.Status.ResourceClaimStatuses) ||
		!equality.Semantic.DeepEqual(newPod.Status.ExtendedResourceClaimStatus, oldPod.Status.ExtendedResourceClaimStatus) {
		add(UpdatePodGeneratedResourceClaim)
	}
	if len(events) == 0 {
		add(Update)
	}
	return events
}

// requestsChange says whether any request went down (or was removed) and
// whether any went up (or was added). Requests are compared only when the
// containers' resources or the pod's own changed, so a status-only update
// costs nothing.
func requestsChange(newPod, oldPod *v1.Pod) (down, up bool) {
	if sameResources(newPod, oldPod) {
		return false, false
	}
	newReq := resource.PodRequests(newPod, podResourceOptions)
	oldReq := resource.PodRequests(oldPod, podResourceOptions)
	for name, o := range oldReq {
		n, ok := newReq[name]
		if !ok || o.MilliValue() > n.MilliValue() {
			down = true
		}
	}
	for name, n := range newReq {
		o, ok := oldReq[name]
		if !ok || n.MilliValue() > o.MilliValue() {
			up = true
		}
	}
	return down, up
}

// sameResources is a cheap test that nothing PodRequests reads changed.
func sameResources(a, b *v1.Pod) bool {
	if len(a.Spec.Containers) != len(b.Spec.Containers) || len(a.Spec.InitContainers) != len(b.Spec.InitContainers) {
		return false
	}
	for i := range a.Spec.Containers {
		if !equality.Semantic.DeepEqual(a.Spec.Containers[i].Resources, b.Spec.Containers[i].Resources) {
			return false
		}
	}
	for i := range a.Spec.InitContainers {
		if !equality.Semantic.DeepEqual(a.Spec.InitContainers[i].Resources, b.Spec.InitContainers[i].Resources) {
			return false
		}
	}
	return equality.Semantic.DeepEqual(a.Spec.Resources, b.Spec.Resources) &&
		equality.Semantic.DeepEqual(a.Spec.Overhead, b.Spec.Overhead) &&
		equality.Semantic.DeepEqual(a.Status.ContainerStatuses, b.Status.ContainerStatuses) &&
		equality.Semantic.DeepEqual(a.Status.InitContainerStatuses, b.Status.InitContainerStatuses) &&
		equality.Semantic.DeepEqual(a.Status.Resources, b.Status.Resources) &&
		equality.Semantic.DeepEqual(a.Status.Resize, b.Status.Resize)
}

// NodeSchedulingPropertiesChange works out what an update of a node
// changed for scheduling, as upstream's function of the same name: no
// event at all when nothing that can help a pod changed. Conditions are
// compared as type -> status (heartbeats do not count); spec.unschedulable
// counts only when it is cleared (uncordon), as a taint change.
func NodeSchedulingPropertiesChange(newNode, oldNode *v1.Node) []ClusterEvent {
	var events []ClusterEvent
	add := func(a ActionType) { events = append(events, ClusterEvent{Resource: Node, ActionType: a}) }
	if newNode.Spec.Unschedulable != oldNode.Spec.Unschedulable && !newNode.Spec.Unschedulable {
		add(UpdateNodeTaint)
	}
	if !equality.Semantic.DeepEqual(oldNode.Status.Allocatable, newNode.Status.Allocatable) {
		add(UpdateNodeAllocatable)
	}
	if !equality.Semantic.DeepEqual(newNode.Labels, oldNode.Labels) {
		add(UpdateNodeLabel)
	}
	if !equality.Semantic.DeepEqual(newNode.Spec.Taints, oldNode.Spec.Taints) {
		add(UpdateNodeTaint)
	}
	if !sameConditionStatuses(oldNode.Status.Conditions, newNode.Status.Conditions) {
		add(UpdateNodeCondition)
	}
	if !equality.Semantic.DeepEqual(oldNode.Annotations, newNode.Annotations) {
		add(UpdateNodeAnnotation)
	}
	if !equality.Semantic.DeepEqual(oldNode.Spec.PodPreemptionPolicy, newNode.Spec.PodPreemptionPolicy) {
		add(UpdateNodePreemptionPolicy)
	}
	if !slices.Equal(oldNode.Status.DeclaredFeatures, newNode.Status.DeclaredFeatures) {
		add(UpdateNodeDeclaredFeature)
	}
	return events
}

// sameConditionStatuses compares conditions as a map of type to status.
func sameConditionStatuses(a, b []v1.NodeCondition) bool {
	status := func(cs []v1.NodeCondition) map[v1.NodeConditionType]v1.ConditionStatus {
		m := make(map[v1.NodeConditionType]v1.ConditionStatus, len(cs))
		for i := range cs {
			m[cs[i].Type] = cs[i].Status
		}
		return m
	}
	return equality.Semantic.DeepEqual(status(a), status(b))
}
