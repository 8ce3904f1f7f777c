package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/pkg/framework"
)

// The life of one pod, top to bottom:
//
//	ScheduleOne: pop -> schedulingCycle -> assume -> go bindingCycle
//	schedulingCycle: schedulePod (snapshot, PreFilter, Filter, PreScore,
//	  Score, selectHost) -> PostFilter on failure -> Reserve -> Permit
//	bindingCycle: WaitOnPermit -> PreBind -> Bind -> PostBind
//
// A failure anywhere after assume runs Unreserve, forgets the pod in the
// cache and puts it back in the queue with backoff.

// Upstream's bounds for the adaptive percentageOfNodesToScore.
const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// ErrNoNodesAvailable is returned when the cluster has no nodes.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

// ScheduleResult is a successful scheduling cycle's outcome.
type ScheduleResult struct {
	SuggestedHost  string
	EvaluatedNodes int
	FeasibleNodes  int
}

// ScheduleOne pops one pod and runs its scheduling cycle; the binding
// cycle continues in a goroutine. It returns false when the queue is closed.
func (s *Scheduler) ScheduleOne(ctx context.Context) bool {
	pInfo, err := s.Queue.Pop(ctx)
	if err != nil || pInfo == nil {
		return false
	}
	s.scheduleQueued(ctx, pInfo)
	return true
}

// TryScheduleOne is ScheduleOne without blocking: false when activeQ is empty.
func (s *Scheduler) TryScheduleOne(ctx context.Context) bool {
	pInfo, ok := s.Queue.TryPop()
	if !ok {
		return false
	}
	s.scheduleQueued(ctx, pInfo)
	return true
}

func (s *Scheduler) scheduleQueued(ctx context.Context, pInfo *framework.QueuedPodInfo) {
	if pInfo.Group != nil {
		s.scheduleOnePodGroup(ctx, pInfo)
		return
	}
	pod := pInfo.Pod
	logger := klog.LoggerWithValues(s.logger, "pod", klog.KObj(pod))
	ctx = klog.NewContext(ctx, logger)
	fwk, err := s.Profile(pod.Spec.SchedulerName)
	if err != nil {
		// The event handlers only queue pods of our profiles.
		logger.Error(err, "Dropping pod of an unknown profile")
		s.Queue.Done(pod)
		return
	}
	if s.skipPodSchedule(pod) {
		if pod.DeletionTimestamp != nil {
			if rec := fwk.EventRecorder(); rec != nil {
				rec.Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "skip schedule deleting pod: %v/%v", pod.Namespace, pod.Name)
			}
		}
		s.Queue.Done(pod)
		return
	}
	state := framework.NewCycleState()
	state.PodInfo = pInfo.PodInfo
	state.RecordPluginMetrics = s.samplePluginMetrics()
	cycle := s.Queue.SchedulingCycle()
	start := s.clock.Now()
	assumed, result, st := s.safeSchedulingCycle(ctx, state, fwk, pInfo)
	if !st.IsSuccess() {
		s.recordAttempt(fwk, st, start)
		s.handleSchedulingFailure(ctx, fwk, pInfo, st, result.nominatingInfo, cycle)
		if s.observer != nil {
			s.observer(Attempt{Pod: pod, Attempts: pInfo.Attempts, Status: st, Nominated: result.nominatingInfo})
		}
		return
	}
	s.startBinding(ctx, state, fwk, pInfo, assumed, result.ScheduleResult, start, cycle)
}

