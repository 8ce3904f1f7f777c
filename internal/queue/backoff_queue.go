package queue

import (
	"math"
	"time"

	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/pkg/framework"
)

// backoffWindow is upstream's backoffQ ordering window (KEP-5142): backoff
// expiries are truncated to whole seconds, the flush runs on whole seconds,
// and pods of one window leave backoffQ together, in activeQ's order.
const backoffWindow = time.Second

func alignToWindow(t time.Time) time.Time { return t.Truncate(backoffWindow) }

// backoffDuration is initial * 2^(count-1), capped at the max; for an
// entity of size pods (a pod group's members) the max is multiplied by
// the square root of size, as upstream's calculateBackoffDuration.
func (q *PriorityQueue) backoffDuration(count, size int) time.Duration {
	if count <= 0 {
		return 0
	}
	maxBackoff := q.opts.MaxBackoff
	if size > 1 {
		maxBackoff = time.Duration(float64(maxBackoff) * math.Sqrt(float64(size)))
	}
	shift := count - 1
	if shift >= 62 || q.opts.InitialBackoff > maxBackoff>>shift {
		return maxBackoff
	}
	return q.opts.InitialBackoff << shift
}

// entitySize is how many pods an entity holds: a group's members, else 1.
func entitySize(p *framework.QueuedPodInfo) int {
	if p.Group != nil {
		return len(p.Group.Members)
	}
	return 1
}

// backoffTime is when the pod's backoff ends (aligned to the window); zero
// for a pod that was never rejected nor failed. The count is the
// consecutive errors when the last attempt failed with an error, else the
// number of rejections.
func (q *PriorityQueue) backoffTime(p *framework.QueuedPodInfo) time.Time {
	count := p.UnschedulableCount
	if p.ConsecutiveErrorsCount > 0 {
		count = p.ConsecutiveErrorsCount
	}
	if count == 0 || q.opts.MaxBackoff == 0 {
		// A max of 0 turns backoff off, as upstream's getBackoffTime.
		return time.Time{}
	}
	if p.BackoffExpiration.IsZero() {
		p.BackoffExpiration = alignToWindow(p.Timestamp.Add(q.backoffDuration(count, entitySize(p))))
	}
	return p.BackoffExpiration
}

// isBackingOff: the pod's backoff ends in the current window or later.
func (q *PriorityQueue) isBackingOff(p *framework.QueuedPodInfo) bool {
	bo := q.backoffTime(p)
	return !bo.IsZero() && !bo.Before(alignToWindow(q.clock.Now()))
}

// lessBackoff orders backoffQ: earlier expiry first, then activeQ's order
// within a window (what pop-from-backoffQ takes first).
func (q *PriorityQueue) lessBackoff(a, b *framework.QueuedPodInfo) bool {
	ba, bb := q.backoffTime(a), q.backoffTime(b)
	if !ba.Equal(bb) {
		return ba.Before(bb)
	}
	return q.less(a, b)
}

// lessErrorBackoff orders errorBackoffQ by expiry, then arrival.
func (q *PriorityQueue) lessErrorBackoff(a, b *framework.QueuedPodInfo) bool {
	ba, bb := q.backoffTime(a), q.backoffTime(b)
	if !ba.Equal(bb) {
		return ba.Before(bb)
	}
	return a.Seq < b.Seq
}

// moveToBackoffQ puts a pod in backoffQ (rejected by plugins) or
// errorBackoffQ (failed with an error). PreEnqueue runs here, not when the
// pod leaves backoffQ, as upstream with SchedulerPopFromBackoffQ: a gated
// pod waits in unschedulablePods instead.
func (q *PriorityQueue) moveToBackoffQ(p *framework.QueuedPodInfo, event string) bool {
	if !q.passesPreEnqueue(p, event) {
		return false
	}
	key := qKey(p)
	q.unschedulable.delete(key)
	if p.UnschedulablePlugins.Len()+p.PendingPlugins.Len() == 0 {
		q.backoffQ.Delete(key)
		q.errorBackoffQ.AddOrUpdate(p)
	} else {
		q.errorBackoffQ.Delete(key)
		q.backoffQ.AddOrUpdate(p)
	}
	metrics.QueueIncomingPods.WithLabelValues(metrics.BackoffQ, event).Inc()
	return true
}

// FlushBackoffQCompleted moves pods whose backoff ended to activeQ.
func (q *PriorityQueue) FlushBackoffQCompleted() {
	q.lock.Lock()
	defer q.lock.Unlock()
	moved := false
	for _, h := range [2]*keyedHeap[*framework.QueuedPodInfo]{q.backoffQ, q.errorBackoffQ} {
		for {
			p, ok := h.Peek()
			if !ok || q.isBackingOff(p) {
				break
			}
			h.PopTop()
			q.addToActiveQ(p, "BackoffComplete")
			moved = true
		}
	}
	if moved {
		q.cond.Broadcast()
	}
}

// NextBackoffExpiry returns the first instant at which a pod in backoffQ
// or errorBackoffQ is due (the window after its aligned expiry); ok is
// false when both are empty. The simulator steps its clock to it.
func (q *PriorityQueue) NextBackoffExpiry() (time.Time, bool) {
	q.lock.Lock()
	defer q.lock.Unlock()
	var next time.Time
	for _, h := range [2]*keyedHeap[*framework.QueuedPodInfo]{q.backoffQ, q.errorBackoffQ} {
		if p, ok := h.Peek(); ok {
			t := q.clock.Now()
			if bo := q.backoffTime(p); !bo.IsZero() {
				t = bo.Add(backoffWindow)
			}
			if next.IsZero() || t.Before(next) {
				next = t
			}
		}
	}
	return next, !next.IsZero()
}
