package queue

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Activate moves pods that wait in unschedulablePods or back off (after a
// rejection or an error) to activeQ at once (their PreEnqueue plugins
// still run), as upstream's PriorityQueue.Activate: asynchronous
// preemption activates its preemptor when an API call failed or its last
// victim went in memory only, since no deletion event will wake it then.
// A pod in flight gets EventForceActivate recorded for it alone, so its
// attempt, if it fails, is retried rather than parked. Other pods are
// ignored.
func (q *PriorityQueue) Activate(pods ...*v1.Pod) {
	q.lock.Lock()
	defer q.lock.Unlock()
	for _, pod := range pods {
		if q.isMember(pod) {
			if !q.activateMemberLocked(pod) {
				if _, inFlight := q.inFlightPods[pod.UID]; inFlight {
					q.inFlightEvents.PushBack(&clusterEvent{event: framework.EventForceActivate, newObj: pod})
				}
			}
			continue
		}
		key := Key(pod)
		p, ok := q.unschedulable.get(key)
		if !ok {
			p, ok = q.backoffQ.Get(key)
		}
		if !ok {
			p, ok = q.errorBackoffQ.Get(key)
		}
		if ok && p.Pod.UID == pod.UID {
			// moveToActiveQ takes it out of the part it waits in.
			q.moveToActiveQ(p, framework.EventForceActivate.Label)
			continue
		}
		if _, inFlight := q.inFlightPods[pod.UID]; inFlight {
			q.inFlightEvents.PushBack(&clusterEvent{event: framework.EventForceActivate, newObj: pod})
		}
	}
}