// startBinding runs a scheduled pod's binding cycle: inline with
// WithSynchronousBinding, else in its own goroutine.
func (s *Scheduler) startBinding(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, pInfo *framework.QueuedPodInfo, assumed *v1.Pod, result ScheduleResult, start time.Time, cycle int64) {
	pod := pInfo.Pod
	s.bindings.Add(1)
	metrics.Goroutines.WithLabelValues(metrics.Binding).Inc()
	// A binding in flight finishes even when scheduling stops (shutdown):
	// its context does not inherit the cancellation.
	bindCtx := context.WithoutCancel(ctx)
	finish := func(st *framework.Status) {
		defer s.bindings.Done()
		defer metrics.Goroutines.WithLabelValues(metrics.Binding).Dec()
		s.recordAttempt(fwk, st, start)
		if s.observer != nil {
			s.observer(Attempt{Pod: pod, Attempts: pInfo.Attempts, Node: result.SuggestedHost, Status: st})
		}
		if st.IsSuccess() {
			if pInfo.MovedByFlush {
				metrics.PodsScheduledAfterFlush.Inc()
			}
			metrics.PodSchedulingAttempts.Observe(float64(pInfo.Attempts))
			if pInfo.InitialAttemptTimestamp != nil {
				metrics.PodSchedulingSLIDuration.WithLabelValues(strconv.Itoa(pInfo.Attempts)).Observe(s.clock.Since(*pInfo.InitialAttemptTimestamp).Seconds())
			}
		}
	}
	if s.syncBinding {
		finish(s.bindingCycle(bindCtx, state, fwk, result, assumed, pInfo, cycle))
		return
	}
	// WaitOnPermit and PreBind may wait for minutes (a gang's members, the
	// PV controller, a device's binding conditions): they run on the
	// binding cycle's own goroutine, as all of upstream's binding cycle
	// does, and only Bind, the API call, waits its turn in the pool.
	go func() {
		if st := s.preBindingCycle(bindCtx, state, fwk, result, assumed, pInfo, cycle); !st.IsSuccess() {
			finish(st)
			return
		}
		s.binders.submit(func() {
			finish(s.bindStage(bindCtx, state, fwk, result, assumed, pInfo, cycle))
		})
	}()
}

// pluginMetricsSamplePercent is upstream's share of cycles whose plugins
// are timed one by one.
const pluginMetricsSamplePercent = 10

// samplePluginMetrics picks every tenth cycle: deterministic, and it never
// draws from the seeded source that breaks ties.
func (s *Scheduler) samplePluginMetrics() bool {
	s.sampleCounter++
	return s.sampleCounter%(100/pluginMetricsSamplePercent) == 1
}

// recordAttempt counts one attempt by its result.
func (s *Scheduler) recordAttempt(fwk *runtime.Framework, st *framework.Status, start time.Time) {
	result := metrics.ScheduledResult
	switch {
	case st.IsRejected():
		result = metrics.UnschedulableResult
	case !st.IsSuccess():
		result = metrics.ErrorResult
	}
	metrics.ScheduleAttempts.WithLabelValues(result, fwk.ProfileName()).Inc()
	metrics.SchedulingAttemptDuration.WithLabelValues(result, fwk.ProfileName()).Observe(s.clock.Since(start).Seconds())
}

// observe records an extension point's duration.
func (s *Scheduler) observe(fwk *runtime.Framework, point string, st *framework.Status, start time.Time) {
	metrics.FrameworkExtensionPointDuration.WithLabelValues(point, st.Code().String(), fwk.ProfileName()).Observe(s.clock.Since(start).Seconds())
}

// safeSchedulingCycle turns a panic in the cycle (a plugin's, or ours on a
// malformed pod) into an Error status: that pod fails and backs off, the
// scheduler goes on. If the pod was assumed before the panic (a Reserve or
// Permit plugin panicked), the Unreserve plugins run and it is forgotten,
// as after any failure past assume: what Reserve plugins hold for it (DRA
// allocations in flight, assumed volumes) is released.
func (s *Scheduler) safeSchedulingCycle(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, pInfo *framework.QueuedPodInfo) (assumed *v1.Pod, res cycleResult, st *framework.Status) {
	defer func() {
		if r := recover(); r != nil {
			if p, ok := s.Cache.GetPod(pInfo.Pod); ok && s.Cache.IsAssumedPod(p) {
				s.unreserveAfterPanic(ctx, state, fwk, p)
				s.forget(ctx, p)
			}
			assumed, res = nil, cycleResult{}
			st = framework.AsStatus(fmt.Errorf("scheduling cycle panicked: %v", r))
		}
	}()
	return s.schedulingCycle(ctx, state, fwk, pInfo)
}

