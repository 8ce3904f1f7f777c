package queue

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// MoveAllToActiveOrBackoffQueue moves the unschedulable pods that a plugin
// which rejected them registered interest in for this event, and whose
// queueing hint says Queue; preCheck, when set, limits the pods looked at.
// The event is also kept for the pods in flight (see in_flight.go).
//
// oldObj and newObj are the changed object before and after (nil for an
// addition or a deletion): the plugins' queueing hints look at them.
func (q *PriorityQueue) MoveAllToActiveOrBackoffQueue(event framework.ClusterEvent, oldObj, newObj interface{}, preCheck func(*v1.Pod) bool) {
	q.lock.Lock()
	defer q.lock.Unlock()
	if !q.isEventOfInterest(event) {
		return
	}
	// Only the groups of pods the event may wake are looked at
	// (unschedulable_pods.go). The pods to move are collected first, then
	// moved: moving a gated pod puts it back in the map being read. Map order does not matter:
	// hints have no side effects, and every heap orders its pods totally
	// (down to the arrival number), so the simulator's runs stay
	// byte-identical.
	type move struct {
		p *framework.QueuedPodInfo
		s queueingStrategy
	}
	var moves []move
	for _, g := range q.unschedulable.groups {
		if !q.mayWake(g, event) {
			continue
		}
		for _, p := range g.pods {
			if preCheck != nil && !preCheck(p.Pod) {
				continue
			}
			if !q.concernsGate(p, event) {
				continue
			}
			if s := q.worthRequeuing(p, event, oldObj, newObj); s != queueSkip {
				moves = append(moves, move{p, s})
			}
		}
	}
	for _, m := range moves {
		q.unschedulable.delete(qKey(m.p))
		q.requeue(m.p, m.s, event.String())
		q.logger.V(5).Info("Pod moved", "pod", klog.KObj(m.p.Pod), "event", event.String())
	}
	q.recordEventIfAnyInFlight(event, oldObj, newObj)
}

// concernsGate: a pod held back by a PreEnqueue plugin is looked at only
// for the events that plugin registered, or a wildcard (the flush), as
// upstream's moveEntitiesToActiveOrBackoffQueue: the plugins that rejected
// its last attempt (kept beside the gating one) have their hints asked
// only then. A preemptor waiting for its victims is not released early by
// a node update.
func (q *PriorityQueue) concernsGate(p *framework.QueuedPodInfo, event framework.ClusterEvent) bool {
	if p.GatingPlugin == "" || event.IsWildCard() {
		return true
	}
	for _, e := range q.opts.EventInterest[p.GatingPlugin] {
		if e.Event.Match(event) {
			return true
		}
	}
	return false
}

// isEventOfInterest: some plugin registered the event (or it concerns
// every pod). Others are not even kept for pods in flight.
func (q *PriorityQueue) isEventOfInterest(event framework.ClusterEvent) bool {
	if event.IsWildCard() {
		return true
	}
	for _, e := range q.interesting {
		if e.Match(event) {
			return true
		}
	}
	return false
}

// isPodWorthRequeuing asks the hints of the plugins that rejected the pod
// (or left it Pending) and that registered the event. A Pending plugin's
// Queue means activeQ at once; a rejecting plugin's means after backoff.
// A pod no plugin rejected, and the flush, always go after backoff; a hint
// that fails counts as Queue, so a pod is never stranded by an error.
func (q *PriorityQueue) isPodWorthRequeuing(p *framework.QueuedPodInfo, event framework.ClusterEvent, oldObj, newObj interface{}) queueingStrategy {
	if p.UnschedulablePlugins.Len()+p.PendingPlugins.Len() == 0 {
		return queueAfterBackoff
	}
	if event.IsWildCard() {
		// A wildcard whose newObj is a pod (EventForceActivate) concerns
		// that pod alone.
		if pod, ok := newObj.(*v1.Pod); ok && pod.UID != p.Pod.UID {
			return queueSkip
		}
		return queueAfterBackoff
	}
	strategy := queueSkip
	check := func(plugin string) queueingStrategy {
		for _, e := range q.opts.EventInterest[plugin] {
			if !e.Event.Match(event) {
				continue
			}
			if e.QueueingHintFn != nil {
				hint, err := e.QueueingHintFn(q.logger, p.Pod, oldObj, newObj)
				if err == nil && hint == framework.QueueSkip {
					continue
				}
			}
			if p.PendingPlugins.Has(plugin) {
				return queueImmediately
			}
			return queueAfterBackoff
		}
		return queueSkip
	}
	for plugin := range p.PendingPlugins {
		if check(plugin) == queueImmediately {
			return queueImmediately
		}
	}
	for plugin := range p.UnschedulablePlugins {
		if p.PendingPlugins.Has(plugin) {
			continue
		}
		if check(plugin) != queueSkip {
			strategy = queueAfterBackoff
			break
		}
	}
	return strategy
}
