package scheduler

import (
	"context"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/pkg/framework"
)

var _ cluster.EventHandler = &Scheduler{}

// preEnqueue runs the PreEnqueue plugins of the pod's profile.
func (s *Scheduler) preEnqueue(ctx context.Context, pod *v1.Pod) *framework.Status {
	fwk, ok := s.Profiles[pod.Spec.SchedulerName]
	if !ok {
		return nil
	}
	return fwk.RunPreEnqueuePlugins(ctx, pod)
}

// ResponsibleForPod is true for pods whose schedulerName is one of our profiles.
func (s *Scheduler) ResponsibleForPod(pod *v1.Pod) bool {
	_, ok := s.Profiles[pod.Spec.SchedulerName]
	return ok
}

func assigned(pod *v1.Pod) bool { return pod.Spec.NodeName != "" }

func terminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// OnNodeAdd implements cluster.EventHandler.
func (s *Scheduler) OnNodeAdd(node *v1.Node) {
	s.Cache.AddNode(node)
	s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd, nil, node, nil)
}

// OnNodeUpdate implements cluster.EventHandler: one event per kind of
// change that can help a pod (upstream's NodeSchedulingPropertiesChange);
// a heartbeat or a cordon moves nobody.
func (s *Scheduler) OnNodeUpdate(oldNode, newNode *v1.Node) {
	s.Cache.UpdateNode(oldNode, newNode)
	for _, ev := range framework.NodeSchedulingPropertiesChange(newNode, oldNode) {
		s.Queue.MoveAllToActiveOrBackoffQueue(ev, oldNode, newNode, nil)
	}
}

// OnClusterEvent implements cluster.EventHandler: pods whose rejecting
// plugins registered the event (and whose hints agree) are retried.
func (s *Scheduler) OnClusterEvent(event framework.ClusterEvent, oldObj, newObj interface{}) {
	switch event.Resource {
	case framework.ResourceClaim:
		// The DRA manager's devices first, as upstream's assume cache
		// handler: a pod woken by a deallocation must see the devices free.
		s.dra.OnClaimChange(oldObj, newObj)
	case framework.ResourceSlice, framework.DeviceClass:
		s.dra.OnSliceOrClassChange()
	case framework.PodGroupEvent:
		s.onPodGroupEvent(event, oldObj, newObj)
	}
	s.Queue.MoveAllToActiveOrBackoffQueue(event, oldObj, newObj, nil)
}

// OnNodeDelete implements cluster.EventHandler. A deleted node can lower
// a topology spread skew: PodTopologySpread registers Node/Delete.
//
// The node leaves the cache before the pods are moved. Upstream
// (eventhandlers.go, deleteNodeFromCache) moves first: a pod it wakes can
// be popped and tried against a snapshot that still holds the node, fail
// the same way, and wait in unschedulablePods with no event left to wake
// it (seen in the differential test: "0/3 nodes are available" after the
// third node's deletion, then nothing for a minute). Every other handler
// updates the cache first; this one does too.
func (s *Scheduler) OnNodeDelete(node *v1.Node) {
	if err := s.Cache.RemoveNode(node); err != nil {
		s.logger.Error(err, "Removing node from cache", "node", node.Name)
	}
	s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventNodeDelete, node, nil, nil)
}

// OnPodAdd implements cluster.EventHandler: assigned pods go to the cache,
// pending pods of our profiles to the queue.
func (s *Scheduler) OnPodAdd(pod *v1.Pod) {
	switch {
	case terminal(pod):
	case assigned(pod):
		if err := s.Cache.AddPod(pod); err != nil {
			s.logger.Error(err, "Adding pod to cache", "pod", klog.KObj(pod))
		}
		s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodAdd, nil, pod, nil)
	case s.ResponsibleForPod(pod):
		if pod.Status.NominatedNodeName != "" {
			s.Queue.AddNominatedPod(framework.NewPodInfo(pod), "")
		}
		s.Cache.AddPodGroupMember(pod)
		s.Queue.Add(pod)
		if s.Cache.PodGroupsEnabled() {
			// A new member may complete its gang (upstream sends the
			// event only with GenericWorkload on).
			s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventUnscheduledPodAdd, nil, pod, nil)
		}
	}
}

// OnPodUpdate implements cluster.EventHandler.
func (s *Scheduler) OnPodUpdate(oldPod, newPod *v1.Pod) {
	switch {
	case assigned(oldPod) && (terminal(newPod) || !assigned(newPod)):
		// A pod that finished leaves the cache as a deletion would.
		s.OnPodDelete(oldPod)
	case assigned(newPod) && !assigned(oldPod):
		// Bound: it leaves the queue and joins the cache.
		s.Queue.Delete(oldPod)
		s.OnPodAdd(newPod)
	case assigned(newPod):
		if terminal(newPod) {
			return
		}
		if _, ok := s.Cache.GetPod(oldPod); !ok {
			s.OnPodAdd(newPod)
			return
		}
		if err := s.Cache.UpdatePod(oldPod, newPod); err != nil {
			s.logger.Error(err, "Updating pod in cache", "pod", klog.KObj(newPod))
		}
		// What changed decides who wakes: a kubelet's status patch is a
		// generic Update, which no default plugin registers.
		for _, ev := range framework.PodSchedulingPropertiesChange(newPod, oldPod, false) {
			s.Queue.MoveAllToActiveOrBackoffQueue(ev, oldPod, newPod, nil)
		}
	case s.ResponsibleForPod(newPod):
		s.updatePendingPod(oldPod, newPod)
	}
}

