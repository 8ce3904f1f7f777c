package dynamicresources

import (
	"context"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// EventsToRegister are upstream's: a node added or relabelled (a slice
// may be limited by node labels), any claim change (with a hint), the
// pod's generated claims named in its status, and device classes and
// ResourceSlices added or updated.
func (pl *DynamicResources) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel | framework.UpdateNodeAllocatable}},
		{Event: framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Add | framework.Update | framework.Delete}, QueueingHintFn: pl.isSchedulableAfterClaimChange},
		{Event: framework.ClusterEvent{Resource: framework.TargetPod, ActionType: framework.UpdatePodGeneratedResourceClaim}, QueueingHintFn: pl.isSchedulableAfterTargetPodUpdate},
		{Event: framework.ClusterEvent{Resource: framework.DeviceClass, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.ResourceSlice, ActionType: framework.Add | framework.Update}},
	}, nil
}

// isSchedulableAfterClaimChange: a deallocation (or the deletion of an
// allocated claim) may free devices for any pod; otherwise only a change
// to one of the pod's own claims matters: its creation, or a new status.
func (pl *DynamicResources) isSchedulableAfterClaimChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	oldClaim, _ := oldObj.(*resourceapi.ResourceClaim)
	newClaim, _ := newObj.(*resourceapi.ResourceClaim)
	if newClaim == nil {
		if oldClaim == nil || oldClaim.Status.Allocation != nil {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	usesClaim := false
	if err := pl.forEachPodClaim(pod, func(c *resourceapi.ResourceClaim) {
		if c.UID == newClaim.UID {
			usesClaim = true
		}
	}); err != nil {
		return framework.QueueSkip, nil
	}
	if oldClaim != nil && oldClaim.Status.Allocation != nil && newClaim.Status.Allocation == nil {
		return framework.Queue, nil
	}
	if !usesClaim {
		return framework.QueueSkip, nil
	}
	if oldClaim == nil {
		return framework.Queue, nil
	}
	if equality.Semantic.DeepEqual(&oldClaim.Status, &newClaim.Status) {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// isSchedulableAfterTargetPodUpdate: the pod's status now names its
// generated claims, and they all exist.
func (pl *DynamicResources) isSchedulableAfterTargetPodUpdate(_ klog.Logger, _ *v1.Pod, _, newObj interface{}) (framework.QueueingHint, error) {
	p, ok := newObj.(*v1.Pod)
	if !ok {
		return framework.Queue, nil
	}
	if err := pl.forEachPodClaim(p, nil); err != nil {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}
