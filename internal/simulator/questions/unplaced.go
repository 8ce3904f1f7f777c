package questions

import (
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// unplaced are the pods a simulation (w, its pods' results) leaves without
// a place that new nodes could give one, as capacity --add-nodes and
// --node-types count them: the pods left pending and the pods preempted
// (a preempted pod no longer runs; with room enough, its preemptor would
// have fitted elsewhere). Not counted: a DaemonSet's pods and their
// victims (a DaemonSet's pod belongs to its node: no new node takes it or
// spares what it preempts there), and, when target is set, the pods it
// does not accept.
func unplaced(w *simulator.World, pods []report.PodResult, target func(*simulator.World, *v1.Pod) bool) []report.PodResult {
	counted := func(p *v1.Pod) bool {
		return !cluster.IsDaemonSetPod(p) && (target == nil || target(w, p))
	}
	var out []report.PodResult
	for _, r := range pods {
		switch r.Status {
		case report.StatusUnschedulable:
			if p, ok := w.Store.GetPod(r.Namespace, r.Name); !ok || counted(p) {
				out = append(out, r)
			}
		case report.StatusPreempted:
			ev, ok := w.Store.Evicted[r.Namespace+"/"+r.Name]
			if !ok || ev.Pod == nil || !counted(ev.Pod) {
				continue
			}
			ns, name, _ := strings.Cut(ev.Preemptor, "/")
			if by, ok := w.Store.GetPod(ns, name); ok && cluster.IsDaemonSetPod(by) {
				continue
			}
			out = append(out, r)
		}
	}
	return out
}

// count counts the results of a status.
func count(rs []report.PodResult, status string) int {
	n := 0
	for _, r := range rs {
		if r.Status == status {
			n++
		}
	}
	return n
}
