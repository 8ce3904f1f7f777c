package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/pkg/framework"
)

// A pod group's cycle (the GenericWorkload gate), after kube-scheduler
// v1.37.2's schedule_one_podgroup.go, for groups without a parent
// (CompositePodGroup, alpha); placements (TopologyAwareWorkloadScheduling,
// alpha) are schedule_one_placement.go's:
//
//	scheduleOnePodGroup: the group's object from the cache, validation
//	  (one scheduler name, the group's priority on every pod, one
//	  preemption policy), members deleted or assumed meanwhile skipped
//	podGroupAlgorithm: PlacementFeasible; then each member in order
//	  through the ordinary algorithm, assumed in the snapshot (and
//	  reserved) where it lands so the next ones see it; PlacementFeasible
//	  after each; every assumption undone at the end, whatever the outcome
//	submitPodGroupResult: on success each placed member is assumed in
//	  the cache, reserved and permitted again and bound; otherwise every
//	  member fails with the group's reason (or its own); the PodGroup's
//	  PodGroupInitiallyScheduled condition says which
//
// As upstream, the snapshot is taken once, when the group's cycle starts,
// and the members are assumed in it only: the cache, which the event
// handlers change meanwhile, sees none of them until the group's result
// is submitted (a member deleted during the cycle is an unassumed pod
// there, removed from its group at once).

// errPodGroupUnschedulable is upstream's error for a member whose group
// could not be placed whole.
var errPodGroupUnschedulable = errors.New("pod group is unschedulable")

// podGroupUnschedulable is upstream's NewStatus(Unschedulable,
// reasons...).WithError(errPodGroupUnschedulable): its message starts with
// the error's.
func podGroupUnschedulable(reasons ...string) *framework.Status {
	return framework.NewStatus(framework.Unschedulable, append([]string{errPodGroupUnschedulable.Error()}, reasons...)...).WithError(errPodGroupUnschedulable)
}

// memberResult is one member's outcome in the group's algorithm.
type memberResult struct {
	pInfo  *framework.QueuedPodInfo
	state  *framework.CycleState
	host   string
	status *framework.Status
	// nominating is preemption's node for the member (nil: unchanged).
	nominating *string
	start      time.Time
}

// scheduleOnePodGroup runs a popped group's cycle.
func (s *Scheduler) scheduleOnePodGroup(ctx context.Context, e *framework.QueuedPodInfo) {
	g := e.Group
	logger := klog.LoggerWithValues(s.logger, "podGroup", klog.KRef(g.Namespace, g.Name))
	ctx = klog.NewContext(ctx, logger)
	cycle := s.Queue.SchedulingCycle()
	pg, ok := s.Cache.PodGroup(g.Namespace, g.Name)
	if !ok {
		// Popped before its deletion reached the queue: the members fail
		// and wait for it again; there is no object to write to.
		g.PodGroup = nil
		s.podGroupFailureBeforeScheduling(ctx, e, fmt.Errorf("pod group object not found for pod group %s", framework.PodGroupKey(g.Namespace, g.Name)), cycle)
		return
	}
	g.PodGroup = pg
	if err := s.validatePodGroup(e); err != nil {
		s.podGroupFailureBeforeScheduling(ctx, e, err, cycle)
		return
	}
	fwk := s.Profiles[g.Members[0].Pod.Spec.SchedulerName]
	// One snapshot for the whole cycle (upstream takes it first thing).
	s.Cache.UpdateSnapshot(s.snapshot)
	s.pinSnapshot = true
	pinned := true
	unpin := func() {
		if pinned {
			s.pinSnapshot, pinned = false, false
		}
	}
	defer unpin()
	kept := g.Members[:0]
	for _, m := range g.Members {
		if s.skipPodSchedule(m.Pod) {
			s.Queue.Done(m.Pod)
			continue
		}
		kept = append(kept, m)
	}
	g.Members = kept
	g.SyncUnscheduled()
	if len(kept) == 0 {
		s.Queue.AddAttemptedPodGroupIfNeeded(e, nil)
		return
	}
	logger.V(3).Info("Attempting to schedule pod group")
	start := s.clock.Now()
	results, status := s.safePodGroupAlgorithm(ctx, fwk, g)
	metrics.PodGroupSchedulingAlgorithmDuration.Observe(s.clock.Since(start).Seconds())
	// Members not tried (an early stop) take a copy of the group's status,
	// before preemption nominates them too and the PodGroupPostFilter
	// reasons are added to the group's own (upstream's
	// completePodGroupAlgorithmResult: status.Clone()).
	for i := len(results); i < len(g.Members); i++ {
		m := g.Members[i]
		state := framework.NewCycleState()
		state.PodInfo = m.PodInfo
		results = append(results, memberResult{pInfo: m, state: state, status: status.Clone(), start: s.clock.Now()})
	}
	waiting := false
	// The queue is told the algorithm's status, captured before the
	// PodGroupPostFilter plugins run: their error fails the members, but
	// the group backs off as unschedulable (upstream's rootStatus).
	queueStatus := status
	if status.Code() == framework.Unschedulable {
		status, waiting = s.safePodGroupPostFilter(ctx, fwk, g, results, status)
	}
	unpin()
	s.submitPodGroupResult(ctx, fwk, e, results, status, queueStatus, waiting, cycle)
	result := metrics.ErrorResult
	switch {
	case status.IsSuccess():
		result = metrics.ScheduledResult
	case status.IsRejected() && waiting:
		result = metrics.WaitingOnPreemptionResult
	case status.IsRejected():
		result = metrics.UnschedulableResult
	}
	d := s.clock.Since(start).Seconds()
	metrics.PodGroupScheduleAttempts.WithLabelValues(result, fwk.ProfileName()).Inc()
	metrics.PodGroupSchedulingAttemptDuration.WithLabelValues(result, fwk.ProfileName()).Observe(d)
}

