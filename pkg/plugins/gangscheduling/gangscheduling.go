// Package gangscheduling holds GangScheduling, kube-scheduler v1.37.2's
// plugin for pod groups with the gang policy (the GenericWorkload gate):
// the group's pods enter the queue only once its PodGroup exists and
// minCount of them exist (PreEnqueue); its cycle gives up as soon as
// minCount can no longer be scheduled (PlacementFeasible); and each
// scheduled pod waits at Permit until minCount are, then all are let
// through together.
package gangscheduling

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "GangScheduling"

// permitTimeout is how long a gang's scheduled pods wait for the rest.
const permitTimeout = 5 * time.Minute

// GangScheduling is a PreEnqueue, PlacementFeasible and Permit plugin.
type GangScheduling struct {
	handle framework.Handle
}

var (
	_ framework.PreEnqueuePlugin        = &GangScheduling{}
	_ framework.PermitPlugin            = &GangScheduling{}
	_ framework.PlacementFeasiblePlugin = &GangScheduling{}
	_ framework.EnqueueExtensions       = &GangScheduling{}
)

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &GangScheduling{handle: h}, nil
}

// Name implements framework.Plugin.
func (*GangScheduling) Name() string { return Name }

func (pl *GangScheduling) groups() framework.PodGroupManager {
	if pl.handle == nil {
		return nil
	}
	return pl.handle.PodGroupManager()
}

// EventsToRegister: a new pod of the group (pending or bound), the group's
// creation, and a lower minCount.
func (pl *GangScheduling) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.UnscheduledPod, ActionType: framework.Add}, QueueingHintFn: isSchedulableAfterPodAdded},
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}, QueueingHintFn: isSchedulableAfterPodAdded},
		{Event: framework.ClusterEvent{Resource: framework.PodGroupEvent, ActionType: framework.Add}, QueueingHintFn: isSchedulableAfterPodGroupAdded},
		{Event: framework.ClusterEvent{Resource: framework.PodGroupEvent, ActionType: framework.Update}, QueueingHintFn: isSchedulableAfterPodGroupUpdated},
	}, nil
}

func isSchedulableAfterPodAdded(_ klog.Logger, pod *v1.Pod, _, newObj interface{}) (framework.QueueingHint, error) {
	added, ok := newObj.(*v1.Pod)
	if !ok {
		return framework.Queue, fmt.Errorf("unexpected object %T", newObj)
	}
	name := framework.PodGroupName(pod)
	if name == "" || framework.PodGroupName(added) == "" {
		return framework.QueueSkip, nil
	}
	if added.Namespace == pod.Namespace && framework.PodGroupName(added) == name {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

func isSchedulableAfterPodGroupAdded(_ klog.Logger, pod *v1.Pod, _, newObj interface{}) (framework.QueueingHint, error) {
	pg, ok := newObj.(*schedulingv1beta1.PodGroup)
	if !ok {
		return framework.Queue, fmt.Errorf("unexpected object %T", newObj)
	}
	if name := framework.PodGroupName(pod); name != "" && pg.Namespace == pod.Namespace && pg.Name == name {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

func isSchedulableAfterPodGroupUpdated(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	oldPG, ok1 := oldObj.(*schedulingv1beta1.PodGroup)
	newPG, ok2 := newObj.(*schedulingv1beta1.PodGroup)
	if !ok1 || !ok2 {
		return framework.Queue, fmt.Errorf("unexpected objects %T, %T", oldObj, newObj)
	}
	if name := framework.PodGroupName(pod); name == "" || newPG.Namespace != pod.Namespace || newPG.Name != name {
		return framework.QueueSkip, nil
	}
	oldGang, newGang := oldPG.Spec.SchedulingPolicy.Gang, newPG.Spec.SchedulingPolicy.Gang
	if oldGang == nil || newGang == nil || newGang.MinCount >= oldGang.MinCount {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// PreEnqueue holds a member until its PodGroup is observed and, for a
// gang, until minCount of its pods exist; upstream's messages.
func (pl *GangScheduling) PreEnqueue(_ context.Context, pod *v1.Pod) *framework.Status {
	name := framework.PodGroupName(pod)
	if name == "" {
		return nil
	}
	groups := pl.groups()
	var pg *schedulingv1beta1.PodGroup
	ok := false
	if groups != nil {
		pg, ok = groups.PodGroup(pod.Namespace, name)
	}
	if !ok {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for pods's pod group %q to appear in scheduling queue", name))
	}
	gang := pg.Spec.SchedulingPolicy.Gang
	if gang == nil {
		return nil
	}
	st, ok := groups.PodGroupState(pod.Namespace, name)
	if !ok {
		return framework.AsStatus(fmt.Errorf("pod group state not found for pod group %s/%s", pod.Namespace, name))
	}
	if st.AllPodsCount() < int(gang.MinCount) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting for minCount pods from a gang to appear in scheduling queue")
	}
	return nil
}

// PlacementFeasible: Unschedulable once minCount cannot be reached, Wait
// until it is.
func (*GangScheduling) PlacementFeasible(_ context.Context, _ *framework.CycleState, pgi *framework.PodGroupInfo, progress framework.PlacementProgress) *framework.Status {
	minCount := 1
	if pgi.PodGroup != nil {
		minCount = framework.MinCount(pgi.PodGroup)
	}
	if progress.Remaining+progress.Scheduled < minCount {
		return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("minCount (%d) cannot be satisfied: %d scheduled, %d remaining", minCount, progress.Scheduled, progress.Remaining))
	}
	if progress.Scheduled < minCount {
		return framework.NewStatus(framework.Wait, fmt.Sprintf("minCount (%d) is not yet satisfied: %d scheduled, %d remaining", minCount, progress.Scheduled, progress.Remaining))
	}
	return nil
}

// Permit makes a gang's pod wait until minCount of its pods are scheduled
// (bound or assumed); the pod that completes the count lets all the
// waiting ones through.
func (pl *GangScheduling) Permit(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) (*framework.Status, time.Duration) {
	name := framework.PodGroupName(pod)
	if name == "" {
		return nil, 0
	}
	groups := pl.groups()
	if groups == nil {
		return framework.AsStatus(fmt.Errorf("failed to get podGroup %s/%s: pod groups are off", pod.Namespace, name)), 0
	}
	pg, ok := groups.PodGroup(pod.Namespace, name)
	if !ok {
		return framework.AsStatus(fmt.Errorf("failed to get podGroup %s/%s: podgroup.scheduling.k8s.io %q not found", pod.Namespace, name, name)), 0
	}
	if pg.Spec.SchedulingPolicy.Gang == nil {
		return nil, 0
	}
	st, ok := groups.PodGroupState(pod.Namespace, name)
	if !ok {
		return framework.AsStatus(fmt.Errorf("pod group state not found for pod group %s/%s", pod.Namespace, name)), 0
	}
	if st.ScheduledPodsCount() < int(pg.Spec.SchedulingPolicy.Gang.MinCount) {
		unscheduled := st.UnscheduledPods()
		pods := make([]*v1.Pod, 0, len(unscheduled))
		for _, p := range unscheduled {
			pods = append(pods, p)
		}
		pl.handle.Activate(pods...)
		return framework.NewStatus(framework.Wait, "waiting for minCount pods from a gang to be scheduled"), permitTimeout
	}
	for uid := range st.AssumedPods() {
		if wp := pl.handle.GetWaitingPod(string(uid)); wp != nil {
			wp.Allow(Name)
		}
	}
	return nil, 0
}
