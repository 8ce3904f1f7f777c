package simulator

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
)

// PodGroup is what a pod is counted under in tables that fold pods
// (report.PodResult's Group for a pending pod): its workload, else its
// controller, else its app label, else the pod itself.
func (w *World) PodGroup(p *v1.Pod) string {
	k := p.Namespace + "/" + p.Name
	if i, ok := w.Cluster.WorkloadOf[k]; ok && i >= 0 && i < len(w.Cluster.Workloads) {
		return w.Cluster.Workloads[i].String()
	}
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.Kind + " " + p.Namespace + "/" + ref.Name
	}
	for _, l := range []string{"app.kubernetes.io/name", "app"} {
		if v, ok := p.Labels[l]; ok {
			return "Pods " + p.Namespace + " " + l + "=" + v
		}
	}
	return "Pod " + k
}

// report.Report builds the report from the store's final state.
func (w *World) Report() *report.Report {
	r := &report.Report{Nodes: []report.NodeResult{}}
	w.podResults(r)
	nodes := w.Store.Nodes()
	byNode := make(map[string]*report.NodeResult, len(nodes))
	r.Nodes = make([]report.NodeResult, 0, len(nodes))
	for _, n := range nodes {
		nr := &report.NodeResult{Name: n.Name, AllocatableResources: *framework.NewResource(n.Status.Allocatable), Zone: n.Labels[v1.LabelTopologyZone], Pool: n.Labels["pool"]}
		if nr.Pool == "" {
			nr.Pool = n.Labels[v1.LabelInstanceTypeStable]
		}
		byNode[n.Name] = nr
	}
	w.Store.EachPod(func(p *v1.Pod) { // sums: any order
		nr, ok := byNode[p.Spec.NodeName]
		if !ok || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			return
		}
		nr.Pods++
		req, _, _ := framework.PodRequests(p)
		nr.RequestedResources.AddResource(&req)
	})
	// Nodes alike share their quantity maps (read-only from here on).
	shared := map[quantitiesKey]map[string]string{}
	for _, n := range nodes {
		nr := byNode[n.Name]
		nr.Requested = sharedQuantities(shared, &nr.RequestedResources, false)
		nr.Allocatable = sharedQuantities(shared, &nr.AllocatableResources, true)
		r.Nodes = append(r.Nodes, *nr)
	}
	r.Summary.Nodes = len(r.Nodes)
	r.Summary.Running = w.book.running
	r.Workloads = w.workloadResults(r)
	r.PodGroups = w.podGroupResults()
	if w.timeline != nil {
		r.Timeline = w.timeline.Report()
	}
	return r
}

// PodResults are the report's pods (Report().Pods) alone: what became of
// each pod the world was given and of each it removed. The questions that
// simulate many worlds read only these; the nodes' and workloads' sums
// cost a pass over every pod and node of the cluster.
func (w *World) PodResults() []report.PodResult {
	var r report.Report
	w.podResults(&r)
	return r.Pods
}

// podResults fills r's pods, sorted by namespace and name, and their
// counts in r's summary.
func (w *World) podResults(r *report.Report) {
	r.Pods = make([]report.PodResult, 0, len(w.Pending))
	pending := make(map[string]bool, len(w.Pending))
	// StatefulSet pods not created (yet, or again: a pod of the name
	// that went is not listed): the pod before them does not run.
	for _, o := range w.Cluster.Ordered {
		for _, p := range o.Waiting {
			pending[cluster.PodKey(p)] = true
			r.Pods = append(r.Pods, report.PodResult{Namespace: p.Namespace, Name: p.Name, Status: report.StatusNotCreated,
				Message: fmt.Sprintf("not created: %s creates its pods in order and waits for %s to run", w.Cluster.Workloads[o.Workload], o.After)})
			r.Summary.NotCreated++
		}
	}
	for _, p := range w.Pending {
		k := p.Namespace + "/" + p.Name
		if pending[k] {
			continue
		}
		pending[k] = true
		r.Pods = append(r.Pods, w.podResult(r, p, k))
	}
	// Pods for a scheduler none of the profiles is: left pending, and
	// counted under their workloads with the reason.
	for _, p := range w.Foreign {
		k := p.Namespace + "/" + p.Name
		if pending[k] {
			continue
		}
		pending[k] = true
		r.Pods = append(r.Pods, report.PodResult{Namespace: p.Namespace, Name: p.Name, Status: report.StatusOtherScheduler,
			Group: w.PodGroup(p), Message: fmt.Sprintf("left to scheduler %q: no profile of the configuration has that schedulerName", p.Spec.SchedulerName)})
		r.Summary.OtherScheduler++
	}
	// Pods that were running and were preempted, deleted or finished are
	// listed too.
	for k, g := range w.book.gone {
		if pending[k] {
			continue
		}
		ns, name, _ := strings.Cut(k, "/")
		r.Pods = append(r.Pods, report.PodResult{Namespace: ns, Name: name, Node: g.Node, Status: g.Status, Message: g.Message})
		w.countGone(r, g)
	}
	w.evictedResults(r, pending)
	sortPodResults(r.Pods)
}