// safePodGroupAlgorithm turns a panic in the group's algorithm (ours, or
// a plugin's not caught by the runtime) into an Error for the group, as
// safeSchedulingCycle does for a pod: every member fails and backs off,
// the scheduler goes on. The algorithm's own deferred reverts have undone
// its placements and Reserve calls on the way out; the snapshot, which a
// panic may have left half changed, is copied anew at the next cycle.
func (s *Scheduler) safePodGroupAlgorithm(ctx context.Context, fwk *runtime.Framework, g *framework.QueuedPodGroupInfo) (results []memberResult, st *framework.Status) {
	defer func() {
		if r := recover(); r != nil {
			s.snapshot.Invalidate()
			results, st = nil, framework.AsStatus(fmt.Errorf("pod group scheduling cycle panicked: %v", r))
		}
	}()
	return s.podGroupSchedulingAlgorithm(ctx, fwk, g, false)
}

// safePodGroupPostFilter is runPodGroupPostFilter with a panic turned into
// an Error, as safePodGroupAlgorithm.
func (s *Scheduler) safePodGroupPostFilter(ctx context.Context, fwk *runtime.Framework, g *framework.QueuedPodGroupInfo, results []memberResult, status *framework.Status) (st *framework.Status, waiting bool) {
	defer func() {
		if r := recover(); r != nil {
			s.snapshot.Invalidate()
			st, waiting = framework.AsStatus(fmt.Errorf("pod group post filter panicked: %v", r)), false
		}
	}()
	return s.runPodGroupPostFilter(ctx, fwk, g, results, status)
}

// podGroupFailureBeforeScheduling fails every member with err (an error:
// they back off), writes it on the PodGroup when there is one, and ends
// the group's cycle.
func (s *Scheduler) podGroupFailureBeforeScheduling(ctx context.Context, e *framework.QueuedPodInfo, err error, cycle int64) {
	st := framework.AsStatus(err)
	for _, m := range e.Group.Members {
		fwk, ferr := s.Profile(m.Pod.Spec.SchedulerName)
		if ferr != nil {
			klog.FromContext(ctx).Error(ferr, "Dropping pod of an unknown profile", "pod", klog.KObj(m.Pod))
			s.Queue.Done(m.Pod)
			continue
		}
		none := ""
		s.handleSchedulingFailure(ctx, fwk, m, st, &none, cycle)
	}
	if e.Group.PodGroup != nil {
		s.updatePodGroupCondition(ctx, e.Group.PodGroup, metav1.Condition{
			Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse,
			Reason: schedulingv1beta1.PodGroupReasonSchedulerError, Message: err.Error(),
		})
	}
	s.Queue.AddAttemptedPodGroupIfNeeded(e, st)
}