// unreserveAfterPanic runs the Unreserve plugins for a pod whose cycle
// panicked after assume; a panic in them is logged, not raised again.
func (s *Scheduler) unreserveAfterPanic(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, assumed *v1.Pod) {
	defer func() {
		if r := recover(); r != nil {
			klog.FromContext(ctx).Error(fmt.Errorf("%v", r), "Unreserve panicked after a panic in the scheduling cycle", "pod", klog.KObj(assumed))
		}
	}()
	fwk.RunReservePluginsUnreserve(ctx, state, assumed, assumed.Spec.NodeName)
}

// skipPodSchedule is true for a pod deleted meanwhile or already assumed.
func (s *Scheduler) skipPodSchedule(pod *v1.Pod) bool {
	if pod.DeletionTimestamp != nil {
		return true
	}
	return s.Cache.IsAssumedPod(pod)
}

type cycleResult struct {
	ScheduleResult
	nominatingInfo *string
}

func (s *Scheduler) schedulingCycle(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, pInfo *framework.QueuedPodInfo) (*v1.Pod, cycleResult, *framework.Status) {
	pod := pInfo.Pod
	s.cycleMemo, s.replayed = false, false
	res, err := s.SchedulePod(ctx, fwk, state, pod)
	if err != nil {
		if errors.Is(err, ErrNoNodesAvailable) {
			// Unschedulable, as upstream: no plugin to wake it, so it backs
			// off and is retried; a node's arrival wakes it sooner.
			none := ""
			return nil, cycleResult{nominatingInfo: &none}, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error()).WithError(err)
		}
		var fitErr *framework.FitError
		if !errors.As(err, &fitErr) {
			return nil, cycleResult{}, framework.AsStatus(err)
		}
		out := cycleResult{}
		if s.replayed {
			return nil, s.replayFailure(fwk, pod, fitErr), fitErrorStatus(fitErr)
		}
		draws := s.randSrc.draws
		if fwk.HasPostFilterPlugins() {
			pfr, st := fwk.RunPostFilterPlugins(ctx, state, pod, fitErr.Diagnosis.NodeToStatus)
			// An Error in PostFilter is logged and its message ends the
			// FitError's; the pod is unschedulable all the same (v1.37.2's
			// schedulingCycle).
			if st.Code() == framework.Error {
				klog.FromContext(ctx).Error(st.AsError(), "Status after running PostFilter plugins for pod", "pod", klog.KObj(pod))
			}
			if len(st.Reasons()) > 0 {
				fitErr.Diagnosis.PostFilterMsg = st.Message()
			}
			if pfr != nil {
				// A nominated node, or "" to clear a stale nomination.
				n := pfr.NominatedNodeName
				out.nominatingInfo = &n
			}
			if st.IsSuccess() || st.Code() == framework.Error || pfr != nil && pfr.NominatedNodeName != "" {
				s.cycleMemo = false
			}
		}
		status := fitErrorStatus(fitErr) // renders the histogram the memo shares
		s.memoizeFailure(fitErr, out.nominatingInfo != nil, s.randSrc.draws-draws)
		return nil, out, status
	}
	assumed, st := s.assumeReservePermit(ctx, state, fwk, pInfo, res.SuggestedHost)
	if !st.IsSuccess() {
		return nil, cycleResult{}, st
	}
	return assumed, cycleResult{ScheduleResult: res}, nil
}

// assumeAndReserve assumes the pod on host in the cache, then runs
// Reserve; on a rejection it undoes both.
func (s *Scheduler) assumeAndReserve(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, pInfo *framework.QueuedPodInfo, host string) (*v1.Pod, *framework.Status) {
	pod := pInfo.Pod
	// The assumed pod differs from the queued one in spec.nodeName only;
	// the rest is shared (pods are never changed in place).
	assumed := new(v1.Pod)
	*assumed = *pod
	assumed.Spec.NodeName = host
	if err := s.Cache.AssumePodInfo(pInfo.PodInfo.WithPod(assumed)); err != nil {
		return nil, framework.AsStatus(err)
	}
	// The pod is no longer nominated elsewhere once assumed.
	s.Queue.DeleteNominatedPodIfExists(pod)
	if st := fwk.RunReservePluginsReserve(ctx, state, assumed, host); !st.IsSuccess() {
		fwk.RunReservePluginsUnreserve(ctx, state, assumed, host)
		s.forget(ctx, assumed)
		return nil, rejectionOnNode(pod, host, st)
	}
	return assumed, nil
}