// PodResultsFor is PodResults for the given pods of w.Pending and the
// evicted pods only, in the same order: all that a change touching only
// those pods can have changed (consolidate's drains: the copies of a
// node's pods, the pods created meanwhile, and whatever they preempted).
func (w *World) PodResultsFor(pods []*v1.Pod) []report.PodResult {
	var r report.Report
	listed := make(map[string]bool, len(pods))
	for _, p := range pods {
		k := p.Namespace + "/" + p.Name
		if listed[k] {
			continue
		}
		listed[k] = true
		r.Pods = append(r.Pods, w.podResult(&r, p, k))
	}
	w.evictedResults(&r, listed)
	sortPodResults(r.Pods)
	return r.Pods
}

// podResult is the result of p, a pod of w.Pending whose key is k, counted
// in r's summary.
func (w *World) podResult(r *report.Report, p *v1.Pod, k string) report.PodResult {
	cur, ok := w.Store.GetPod(p.Namespace, p.Name)
	res := report.PodResult{Namespace: p.Namespace, Name: p.Name}
	ev, evicted := w.Store.Evicted[k]
	g, isGone := w.book.gone[k]
	switch {
	case !ok && isGone:
		res.Node, res.Status, res.Message = g.Node, g.Status, g.Message
		w.countGone(r, g)
	case !ok && evicted:
		res.Node, res.Status, res.Message = ev.Node, report.StatusPreempted, "preempted by "+ev.Preemptor
		r.Summary.Preempted++
	case !ok:
		res.Status, res.Message = report.StatusUnschedulable, "deleted"
	case cur.Spec.NodeName != "":
		res.Node, res.Status = cur.Spec.NodeName, report.StatusScheduled
		res.Devices = w.podDevices(cur)
		r.Summary.Scheduled++
	default:
		res.Status = report.StatusUnschedulable
		res.Group = w.PodGroup(cur)
		r.Summary.Unschedulable++
		for _, c := range cur.Status.Conditions {
			if c.Type == v1.PodScheduled {
				res.Message = c.Message
			}
		}
		if res.Message == "" && len(cur.Spec.SchedulingGates) > 0 {
			gates := make([]string, 0, len(cur.Spec.SchedulingGates))
			for _, g := range cur.Spec.SchedulingGates {
				gates = append(gates, g.Name)
			}
			res.Message = fmt.Sprintf("waiting for scheduling gates: %v", gates)
		}
	}
	return res
}

// evictedResults adds the evicted pods that are not gone and not listed.
func (w *World) evictedResults(r *report.Report, listed map[string]bool) {
	for k, ev := range w.Store.Evicted {
		if _, isGone := w.book.gone[k]; listed[k] || isGone {
			continue
		}
		ns, name, _ := strings.Cut(k, "/")
		r.Pods = append(r.Pods, report.PodResult{Namespace: ns, Name: name, Node: ev.Node, Status: report.StatusPreempted, Message: "preempted by " + ev.Preemptor})
		r.Summary.Preempted++
	}
}

