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
// have fitted elsewhere). DaemonSet pods count: a new node's agent needs
// room on it (a new node bought too full for its agent is a wrong
// answer), and an existing node's agent left pending may find room when
// new nodes draw the pods that took it. Not counted: the pods preempted
// by an existing node's DaemonSet pods (such a pod belongs to its node:
// no new node spares what it preempts there), and, when target is set,
// the pods it does not accept (DaemonSet pods are counted all the same).
func unplaced(w *simulator.World, pods []report.PodResult, target func(*simulator.World, *v1.Pod) bool, added map[string]bool) []report.PodResult {
	existingDaemon := func(p *v1.Pod) bool {
		return cluster.IsDaemonSetPod(p) && !added[cluster.DaemonPodNode(p)]
	}
	counted := func(p *v1.Pod) bool {
		return cluster.IsDaemonSetPod(p) || target == nil || target(w, p)
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
			if by, ok := w.Store.GetPod(ns, name); ok && existingDaemon(by) {
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