// assumeReservePermit is the end of a successful scheduling cycle:
// assume, Reserve, Permit (a Wait is for the binding cycle).
func (s *Scheduler) assumeReservePermit(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, pInfo *framework.QueuedPodInfo, host string) (*v1.Pod, *framework.Status) {
	assumed, st := s.assumeAndReserve(ctx, state, fwk, pInfo, host)
	if !st.IsSuccess() {
		return nil, st
	}
	if st := fwk.RunPermitPlugins(ctx, state, assumed, host); !st.IsWait() && !st.IsSuccess() {
		fwk.RunReservePluginsUnreserve(ctx, state, assumed, host)
		s.forget(ctx, assumed)
		return nil, rejectionOnNode(pInfo.Pod, host, st)
	}
	return assumed, nil
}

// rejectionOnNode is a Reserve, Permit or WaitOnPermit rejection as
// upstream reports it: a FitError over the one chosen node ("0/1 nodes
// are available: <reason>."), whose plugin is the one to wake the pod.
// Errors stay errors.
func rejectionOnNode(pod *v1.Pod, node string, st *framework.Status) *framework.Status {
	if !st.IsRejected() {
		return st
	}
	d := framework.Diagnosis{NodeToStatus: framework.NewNodeToStatus(), UnschedulablePlugins: sets.New[string]()}
	d.NodeToStatus.Set(node, st)
	if st.Plugin() != "" {
		d.UnschedulablePlugins.Insert(st.Plugin())
	}
	fe := &framework.FitError{Pod: pod, NumAllNodes: 1, Diagnosis: d}
	return framework.NewStatus(st.Code(), fe.Error()).WithError(fe)
}

// fitErrorStatus wraps a FitError as an Unschedulable status that keeps it.
func fitErrorStatus(f *framework.FitError) *framework.Status {
	return framework.NewStatus(framework.Unschedulable, f.Error()).WithError(f)
}

// forget undoes the assumption of a pod whose scheduling cycle failed
// after assume; nobody else saw its room taken, so nobody is moved.
func (s *Scheduler) forget(ctx context.Context, assumed *v1.Pod) {
	if err := s.Cache.ForgetPod(assumed); err != nil {
		klog.FromContext(ctx).Error(err, "Forgetting assumed pod")
	}
}

// forgetOrRemove undoes the assumption of a pod whose binding cycle
// failed. A pod still in the world is forgotten: a pod group's member goes
// back to its group's unscheduled pods. A pod deleted meanwhile (rejected
// at Permit by its deletion, whose handler leaves the cleanup to this
// cycle) is removed: its group no longer counts it. Upstream forgets it
// in both cases and keeps a deleted member in its group's state; kubesched
// reads the world, so that a gang is never admitted short of minCount by
// a pod that no longer exists.
func (s *Scheduler) forgetOrRemove(assumed *v1.Pod) error {
	if s.deletedMeanwhile(assumed) {
		return s.Cache.RemoveAssumedPod(assumed)
	}
	return s.Cache.ForgetPod(assumed)
}

// bindingCycle runs the whole binding cycle at once; it returns the
// outcome.
func (s *Scheduler) bindingCycle(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, res ScheduleResult, assumed *v1.Pod, pInfo *framework.QueuedPodInfo, cycle int64) *framework.Status {
	if st := s.preBindingCycle(ctx, state, fwk, res, assumed, pInfo, cycle); !st.IsSuccess() {
		return st
	}
	return s.bindStage(ctx, state, fwk, res, assumed, pInfo, cycle)
}