// updatePendingPod is upstream's updatePodInSchedulingQueue.
func (s *Scheduler) updatePendingPod(oldPod, newPod *v1.Pod) {
	if oldPod.ResourceVersion != "" && oldPod.ResourceVersion == newPod.ResourceVersion {
		return // a resync: the same object twice
	}
	s.Cache.UpdatePodGroupMember(oldPod, newPod)
	if s.Cache.IsAssumedPod(newPod) {
		if newPod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
			s.handleAssumedPodDeletion(newPod)
		}
		return
	}
	s.Queue.UpdateNominatedPod(oldPod, framework.NewPodInfo(newPod))
	s.Queue.Update(oldPod, newPod)
	if nnn := oldPod.Status.NominatedNodeName; nnn != "" && nnn != newPod.Status.NominatedNodeName {
		// The room it held on its nominated node is free for pods of
		// lower or equal priority.
		s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDelete, oldPod, nil, lowerOrEqualPriority(oldPod))
	}
}

// lowerOrEqualPriority selects the pods a nomination of pod held back.
func lowerOrEqualPriority(pod *v1.Pod) func(*v1.Pod) bool {
	prio := corev1helpers.PodPriority(pod)
	return func(p *v1.Pod) bool { return corev1helpers.PodPriority(p) <= prio }
}

// handleAssumedPodDeletion frees what a pod that is being deleted holds
// while its binding is under way: a pod waiting at Permit is rejected
// (its binding cycle cleans up); otherwise it is removed from the cache at
// once (a pod group's member leaves its group: upstream's
// RemoveAssumedPod), and its binding, which will fail, finds it gone. A
// binding cycle that has not reached Bind is cancelled: a PreBind that
// waits ends at once.
func (s *Scheduler) handleAssumedPodDeletion(pod *v1.Pod) {
	cached, ok := s.Cache.GetPod(pod)
	if !ok {
		return
	}
	defer s.cancelPreBinding(cached.UID, errPodDeleted)
	if !s.rejectWaitingPod(cached, "deleted") {
		if err := s.Cache.RemoveAssumedPod(cached); err != nil {
			s.logger.Error(err, "Removing a deleted assumed pod", "pod", klog.KObj(cached))
		}
	}
	s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDelete, cached, nil, nil)
}

// rejectWaitingPod rejects the pod where it waits at Permit.
func (s *Scheduler) rejectWaitingPod(pod *v1.Pod, msg string) bool {
	for _, fwk := range s.Profiles {
		if wp := fwk.GetWaitingPod(string(pod.UID)); wp != nil {
			wp.Reject("", msg)
			return true
		}
	}
	return false
}

// OnPodDelete implements cluster.EventHandler.
func (s *Scheduler) OnPodDelete(pod *v1.Pod) {
	if assigned(pod) {
		if _, ok := s.Cache.GetPod(pod); ok {
			if err := s.Cache.RemovePod(pod); err != nil {
				s.logger.Error(err, "Removing pod from cache", "pod", klog.KObj(pod))
			}
		}
		s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDelete, pod, nil, nil)
		return
	}
	s.Queue.Delete(pod)
	if s.Cache.IsAssumedPod(pod) {
		s.handleAssumedPodDeletion(pod)
		return
	}
	s.Cache.RemovePodGroupMember(pod)
	s.rejectWaitingPod(pod, "removed")
	if pod.Status.NominatedNodeName != "" {
		s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDelete, pod, nil, lowerOrEqualPriority(pod))
	}
}

// onPodGroupEvent keeps the cache's and the queue's pod groups (the
// GenericWorkload gate; ignored without it).
func (s *Scheduler) onPodGroupEvent(event framework.ClusterEvent, oldObj, newObj interface{}) {
	if !s.Cache.PodGroupsEnabled() {
		return
	}
	switch event.ActionType {
	case framework.Add:
		if pg, ok := newObj.(*schedulingv1beta1.PodGroup); ok {
			s.Cache.AddPodGroup(pg)
			s.Queue.AddPodGroup(pg)
		}
	case framework.Delete:
		if pg, ok := oldObj.(*schedulingv1beta1.PodGroup); ok {
			s.Cache.RemovePodGroup(pg)
			s.Queue.DeletePodGroup(pg)
		}
	default:
		if pg, ok := newObj.(*schedulingv1beta1.PodGroup); ok {
			s.Cache.UpdatePodGroup(pg)
			s.Queue.UpdatePodGroup(pg)
		}
	}
}
