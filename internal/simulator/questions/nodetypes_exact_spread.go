package questions

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"
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
// one namespace with the same constraint, alike (requests, candidates,
// node affinity), all to be placed, greenfield for them (no node of c
// their affinity matches, no pod of c or of items outside the group their
// selector counts).
func (s *packSpace) zoneSpreads(items []*packItem, c *cluster.Cluster, zoneIdx []int, zones int) (out []zoneSpread, member []bool) {
	type group struct {
		g     *zoneSpread
		sel   labels.Selector
		ns    string
		first *packItem
	}
	groups := map[string]*group{}
	keyOf := make([]string, len(items))
	var order []string
	for k, it := range items {
		p := it.pod
		if len(p.Spec.TopologySpreadConstraints) != 1 {
			continue
		}
		tsc := p.Spec.TopologySpreadConstraints[0]
		if tsc.TopologyKey != v1.LabelTopologyZone || tsc.WhenUnsatisfiable != v1.DoNotSchedule || tsc.MinDomains != nil ||
			tsc.NodeAffinityPolicy != nil || tsc.NodeTaintsPolicy != nil || len(tsc.MatchLabelKeys) > 0 {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(tsc.LabelSelector)
		if err != nil || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		key := fmt.Sprintf("%s/%s/%d", p.Namespace, sel, tsc.MaxSkew)
		keyOf[k] = key
		if gr, ok := groups[key]; ok {
			if gr.g != nil && alike(gr.first, it) {
				gr.g.n++
			} else {
				gr.g = nil
			}
			continue
		}
		gr := &group{sel: sel, ns: p.Namespace, first: it}
		groups[key] = gr
		order = append(order, key)
		if !greenfieldFor(p, sel, c) {
			continue
		}
		aff := nodeaffinity.GetRequiredNodeAffinity(p)
		g := &zoneSpread{n: 1, skew: int(tsc.MaxSkew), demand: it.demand, zone: make([]int, len(s.types)), runs: slices.Clone(it.cands)}
		for i, t := range s.types {
			g.zone[i] = -1
			if ok, _ := aff.Match(t.Node); ok {
				g.zone[i] = zoneIdx[i]
			}
		}
		gr.g = g
	}
	// A pod outside a group that its selector counts: the group starts
	// at more than 0 somewhere.
	for k, it := range items {
		for key, gr := range groups {
			if gr.g != nil && keyOf[k] != key && it.pod.Namespace == gr.ns && gr.sel.Matches(labels.Set(it.pod.Labels)) {
				gr.g = nil
			}
		}
	}
	member = make([]bool, len(items))
	for _, k := range order {
		if g := groups[k].g; g != nil && g.n > 1 {
			g.zones = zones
			out = append(out, *g)
			for j := range items {
				member[j] = member[j] || keyOf[j] == k
			}
		}
	}
	return out, member
}

// alike: b's pod asks what a's does of the new nodes (requests and
// candidates) under the same node affinity.
func alike(a, b *packItem) bool {
	return slices.Equal(a.demand, b.demand) && slices.Equal(a.cands, b.cands) &&
		equality.Semantic.DeepEqual(a.pod.Spec.Affinity, b.pod.Spec.Affinity) &&
		maps.Equal(a.pod.Spec.NodeSelector, b.pod.Spec.NodeSelector)
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

// share is the least count of g's pods each zone of counts' nodes that
// is a domain takes (-1: counts has no domain).
func (g *zoneSpread) share(counts []int, seen []bool) int {
	seen = seen[:g.zones]
	clear(seen)
	d := 0
	for i, k := range counts {
		if z := g.zone[i]; k > 0 && z >= 0 && !seen[z] {
			seen[z] = true
			d++
		}
	}
	if d == 0 {
		return -1
	}
	return max(0, (g.n-(d-1)*g.skew+d-1)/d)
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

// zoneNeeds is what a vector's nodes must hold zone by zone: the
// requests of the pods that run in one zone only (each candidate they
// could use is in it), and the share of each zone spread's pods each of
// its zones takes, in every resource. Pods of different groups do not
// share room, so each zone's new nodes must have at least the sum.
type zoneNeeds struct {
	zoneIdx []int // each candidate's zone (-1: none)
	zones   int
	pinned  [][]int64
	spreads []zoneSpread
	// scratch
	room, need [][]int64
	seen       []bool
	fit        []int
}

// newZoneNeeds finds the zones' needs of items (the pods that need new
// nodes) on a cluster c as loaded.
func (s *packSpace) newZoneNeeds(items []*packItem, c *cluster.Cluster) *zoneNeeds {
	zn := &zoneNeeds{zoneIdx: make([]int, len(s.types))}
	idx := map[string]int{}
	for i, t := range s.types {
		zn.zoneIdx[i] = -1
		z := t.Node.Labels[v1.LabelTopologyZone]
		if z == "" {
			continue
		}
		if _, ok := idx[z]; !ok {
			idx[z] = len(idx)
		}
		zn.zoneIdx[i] = idx[z]
	}
	zn.zones = len(idx)
	var member []bool
	zn.spreads, member = s.zoneSpreads(items, c, zn.zoneIdx, zn.zones)
	zn.alloc(len(s.res))
	for j, it := range items {
		if member[j] {
			continue
		}
		z := -2
		for i, ok := range it.cands {
			if !ok {
				continue
			}
			if z == -2 {
				z = zn.zoneIdx[i]
			} else if zn.zoneIdx[i] != z {
				z = -1
			}
		}
		if z < 0 {
			continue
		}
		for r, d := range it.demand {
			zn.pinned[z][r] += d
		}
	}
	// The existing nodes of a zone may hold some of its pinned pods: with
	// new nodes elsewhere, the scheduler moves other pending pods off
	// them (seed 219 of the planner fuzzer: one new node in zone b where
	// this bound asked for two). Their room is at most their allocatable
	// less the pods bound to them as loaded.
	for z, room := range s.existingZoneRoom(c, idx) {
		for r := range zn.pinned[z] {
			if r < len(room) {
				zn.pinned[z][r] = max(0, zn.pinned[z][r]-room[r])
			}
		}
	}
	return zn
}

// existingZoneRoom is, per zone of idx, the room of c's nodes in it at
// most: their allocatable less the requests of the pods bound to them as
// loaded (finished ones aside), in s.res.
func (s *packSpace) existingZoneRoom(c *cluster.Cluster, idx map[string]int) [][]int64 {
	out := make([][]int64, len(idx))
	zoneOf := map[string]int{}
	for _, n := range c.Nodes {
		z, ok := idx[n.Labels[v1.LabelTopologyZone]]
		if !ok {
			continue
		}
		zoneOf[n.Name] = z
		if out[z] == nil {
			out[z] = make([]int64, len(s.res))
		}
		for r, q := range n.Status.Allocatable {
			if j, ok := s.resAt[r]; ok {
				if r == v1.ResourcePods {
					out[z][j] += 1000 * q.Value()
				} else {
					out[z][j] += q.MilliValue()
				}
			}
		}
	}
	for _, p := range c.Pods {
		z, ok := zoneOf[p.Spec.NodeName]
		if !ok || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		// Only the resources s already counts: demand would add others.
		for r, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			if j, ok := s.resAt[r]; ok && r != v1.ResourcePods {
				out[z][j] = max(0, out[z][j]-q.MilliValue())
			}
		}
		if j, ok := s.resAt[v1.ResourcePods]; ok {
			out[z][j] = max(0, out[z][j]-1000)
		}
	}
	return out
}

// alloc makes the per-zone arrays for nres resources.
func (zn *zoneNeeds) alloc(nres int) {
	zn.pinned = make([][]int64, zn.zones)
	zn.room, zn.need = make([][]int64, zn.zones), make([][]int64, zn.zones)
	for z := range zn.zones {
		zn.pinned[z] = make([]int64, nres)
		zn.room[z], zn.need[z] = make([]int64, nres), make([]int64, nres)
	}
	zn.seen, zn.fit = make([]bool, zn.zones), make([]int, zn.zones)
}

// admits: counts' new nodes have, zone by zone, the room the zone's needs
// ask, and each spread's zones the room for its share pod by pod.
func (zn *zoneNeeds) admits(counts []int, room [][]int64) bool {
	if zn.zones == 0 {
		return true
	}
	for z := range zn.zones {
		clear(zn.room[z])
		copy(zn.need[z], zn.pinned[z])
	}
	for i, k := range counts {
		z := zn.zoneIdx[i]
		if k == 0 || z < 0 || room[i] == nil {
			continue
		}
		for r, q := range room[i] {
			if q >= 1<<61 { // unbounded (see nodeRoom)
				zn.room[z][r] = 1 << 61
				continue
			}
			zn.room[z][r] = min(1<<61, zn.room[z][r]+int64(k)*max(0, q))
		}
	}
	for g := range zn.spreads {
		sp := &zn.spreads[g]
		if !sp.admits(counts, room, zn.fit) {
			return false
		}
		share := sp.share(counts, zn.seen)
		for z := range zn.zones {
			if !zn.seen[z] {
				continue
			}
			for r, d := range sp.demand {
				zn.need[z][r] += int64(share) * d
			}
		}
	}
	for z := range zn.zones {
		for r, n := range zn.need[z] {
			if zn.room[z][r] < n {
				return false
			}
		}
	}
	return true
}