// preBindingCycle is the binding cycle up to Bind: WaitOnPermit, then
// PreBind. Both may wait; the pod's deletion cancels them (cancelPreBind).
// A failure is handled here and returned.
func (s *Scheduler) preBindingCycle(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, res ScheduleResult, assumed *v1.Pod, pInfo *framework.QueuedPodInfo, cycle int64) (result *framework.Status) {
	host := res.SuggestedHost
	defer s.recoverBindingCycle(ctx, state, fwk, assumed, host, pInfo, cycle, &result, nil)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.addPreBinding(assumed.UID, cancel)
	if st := fwk.WaitOnPermit(ctx, assumed); !st.IsSuccess() {
		s.removePreBinding(assumed.UID)
		// The wait may have ended by the cancellation itself (the pod's
		// deletion): Unreserve and the status patch must still run.
		return s.handleBindingCycleError(context.WithoutCancel(ctx), state, fwk, assumed, host, pInfo, rejectionOnNode(pInfo.Pod, host, st), cycle)
	}
	start := s.clock.Now()
	st := fwk.RunPreBindPlugins(ctx, state, assumed, host)
	s.observe(fwk, "PreBind", st, start)
	// Out of the map, the pod can no longer be cancelled: a cancellation
	// that came first fails the cycle even if PreBind finished.
	s.removePreBinding(assumed.UID)
	if st.IsSuccess() && ctx.Err() != nil {
		st = framework.AsStatus(context.Cause(ctx))
	}
	if !st.IsSuccess() {
		return s.handleBindingCycleError(context.WithoutCancel(ctx), state, fwk, assumed, host, pInfo, st, cycle)
	}
	return nil
}

// bindStage is the binding cycle from Bind on: Bind, then PostBind.
func (s *Scheduler) bindStage(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, res ScheduleResult, assumed *v1.Pod, pInfo *framework.QueuedPodInfo, cycle int64) (result *framework.Status) {
	host := res.SuggestedHost
	bound := false
	defer s.recoverBindingCycle(ctx, state, fwk, assumed, host, pInfo, cycle, &result, &bound)
	start := s.clock.Now()
	var st *framework.Status
	if byExtender, err := s.extendersBinding(ctx, assumed, host); byExtender {
		// An extender bound it (or failed to): the Bind plugins do not run.
		st = framework.AsStatus(err)
	} else {
		st = fwk.RunBindPlugins(ctx, state, assumed, host)
	}
	s.observe(fwk, "Bind", st, start)
	if !st.IsSuccess() {
		return s.handleBindingCycleError(ctx, state, fwk, assumed, host, pInfo, st, cycle)
	}
	bound = true
	s.Queue.Done(assumed)
	if rec := fwk.EventRecorder(); rec != nil {
		rec.Eventf(pInfo.Pod, nil, v1.EventTypeNormal, "Scheduled", "Binding", "Successfully assigned %v/%v to %v", assumed.Namespace, assumed.Name, host)
	}
	fwk.RunPostBindPlugins(ctx, state, assumed, host)
	return nil
}

// recoverBindingCycle turns a panic in a binding cycle into an Error
// status. Deferred directly, so that recover sees the panic.
func (s *Scheduler) recoverBindingCycle(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, assumed *v1.Pod, host string, pInfo *framework.QueuedPodInfo, cycle int64, result **framework.Status, bound *bool) {
	r := recover()
	if r == nil {
		return
	}
	s.removePreBinding(assumed.UID)
	st := framework.AsStatus(fmt.Errorf("binding cycle panicked: %v", r))
	if bound != nil && *bound {
		// Only PostBind is left after Bind: the pod is bound, and
		// forgetting or requeueing it would bind it twice.
		klog.FromContext(ctx).Error(st.AsError(), "PostBind failed")
		return
	}
	*result = s.handleBindingCycleError(context.WithoutCancel(ctx), state, fwk, assumed, host, pInfo, st, cycle)
}

