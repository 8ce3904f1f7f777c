package queue

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
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
}

// PriorityQueue is the scheduling queue.
type PriorityQueue struct {
	lock   sync.Mutex
	cond   *sync.Cond
	clock  clock.WithTicker
	logger klog.Logger
	opts   Options

	activeQ       *keyedHeap[*framework.QueuedPodInfo]
	backoffQ      *keyedHeap[*framework.QueuedPodInfo]
	unschedulable map[string]*framework.QueuedPodInfo
	inFlight      map[string]*framework.QueuedPodInfo

	// schedulingCycle counts pops; moveRequestCycle is the cycle of the
	// last move request, so a pod rejected in a cycle during which the
	// cluster changed goes to backoff rather than waiting for another event.
	schedulingCycle  int64
	moveRequestCycle int64
	closed           bool

	*Nominator
}

// Key identifies a pod in the queue.
func Key(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

func qKey(p *framework.QueuedPodInfo) string { return Key(p.Pod) }

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
		clock: opts.Clock, logger: logger, opts: opts,
		activeQ:          newHeap(qKey, less),
		unschedulable:    map[string]*framework.QueuedPodInfo{},
		inFlight:         map[string]*framework.QueuedPodInfo{},
		moveRequestCycle: -1,
		Nominator:        NewNominator(),
	}
	q.backoffQ = newHeap(qKey, func(a, b *framework.QueuedPodInfo) bool {
		return q.backoffTime(a).Before(q.backoffTime(b))
	})
	q.cond = sync.NewCond(&q.lock)
	return q
}

func (q *PriorityQueue) newQueuedPodInfo(pod *v1.Pod) *framework.QueuedPodInfo {
	return &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod), Timestamp: q.clock.Now()}
}

// backoffDuration is initial * 2^(attempts-1), capped at the max.
func (q *PriorityQueue) backoffDuration(p *framework.QueuedPodInfo) time.Duration {
	d := q.opts.InitialBackoff
	for i := 1; i < p.Attempts; i++ {
		if d > q.opts.MaxBackoff-d {
			return q.opts.MaxBackoff
		}
		d += d
	}
	return d
}

func (q *PriorityQueue) backoffTime(p *framework.QueuedPodInfo) time.Time {
	return p.Timestamp.Add(q.backoffDuration(p))
}

func (q *PriorityQueue) isBackingOff(p *framework.QueuedPodInfo) bool {
	return p.Attempts > 0 && q.backoffTime(p).After(q.clock.Now())
}

// moveToActiveQ runs PreEnqueue; a gated pod waits in unschedulablePods.
func (q *PriorityQueue) moveToActiveQ(p *framework.QueuedPodInfo) bool {
	if q.opts.PreEnqueue != nil {
		if st := q.opts.PreEnqueue(context.Background(), p.Pod); !st.IsSuccess() {
			p.GatingPlugin = st.Plugin()
			p.UnschedulablePlugins = sets.New(st.Plugin())
			q.unschedulable[qKey(p)] = p
			return false
		}
	}
	p.GatingPlugin = ""
	q.activeQ.AddOrUpdate(p)
	delete(q.unschedulable, qKey(p))
	q.backoffQ.Delete(qKey(p))
	q.cond.Broadcast()
	return true
}

// Add enqueues a new pending pod.
func (q *PriorityQueue) Add(pod *v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	p := q.newQueuedPodInfo(pod)
	// A pod nominated before (e.g. by a previous leader) keeps its place.
	q.Nominator.AddNominatedPod(p.PodInfo, "")
	q.moveToActiveQ(p)
	q.incoming(p, "PodAdd")
}

// incoming counts a pod entering a queue, by the event that brought it.
func (q *PriorityQueue) incoming(p *framework.QueuedPodInfo, event string) {
	queue := metrics.ActiveQ
	key := qKey(p)
	if _, ok := q.backoffQ.Get(key); ok {
		queue = metrics.BackoffQ
	} else if _, ok := q.unschedulable[key]; ok {
		queue = metrics.UnschedulableQ
	}
	metrics.QueueIncomingPods.WithLabelValues(queue, event).Inc()
}

// UpdateMetrics sets scheduler_pending_pods from the queue's contents.
func (q *PriorityQueue) UpdateMetrics() {
	q.lock.Lock()
	defer q.lock.Unlock()
	gated := 0
	for _, p := range q.unschedulable {
		if p.GatingPlugin != "" {
			gated++
		}
	}
	metrics.PendingPods.WithLabelValues(metrics.ActiveQ).Set(float64(q.activeQ.Len()))
	metrics.PendingPods.WithLabelValues(metrics.BackoffQ).Set(float64(q.backoffQ.Len()))
	metrics.PendingPods.WithLabelValues(metrics.UnschedulableQ).Set(float64(len(q.unschedulable) - gated))
	metrics.PendingPods.WithLabelValues(metrics.Gated).Set(float64(gated))
}

