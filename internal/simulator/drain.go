package simulator

import (
	"slices"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// drainRetry is how long a drain waits before it asks again for the
// evictions a PodDisruptionBudget refused, as kubectl drain does.
const drainRetry = 5 * time.Second

// drain is a node being drained: the pods left on it are evicted when
// their budgets allow, at next.
type drain struct {
	node, step string
	next       time.Time
	// bindings is the store's bindings at the last try: a budget allows
	// more only once more of its pods run, so a drain is asked again only
	// after some binding.
	bindings int
}

// Drain evicts the pods of a (cordoned) node through the eviction API's
// rules, as kubectl drain --ignore-daemonsets --delete-emptydir-data
// --force does: a DaemonSet's pods and mirror pods stay; a pod is evicted when the
// eviction API allows it (cluster.EvictionRefused: its one
// PodDisruptionBudget, counted as the disruption controller counts it,
// allows one more disruption); a refused
// eviction is asked again every 5 s of virtual time once pods were bound
// since (the evicted pods' replacements starting, so that the budget may
// allow more), as kubectl drain retries; when nothing is bound any more,
// the drain waits without keeping the world running. A
// pod without a controller is deleted (--force). It reports whether any
// pod was evicted now.
func (w *World) Drain(node, step string) bool {
	d := drain{node: node, step: step, bindings: w.Store.Bindings}
	evicted, left := w.evictFrom(d)
	if left {
		d.next = w.Clock.Now().Add(drainRetry)
		w.run.drains = append(w.run.drains, d)
	}
	return evicted
}

// evictFrom evicts what the budgets allow of d's node now, reporting
// whether any pod was evicted and whether some are left.
func (w *World) evictFrom(d drain) (evicted, left bool) {
	var on []*v1.Pod
	all := w.Store.Pods()
	for _, p := range all {
		// kubectl drain leaves DaemonSet and mirror pods (the API
		// server cannot delete a mirror pod for good).
		if _, mirror := p.Annotations[v1.MirrorPodAnnotationKey]; p.Spec.NodeName == d.node && !cluster.IsDaemonSetPod(p) && !mirror {
			on = append(on, p)
		}
	}
	sort.Slice(on, func(i, j int) bool { return cluster.PodKey(on[i]) < cluster.PodKey(on[j]) })
	// The budgets are counted as the disruption controller counts them,
	// on every pod (pending ones included); their healthy pods are the
	// pods still running: those evicted just before are not. all is this
	// call's own slice.
	budgets := w.Cluster.Budgets(all)
	running := all
	for _, p := range on {
		if refused, _ := cluster.EvictionRefused([]*v1.Pod{p}, running, budgets); refused != nil {
			left = true
			continue
		}
		running = slices.DeleteFunc(running, func(q *v1.Pod) bool { return q == p })
		w.Remove(p, Gone{Status: report.StatusDeleted, Message: "drained from " + d.node + " by step " + d.step})
		evicted = true
	}
	return evicted, left
}

// drainsDue asks again for the refused evictions whose time has come,
// reporting whether any pod was evicted.
func (w *World) drainsDue() bool {
	now := w.Clock.Now()
	any := false
	kept := w.run.drains[:0]
	for _, d := range w.run.drains {
		if d.next.After(now) || d.bindings == w.Store.Bindings {
			kept = append(kept, d)
			continue
		}
		d.bindings = w.Store.Bindings
		evicted, left := w.evictFrom(d)
		any = any || evicted
		if left {
			d.next = now.Add(drainRetry)
			kept = append(kept, d)
		}
	}
	w.run.drains = kept
	if any {
		w.reconcile()
	}
	return any
}

// nextDrain is when the next refused eviction is asked again (of the
// drains that pods bound since their last try may help).
func (w *World) nextDrain() (time.Time, bool) {
	var t time.Time
	ok := false
	for _, d := range w.run.drains {
		if d.bindings != w.Store.Bindings && (!ok || d.next.Before(t)) {
			t, ok = d.next, true
		}
	}
	return t, ok
}
