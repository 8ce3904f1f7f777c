package questions

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
)

// The annotations that keep a pod (and so its node) from being evicted by
// a consolidation, as cluster-autoscaler and Karpenter read them.
const (
	SafeToEvictAnnotation  = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	DoNotDisruptAnnotation = "karpenter.sh/do-not-disrupt"
)

// ConsolidateResult is consolidate's answer.
type ConsolidateResult struct {
	// Remove are the nodes to remove, in the order the search removed
	// them (each drained with every pod still running).
	Remove       []string `json:"remove"`
	HourlySaving float64  `json:"hourlySaving"`
	// Keep are the other nodes, each with the pod that keeps it and why.
	Keep []KeptNode `json:"keep"`
}

// KeptNode is a node that must stay, the pod that keeps it, and why.
type KeptNode struct {
	Node   string `json:"node"`
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

// Consolidate answers which nodes can be removed with every pod still
// running. The cluster is simulated to its end (pending pods placed); on
// what it settles to, each node is drained in turn, the most expensive
// first (then the one with the fewest pods): its pods are evicted by the
// eviction API's rules and the drain is kept when the evicted pods (their
// controllers' replacements) all schedule on the nodes left, the pods
// pending before the drains aside. The rules, as cluster-autoscaler's and
// Karpenter's drains:
//
//   - a DaemonSet's pods go with the node;
//   - a pod annotated cluster-autoscaler.kubernetes.io/safe-to-evict:
//     "false" or karpenter.sh/do-not-disrupt: "true" blocks the node;
//   - a pod without a controller (nothing would recreate it) or with local
//     storage (an emptyDir or hostPath volume) blocks the node, unless
//     annotated safe-to-evict: "true";
//   - evicting the node's pods must leave every PodDisruptionBudget
//     satisfied, counted on the pods running after the drains before it
//     (their replacements running again, as the disruption controller
//     would count them).
//
// Two cheap checks spare a simulation: a node whose evicted pods request
// more CPU or memory than the other schedulable nodes have free is kept
// at once; and past maxDrains simulated drains the other candidates are
// kept untried (each drain simulates the whole cluster).
func Consolidate(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), maxDrains int, started func(i, n int, node string)) (*ConsolidateResult, error) {
	c, err := load()
	if err != nil {
		return nil, err
	}
	w, err := newWorld(c)
	if err != nil {
		return nil, err
	}
	if err := w.Run(ctx); err != nil {
		return nil, err
	}
	basePending := map[string]bool{}
	for _, p := range w.Report().Pods {
		if p.Status == report.StatusUnschedulable {
			basePending[p.Namespace+"/"+p.Name] = true
		}
	}
	// The pods pending before any drain are left out of the drains'
	// simulations: a drain only takes room away, so they stay pending, and
	// each would be tried against every node at every drain.
	settled := settle(w, basePending)
	pdbs := settled.PodDisruptionBudgets()
	res := &ConsolidateResult{Remove: []string{}, Keep: []KeptNode{}}
	price := map[string]float64{}
	podsOn := byNode(settled)
	type candidate struct {
		node string
		pods int
	}
	var candidates []candidate
	for _, n := range settled.Nodes {
		price[n.Name], _ = strconv.ParseFloat(strings.TrimSpace(n.Annotations[HourlyCostAnnotation]), 64)
		if pod, reason := blockedByRules(podsOn[n.Name]); pod != nil {
			res.Keep = append(res.Keep, KeptNode{Node: n.Name, Pod: cluster.PodKey(pod), Reason: reason})
			continue
		}
		candidates = append(candidates, candidate{n.Name, len(evictable(podsOn[n.Name]))})
	}
	sort.SliceStable(candidates, func(i, j int) bool {
		a, b := candidates[i], candidates[j]
		if price[a.node] != price[b.node] {
			return price[a.node] > price[b.node]
		}
		if a.pods != b.pods {
			return a.pods < b.pods
		}
		return a.node < b.node
	})
	// current is the cluster as the drains kept so far left it.
	current := settled
	drains := 0
	room := &roomBook{requests: map[types.UID]framework.Resource{}}
	for i, cand := range candidates {
		if started != nil {
			started(i, len(candidates), cand.node)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		on := podsOn[cand.node]
		if reason := room.noRoomElsewhere(current, cand.node, evictable(on)); reason != "" {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Pod: cluster.PodKey(evictable(on)[0]), Reason: reason})
			continue
		}
		if maxDrains > 0 && drains >= maxDrains {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Reason: fmt.Sprintf("not tried: %d drains were simulated (--max-drains)", maxDrains)})
			continue
		}
		if pod, reason := cluster.EvictionRefused(evictable(on), current.Pods, pdbs); pod != nil {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Pod: cluster.PodKey(pod), Reason: reason})
			continue
		}
		drains++
		tw, err := newWorld(drained(current, cand.node))
		if err != nil {
			return nil, err
		}
		if err := tw.Run(ctx); err != nil {
			return nil, err
		}
		if pod, reason := notAllRunning(tw.Report().Pods, basePending); pod != "" {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Pod: pod, Reason: reason})
			continue
		}
		res.Remove = append(res.Remove, cand.node)
		res.HourlySaving += price[cand.node]
		current = settle(tw, nil)
		podsOn = byNode(current)
	}
	res.HourlySaving = roundCents(res.HourlySaving)
	sort.SliceStable(res.Keep, func(i, j int) bool { return res.Keep[i].Node < res.Keep[j].Node })
	return res, nil
}