// validatePodGroup: one scheduler name, the group's priority and one
// preemption policy on every member, queued or already scheduled
// (upstream's validatePodGroup with PodGroupPreemptionPolicy off, its
// default: the first pod's policy is the group's).
func (s *Scheduler) validatePodGroup(e *framework.QueuedPodInfo) error {
	g := e.Group
	schedulerName := g.Members[0].Pod.Spec.SchedulerName
	prio := framework.PodGroupPriority(g.PodGroup)
	var policy v1.PreemptionPolicy
	check := func(pod *v1.Pod) error {
		if pod.Spec.SchedulerName != schedulerName {
			return fmt.Errorf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q", pod.Spec.SchedulerName, schedulerName)
		}
		if p := corev1helpers.PodPriority(pod); p != prio {
			return fmt.Errorf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d", p, prio)
		}
		pp := v1.PreemptLowerPriority
		if pod.Spec.PreemptionPolicy != nil {
			pp = *pod.Spec.PreemptionPolicy
		}
		if policy == "" {
			policy = pp
		} else if pp != policy {
			return fmt.Errorf("all pods in a single pod group should have the same preemption policy, got %v and %v", pp, policy)
		}
		return nil
	}
	for _, m := range g.Members {
		if err := check(m.Pod); err != nil {
			return err
		}
	}
	st, ok := s.Cache.PodGroupState(g.Namespace, g.Name)
	if !ok {
		return fmt.Errorf("failed to get pod group state: pod group state not found for pod group %s/%s", g.Namespace, g.Name)
	}
	for _, p := range st.ScheduledPods() {
		if err := check(p); err != nil {
			return err
		}
	}
	if _, ok := s.Profiles[schedulerName]; !ok {
		return fmt.Errorf("profile not found for scheduler name %q", schedulerName)
	}
	return nil
}

// podGroupSchedulingAlgorithm runs the group's algorithm (within each
// candidate placement with TopologyAwareWorkloadScheduling) and returns a
// result per member tried (the ones after an early stop are completed by
// the caller) and the group's status: Success (placed, at least one pod),
// Unschedulable, or Error. Every placement is undone before it returns.
func (s *Scheduler) podGroupSchedulingAlgorithm(ctx context.Context, fwk *runtime.Framework, g *framework.QueuedPodGroupInfo, dry bool) ([]memberResult, *framework.Status) {
	var results []memberResult
	var status *framework.Status
	var anyScheduled bool
	if s.placements {
		results, status, anyScheduled = s.podGroupPlacementAlgorithm(ctx, fwk, g, dry)
	} else {
		results, status, anyScheduled = s.podGroupAlgorithm(ctx, fwk, g, dry)
	}
	if status.IsSuccess() && !anyScheduled {
		// The framework asks for at least one pod placed.
		status = podGroupUnschedulable()
	}
	return results, status
}

// podGroupAlgorithm is upstream's podGroupSchedulingDefaultAlgorithm on
// the snapshot's candidate nodes: a result per member tried, the status,
// and whether any member was placed.
//
// Members are placed in the snapshot only, never in the cache. dry (a
// preemption dry run on a snapshot the PodGroupPostFilter changed) runs
// no Reserve plugins; either way the placements are undone before it
// returns.
func (s *Scheduler) podGroupAlgorithm(ctx context.Context, fwk *runtime.Framework, g *framework.QueuedPodGroupInfo, dry bool) ([]memberResult, *framework.Status, bool) {
	var reverts []func()
	defer func() {
		for i := len(reverts) - 1; i >= 0; i-- {
			reverts[i]()
		}
	}()
	results := make([]memberResult, 0, len(g.Members))
	st, ok := s.Cache.PodGroupState(g.Namespace, g.Name)
	if !ok {
		return results, framework.AsStatus(fmt.Errorf("failed to get podGroup state for podGroup %s to compute gang feasibility: pod group state not found for pod group %s/%s", klog.KRef(g.Namespace, g.Name), g.Namespace, g.Name)), false
	}
	progress := framework.PlacementProgress{Remaining: len(g.UnscheduledPods), Scheduled: st.ScheduledPodsCount()}
	status := fwk.RunPlacementFeasiblePlugins(ctx, nil, g.PodGroupInfo, progress)
	switch {
	case status.Code() == framework.Error:
		return results, framework.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", status.AsError())), false
	case status.Code() == framework.Unschedulable:
		return results, podGroupUnschedulable(status.Reasons()...), false
	}
	anyScheduled := false
	for _, m := range g.Members {
		r, revert := s.podGroupMemberAlgorithm(ctx, fwk, m, dry)
		results = append(results, r)
		if revert != nil {
			reverts = append(reverts, revert)
		}
		if !r.status.IsSuccess() && !r.status.IsRejected() {
			status = framework.AsStatus(fmt.Errorf("failed to schedule other pod from a pod group: %w", r.status.AsError()))
			break
		}
		progress.Remaining--
		if r.status.IsSuccess() {
			progress.Scheduled++
		}
		pf := fwk.RunPlacementFeasiblePlugins(ctx, nil, g.PodGroupInfo, progress)
		if pf.Code() == framework.Error {
			status = framework.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", pf.AsError()))
			break
		}
		status = pf
		if pf.Code() == framework.Unschedulable {
			break
		}
		anyScheduled = anyScheduled || r.status.IsSuccess()
	}
	if status.IsWait() {
		status = podGroupUnschedulable(status.Reasons()...)
	}
	if !status.IsSuccess() {
		anyScheduled = false
	}
	return results, status, anyScheduled
}

