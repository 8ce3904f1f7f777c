package defaultpreemption

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/framework/metrics"
)

// Asynchronous preemption (SchedulerAsyncPreemption, on by default in
// kube-scheduler since 1.33; KEP-4832), read from v1.37.2's
// pkg/scheduler/framework/preemption/executor.go: PostFilter nominates the
// node at once and a goroutine does the API calls. It clears the
// nominations of lower-priority pods on the node, deletes every victim but
// the last in parallel, then records the last as pending and deletes it.
// Meanwhile PreEnqueue keeps the preemptor out of activeQ: while it is
// "preempting", unless the last victim is already gone or terminating in
// the world's pod lister (its deletion event may reach the queue before
// the goroutine ends, and would otherwise find the preemptor gated and be
// lost). When an API call failed, or the last victim was only rejected in
// memory (a pod waiting at Permit: no deletion event will come), the
// preemptor is activated.

// msgWaitingForPreemption is upstream's PreEnqueue message.
const msgWaitingForPreemption = "waiting for the preemption for this pod to be finished"

// executor is the state of the preemptions running in the background.
type executor struct {
	mu sync.RWMutex
	// preempting holds the preemptors whose goroutine has not ended.
	preempting map[types.UID]struct{}
	// lastVictim is the victim a preemptor's goroutine deletes last, once
	// it has started deleting it.
	lastVictim map[types.UID]types.NamespacedName
	// running counts the goroutines (tests wait for them).
	running sync.WaitGroup
}

func newExecutor() *executor {
	return &executor{preempting: map[types.UID]struct{}{}, lastVictim: map[types.UID]types.NamespacedName{}}
}

// PreEnqueue keeps a preemptor whose victims are still being deleted in
// the background out of activeQ. Without asynchronous preemption it lets
// every pod in.
//
// A pod group's member waits while its group's preemption runs (the
// group's UID; a member whose PodGroup is unknown is let in, as upstream).
func (pl *DefaultPreemption) PreEnqueue(_ context.Context, pod *v1.Pod) *framework.Status {
	if pl.exec == nil {
		return nil
	}
	if name := framework.PodGroupName(pod); name != "" {
		if m := pl.handle.PodGroupManager(); m != nil {
			pg, ok := m.PodGroup(pod.Namespace, name)
			if !ok || !pl.isRunningPreemption(pg.UID) {
				return nil
			}
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, msgGroupWaiting)
		}
	}
	if !pl.isRunningPreemption(pod.UID) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, msgWaitingForPreemption)
}

// EventsToRegister: with asynchronous preemption, a preemptor gated by
// PreEnqueue is looked at again when an assigned pod is deleted. The hint
// says QueueSkip: the plugins that rejected the pod in its last attempt
// (NodeResourcesFit, ...) decide, with their own hints, whether the
// deletion may help; this plugin only lets the event reach them.
func (pl *DefaultPreemption) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	if pl.exec == nil {
		return nil, nil
	}
	return []framework.ClusterEventWithHint{{
		Event: framework.EventAssignedPodDelete,
		QueueingHintFn: func(klog.Logger, *v1.Pod, interface{}, interface{}) (framework.QueueingHint, error) {
			return framework.QueueSkip, nil
		},
	}}, nil
}

// isRunningPreemption: the preemptor's goroutine has not ended, and if it
// is deleting its last victim, that victim is still there and not yet
// terminating.
func (pl *DefaultPreemption) isRunningPreemption(uid types.UID) bool {
	pl.exec.mu.RLock()
	defer pl.exec.mu.RUnlock()
	if _, ok := pl.exec.preempting[uid]; !ok {
		return false
	}
	last, ok := pl.exec.lastVictim[uid]
	if !ok {
		return true
	}
	victim, found := pl.handle.GetPod(last.Namespace, last.Name)
	return found && victim.DeletionTimestamp == nil
}

// actuateAsync starts the goroutine that makes room on c.node for pod.
func (pl *DefaultPreemption) actuateAsync(pod *v1.Pod, c candidate) {
	pl.startAsync(framework.PodPreemptor(pod), []*v1.Pod{pod}, c.node, c.victims)
}

// actuateGroupAsync starts the goroutine that evicts a pod group's victims.
func (pl *DefaultPreemption) actuateGroupAsync(preemptor framework.Preemptor, members []*v1.Pod, victims []*v1.Pod) {
	pl.startAsync(preemptor, members, groupPreemptionNode, victims)
}