// roomBook answers noRoomElsewhere: each pod's CPU and memory requests,
// computed once, and the free room of each schedulable node of the
// cluster it last looked at, summed once per cluster (the cluster
// changes only when a drain is kept).
type roomBook struct {
	requests map[types.UID]framework.Resource
	of       *cluster.Cluster
	free     map[string]framework.Resource // schedulable nodes only
	total    framework.Resource
}

func (b *roomBook) request(p *v1.Pod) framework.Resource {
	if r, ok := b.requests[p.UID]; ok {
		return r
	}
	r := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	out := framework.Resource{MilliCPU: r.Cpu().MilliValue(), Memory: r.Memory().Value()}
	b.requests[p.UID] = out
	return out
}

// look sums c's free room, unless c is the cluster it looked at last.
func (b *roomBook) look(c *cluster.Cluster) {
	if b.of == c {
		return
	}
	b.of, b.total = c, framework.Resource{}
	used := map[string]framework.Resource{}
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			r, u := b.request(p), used[p.Spec.NodeName]
			u.MilliCPU += r.MilliCPU
			u.Memory += r.Memory
			used[p.Spec.NodeName] = u
		}
	}
	b.free = map[string]framework.Resource{}
	for _, n := range c.Nodes {
		if n.Spec.Unschedulable {
			continue
		}
		u := used[n.Name]
		f := framework.Resource{MilliCPU: max(0, n.Status.Allocatable.Cpu().MilliValue()-u.MilliCPU),
			Memory: max(0, n.Status.Allocatable.Memory().Value()-u.Memory)}
		b.free[n.Name] = f
		b.total.MilliCPU += f.MilliCPU
		b.total.Memory += f.Memory
	}
}

// noRoomElsewhere says why the evicted pods cannot all fit on the other
// schedulable nodes of c, by their CPU and memory requests against the
// room those nodes have free; "" when they might.
func (b *roomBook) noRoomElsewhere(c *cluster.Cluster, node string, evicted []*v1.Pod) string {
	if len(evicted) == 0 {
		return ""
	}
	var need framework.Resource
	for _, p := range evicted {
		r := b.request(p)
		need.MilliCPU += r.MilliCPU
		need.Memory += r.Memory
	}
	b.look(c)
	own := b.free[node]
	free := framework.Resource{MilliCPU: b.total.MilliCPU - own.MilliCPU, Memory: b.total.Memory - own.Memory}
	switch {
	case need.MilliCPU > free.MilliCPU:
		return fmt.Sprintf("its pods request %dm CPU; the other nodes have %dm free", need.MilliCPU, free.MilliCPU)
	case need.Memory > free.Memory:
		return fmt.Sprintf("its pods request %d bytes of memory; the other nodes have %d free", need.Memory, free.Memory)
	}
	return ""
}

// notAllRunning names the first pod a drain left without its place (one
// that pends, not pending before the drains, or that a replacement
// preempted), and why.
func notAllRunning(pods []report.PodResult, basePending map[string]bool) (string, string) {
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		switch {
		case p.Status == report.StatusUnschedulable && !basePending[key]:
			return key, "with the node drained, this pod would not schedule: " + p.Message
		case p.Status == report.StatusPreempted:
			return key, "with the node drained, this pod would be preempted: " + p.Message
		}
	}
	return "", ""
}

// byNode are c's bound pods by node name, each node's in c's order.
func byNode(c *cluster.Cluster) map[string][]*v1.Pod {
	on := make(map[string][]*v1.Pod, len(c.Nodes))
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			on[p.Spec.NodeName] = append(on[p.Spec.NodeName], p)
		}
	}
	return on
}