// podGroupMemberAlgorithm runs the ordinary algorithm for one member
// (without PostFilter: the group's preemption runs for the group) and, if
// it fits, assumes it in the snapshot and reserves it; the revert undoes
// that.
func (s *Scheduler) podGroupMemberAlgorithm(ctx context.Context, fwk *runtime.Framework, m *framework.QueuedPodInfo, dry bool) (memberResult, func()) {
	pod := m.Pod
	state := framework.NewCycleState()
	state.PodInfo = m.PodInfo
	state.RecordPluginMetrics = s.samplePluginMetrics()
	state.PodGroupCycle = true
	r := memberResult{pInfo: m, state: state, start: s.clock.Now()}
	s.cycleMemo, s.replayed = false, false
	res, err := s.SchedulePod(klog.NewContext(ctx, klog.LoggerWithValues(klog.FromContext(ctx), "pod", klog.KObj(pod))), fwk, state, pod)
	if err != nil {
		var fitErr *framework.FitError
		switch {
		case errors.Is(err, ErrNoNodesAvailable):
			none := ""
			r.nominating = &none
			r.status = framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error()).WithError(err)
		case errors.As(err, &fitErr):
			r.status = fitErrorStatus(fitErr)
		default:
			none := ""
			r.nominating = &none
			r.status = framework.AsStatus(err)
		}
		return r, nil
	}
	host := res.SuggestedHost
	if dry {
		if err := s.snapshot.AddPodInfo(host, m.PodInfo); err != nil {
			r.status = framework.AsStatus(err)
			return r, nil
		}
		r.host = host
		return r, func() { s.forgetInSnapshot(ctx, host, pod) }
	}
	assumed, st := s.assumeAndReserveInSnapshot(ctx, state, fwk, m, host)
	if !st.IsSuccess() {
		none := ""
		r.nominating, r.status = &none, st
		return r, nil
	}
	r.host = host
	return r, func() {
		fwk.RunReservePluginsUnreserve(ctx, state, assumed, host)
		s.forgetInSnapshot(ctx, host, assumed)
		if nnn := pod.Status.NominatedNodeName; nnn != "" {
			// Assuming dropped the nomination; undoing it restores it.
			s.Queue.AddNominatedPod(m.PodInfo, nnn)
		}
	}
}

// assumeAndReserveInSnapshot is assumeAndReserve for a member in its
// group's cycle: the pod is assumed in the cycle's snapshot, not in the
// cache (upstream's assume with IsPodGroupSchedulingCycle).
func (s *Scheduler) assumeAndReserveInSnapshot(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, pInfo *framework.QueuedPodInfo, host string) (*v1.Pod, *framework.Status) {
	pod := pInfo.Pod
	assumed := new(v1.Pod)
	*assumed = *pod
	assumed.Spec.NodeName = host
	if err := s.snapshot.AddPodInfo(host, pInfo.PodInfo.WithPod(assumed)); err != nil {
		return nil, framework.AsStatus(err)
	}
	s.Queue.DeleteNominatedPodIfExists(pod)
	if st := fwk.RunReservePluginsReserve(ctx, state, assumed, host); !st.IsSuccess() {
		fwk.RunReservePluginsUnreserve(ctx, state, assumed, host)
		s.forgetInSnapshot(ctx, host, assumed)
		if nnn := pod.Status.NominatedNodeName; nnn != "" {
			s.Queue.AddNominatedPod(pInfo.PodInfo, nnn)
		}
		return nil, rejectionOnNode(pod, host, st)
	}
	return assumed, nil
}

