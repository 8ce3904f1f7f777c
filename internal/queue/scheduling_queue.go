package queue

import (
	"container/list"
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Defaults, as upstream's.
const (
	DefaultPodInitialBackoffDuration = 1 * time.Second
	DefaultPodMaxBackoffDuration     = 10 * time.Second
	// DefaultPodMaxInUnschedulablePodsDuration is the safety net: a pod
	// waits at most this long for an event before it is retried anyway.
	DefaultPodMaxInUnschedulablePodsDuration = 5 * time.Minute
)

// PreEnqueueCheck runs a pod's profile's PreEnqueue plugins; nil status lets it in.
type PreEnqueueCheck func(ctx context.Context, pod *v1.Pod) *framework.Status

// Options configure a PriorityQueue.
type Options struct {
	Clock              clock.WithTicker
	InitialBackoff     time.Duration
	MaxBackoff         time.Duration
	MaxInUnschedulable time.Duration
	PreEnqueue         PreEnqueueCheck
	// EventInterest maps each plugin to the cluster events that may make
	// a pod it rejected schedulable.
	EventInterest map[string][]framework.ClusterEventWithHint
	// PodGroups: a pod group's pods wait and are popped as one entity
	// (the GenericWorkload gate; podgroups.go).
	PodGroups bool
}

// queueingStrategy is where an event (or a failed attempt) sends a pod.
type queueingStrategy int

const (
	// queueSkip: the pod stays (or goes) in unschedulablePods.
	queueSkip queueingStrategy = iota
	// queueAfterBackoff: backoffQ if its backoff has not ended, else activeQ.
	queueAfterBackoff
	// queueImmediately: activeQ (a Pending plugin said Queue).
	queueImmediately
)

// PriorityQueue is the scheduling queue.
type PriorityQueue struct {
	lock   sync.Mutex
	cond   *sync.Cond
	clock  clock.WithTicker
	logger klog.Logger
	opts   Options
	less   func(a, b *framework.QueuedPodInfo) bool

	activeQ *keyedHeap[*framework.QueuedPodInfo]
	// backoffQ holds pods rejected by plugins; Pop takes from it when
	// activeQ is empty (SchedulerPopFromBackoffQ, on by default since
	// v1.33). errorBackoffQ holds pods that failed with an error; they
	// always wait their backoff out.
	backoffQ      *keyedHeap[*framework.QueuedPodInfo]
	errorBackoffQ *keyedHeap[*framework.QueuedPodInfo]
	unschedulable *unschedulablePods

	// inFlightPods maps a popped pod's UID to its element of
	// inFlightEvents (see in_flight.go).
	inFlightPods   map[types.UID]*list.Element
	inFlightEvents *list.List
	// interesting is every event some plugin registered.
	interesting []framework.ClusterEvent

	schedulingCycle int64
	seq             uint64
	closed          bool
	// groups is nil unless Options.PodGroups.
	groups *podGroups

	*Nominator
}

// Key identifies a pod in the queue.
func Key(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

func qKey(p *framework.QueuedPodInfo) string {
	if p.Group != nil {
		return entityKey(p.Group.Namespace, p.Group.Name)
	}
	return Key(p.Pod)
}

// New returns a queue ordered by less.
func New(logger klog.Logger, less func(a, b *framework.QueuedPodInfo) bool, opts Options) *PriorityQueue {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.InitialBackoff == 0 {
		opts.InitialBackoff = DefaultPodInitialBackoffDuration
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = DefaultPodMaxBackoffDuration
	}
	if opts.MaxInUnschedulable == 0 {
		opts.MaxInUnschedulable = DefaultPodMaxInUnschedulablePodsDuration
	}
	q := &PriorityQueue{
		clock: opts.Clock, logger: logger, opts: opts, less: less,
		activeQ:        newHeap(qKey, less),
		unschedulable:  newUnschedulablePods(),
		inFlightPods:   map[types.UID]*list.Element{},
		inFlightEvents: list.New(),
		Nominator:      NewNominator(),
	}
	if opts.PodGroups {
		q.groups = newPodGroups()
	}
	q.backoffQ = newHeap(qKey, q.lessBackoff)
	q.errorBackoffQ = newHeap(qKey, q.lessErrorBackoff)
	for _, evs := range opts.EventInterest {
		for _, e := range evs {
			q.interesting = append(q.interesting, e.Event)
		}
	}
	q.cond = sync.NewCond(&q.lock)
	return q
}

// stamp sets the time the pod (re-)entered the queue and its arrival number.
func (q *PriorityQueue) stamp(p *framework.QueuedPodInfo) {
	p.Timestamp = q.clock.Now()
	q.seq++
	p.Seq = q.seq
	p.BackoffExpiration = time.Time{}
}

func (q *PriorityQueue) newQueuedPodInfo(pod *v1.Pod) *framework.QueuedPodInfo {
	p := &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod)}
	q.stamp(p)
	return p
}

