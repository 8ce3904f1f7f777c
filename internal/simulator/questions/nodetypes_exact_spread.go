package questions

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// zoneSpread is what a zone topology spread (DoNotSchedule, maxSkew,
// the default node policies) asks of a count vector on a cluster where
// no node its pods' node affinity matches exists yet and no pod counts in
// it: its domains are the zones of the vector's nodes the affinity
// matches (tainted or not), and as every pod goes to a zone within
// maxSkew of the least, placing all n pods over d domains puts at least
// ceil((n-(d-1)·maxSkew)/d) in each, which must have the room for them.
type zoneSpread struct {
	n, skew int
	demand  []int64
	// zone is each candidate's zone index (-1: not a domain), of zones;
	// runs, whether the pods could run on its nodes.
	zone  []int
	zones int
	runs  []bool
}

// zoneSpreads finds the groups of items under one such spread: pods of
// one controller with the same constraint, all to be placed, greenfield
// for them (no node of c their affinity matches, no pod of c their
// selector counts).
func (s *packSpace) zoneSpreads(items []*packItem, c *cluster.Cluster) []zoneSpread {
	zones := map[string]int{}
	groups := map[string]*zoneSpread{}
	var order []string
	for _, it := range items {
		p := it.pod
		ref := metav1.GetControllerOf(p)
		if ref == nil || len(p.Spec.TopologySpreadConstraints) != 1 {
			continue
		}
		tsc := p.Spec.TopologySpreadConstraints[0]
		if tsc.TopologyKey != v1.LabelTopologyZone || tsc.WhenUnsatisfiable != v1.DoNotSchedule || tsc.MinDomains != nil ||
			tsc.NodeAffinityPolicy != nil || tsc.NodeTaintsPolicy != nil || len(tsc.MatchLabelKeys) > 0 {
			continue
		}
		key := string(ref.UID)
		if g, ok := groups[key]; ok {
			if g != nil {
				g.n++
			}
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(tsc.LabelSelector)
		if err != nil || !sel.Matches(labels.Set(p.Labels)) || !greenfieldFor(p, sel, c) || countsOthers(sel, p.Namespace, ref.UID, items) {
			groups[key] = nil
			continue
		}
		aff := nodeaffinity.GetRequiredNodeAffinity(p)
		g := &zoneSpread{n: 1, skew: int(tsc.MaxSkew), demand: it.demand, zone: make([]int, len(s.types)), runs: slices.Clone(it.cands)}
		for i, t := range s.types {
			g.zone[i] = -1
			if ok, _ := aff.Match(t.Node); !ok || t.Node.Labels[v1.LabelTopologyZone] == "" {
				continue
			}
			z, ok := zones[t.Node.Labels[v1.LabelTopologyZone]]
			if !ok {
				z = len(zones)
				zones[t.Node.Labels[v1.LabelTopologyZone]] = z
			}
			g.zone[i] = z
		}
		groups[key] = g
		order = append(order, key)
	}
	var out []zoneSpread
	for _, k := range order {
		if g := groups[k]; g != nil && g.n > 1 {
			g.zones = len(zones)
			out = append(out, *g)
		}
	}
	return out
}

// countsOthers: sel counts a pod of items in ns that another controller
// than uid owns.
func countsOthers(sel labels.Selector, ns string, uid types.UID, items []*packItem) bool {
	for _, it := range items {
		q := it.pod
		if ref := metav1.GetControllerOf(q); q.Namespace == ns && (ref == nil || ref.UID != uid) && sel.Matches(labels.Set(q.Labels)) {
			return true
		}
	}
	return false
}

// greenfieldFor: no node of c matches p's node affinity, and no pod of c
// bound to a node is counted by sel in p's namespace.
func greenfieldFor(p *v1.Pod, sel labels.Selector, c *cluster.Cluster) bool {
	aff := nodeaffinity.GetRequiredNodeAffinity(p)
	for _, n := range c.Nodes {
		if ok, _ := aff.Match(n); ok {
			return false
		}
	}
	for _, q := range c.Pods {
		if q.Spec.NodeName != "" && q.Namespace == p.Namespace && sel.Matches(labels.Set(q.Labels)) {
			return false
		}
	}
	return true
}

// admits: counts' nodes could hold the spread's pods, each zone of them
// its share at least (see zoneSpread). room is the candidates' room;
// zoneRoom, scratch of g.zones.
func (g *zoneSpread) admits(counts []int, room [][]int64, zoneRoom []int) bool {
	zoneRoom = zoneRoom[:g.zones]
	for z := range zoneRoom {
		zoneRoom[z] = -1 // not a domain
	}
	d := 0
	for i, k := range counts {
		z := g.zone[i]
		if k == 0 || z < 0 {
			continue
		}
		if zoneRoom[z] < 0 {
			zoneRoom[z] = 0
			d++
		}
		if !g.runs[i] || room[i] == nil {
			continue
		}
		fit := -1 // pods per node
		for r, q := range g.demand {
			if q <= 0 {
				continue
			}
			f := int(room[i][r] / q)
			if fit < 0 || f < fit {
				fit = f
			}
		}
		if fit < 0 {
			fit = g.n
		}
		zoneRoom[z] += k * fit
	}
	if d == 0 {
		return false
	}
	least := max(0, (g.n-(d-1)*g.skew+d-1)/d)
	for _, r := range zoneRoom {
		if r >= 0 && r < least {
			return false
		}
	}
	return true
}
