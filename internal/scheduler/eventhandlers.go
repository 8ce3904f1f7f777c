package scheduler

import (
	"context"
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/pkg/framework"
)

var _ cluster.EventHandler = &Scheduler{}

// Events the handlers emit to the queue.
var (
	nodeAdd           = framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add, Label: "NodeAdd"}
	assignedPodAdd    = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add, Label: "AssignedPodAdd"}
	assignedPodDelete = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete, Label: "AssignedPodDelete"}
	assignedPodUpdate = framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.UpdatePodLabel | framework.UpdatePodScaleDown, Label: "AssignedPodUpdate"}
)

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
	s.Queue.MoveAllToActiveOrBackoffQueue(nodeAdd, nil, node)
}

// OnNodeUpdate implements cluster.EventHandler; the event says what changed
// so only pods a change can help are moved.
func (s *Scheduler) OnNodeUpdate(oldNode, newNode *v1.Node) {
	s.Cache.UpdateNode(oldNode, newNode)
	if ev, ok := nodeUpdateEvent(oldNode, newNode); ok {
		s.Queue.MoveAllToActiveOrBackoffQueue(ev, oldNode, newNode)
	}
}

func nodeUpdateEvent(o, n *v1.Node) (framework.ClusterEvent, bool) {
	var a framework.ActionType
	if !equality.Semantic.DeepEqual(o.Status.Allocatable, n.Status.Allocatable) {
		a |= framework.UpdateNodeAllocatable
	}
	if !reflect.DeepEqual(o.Labels, n.Labels) {
		a |= framework.UpdateNodeLabel
	}
	if !reflect.DeepEqual(o.Spec.Taints, n.Spec.Taints) || o.Spec.Unschedulable != n.Spec.Unschedulable {
		a |= framework.UpdateNodeTaint
	}
	if !reflect.DeepEqual(o.Status.Conditions, n.Status.Conditions) {
		a |= framework.UpdateNodeCondition
	}
	if !reflect.DeepEqual(o.Annotations, n.Annotations) {
		a |= framework.UpdateNodeAnnotation
	}
	if !slices.Equal(o.Status.DeclaredFeatures, n.Status.DeclaredFeatures) {
		a |= framework.UpdateNodeDeclaredFeature
	}
	if a == 0 {
		return framework.ClusterEvent{}, false
	}
	return framework.ClusterEvent{Resource: framework.Node, ActionType: a, Label: "NodeUpdate"}, true
}

// OnClusterEvent implements cluster.EventHandler: pods whose rejecting
// plugins registered the event (and whose hints agree) are retried.
func (s *Scheduler) OnClusterEvent(event framework.ClusterEvent, oldObj, newObj interface{}) {
	s.Queue.MoveAllToActiveOrBackoffQueue(event, oldObj, newObj)
}

// OnNodeDelete implements cluster.EventHandler.
func (s *Scheduler) OnNodeDelete(node *v1.Node) {
	if err := s.Cache.RemoveNode(node); err != nil {
		s.logger.Error(err, "Removing node from cache", "node", node.Name)
	}
}

// OnPodAdd implements cluster.EventHandler: assigned pods go to the cache,
// pending pods of our profiles to the queue.
func (s *Scheduler) OnPodAdd(pod *v1.Pod) {
	switch {
	case terminal(pod):
	case assigned(pod):
		if err := s.Cache.AddPod(pod); err != nil {
			s.logger.Error(err, "Adding pod to cache", "pod", pod.Namespace+"/"+pod.Name)
		}
		s.Queue.MoveAllToActiveOrBackoffQueue(assignedPodAdd, nil, pod)
	case s.ResponsibleForPod(pod):
		if pod.Status.NominatedNodeName != "" {
			s.Queue.AddNominatedPod(framework.NewPodInfo(pod), "")
		}
		s.Queue.Add(pod)
	}
}

// OnPodUpdate implements cluster.EventHandler.
func (s *Scheduler) OnPodUpdate(oldPod, newPod *v1.Pod) {
	switch {
	case assigned(oldPod) && (terminal(newPod) || !assigned(newPod)):
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
			s.logger.Error(err, "Updating pod in cache", "pod", newPod.Namespace+"/"+newPod.Name)
		}
		s.Queue.MoveAllToActiveOrBackoffQueue(assignedPodUpdate, oldPod, newPod)
	case s.ResponsibleForPod(newPod):
		if !s.Cache.IsAssumedPod(newPod) {
			s.Queue.UpdateNominatedPod(oldPod, framework.NewPodInfo(newPod))
		}
		if s.Cache.IsAssumedPod(newPod) {
			return
		}
		if !specChanged(oldPod, newPod) {
			// Our own status writes come back as updates; they must not
			// retry the pod, or a failure would loop. The queued copy takes
			// the new status (its nominated node) where it waits.
			s.Queue.Refresh(newPod)
			return
		}
		s.Queue.Update(oldPod, newPod)
		if len(oldPod.Spec.SchedulingGates) > 0 && len(newPod.Spec.SchedulingGates) == 0 {
			s.Queue.MoveAllToActiveOrBackoffQueue(framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodSchedulingGatesEliminated, Label: "PodSchedulingGatesEliminated"}, oldPod, newPod)
		}
	}
}

// OnPodDelete implements cluster.EventHandler.
func (s *Scheduler) OnPodDelete(pod *v1.Pod) {
	if assigned(pod) {
		if _, ok := s.Cache.GetPod(pod); ok {
			if err := s.Cache.RemovePod(pod); err != nil {
				s.logger.Error(err, "Removing pod from cache", "pod", pod.Namespace+"/"+pod.Name)
			}
		}
		s.Queue.MoveAllToActiveOrBackoffQueue(assignedPodDelete, pod, nil)
		return
	}
	s.Queue.Delete(pod)
	for _, fwk := range s.Profiles {
		if wp := fwk.GetWaitingPod(string(pod.UID)); wp != nil {
			wp.Reject("", "removed")
		}
	}
}

// specChanged ignores what the scheduler itself writes (status) and what
// every write changes (resourceVersion, generation, managedFields).
func specChanged(o, n *v1.Pod) bool {
	strip := func(p *v1.Pod) *v1.Pod {
		c := p.DeepCopy()
		c.ResourceVersion, c.Generation, c.ManagedFields = "", 0, nil
		c.Status = v1.PodStatus{}
		return c
	}
	return !equality.Semantic.DeepEqual(strip(o), strip(n))
}