// passesPreEnqueue runs the PreEnqueue plugins; a gated pod is parked in
// unschedulablePods with its gating plugin added to the plugins that
// rejected it, as upstream's runPreEnqueuePlugin: the plugins that failed
// its last attempt still wake it (a preemptor waiting for its victims is
// woken by NodeResourcesFit's hint on their deletion).
func (q *PriorityQueue) passesPreEnqueue(p *framework.QueuedPodInfo, event string) bool {
	if q.opts.PreEnqueue != nil {
		gated := false
		if p.Group != nil {
			// Every member runs them; one gated gates the group, with its
			// plugin (upstream's runPreEnqueuePlugins for an entity).
			p.GatingPlugin = ""
			for _, m := range p.Group.Members {
				if !q.preEnqueueOne(m) {
					gated, p.GatingPlugin = true, m.GatingPlugin
				}
			}
		} else {
			gated = !q.preEnqueueOne(p)
		}
		if gated {
			q.unschedulable.add(qKey(p), p)
			q.activeQ.Delete(qKey(p))
			q.backoffQ.Delete(qKey(p))
			q.errorBackoffQ.Delete(qKey(p))
			metrics.QueueIncomingPods.WithLabelValues(metrics.UnschedulableQ, event).Inc()
			return false
		}
	}
	p.GatingPlugin = ""
	return true
}

// preEnqueueOne runs the PreEnqueue plugins for one pod, recording a gate
// on it; false when gated.
func (q *PriorityQueue) preEnqueueOne(p *framework.QueuedPodInfo) bool {
	if st := q.opts.PreEnqueue(context.Background(), p.Pod); !st.IsSuccess() {
		p.GatingPlugin = st.Plugin()
		// A new set: the old one may be a failed cycle's diagnosis.
		p.UnschedulablePlugins = sets.New(st.Plugin()).Union(p.UnschedulablePlugins)
		return false
	}
	p.GatingPlugin = ""
	return true
}

// moveToActiveQ runs PreEnqueue, then puts the pod in activeQ.
func (q *PriorityQueue) moveToActiveQ(p *framework.QueuedPodInfo, event string) bool {
	if !q.passesPreEnqueue(p, event) {
		return false
	}
	q.addToActiveQ(p, event)
	return true
}

// addToActiveQ puts a pod that passed PreEnqueue in activeQ.
func (q *PriorityQueue) addToActiveQ(p *framework.QueuedPodInfo, event string) {
	key := qKey(p)
	q.unschedulable.delete(key)
	q.backoffQ.Delete(key)
	q.errorBackoffQ.Delete(key)
	q.activeQ.AddOrUpdate(p)
	metrics.QueueIncomingPods.WithLabelValues(metrics.ActiveQ, event).Inc()
	q.cond.Broadcast()
}

// Add enqueues a new pending pod.
func (q *PriorityQueue) Add(pod *v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.addLocked(pod)
}

func (q *PriorityQueue) addLocked(pod *v1.Pod) {
	p := q.newQueuedPodInfo(pod)
	// A pod nominated before (e.g. by a previous leader) keeps its place.
	q.Nominator.AddNominatedPod(p.PodInfo, "")
	if q.isMember(pod) {
		q.addMemberLocked(p, "PodAdd")
		return
	}
	q.moveToActiveQ(p, "PodAdd")
}