func sortPodResults(pods []report.PodResult) {
	slices.SortFunc(pods, func(a, b report.PodResult) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

func (w *World) countGone(r *report.Report, g Gone) {
	if g.Status == report.StatusFinished {
		r.Summary.Finished++
	} else {
		r.Summary.Deleted++
	}
}

// workloadResults counts each workload's pods: the running ones it
// controls and the outcomes of those it created.
func (w *World) workloadResults(r *report.Report) []report.WorkloadResult {
	if len(w.Cluster.Workloads) == 0 {
		return nil
	}
	out := make([]report.WorkloadResult, len(w.Cluster.Workloads))
	reasons := make([]map[string]int, len(w.Cluster.Workloads))
	for i, wl := range w.Cluster.Workloads {
		out[i] = report.WorkloadResult{Kind: wl.Kind, Namespace: wl.Namespace, Name: wl.Name}
		// Workloads are listed in their controllers' order (DaemonSets
		// first), WorkloadObject's in the input's: the Job by name.
		if job, ok := w.Cluster.WorkloadByName(wl.Kind, wl.Namespace, wl.Name).(*batchv1.Job); ok {
			out[i].Completions = jobCompletions(job)
		}
		reasons[i] = map[string]int{}
	}
	reported := map[string]bool{}
	for _, p := range r.Pods {
		k := p.Namespace + "/" + p.Name
		reported[k] = true
		i, ok := w.Cluster.WorkloadOf[k]
		if !ok {
			continue
		}
		if p.Status == report.StatusFinished || p.Status == report.StatusDeleted || (w.Cluster.Scenario != nil && p.Status == report.StatusPreempted) {
			continue // gone; in a timeline its controller replaced it
		}
		out[i].Pods++
		if p.Status == report.StatusScheduled {
			out[i].Scheduled++
			continue
		}
		out[i].Pending++
		msg := p.Message
		if p.Status == report.StatusPreempted {
			msg = "preempted" // its controller would create a replacement
		}
		reasons[i][msg]++
	}
	for _, p := range w.Store.Pods() {
		k := cluster.PodKey(p)
		if i, ok := w.Cluster.WorkloadOf[k]; ok && !reported[k] && p.Spec.NodeName != "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			out[i].Pods++
			out[i].Scheduled++
		}
	}
	for i := range out {
		for msg, n := range reasons[i] {
			out[i].Reasons = append(out[i].Reasons, report.Reason{Message: msg, Pods: n})
		}
		sort.Slice(out[i].Reasons, func(a, b int) bool {
			x, y := out[i].Reasons[a], out[i].Reasons[b]
			return x.Pods > y.Pods || (x.Pods == y.Pods && x.Message < y.Message)
		})
	}
	return out
}

// jobCompletions is a Job's COMPLETIONS as kubectl get jobs prints it
// (pkg/printers/internalversion's printJob): succeeded of
// spec.completions, else of 1 ("of N" with a parallelism N above 1).
func jobCompletions(job *batchv1.Job) string {
	if job.Spec.Completions != nil {
		return fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	}
	if p := job.Spec.Parallelism; p != nil && *p > 1 {
		return fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, *p)
	}
	return fmt.Sprintf("%d/1", job.Status.Succeeded)
}

type quantitiesKey struct {
	cpu, mem, eph, pods int64
	withPods            bool
}

// sharedQuantities is quantities, the same map for equal resources without
// scalars.
func sharedQuantities(shared map[quantitiesKey]map[string]string, r *framework.Resource, withPods bool) map[string]string {
	if len(r.Scalar) > 0 {
		return quantities(r, withPods)
	}
	k := quantitiesKey{r.MilliCPU, r.Memory, r.EphemeralStorage, r.AllowedPodNumber, withPods}
	if m, ok := shared[k]; ok {
		return m
	}
	m := quantities(r, withPods)
	shared[k] = m
	return m
}

func quantities(r *framework.Resource, withPods bool) map[string]string {
	out := map[string]string{
		"cpu":    resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI).String(),
		"memory": resource.NewQuantity(r.Memory, resource.BinarySI).String(),
	}
	if withPods {
		out["pods"] = fmt.Sprint(r.AllowedPodNumber)
	}
	if r.EphemeralStorage != 0 {
		out["ephemeral-storage"] = resource.NewQuantity(r.EphemeralStorage, resource.BinarySI).String()
	}
	for k, v := range r.Scalar {
		if v != 0 {
			out[string(k)] = resource.NewQuantity(v, resource.DecimalSI).String()
		}
	}
	return out
}
