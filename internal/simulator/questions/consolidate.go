package questions

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// The annotations that keep a pod (and so its node) from being evicted by
// a consolidation, as cluster-autoscaler and Karpenter read them.
const (
	SafeToEvictAnnotation  = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	DoNotDisruptAnnotation = "karpenter.sh/do-not-disrupt"
)

// drainWork is the default bound on consolidate's work, in drains times
// nodes: a drain's simulation costs time in proportion to the cluster's
// nodes (each evicted pod is tried against them), so this is what 1,000
// drains cost at 15,000 nodes (~15-25 s on a 2-core machine).
const drainWork = 15_000_000

// DefaultMaxDrains is how many drains consolidate simulates by default on
// a cluster of n nodes: drainWork / n, at least 1,000. Every node is
// tried up to 3,872 nodes; 3,000 drains at 5,000 nodes, 1,000 at 15,000.
func DefaultMaxDrains(n int) int {
	if n <= 0 {
		return 1000
	}
	return max(1000, drainWork/n)
}

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
// kept untried. The drains run one after another in one world (drainer),
// a failed one undone. A negative maxDrains is DefaultMaxDrains of the
// cluster's node count; 0 is no limit.
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
	for _, p := range w.PodResults() {
		if p.Status == report.StatusUnschedulable {
			basePending[p.Namespace+"/"+p.Name] = true
		}
	}
	// The pods pending before any drain are left out of the drains'
	// simulations: a drain only takes room away, so they stay pending, and
	// each would be tried against every node at every drain.
	settled := settle(w, basePending)
	pdbs := settled.PodDisruptionBudgets()
	if maxDrains < 0 {
		maxDrains = DefaultMaxDrains(len(settled.Nodes))
	}
	res := &ConsolidateResult{Remove: []string{}, Keep: []KeptNode{}}
	price := map[string]float64{}
	podsOn := byNode(settled.Pods)
	type candidate struct {
		node string
		pods int
	}
	var candidates []candidate
	for _, n := range settled.Nodes {
		price[n.Name] = NodeHourlyCost(n)
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
	// The drains are tried in one world, live: the settled cluster with
	// the drains kept so far done in it. A drain that fails is undone by
	// making the world again from what it held before the drain.
	d, err := newDrainer(ctx, newWorld, settled, basePending)
	if err != nil {
		return nil, err
	}
	drains := 0
	for i, cand := range candidates {
		if started != nil {
			started(i, len(candidates), cand.node)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		on := evictable(d.podsOn[cand.node])
		if reason := d.room.noRoomElsewhere(cand.node, on); reason != "" {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Pod: cluster.PodKey(on[0]), Reason: reason})
			continue
		}
		if maxDrains > 0 && drains >= maxDrains {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Reason: fmt.Sprintf("not tried: %d drains were simulated (--max-drains)", maxDrains)})
			continue
		}
		if len(pdbs) > 0 {
			if pod, reason := cluster.EvictionRefused(on, d.pods(), pdbs); pod != nil {
				res.Keep = append(res.Keep, KeptNode{Node: cand.node, Pod: cluster.PodKey(pod), Reason: reason})
				continue
			}
		}
		drains++
		pod, reason, err := d.drain(cand.node)
		if err != nil {
			return nil, err
		}
		if pod != "" {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Pod: pod, Reason: reason})
			continue
		}
		res.Remove = append(res.Remove, cand.node)
		res.HourlySaving += price[cand.node]
	}
	res.HourlySaving = roundCents(res.HourlySaving)
	sort.SliceStable(res.Keep, func(i, j int) bool { return res.Keep[i].Node < res.Keep[j].Node })
	return res, nil
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