// UpdateMetrics sets scheduler_pending_pods from the queue's contents.
func (q *PriorityQueue) UpdateMetrics() {
	q.lock.Lock()
	defer q.lock.Unlock()
	gated := 0
	for _, p := range q.unschedulable.pods {
		if p.GatingPlugin != "" {
			gated++
		}
	}
	metrics.PendingPods.WithLabelValues(metrics.ActiveQ).Set(float64(q.activeQ.Len()))
	metrics.PendingPods.WithLabelValues(metrics.BackoffQ).Set(float64(q.backoffQ.Len() + q.errorBackoffQ.Len()))
	metrics.PendingPods.WithLabelValues(metrics.UnschedulableQ).Set(float64(q.unschedulable.len() - gated))
	metrics.PendingPods.WithLabelValues(metrics.Gated).Set(float64(gated))
}

// Pop blocks until a pod is in activeQ (or, activeQ being empty, in
// backoffQ) or the queue is closed.
func (q *PriorityQueue) Pop(ctx context.Context) (*framework.QueuedPodInfo, error) {
	q.lock.Lock()
	defer q.lock.Unlock()
	for {
		for q.activeQ.Len() == 0 && q.backoffQ.Len() == 0 {
			if q.closed || ctx.Err() != nil {
				return nil, context.Canceled
			}
			q.cond.Wait()
		}
		if p := q.popLocked(); p != nil {
			return p, nil
		}
	}
}

// popLocked takes activeQ's head, else backoffQ's (a pod popped before its
// backoff ended, as upstream's PopFromBackoffQ), and marks it in flight.
// It returns nil when the pod is already in flight (it is dropped, as
// upstream discards a pod tracked twice).
func (q *PriorityQueue) popLocked() *framework.QueuedPodInfo {
	p, ok := q.activeQ.PopTop()
	if !ok {
		p, _ = q.backoffQ.PopTop()
		metrics.QueueIncomingPods.WithLabelValues(metrics.ActiveQ, "PopFromBackoffQ").Inc()
	}
	if p.Group != nil {
		if !q.popEntityLocked(p) {
			return nil
		}
		// Recorded once its members are in flight (upstream's
		// unlockedPop): a group discarded here has no cycle to end, and
		// members arriving later must not wait in pending for one.
		q.groups.lastPopped = qKey(p)
		q.schedulingCycle++
		return p
	}
	if _, dup := q.inFlightPods[p.Pod.UID]; dup {
		q.logger.Error(nil, "Discarding a popped pod that is already in flight", "pod", klog.KObj(p.Pod))
		return nil
	}
	if q.groups != nil {
		q.groups.lastPopped = qKey(p)
	}
	p.Attempts++
	q.schedulingCycle++
	if p.InitialAttemptTimestamp == nil {
		now := q.clock.Now()
		p.InitialAttemptTimestamp = &now
	}
	q.pushInFlight(p.Pod)
	return p
}

// TryPop pops without blocking; ok is false when activeQ and backoffQ are empty.
func (q *PriorityQueue) TryPop() (*framework.QueuedPodInfo, bool) {
	q.lock.Lock()
	defer q.lock.Unlock()
	for q.activeQ.Len() > 0 || q.backoffQ.Len() > 0 {
		if p := q.popLocked(); p != nil {
			return p, true
		}
	}
	return nil, false
}

// SchedulingCycle returns the number of pops so far.
func (q *PriorityQueue) SchedulingCycle() int64 {
	q.lock.Lock()
	defer q.lock.Unlock()
	return q.schedulingCycle
}

// Done says the pod's attempt ended (bound, or given up on).
func (q *PriorityQueue) Done(pod *v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.doneLocked(pod.UID)
}