// startAsync evicts victims for preemptor in the background; pods are the
// preemptor's pods (activated if no deletion event may come).
func (pl *DefaultPreemption) startAsync(preemptor framework.Preemptor, pods []*v1.Pod, node string, all []*v1.Pod) {
	// A victim already being deleted needs no second call.
	victims := make([]*v1.Pod, 0, len(all))
	for _, v := range all {
		if v.DeletionTimestamp == nil {
			victims = append(victims, v)
		}
	}
	if len(victims) == 0 {
		return
	}
	e := pl.exec
	e.mu.Lock()
	e.preempting[preemptor.UID] = struct{}{}
	e.mu.Unlock()
	e.running.Add(1)
	go func() {
		defer e.running.Done()
		// Not the cycle's context: the goroutine outlives the cycle.
		pl.preemptInBackground(context.Background(), preemptor, pods, node, victims)
	}()
}

// preemptInBackground is the goroutine's work.
func (pl *DefaultPreemption) preemptInBackground(ctx context.Context, preemptor framework.Preemptor, pods []*v1.Pod, node string, victims []*v1.Pod) {
	logger := klog.FromContext(ctx)
	start := time.Now()
	result := metrics.GoroutineResultSuccess
	lastInMemory := false
	pod := klog.KRef(preemptor.Namespace, preemptor.Name)
	defer func() {
		pl.exec.mu.Lock()
		delete(pl.exec.preempting, preemptor.UID)
		delete(pl.exec.lastVictim, preemptor.UID)
		pl.exec.mu.Unlock()
		metrics.PreemptionGoroutinesExecutionTotal.WithLabelValues(result).Inc()
		metrics.PreemptionGoroutinesDuration.WithLabelValues(result).Observe(time.Since(start).Seconds())
		if result == metrics.GoroutineResultError || lastInMemory {
			// No deletion event may come to wake it.
			pl.handle.Activate(pods...)
		}
		logger.V(2).Info("Async preemption finished", "preemptor", pod, "node", node, "result", result)
	}()
	logger.V(2).Info("Start the preemption asynchronously", "preemptor", pod, "node", node, "numVictimsToDelete", len(victims))

	// Lower-priority pods nominated to the node may no longer fit there:
	// clearing their nomination lets them look elsewhere at once. (A pod
	// group's node is the whole cluster, where none is nominated.)
	if preemptor.Kind == "pod" {
		if err := pl.clearLowerNominations(ctx, pods[0], node); err != nil {
			result = metrics.GoroutineResultError // not critical: go on
		}
	}

	if n := len(victims) - 1; n > 0 {
		if err := pl.preemptAll(ctx, preemptor, node, victims[:n]); err != nil {
			logger.Error(err, "Async preemption", "preemptor", pod, "node", node)
			result = metrics.GoroutineResultError
			return // the last victim is spared: the preemptor retries sooner
		}
	}
	last := victims[len(victims)-1]
	pl.exec.mu.Lock()
	pl.exec.lastVictim[preemptor.UID] = types.NamespacedName{Namespace: last.Namespace, Name: last.Name}
	pl.exec.mu.Unlock()
	inMemory, err := pl.preemptFor(ctx, preemptor, node, last)
	if err != nil {
		logger.Error(err, "Async preemption of the last victim", "preemptor", pod, "victim", klog.KObj(last), "node", node)
		result = metrics.GoroutineResultError
		return
	}
	lastInMemory = inMemory
}

// preemptAll preempts victims in parallel (at most the profile's
// parallelism at once); the first error cancels the rest.
func (pl *DefaultPreemption) preemptAll(ctx context.Context, preemptor framework.Preemptor, node string, victims []*v1.Pod) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(1, pl.handle.Parallelism()))
	for _, v := range victims {
		g.Go(func() error {
			if ctx.Err() != nil {
				return nil // an earlier deletion failed
			}
			_, err := pl.preemptFor(ctx, preemptor, node, v)
			return err
		})
	}
	return g.Wait()
}

// clearLowerNominations clears the nominations of the pods of lower
// priority than pod nominated to node.
func (pl *DefaultPreemption) clearLowerNominations(ctx context.Context, pod *v1.Pod, node string) error {
	var firstErr error
	prio := corev1helpers.PodPriority(pod)
	for _, pi := range pl.handle.NominatedPodsForNode(node) {
		if pi.Pod.UID != pod.UID && corev1helpers.PodPriority(pi.Pod) < prio {
			if err := pl.handle.ClearNominatedNodeName(ctx, pi.Pod); err != nil {
				klog.FromContext(ctx).Error(err, "Clearing the nominated node of a lower-priority pod", "pod", klog.KObj(pi.Pod))
				if firstErr == nil {
					firstErr = err
				}
			}
		}
	}
	return firstErr
}