// Pop blocks until a pod is in activeQ or the queue is closed (nil).
func (q *PriorityQueue) Pop(ctx context.Context) (*framework.QueuedPodInfo, error) {
	q.lock.Lock()
	defer q.lock.Unlock()
	for q.activeQ.Len() == 0 {
		if q.closed || ctx.Err() != nil {
			return nil, context.Canceled
		}
		q.cond.Wait()
	}
	p, _ := q.activeQ.PopTop()
	p.Attempts++
	q.schedulingCycle++
	if p.InitialAttemptTimestamp == nil {
		now := q.clock.Now()
		p.InitialAttemptTimestamp = &now
	}
	q.inFlight[qKey(p)] = p
	return p, nil
}

// TryPop pops without blocking; ok is false when activeQ is empty.
func (q *PriorityQueue) TryPop() (*framework.QueuedPodInfo, bool) {
	q.lock.Lock()
	empty := q.activeQ.Len() == 0
	q.lock.Unlock()
	if empty {
		return nil, false
	}
	p, err := q.Pop(context.Background())
	return p, err == nil
}

// SchedulingCycle returns the number of pops so far.
func (q *PriorityQueue) SchedulingCycle() int64 {
	q.lock.Lock()
	defer q.lock.Unlock()
	return q.schedulingCycle
}

// Done says the pod's scheduling attempt ended (bound, or re-queued).
func (q *PriorityQueue) Done(pod *v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	delete(q.inFlight, Key(pod))
}

// AddUnschedulableIfNotPresent puts back a pod whose attempt failed. A pod
// rejected by plugins waits in unschedulablePods for an event, unless the
// cluster changed during its cycle; a pod that failed with an error backs off.
func (q *PriorityQueue) AddUnschedulableIfNotPresent(p *framework.QueuedPodInfo, podSchedulingCycle int64) {
	q.lock.Lock()
	defer q.lock.Unlock()
	key := qKey(p)
	delete(q.inFlight, key)
	if _, ok := q.activeQ.Get(key); ok {
		return
	}
	if _, ok := q.backoffQ.Get(key); ok {
		return
	}
	if _, ok := q.unschedulable[key]; ok {
		return
	}
	p.Timestamp = q.clock.Now()
	if p.UnschedulablePlugins.Len() == 0 || q.moveRequestCycle >= podSchedulingCycle {
		q.backoffQ.AddOrUpdate(p)
	} else {
		q.unschedulable[key] = p
	}
	q.incoming(p, "ScheduleAttemptFailure")
}

// FlushBackoffQCompleted moves pods whose backoff expired to activeQ.
func (q *PriorityQueue) FlushBackoffQCompleted() {
	q.lock.Lock()
	defer q.lock.Unlock()
	for {
		p, ok := q.backoffQ.Peek()
		if !ok || q.isBackingOff(p) {
			return
		}
		q.backoffQ.PopTop()
		q.moveToActiveQ(p)
		q.incoming(p, "BackoffComplete")
	}
}

// FlushUnschedulablePodsLeftover retries pods that waited longer than the
// safety-net duration.
func (q *PriorityQueue) FlushUnschedulablePodsLeftover() {
	q.lock.Lock()
	defer q.lock.Unlock()
	now := q.clock.Now()
	var due []*framework.QueuedPodInfo
	for _, p := range q.unschedulable {
		if p.GatingPlugin == "" && now.Sub(p.Timestamp) >= q.opts.MaxInUnschedulable {
			due = append(due, p)
		}
	}
	q.movePodsLocked(due, framework.EventUnschedulableTimeout)
}

// NextBackoffExpiry returns when the first pod in backoffQ is due; ok is
// false when backoffQ is empty. The simulator steps its clock to it.
func (q *PriorityQueue) NextBackoffExpiry() (time.Time, bool) {
	q.lock.Lock()
	defer q.lock.Unlock()
	if p, ok := q.backoffQ.Peek(); ok {
		return q.backoffTime(p), true
	}
	return time.Time{}, false
}

// MoveAllToActiveOrBackoffQueue moves the unschedulable pods that a plugin
// which rejected them registered interest in for this event.
//
// oldObj and newObj are the changed object before and after (nil for an
// addition or a deletion): the plugins' queueing hints look at them.
func (q *PriorityQueue) MoveAllToActiveOrBackoffQueue(event framework.ClusterEvent, oldObj, newObj interface{}) {
	q.lock.Lock()
	defer q.lock.Unlock()
	var due []*framework.QueuedPodInfo
	for _, p := range q.unschedulable {
		if q.interested(p, event, oldObj, newObj) {
			due = append(due, p)
		}
	}
	q.movePodsLocked(due, event)
	q.moveRequestCycle = q.schedulingCycle
}

