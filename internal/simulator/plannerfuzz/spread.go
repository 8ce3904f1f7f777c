package plannerfuzz

import (
	"fmt"
	"math/bits"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// spread is the bound a zone topology spread (DoNotSchedule, the default
// node inclusion policies) puts on a vector. Its domains are the zones
// with a node its pods' node affinity matches, tainted or not
// (nodeTaintsPolicy Ignore), with room for them or not; a pod goes only
// to a zone whose count is within maxSkew-1 of the least, so from no pod
// anywhere the counts never differ by more than maxSkew. Placing all n
// pods over d domains thus puts at least ceil((n-(d-1)·maxSkew)/d) in
// every domain, each of which must have the room for them.
type spread struct {
	n, skew int
	req     amount
	// existing are the zones (bits) of the existing nodes the pods'
	// affinity matches, existingRoom the room of those they could run on,
	// by zone.
	existing     uint64
	existingRoom []amount
	// zone is each candidate's zone (-1: the affinity does not match it);
	// runs, whether the pods could run on its nodes.
	zone []int
	runs []bool
}

// spreadsOf finds the groups of pending pods under one zone spread whose
// pods must all be placed and that no other pod counts in (the bound
// assumes they start at 0 everywhere).
func spreadsOf(c *cluster.Cluster, types []questions.NodeType, b *bounds, place func(*v1.Pod) bool) []spread {
	zones := map[string]int{}
	zoneOf := func(n *v1.Node) int {
		z, ok := n.Labels[v1.LabelTopologyZone]
		if !ok {
			return -1
		}
		if _, ok := zones[z]; !ok {
			zones[z] = len(zones)
		}
		return zones[z]
	}
	for _, n := range c.Nodes {
		zoneOf(n)
	}
	for _, t := range types {
		zoneOf(t.Node)
	}
	if len(zones) > 64 {
		return nil
	}
	type group struct {
		pod     *v1.Pod
		sel     labels.Selector
		skew    int
		members int
		ok      bool
	}
	groups := map[string]*group{}
	var order []string
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" || cluster.IsDaemonSetPod(p) {
			continue
		}
		for _, t := range p.Spec.TopologySpreadConstraints {
			if t.TopologyKey != v1.LabelTopologyZone || t.WhenUnsatisfiable != v1.DoNotSchedule || t.MinDomains != nil || len(t.MatchLabelKeys) > 0 ||
				(t.NodeAffinityPolicy != nil && *t.NodeAffinityPolicy != v1.NodeInclusionPolicyHonor) ||
				(t.NodeTaintsPolicy != nil && *t.NodeTaintsPolicy != v1.NodeInclusionPolicyIgnore) || t.LabelSelector == nil {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
			if err != nil || !sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			key := fmt.Sprintf("%s|%s|%d|%v|%v|%v", p.Namespace, sel, t.MaxSkew, p.Spec.NodeSelector, p.Spec.Affinity, requestsOf(p))
			g, ok := groups[key]
			if !ok {
				g = &group{pod: p, sel: sel, skew: int(t.MaxSkew), ok: true}
				groups[key] = g
				order = append(order, key)
			}
			g.members++
			if place != nil && !place(p) {
				g.ok = false
			}
			break
		}
	}
	var out []spread
	for _, key := range order {
		g := groups[key]
		if !g.ok {
			continue
		}
		// Every pod the selector counts must be one of the group's.
		counted := 0
		for _, p := range c.Pods {
			if p.Namespace == g.pod.Namespace && g.sel.Matches(labels.Set(p.Labels)) {
				counted++
			}
		}
		if counted != g.members {
			continue
		}
		aff := nodeaffinity.GetRequiredNodeAffinity(g.pod)
		s := spread{n: g.members, skew: g.skew, req: requestsOf(g.pod), zone: make([]int, len(types)), runs: make([]bool, len(types))}
		room := map[int]amount{}
		for _, n := range c.Nodes {
			z := zoneOf(n)
			if ok, _ := aff.Match(n); !ok || z < 0 {
				continue
			}
			s.existing |= 1 << z
			if couldRun(g.pod, aff, s.req, n, allocatableOf(n)) {
				r := room[z]
				r.add(allocatableOf(n))
				room[z] = r
			}
		}
		for i, t := range types {
			s.zone[i] = -1
			if ok, _ := aff.Match(t.Node); ok {
				s.zone[i] = zoneOf(t.Node)
				s.runs[i] = b.usable[i] && couldRun(g.pod, aff, s.req, t.Node, b.net[i])
			}
		}
		s.existingRoom = make([]amount, len(zones))
		for z, r := range room {
			s.existingRoom[z] = r
		}
		out = append(out, s)
	}
	return out
}

// admits says whether counts give every domain the room for its least
// share of the pods.
func (s *spread) admits(counts []int, net []amount) bool {
	domains := s.existing
	for i, k := range counts {
		if k > 0 && s.zone[i] >= 0 {
			domains |= 1 << s.zone[i]
		}
	}
	d := bits.OnesCount64(domains)
	if d == 0 {
		return false
	}
	least := (s.n - (d-1)*s.skew + d - 1) / d
	if s.n-(d-1)*s.skew <= 0 {
		return true
	}
	for m := domains; m != 0; m &= m - 1 {
		z := bits.TrailingZeros64(m)
		room := s.existingRoom[z]
		for i, k := range counts {
			if k > 0 && s.zone[i] == z && s.runs[i] {
				for r := range room {
					room[r] += int64(k) * net[i][r]
				}
			}
		}
		for r := range room {
			if int64(least)*s.req[r] > room[r] {
				return false
			}
		}
	}
	return true
}