// forgetInSnapshot takes a member placed in the group's snapshot out
// again; should that fail, the next cycle copies every node anew.
func (s *Scheduler) forgetInSnapshot(ctx context.Context, host string, pod *v1.Pod) {
	if err := s.snapshot.RemovePod(host, pod); err != nil {
		klog.FromContext(ctx).Error(err, "Forgetting a pod group member in the snapshot", "pod", klog.KObj(pod), "node", host)
		s.snapshot.Invalidate()
	}
}

// runPodGroupPostFilter runs the PodGroupPostFilter plugins for a group
// that did not fit; their message ends the group's reasons.
//
// The plugins get a scheduling function that runs the group's algorithm on
// the snapshot as they changed it (pinned: SchedulePod does not refresh it
// meanwhile); the snapshot is refreshed from the cache afterwards. A
// success means the group waits for its victims: each member placed in the
// dry run is nominated to its node (upstream's
// applyPodGroupPostFilterResult).
func (s *Scheduler) runPodGroupPostFilter(ctx context.Context, fwk *runtime.Framework, g *framework.QueuedPodGroupInfo, results []memberResult, status *framework.Status) (*framework.Status, bool) {
	schedule := func(ctx context.Context) ([]framework.ProposedAssignment, *framework.Status) {
		rs, st := s.podGroupSchedulingAlgorithm(ctx, fwk, g, true)
		var out []framework.ProposedAssignment
		for _, r := range rs {
			if r.host != "" {
				out = append(out, framework.ProposedAssignment{PodInfo: r.pInfo.PodInfo, Node: r.host, State: r.state})
			}
		}
		return out, st
	}
	state := framework.NewPodGroupCycleState()
	for _, r := range results {
		state.SetMember(r.pInfo.Pod, r.state)
	}
	res, st := fwk.RunPodGroupPostFilterPlugins(ctx, state, g, schedule)
	s.snapshot.Invalidate()
	if st.Code() == framework.Error {
		return st, false
	}
	status = status.AppendReason(st.Message())
	if !st.IsSuccess() {
		return status, false
	}
	for i := range results {
		p := results[i].pInfo.Pod
		if res != nil {
			if node, ok := res.Nominations[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]; ok {
				results[i].nominating = &node
			}
		}
	}
	return status, true
}