// handleBindingCycleError undoes the reservation and the assumption, then
// requeues the pod, as upstream's: the room the pod held is an
// AssignedPod/Delete for the others. When the pod was rejected, that event
// is sent after the pod is back in the queue and skips the pod itself, so
// it does not send it to backoff by its own release; after an error it is
// sent first.
func (s *Scheduler) handleBindingCycleError(ctx context.Context, state *framework.CycleState, fwk *runtime.Framework, assumed *v1.Pod, host string, pInfo *framework.QueuedPodInfo, st *framework.Status, cycle int64) *framework.Status {
	fwk.RunReservePluginsUnreserve(ctx, state, assumed, host)
	if err := s.forgetOrRemove(assumed); err != nil {
		// Not assumed any more (bound or added meanwhile): nothing to undo.
		klog.FromContext(ctx).V(2).Info("Forgetting assumed pod", "err", err)
	} else if st.IsRejected() {
		defer s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDelete, assumed, nil, func(p *v1.Pod) bool { return p.UID != assumed.UID })
	} else {
		s.Queue.MoveAllToActiveOrBackoffQueue(framework.EventAssignedPodDelete, assumed, nil, nil)
	}
	s.handleSchedulingFailure(ctx, fwk, pInfo, st, nil, cycle)
	return st
}

// handleSchedulingFailure records the failure on the pod (condition and
// event) and puts it back in the queue.
func (s *Scheduler) handleSchedulingFailure(ctx context.Context, fwk *runtime.Framework, pInfo *framework.QueuedPodInfo, st *framework.Status, nominatedNode *string, cycle int64) {
	logger := klog.FromContext(ctx)
	pod := pInfo.Pod
	// A pod deleted or bound meanwhile is not requeued: that would leak it
	// into the queue (upstream reads its informer the same way).
	cur, ok := s.world.GetPod(pod.Namespace, pod.Name)
	if !ok || cur.UID != pod.UID {
		logger.V(2).Info("Pod doesn't exist in informer cache; not requeued")
		s.Queue.Done(pod)
		return
	}
	if cur.Spec.NodeName != "" {
		logger.V(2).Info("Pod has been assigned to a node meanwhile; not requeued", "node", cur.Spec.NodeName)
		s.Queue.Done(pod)
		return
	}
	pInfo.PodInfo = framework.NewPodInfo(cur)
	pod = cur
	reason := v1.PodReasonSchedulerError
	var fitErr *framework.FitError
	if errors.As(st.AsError(), &fitErr) {
		reason = v1.PodReasonUnschedulable
		pInfo.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins
		pInfo.PendingPlugins = fitErr.Diagnosis.PendingPlugins
	} else if st.IsRejected() {
		// A rejection that is not a FitError (PreBind, Bind, no nodes)
		// names no plugin to wake the pod, as upstream: it backs off as
		// after an error.
		reason = v1.PodReasonUnschedulable
		pInfo.UnschedulablePlugins, pInfo.PendingPlugins = nil, nil
	} else {
		pInfo.UnschedulablePlugins, pInfo.PendingPlugins = nil, nil
	}
	msg := st.Message()
	if err := st.AsError(); err != nil && !errors.Is(err, errPodGroupUnschedulable) {
		msg = err.Error()
	}
	logger.V(2).Info("Unable to schedule pod; waiting", "err", msg)
	if nominatedNode != nil {
		if *nominatedNode == "" {
			s.Queue.DeleteNominatedPodIfExists(pod)
		} else {
			s.Queue.AddNominatedPod(pInfo.PodInfo, *nominatedNode)
		}
		if *nominatedNode == pod.Status.NominatedNodeName {
			nominatedNode = nil // nothing to write
		}
	}
	s.Queue.AddUnschedulableIfNotPresent(pInfo, cycle)
	if rec := fwk.EventRecorder(); rec != nil {
		rec.Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "%v", truncateMessage(msg))
	}
	cond := &v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: reason, Message: msg}
	if err := s.world.UpdatePodStatus(ctx, pod, cond, nominatedNode); err != nil {
		logger.Error(err, "Updating pod status")
	}
}

// noteLengthLimit is the API's limit on an event's note (core validation's
// NoteLengthLimit).
const noteLengthLimit = 1024

// truncateMessage shortens an event message to the API's limit, as
// upstream's: the condition keeps the whole message.
func truncateMessage(msg string) string {
	if len(msg) <= noteLengthLimit {
		return msg
	}
	const suffix = " ..."
	return msg[:noteLengthLimit-len(suffix)] + suffix
}
