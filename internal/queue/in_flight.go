package queue

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/pkg/framework"
)

// In-flight bookkeeping, as upstream's activeQueue: every popped pod and
// every cluster event of interest that arrives while some pod is in flight
// go into one list, in order. When a pod comes back rejected, the events
// that arrived after it was popped are run through its rejecting plugins'
// queueing hints (determineSchedulingHint), so an event that cannot help
// it does not send it to backoffQ, and one that can is not lost.
//
// Keys are UIDs: a pod deleted and re-created under the same name while
// its old incarnation is in flight is a different pod.

// clusterEvent is an event recorded while pods were in flight.
type clusterEvent struct {
	event          framework.ClusterEvent
	oldObj, newObj interface{}
}

// pushInFlight records a popped pod.
func (q *PriorityQueue) pushInFlight(pod *v1.Pod) {
	q.inFlightPods[pod.UID] = q.inFlightEvents.PushBack(pod)
}

// recordEventIfAnyInFlight keeps an event for the pods now in flight.
func (q *PriorityQueue) recordEventIfAnyInFlight(event framework.ClusterEvent, oldObj, newObj interface{}) {
	if len(q.inFlightPods) == 0 {
		return
	}
	q.inFlightEvents.PushBack(&clusterEvent{event: event, oldObj: oldObj, newObj: newObj})
}

// doneLocked forgets an in-flight pod and the events no other in-flight
// pod needs (those before the next pod in the list).
func (q *PriorityQueue) doneLocked(uid types.UID) {
	e, ok := q.inFlightPods[uid]
	if !ok {
		return
	}
	delete(q.inFlightPods, uid)
	q.inFlightEvents.Remove(e)
	for {
		front := q.inFlightEvents.Front()
		if front == nil {
			return
		}
		if _, isEvent := front.Value.(*clusterEvent); !isEvent {
			return
		}
		q.inFlightEvents.Remove(front)
	}
}

// determineSchedulingHint decides where a pod that just failed goes: a pod
// that failed with an error (no rejecting plugin) backs off; otherwise the
// events seen while it was in flight are asked, and with none that may
// help it, it waits in unschedulablePods.
func (q *PriorityQueue) determineSchedulingHint(p *framework.QueuedPodInfo) queueingStrategy {
	if p.UnschedulablePlugins.Len()+p.PendingPlugins.Len() == 0 {
		return queueAfterBackoff
	}
	e, ok := q.inFlightPods[p.Pod.UID]
	if !ok {
		// Not popped by this queue (should not happen): retry, never lose it.
		return queueAfterBackoff
	}
	strategy := queueSkip
	for e = e.Next(); e != nil; e = e.Next() {
		ev, isEvent := e.Value.(*clusterEvent)
		if !isEvent {
			continue
		}
		switch q.isPodWorthRequeuing(p, ev.event, ev.oldObj, ev.newObj) {
		case queueImmediately:
			return queueImmediately
		case queueAfterBackoff:
			strategy = queueAfterBackoff
			if p.PendingPlugins.Len() == 0 {
				return queueAfterBackoff
			}
		}
	}
	return strategy
}

// InFlightEvents counts the events kept for in-flight pods (tests, debug).
func (q *PriorityQueue) InFlightEvents() int {
	q.lock.Lock()
	defer q.lock.Unlock()
	return q.inFlightEvents.Len() - len(q.inFlightPods)
}

// InFlightPods lists the pods popped and not yet reported back.
func (q *PriorityQueue) InFlightPods() []*v1.Pod {
	q.lock.Lock()
	defer q.lock.Unlock()
	out := make([]*v1.Pod, 0, len(q.inFlightPods))
	for _, e := range q.inFlightPods {
		out = append(out, e.Value.(*v1.Pod))
	}
	return out
}