// submitPodGroupResult acts on the algorithm's outcome: the placed members
// of a group that fits go to their binding cycles; every other member
// fails, with its own status or the group's; the PodGroup's condition
// says which; the group's cycle ends.
//
// waiting: the group's preemption succeeded; the members go back to wait
// for the victims to leave, each with the group's status and its
// nomination.
func (s *Scheduler) submitPodGroupResult(ctx context.Context, fwk *runtime.Framework, e *framework.QueuedPodInfo, results []memberResult, status, queueStatus *framework.Status, waiting bool, cycle int64) {
	g := e.Group
	type binding struct {
		r       memberResult
		assumed *v1.Pod
	}
	var toBind []binding
	placed, failed := 0, 0
	for _, r := range results {
		switch {
		case status.Code() == framework.Error:
			st := status
			if r.status.Code() == framework.Error {
				st = r.status
			}
			none := ""
			s.failMember(ctx, fwk, r, st, &none, cycle)
			failed++
		case r.status.IsSuccess() && status.IsSuccess() && s.deletedMeanwhile(r.pInfo.Pod):
			// Deleted while the group's cycle ran (its event found it
			// unassumed and took it out of the queue and its group):
			// upstream assumes it all the same, and it holds its room,
			// and a gang's Permit, until the Permit timeout; kubesched
			// drops it here.
			klog.FromContext(ctx).V(2).Info("Pod group member deleted during its group's cycle; not bound", "pod", klog.KObj(r.pInfo.Pod))
			s.Queue.Done(r.pInfo.Pod)
		case r.status.IsSuccess() && status.IsSuccess():
			r.state.PodGroupCycle = false
			assumed, st := s.assumeReservePermit(ctx, r.state, fwk, r.pInfo, r.host)
			if !st.IsSuccess() {
				none := ""
				s.failMember(ctx, fwk, r, st, &none, cycle)
				failed++
				continue
			}
			placed++
			if s.syncBinding {
				// Inline binding cycles run once every member passed
				// Permit: a gang's first members wait there for the last.
				toBind = append(toBind, binding{r, assumed})
				continue
			}
			s.startBinding(ctx, r.state, fwk, r.pInfo, assumed, ScheduleResult{SuggestedHost: r.host}, r.start, cycle)
		case r.status.IsSuccess() && waiting:
			s.failMember(ctx, fwk, r, status, r.nominating, cycle)
			failed++
		case r.status.IsSuccess():
			none := ""
			s.failMember(ctx, fwk, r, podGroupUnschedulable(status.Message()), &none, cycle)
			failed++
		default:
			s.failMember(ctx, fwk, r, r.status, r.nominating, cycle)
			failed++
		}
	}
	cond := metav1.Condition{Type: schedulingv1beta1.PodGroupInitiallyScheduled}
	switch {
	case status.IsSuccess():
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "Scheduled", status.Message()
		klog.FromContext(ctx).V(2).Info("Successfully scheduled a pod group", "scheduledPods", placed, "unschedulablePods", failed)
	case status.IsRejected():
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, schedulingv1beta1.PodGroupReasonUnschedulable, status.Message()
		klog.FromContext(ctx).V(2).Info("Unable to schedule a pod group", "unschedulablePods", failed, "err", status.Message())
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, schedulingv1beta1.PodGroupReasonSchedulerError, status.AsError().Error()
		klog.FromContext(ctx).Error(status.AsError(), "Error scheduling pod group", "errorPods", len(results))
	}
	s.updatePodGroupCondition(ctx, g.PodGroup, cond)
	s.Queue.AddAttemptedPodGroupIfNeeded(e, queueStatus)
	for _, b := range toBind {
		s.startBinding(ctx, b.r.state, fwk, b.r.pInfo, b.assumed, ScheduleResult{SuggestedHost: b.r.host}, b.r.start, cycle)
	}
}

// deletedMeanwhile: the pod is gone from the world, replaced by another of
// its name, or terminating.
func (s *Scheduler) deletedMeanwhile(pod *v1.Pod) bool {
	cur, ok := s.world.GetPod(pod.Namespace, pod.Name)
	return !ok || cur.UID != pod.UID || cur.DeletionTimestamp != nil
}

// failMember records a member's failed attempt as a pod's.
func (s *Scheduler) failMember(ctx context.Context, fwk *runtime.Framework, r memberResult, st *framework.Status, nominating *string, cycle int64) {
	s.recordAttempt(fwk, st, r.start)
	s.handleSchedulingFailure(ctx, fwk, r.pInfo, st, nominating, cycle)
	if s.observer != nil {
		s.observer(Attempt{Pod: r.pInfo.Pod, Attempts: r.pInfo.Attempts, Status: st, Nominated: nominating})
	}
}

// PodGroupStatusWriter writes a PodGroup's status (the world's, when it
// has pod groups).
type PodGroupStatusWriter interface {
	UpdatePodGroupStatus(ctx context.Context, pg *schedulingv1beta1.PodGroup, status *schedulingv1beta1.PodGroupStatus) error
}

// updatePodGroupCondition sets a condition on a PodGroup, as upstream's:
// never from True back to False (a later cycle for extra pods), and only
// when something changed.
func (s *Scheduler) updatePodGroupCondition(ctx context.Context, pg *schedulingv1beta1.PodGroup, cond metav1.Condition) {
	w, ok := s.world.(PodGroupStatusWriter)
	if !ok || pg == nil {
		return
	}
	if old := apimeta.FindStatusCondition(pg.Status.Conditions, cond.Type); old != nil && old.Status == metav1.ConditionTrue && cond.Status != metav1.ConditionTrue {
		return
	}
	cond.ObservedGeneration = pg.Generation
	cond.LastTransitionTime = metav1.NewTime(s.clock.Now())
	status := pg.Status.DeepCopy()
	if !apimeta.SetStatusCondition(&status.Conditions, cond) {
		return
	}
	if err := w.UpdatePodGroupStatus(ctx, pg, status); err != nil {
		klog.FromContext(ctx).Error(err, "Failed to update PodGroup status", "podGroup", klog.KObj(pg))
	}
}