// AddUnschedulableIfNotPresent puts back a pod whose attempt failed. The
// events seen while it was in flight decide where: one that a rejecting
// plugin's hint says may help sends it to backoffQ (or activeQ), none
// leaves it in unschedulablePods; a pod that failed with an error backs off.
func (q *PriorityQueue) AddUnschedulableIfNotPresent(p *framework.QueuedPodInfo, _ int64) {
	q.lock.Lock()
	defer q.lock.Unlock()
	member := q.isMember(p.Pod)
	key := qKey(p)
	if !member && q.has(key) {
		q.doneLocked(p.Pod.UID)
		return
	}
	if p.UnschedulablePlugins.Len()+p.PendingPlugins.Len() == 0 {
		p.ConsecutiveErrorsCount++
	} else {
		p.UnschedulableCount++
		p.ConsecutiveErrorsCount = 0
	}
	q.stamp(p)
	p.MovedByFlush = false
	if member {
		q.addUnschedulableMemberLocked(p)
		return
	}
	defer q.doneLocked(p.Pod.UID)
	q.requeue(p, q.determineSchedulingHint(p), "ScheduleAttemptFailure")
}

// has: the key waits in some part of the queue (not in flight).
func (q *PriorityQueue) has(key string) bool {
	_, a := q.activeQ.Get(key)
	_, b := q.backoffQ.Get(key)
	_, e := q.errorBackoffQ.Get(key)
	_, u := q.unschedulable.get(key)
	return a || b || e || u
}

// requeue sends a pod where the strategy says.
func (q *PriorityQueue) requeue(p *framework.QueuedPodInfo, s queueingStrategy, event string) {
	switch {
	case s == queueSkip:
		q.unschedulable.add(qKey(p), p)
		metrics.QueueIncomingPods.WithLabelValues(metrics.UnschedulableQ, event).Inc()
	case s == queueAfterBackoff && q.isBackingOff(p):
		q.moveToBackoffQ(p, event)
		q.cond.Broadcast() // Pop may take it from backoffQ
	default:
		q.moveToActiveQ(p, event)
	}
}

// FlushUnschedulablePodsLeftover retries pods that waited longer than the
// safety-net duration.
func (q *PriorityQueue) FlushUnschedulablePodsLeftover() {
	q.lock.Lock()
	defer q.lock.Unlock()
	now := q.clock.Now()
	var due []*framework.QueuedPodInfo
	for _, p := range q.unschedulable.pods {
		if now.Sub(p.Timestamp) >= q.opts.MaxInUnschedulable {
			due = append(due, p)
		}
	}
	for _, p := range due {
		p.MovedByFlush = true
		q.unschedulable.delete(qKey(p))
		q.requeue(p, queueAfterBackoff, framework.EventUnschedulableTimeout.String())
	}
}

// Update replaces a pending pod. A pod in flight gets the update recorded
// as its own events (its cycle decides with them); one waiting in activeQ
// or backoffQ takes the new object; one in unschedulablePods moves only if
// a rejecting plugin's hint says the change may help (a status-only
// update, our own condition patch included, helps nobody).
func (q *PriorityQueue) Update(oldPod, newPod *v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	events := framework.PodSchedulingPropertiesChange(newPod, oldPod, true)
	if _, ok := q.inFlightPods[newPod.UID]; ok {
		for _, ev := range events {
			if q.isEventOfInterest(ev) {
				q.inFlightEvents.PushBack(&clusterEvent{event: ev, oldObj: oldPod, newObj: newPod})
			}
		}
		return
	}
	if q.isMember(newPod) {
		q.updateMemberLocked(oldPod, newPod, events)
		return
	}
	key := Key(newPod)
	for _, h := range [3]*keyedHeap[*framework.QueuedPodInfo]{q.activeQ, q.backoffQ, q.errorBackoffQ} {
		if p, ok := h.Get(key); ok {
			p.PodInfo = framework.NewPodInfo(newPod)
			h.AddOrUpdate(p)
			return
		}
	}
	if p, ok := q.unschedulable.get(key); ok {
		p.PodInfo = framework.NewPodInfo(newPod)
		q.requeueIfWorthLocked(key, p, events, oldPod, newPod)
		return
	}
	q.addLocked(newPod)
}