// settle is the cluster w ran to: its nodes, the pods it left (bound or
// pending, but those in skip) and the objects beside them, without the
// workloads' controllers (their pods are made). The pods are the store's
// own, shared: nothing changes a stored pod in place (a write stores a
// new version), so the worlds made from the settled cluster cannot
// change them either.
func settle(w *simulator.World, skip map[string]bool) *cluster.Cluster {
	c := w.Cluster
	out := cluster.New()
	out.Nodes = c.Nodes
	for _, p := range w.Store.Pods() {
		k := cluster.PodKey(p)
		if skip[k] {
			continue
		}
		out.Pods = append(out.Pods, p)
		out.Sources[k] = c.Sources[k]
	}
	out.Namespaces, out.PriorityClasses, out.Services = c.Namespaces, c.PriorityClasses, c.Services
	out.ReplicaSets, out.StatefulSets, out.RCs = c.ReplicaSets, c.StatefulSets, c.RCs
	// The claims and volumes as the world left them: the claims
	// generated for its pods, the devices allocated to the pods it bound,
	// the volumes bound and provisioned for them.
	pvs, pvcs := w.Store.Volumes()
	for _, o := range c.Others {
		switch o.(type) {
		case *resourceapi.ResourceClaim:
			continue
		case *v1.PersistentVolume, *v1.PersistentVolumeClaim:
			if pvs != nil {
				continue
			}
		}
		out.Others = append(out.Others, o)
	}
	for _, cl := range w.Store.Claims() {
		out.Others = append(out.Others, cl)
	}
	for _, pv := range pvs {
		out.Others = append(out.Others, pv)
	}
	for _, pvc := range pvcs {
		out.Others = append(out.Others, pvc)
	}
	return out
}

// released are the objects others with the claims of the pods gone
// released, as the resourceclaim controller and the garbage collector
// would: a claim a gone pod owns (generated for it) is deleted, and a
// gone pod leaves the reservedFor of the others, a claim nobody uses any
// more deallocated (its devices free for the replacements).
func released(others []interface{}, gone map[types.UID]bool) []interface{} {
	out := make([]interface{}, 0, len(others))
	for _, o := range others {
		cl, ok := o.(*resourceapi.ResourceClaim)
		if !ok {
			out = append(out, o)
			continue
		}
		if owner := metav1.GetControllerOf(cl); owner != nil && gone[owner.UID] {
			continue
		}
		if !slices.ContainsFunc(cl.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return gone[r.UID] }) {
			out = append(out, cl)
			continue
		}
		next := cl.DeepCopy()
		next.Status.ReservedFor = slices.DeleteFunc(next.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return gone[r.UID] })
		if len(next.Status.ReservedFor) == 0 {
			next.Status.Allocation = nil
			next.Status.Devices = nil
			next.Finalizers = slices.DeleteFunc(next.Finalizers, func(f string) bool { return f == resourceapi.Finalizer })
		}
		out = append(out, next)
	}
	return out
}

// drained is c without node: its DaemonSet pods go with it, its other
// pods are replaced by pending copies (what their controllers would
// create).
func drained(c *cluster.Cluster, node string) *cluster.Cluster {
	out := *c
	out.Nodes = nil
	for _, n := range c.Nodes {
		if n.Name != node {
			out.Nodes = append(out.Nodes, n)
		}
	}
	out.Pods = nil
	gone := map[types.UID]bool{}
	for _, p := range c.Pods {
		if p.Spec.NodeName != node {
			out.Pods = append(out.Pods, p)
			continue
		}
		gone[p.UID] = true
		if cluster.IsDaemonSetPod(p) {
			continue
		}
		// The replacement starts without status: its claims are
		// generated anew from their templates.
		cp := p.DeepCopy()
		cp.Spec.NodeName = ""
		cp.Status = v1.PodStatus{Phase: v1.PodPending}
		out.Pods = append(out.Pods, cp)
	}
	out.Others = released(c.Others, gone)
	return &out
}

// evictable are the pods a drain evicts: all but the DaemonSet's.
func evictable(pods []*v1.Pod) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range pods {
		if !cluster.IsDaemonSetPod(p) {
			out = append(out, p)
		}
	}
	return out
}

// blockedByRules returns the first pod of a node (by name) that the
// eviction rules do not let a drain evict, and why.
func blockedByRules(pods []*v1.Pod) (*v1.Pod, string) {
	pods = evictable(pods)
	sort.Slice(pods, func(i, j int) bool { return cluster.PodKey(pods[i]) < cluster.PodKey(pods[j]) })
	for _, p := range pods {
		if v, ok := p.Annotations[SafeToEvictAnnotation]; ok && v == "false" {
			return p, fmt.Sprintf("the pod is annotated %s: \"false\"", SafeToEvictAnnotation)
		}
		if v, ok := p.Annotations[DoNotDisruptAnnotation]; ok && v == "true" {
			return p, fmt.Sprintf("the pod is annotated %s: \"true\"", DoNotDisruptAnnotation)
		}
		if p.Annotations[SafeToEvictAnnotation] == "true" {
			continue
		}
		if metav1.GetControllerOf(p) == nil {
			return p, "the pod has no controller: nothing would recreate it (annotate it " + SafeToEvictAnnotation + ": \"true\" to allow its eviction)"
		}
		for _, v := range p.Spec.Volumes {
			if v.EmptyDir != nil || v.HostPath != nil {
				kind := "emptyDir"
				if v.HostPath != nil {
					kind = "hostPath"
				}
				return p, fmt.Sprintf("the pod has local storage: %s volume %q (annotate it %s: \"true\" to allow its eviction)", kind, v.Name, SafeToEvictAnnotation)
			}
		}
	}
	return nil, ""
}