// interested: the flush, a pod no plugin rejected, or an event that a
// rejecting (or pending) plugin registered and whose hint says Queue.
func (q *PriorityQueue) interested(p *framework.QueuedPodInfo, event framework.ClusterEvent, oldObj, newObj interface{}) bool {
	if event.Label == framework.EventUnschedulableTimeout.Label || p.UnschedulablePlugins.Len()+p.PendingPlugins.Len() == 0 {
		return true
	}
	for _, plugins := range [2]sets.Set[string]{p.UnschedulablePlugins, p.PendingPlugins} {
		for plugin := range plugins {
			for _, e := range q.opts.EventInterest[plugin] {
				if !e.Event.Match(event) {
					continue
				}
				if e.QueueingHintFn == nil {
					return true
				}
				hint, err := e.QueueingHintFn(q.logger, p.Pod, oldObj, newObj)
				if err != nil || hint == framework.Queue {
					return true
				}
			}
		}
	}
	return false
}

func (q *PriorityQueue) movePodsLocked(pods []*framework.QueuedPodInfo, event framework.ClusterEvent) {
	for _, p := range pods {
		p.MovedByFlush = event.Label == framework.EventUnschedulableTimeout.Label
		delete(q.unschedulable, qKey(p))
		if q.isBackingOff(p) {
			q.backoffQ.AddOrUpdate(p)
		} else {
			q.moveToActiveQ(p)
		}
		q.incoming(p, event.String())
		q.logger.V(5).Info("Pod moved", "pod", klog.KObj(p.Pod), "event", event.String())
	}
}

// Refresh replaces a waiting pod's object (e.g. a new status) without
// moving it; a pod in flight is left to its cycle.
func (q *PriorityQueue) Refresh(newPod *v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.replaceLocked(newPod)
}

// replaceLocked gives a waiting pod its new object where it waits. It
// returns the pod when it waits in unschedulablePods (whether it moves is
// the caller's decision), and whether it waits anywhere.
func (q *PriorityQueue) replaceLocked(newPod *v1.Pod) (unschedulable *framework.QueuedPodInfo, found bool) {
	key := Key(newPod)
	if p, ok := q.activeQ.Get(key); ok {
		p.PodInfo = framework.NewPodInfo(newPod)
		q.activeQ.AddOrUpdate(p)
		return nil, true
	}
	if p, ok := q.backoffQ.Get(key); ok {
		p.PodInfo = framework.NewPodInfo(newPod)
		q.backoffQ.AddOrUpdate(p)
		return nil, true
	}
	if p, ok := q.unschedulable[key]; ok {
		p.PodInfo = framework.NewPodInfo(newPod)
		return p, true
	}
	return nil, false
}

// Update replaces a pending pod. A pod waiting on a gate is re-checked; a
// changed unschedulable pod is retried, as upstream does for spec changes.
func (q *PriorityQueue) Update(oldPod, newPod *v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	key := Key(newPod)
	if p, found := q.replaceLocked(newPod); p != nil {
		if q.isBackingOff(p) && p.GatingPlugin == "" {
			delete(q.unschedulable, key)
			q.backoffQ.AddOrUpdate(p)
		} else {
			q.moveToActiveQ(p)
		}
		return
	} else if found {
		return
	}
	if _, ok := q.inFlight[key]; ok {
		// The pod's cycle owns its QueuedPodInfo: do not touch it. If the
		// cycle fails, the failure handler requeues the latest version
		// read from the world.
		return
	}
	q.moveToActiveQ(q.newQueuedPodInfo(newPod))
}

// Delete removes a pending pod from every part of the queue.
func (q *PriorityQueue) Delete(pod *v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	key := Key(pod)
	q.activeQ.Delete(key)
	q.backoffQ.Delete(key)
	delete(q.unschedulable, key)
	q.Nominator.DeleteNominatedPodIfExists(pod)
}

// Has reports whether the pod is anywhere in the queue or in flight.
func (q *PriorityQueue) Has(pod *v1.Pod) bool {
	q.lock.Lock()
	defer q.lock.Unlock()
	key := Key(pod)
	_, a := q.activeQ.Get(key)
	_, b := q.backoffQ.Get(key)
	_, u := q.unschedulable[key]
	_, f := q.inFlight[key]
	return a || b || u || f
}

// Counts returns the sizes of activeQ, backoffQ and unschedulablePods.
func (q *PriorityQueue) Counts() (active, backoff, unschedulable int) {
	q.lock.Lock()
	defer q.lock.Unlock()
	return q.activeQ.Len(), q.backoffQ.Len(), len(q.unschedulable)
}

// InFlight counts popped pods not yet reported back.
func (q *PriorityQueue) InFlight() int {
	q.lock.Lock()
	defer q.lock.Unlock()
	return len(q.inFlight)
}

// PendingPods lists every queued pod.
func (q *PriorityQueue) PendingPods() []*v1.Pod {
	q.lock.Lock()
	defer q.lock.Unlock()
	var out []*v1.Pod
	for _, p := range q.activeQ.List() {
		out = append(out, p.Pod)
	}
	for _, p := range q.backoffQ.List() {
		out = append(out, p.Pod)
	}
	for _, p := range q.unschedulable {
		out = append(out, p.Pod)
	}
	return out
}

// Run starts the periodic flushes on the queue's clock until ctx ends.
func (q *PriorityQueue) Run(ctx context.Context) {
	go q.every(ctx, time.Second, q.FlushBackoffQCompleted)
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