// requeueIfWorthLocked asks, event by event, whether the update of a pod
// waiting in unschedulablePods (or of a member of an entity there) may
// make it schedulable, and requeues it at the first yes (upstream's
// Update: isEntityWorthRequeuing, then requeueEntityWithQueueingStrategy).
func (q *PriorityQueue) requeueIfWorthLocked(key string, p *framework.QueuedPodInfo, events []framework.ClusterEvent, oldPod, newPod *v1.Pod) {
	for _, ev := range events {
		if !q.concernsGate(p, ev) {
			continue
		}
		if s := q.worthRequeuing(p, ev, oldPod, newPod); s != queueSkip {
			q.unschedulable.delete(key)
			q.requeue(p, s, ev.String())
			return
		}
	}
}

// Delete removes a pending pod from every part of the queue.
func (q *PriorityQueue) Delete(pod *v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	if q.isMember(pod) {
		q.deleteMemberLocked(pod)
		q.Nominator.DeleteNominatedPodIfExists(pod)
		return
	}
	key := Key(pod)
	q.activeQ.Delete(key)
	q.backoffQ.Delete(key)
	q.errorBackoffQ.Delete(key)
	q.unschedulable.delete(key)
	q.Nominator.DeleteNominatedPodIfExists(pod)
}

// Has reports whether the pod is anywhere in the queue or in flight.
func (q *PriorityQueue) Has(pod *v1.Pod) bool {
	q.lock.Lock()
	defer q.lock.Unlock()
	_, f := q.inFlightPods[pod.UID]
	if !f && q.isMember(pod) {
		return q.hasMemberLocked(pod)
	}
	return f || q.has(Key(pod))
}

// Counts returns the sizes of activeQ, backoffQ (both heaps) and unschedulablePods.
func (q *PriorityQueue) Counts() (active, backoff, unschedulable int) {
	q.lock.Lock()
	defer q.lock.Unlock()
	return q.activeQ.Len(), q.backoffQ.Len() + q.errorBackoffQ.Len(), q.unschedulable.len()
}

// InFlight counts popped pods not yet reported back.
func (q *PriorityQueue) InFlight() int {
	q.lock.Lock()
	defer q.lock.Unlock()
	return len(q.inFlightPods)
}

// PendingPods lists every queued pod.
func (q *PriorityQueue) PendingPods() []*v1.Pod {
	q.lock.Lock()
	defer q.lock.Unlock()
	var out []*v1.Pod
	for _, h := range [3]*keyedHeap[*framework.QueuedPodInfo]{q.activeQ, q.backoffQ, q.errorBackoffQ} {
		for _, p := range h.List() {
			out = appendPods(out, p)
		}
	}
	for _, p := range q.unschedulable.pods {
		out = appendPods(out, p)
	}
	if q.groups != nil {
		for _, m := range []memberPods{q.groups.incomplete, q.groups.pending} {
			for _, g := range m {
				for _, p := range g {
					out = append(out, p.Pod)
				}
			}
		}
	}
	return out
}

// Run starts the periodic flushes on the queue's clock until ctx ends:
// backoffQ on whole seconds (its ordering window), the unschedulable
// leftovers every 30 s, the pending_pods gauge every second.
func (q *PriorityQueue) Run(ctx context.Context) {
	go func() {
		now := q.clock.Now()
		t := q.clock.NewTimer(alignToWindow(now.Add(backoffWindow)).Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		q.FlushBackoffQCompleted()
		q.every(ctx, backoffWindow, q.FlushBackoffQCompleted)
	}()
	go q.every(ctx, 30*time.Second, q.FlushUnschedulablePodsLeftover)
	q.UpdateMetrics()
	go q.every(ctx, time.Second, q.UpdateMetrics)
}

func (q *PriorityQueue) every(ctx context.Context, d time.Duration, fn func()) {
	t := q.clock.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			fn()
		}
	}
}

// Close wakes Pop callers, which return an error.
func (q *PriorityQueue) Close() {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.closed = true
	q.cond.Broadcast()
}
