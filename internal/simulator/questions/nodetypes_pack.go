package questions

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// packSpace is what the packer knows of the candidates: each one's room
// for pods (allocatable less what the DaemonSet pods a new node of it
// gets request) in the resources the pending pods request, and which pods
// could run on it as far as the pod and the node alone decide
// (usableTypes' test).
type packSpace struct {
	types []NodeType
	// res are the resources counted: cpu, memory, pods, then the others
	// the pods request.
	res   []v1.ResourceName
	resAt map[v1.ResourceName]int
	// room is, per candidate, its allocatable less its DaemonSet pods'
	// requests (pods: their count), in milli-units; nil for a candidate
	// no pod can use.
	room          [][]int64
	deviceClasses bool
	// compat caches each pod shape's candidates, by its controller (the
	// pods of one template are alike as far as usableTypes' test goes).
	compat map[types.UID][]bool
}

// newPackSpace sizes the candidates; daemon is, per candidate, the
// requests of the DaemonSet pods a new node of it gets.
func newPackSpace(ts []NodeType, usable []bool, daemon []v1.ResourceList, deviceClasses bool) *packSpace {
	s := &packSpace{types: ts, resAt: map[v1.ResourceName]int{}, deviceClasses: deviceClasses, compat: map[types.UID][]bool{}}
	for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
		s.resAt[r] = len(s.res)
		s.res = append(s.res, r)
	}
	s.room = make([][]int64, len(ts))
	for i, t := range ts {
		if !usable[i] {
			continue
		}
		s.room[i] = s.nodeRoom(t.Node, daemon[i])
	}
	return s
}

// nodeRoom is n's allocatable less used, in s.res. A resource the node
// does not list is unbounded for a native resource (the plugins read it
// as they may) and 0 for an extended one.
func (s *packSpace) nodeRoom(n *v1.Node, used v1.ResourceList) []int64 {
	out := make([]int64, len(s.res))
	for j, r := range s.res {
		q, ok := n.Status.Allocatable[r]
		switch {
		case !ok && isNativeResource(r):
			out[j] = 1 << 62
			continue
		case !ok:
			continue
		}
		out[j] = q.MilliValue()
		if u, ok := used[r]; ok {
			out[j] -= u.MilliValue()
		}
	}
	return out
}

// resource is r's index in s.res, adding it (and to every candidate's
// room) the first time.
func (s *packSpace) resource(r v1.ResourceName) int {
	if j, ok := s.resAt[r]; ok {
		return j
	}
	j := len(s.res)
	s.resAt[r] = j
	s.res = append(s.res, r)
	for i, room := range s.room {
		if room == nil {
			continue
		}
		q, ok := s.types[i].Node.Status.Allocatable[r]
		v := int64(0)
		if ok {
			v = q.MilliValue()
		} else if isNativeResource(r) || s.deviceClasses {
			v = 1 << 62
		}
		s.room[i] = append(room, v)
	}
	return j
}

// demand is what a pod takes of a node, in s.res (the pods resource: 1).
func (s *packSpace) demand(p *v1.Pod) []int64 {
	reqs := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	for r := range reqs {
		s.resource(r)
	}
	out := make([]int64, len(s.res))
	for r, q := range reqs {
		if r == v1.ResourcePods {
			continue
		}
		if s.deviceClasses && !isNativeResource(r) {
			continue // may come from a DeviceClass or be ignored
		}
		out[s.resAt[r]] = q.MilliValue()
	}
	out[s.resAt[v1.ResourcePods]] = 1000
	return out
}

// candidates says on which candidates p could run (usableTypes' test).
func (s *packSpace) candidates(p *v1.Pod) []bool {
	key := p.UID
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind != "DaemonSet" {
		key = ref.UID
	}
	if c, ok := s.compat[key]; ok && key != "" {
		return c
	}
	aff := nodeaffinity.GetRequiredNodeAffinity(p)
	reqs := smallestRequests(p)
	out := make([]bool, len(s.types))
	for i, t := range s.types {
		out[i] = s.room[i] != nil && couldUse(p, aff, reqs, t.Node, s.deviceClasses)
	}
	if key != "" {
		s.compat[key] = out
	}
	return out
}

// packItem is a pod to pack.
type packItem struct {
	pod    *v1.Pod
	demand []int64
	cands  []bool
	// anti are its required pod anti-affinity terms by hostname.
	anti []antiTerm
}

type antiTerm struct {
	ns  string
	all bool // namespaceSelector {}: every namespace
	nss []string
	sel labels.Selector
}

func (t antiTerm) matches(p *v1.Pod) bool {
	switch {
	case t.all:
	case len(t.nss) > 0:
		if !slices.Contains(t.nss, p.Namespace) {
			return false
		}
	case p.Namespace != t.ns:
		return false
	}
	return t.sel.Matches(labels.Set(p.Labels))
}

func hostAntiTerms(p *v1.Pod) []antiTerm {
	a := p.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return nil
	}
	var out []antiTerm
	for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if term.TopologyKey != v1.LabelHostname {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err != nil || term.LabelSelector == nil {
			continue
		}
		t := antiTerm{ns: p.Namespace, nss: term.Namespaces, sel: sel}
		if ns := term.NamespaceSelector; ns != nil && len(ns.MatchLabels) == 0 && len(ns.MatchExpressions) == 0 {
			t.all = true
		}
		out = append(out, t)
	}
	return out
}

// vnode is a node the packer opened: the candidates it may still become
// (each fitting all its pods), what its pods take.
type vnode struct {
	cands []int
	used  []int64
	pods  []*packItem
	anti  bool // some pod of it has anti-affinity terms
}

// conflicts: it and the node's pods may not share a host.
func (n *vnode) conflicts(it *packItem) bool {
	if len(it.anti) == 0 && !n.anti {
		return false
	}
	for _, o := range n.pods {
		for _, t := range it.anti {
			if t.matches(o.pod) {
				return true
			}
		}
		for _, t := range o.anti {
			if t.matches(it.pod) {
				return true
			}
		}
	}
	return false
}

// fitting are the candidates of n that hold it on top of n's pods.
func (s *packSpace) fitting(n *vnode, it *packItem, buf []int) []int {
	out := buf[:0]
	for _, i := range n.cands {
		if !it.cands[i] {
			continue
		}
		room := s.room[i]
		ok := true
		for j, d := range it.demand {
			if d > 0 && n.used[j]+d > room[j] {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// spreadZones gives each pod a zone to be packed in, the pods taken in
// their order (the scheduler's): one with a zone topology spread
// constraint that may not be unsatisfied, the zone where the fewest pods
// its constraint selects are; one without constraints of its own but with
// a controller, where the fewest of its controller's pods are (the
// scheduler's default spreading scores its pods away from the zones that
// have more). Counts start from have (the pods bound in the simulation,
// by zone and spreadKey or controllerKey); zones are those of its
// candidates; its candidates are cut to that zone.
func (s *packSpace) spreadZones(items []*packItem, have map[string]map[string]int) {
	for _, it := range items {
		var keys []string
		for _, c := range it.pod.Spec.TopologySpreadConstraints {
			if c.TopologyKey == v1.LabelTopologyZone && c.WhenUnsatisfiable == v1.DoNotSchedule {
				keys = append(keys, spreadKey(it.pod, c))
			}
		}
		if len(it.pod.Spec.TopologySpreadConstraints) == 0 {
			if k := controllerKey(it.pod); k != "" {
				keys = append(keys, k)
			}
		}
		for _, key := range keys {
			counts := have[key]
			if counts == nil {
				counts = map[string]int{}
				have[key] = counts
			}
			best, bestN := "", 0
			for i, ok := range it.cands {
				if !ok {
					continue
				}
				z := s.types[i].Zone
				if n := counts[z]; best == "" || n < bestN || (n == bestN && z < best) {
					best, bestN = z, n
				}
			}
			if best == "" {
				continue
			}
			counts[best]++
			cut := slices.Clone(it.cands)
			for i := range cut {
				cut[i] = cut[i] && s.types[i].Zone == best
			}
			it.cands = cut
		}
	}
}

// controllerKey names a pod's controller for spreadZones ("" without
// one, or for a DaemonSet's pod).
func controllerKey(p *v1.Pod) string {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind == "DaemonSet" {
		return ""
	}
	return "controller/" + string(ref.UID)
}

// spreadKey names a constraint's selection: the pods of the namespace it
// counts.
func spreadKey(p *v1.Pod, c v1.TopologySpreadConstraint) string {
	return p.Namespace + "/" + metav1.FormatLabelSelector(c.LabelSelector)
}

// items are the packer's view of pods: their demands, candidates (with
// spread, cut to one zone each, see spreadZones) and
// anti-affinity, sorted largest first (cpu, then memory).
func (s *packSpace) items(pods []*v1.Pod, have map[string]map[string]int, onNew map[*v1.Pod]int, spread bool) []*packItem {
	items := make([]*packItem, 0, len(pods))
	for _, p := range pods {
		c := s.candidates(p)
		if i, ok := onNew[p]; ok {
			// A new node's agent: its room, on another node of its
			// node's candidate or of any other (whichever is cheaper),
			// for the pods that took it.
			c = make([]bool, len(s.types))
			for j := range c {
				c[j] = s.room[j] != nil && (j == i || s.types[j].Limit > 0)
			}
		}
		if !slices.Contains(c, true) {
			continue // no new node can run it (e.g. an existing node's DaemonSet pod)
		}
		items = append(items, &packItem{pod: p, demand: s.demand(p), cands: c, anti: hostAntiTerms(p)})
	}
	for _, it := range items { // resources added by a later pod
		for len(it.demand) < len(s.res) {
			it.demand = append(it.demand, 0)
		}
	}
	if spread {
		own := make(map[string]map[string]int, len(have))
		for k, m := range have {
			own[k] = maps.Clone(m)
		}
		s.spreadZones(items, own)
	}
	cpu, mem := s.resAt[v1.ResourceCPU], s.resAt[v1.ResourceMemory]
	sort.SliceStable(items, func(a, b int) bool {
		da, db := items[a].demand, items[b].demand
		if da[cpu] != db[cpu] {
			return da[cpu] > db[cpu]
		}
		return da[mem] > db[mem]
	})
	return items
}

// add puts it on n.
func (n *vnode) add(it *packItem, cands []int) {
	n.cands = append(n.cands[:0], cands...)
	for j, d := range it.demand {
		n.used[j] += d
	}
	n.pods = append(n.pods, it)
	n.anti = n.anti || len(it.anti) > 0
}

// pack proposes nodes for pods, from the linear relaxation's optimum
// (fractional): its whole nodes are opened, each as its candidate, and
// the pods, largest first, each go to the first of them that holds it
// among the candidates the optimum gives its group (then among any it
// could run on). The pods they do not hold (the optimum's fractions) are
// grouped by their candidates, and each group gets the nodes of the one
// candidate that holds it most cheaply (packed first-fit). When the
// relaxation has no answer, the pods are packed as Karpenter's
// provisioner packs them (firstFit). used are the nodes of each
// candidate there are already (the limits count them). It returns the
// nodes to add per candidate.
func (s *packSpace) pack(pods []*v1.Pod, have map[string]map[string]int, onNew map[*v1.Pod]int, used []int) []int {
	items := s.items(pods, have, onNew, true)
	left := make([]int, len(s.types))
	for i, t := range s.types {
		left[i] = t.Limit - used[i]
	}
	plan, ok := s.fractional(items, s.perNode(), left)
	if !ok {
		return s.firstFit(items, used)
	}
	if os.Getenv("KUBESCHED_TRACE_PLAN") != "" {
		fmt.Fprintf(os.Stderr, "lp %.3f:", plan.Cost)
		for i, x := range plan.Nodes {
			if x > 0 {
				fmt.Fprintf(os.Stderr, " %s/%s=%.2f", s.types[i].Type, s.types[i].Zone, x)
			}
		}
		fmt.Fprintln(os.Stderr)
	}
	byType := make([][]*vnode, len(s.types))
	var bins []*vnode
	for i, x := range plan.Nodes {
		for range min(max(0, s.types[i].Limit-used[i]), int(math.Floor(x+1e-6))) {
			n := &vnode{cands: []int{i}, used: make([]int64, len(s.res))}
			byType[i] = append(byType[i], n)
			bins = append(bins, n)
		}
	}
	var rest []*packItem
	var buf []int
	put := func(it *packItem, want func(i int) bool) bool {
		for i, ns := range byType {
			if len(ns) == 0 || !it.cands[i] || !want(i) {
				continue
			}
			for _, n := range ns {
				if buf = s.fitting(n, it, buf); len(buf) > 0 && !n.conflicts(it) {
					n.add(it, n.cands)
					return true
				}
			}
		}
		return false
	}
	for k, it := range items {
		if !put(it, func(i int) bool { return plan.Prefer[k][i] }) && !put(it, func(int) bool { return true }) {
			rest = append(rest, it)
		}
	}
	add := make([]int, len(s.types))
	perZone := map[string]int{}
	s.settle(bins, used, add, perZone)
	// The rest: by groups of the same candidates, each on the candidate
	// that holds it most cheaply, or all together first-fit as
	// Karpenter packs, whichever costs less.
	grouped := slices.Clone(add)
	s.settleGroups(rest, used, grouped, maps.Clone(perZone))
	together := plus(add, s.firstFit(rest, plus(used, add)))
	if costOf(s.types, together) < costOf(s.types, grouped) {
		return together
	}
	return grouped
}

// settleGroups adds to add the nodes of items grouped by their
// candidates, each group on the candidate that holds it most cheaply.
func (s *packSpace) settleGroups(items []*packItem, used, add []int, perZone map[string]int) {
	groups := map[string][]*packItem{}
	var keys []string
	for _, it := range items {
		k := candKey(it.cands)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], it)
	}
	for _, k := range keys {
		g := groups[k]
		var best []*vnode
		bestCost := math.Inf(1)
		for i := range s.types {
			if s.room[i] == nil || !g[0].cands[i] || used[i]+add[i] >= s.types[i].Limit {
				continue
			}
			nodes := s.firstFitOn(g, i)
			if c := float64(len(nodes)) * s.types[i].Cost; nodes != nil && c < bestCost {
				best, bestCost = nodes, c
			}
		}
		s.settle(best, used, add, perZone)
	}
}

// candKey names a candidate set.
func candKey(c []bool) string {
	b := make([]byte, len(c))
	for i, ok := range c {
		b[i] = '0'
		if ok {
			b[i] = '1'
		}
	}
	return string(b)
}

// firstFitOn packs items first-fit onto nodes of candidate i alone; nil
// when one does not fit it.
func (s *packSpace) firstFitOn(items []*packItem, i int) []*vnode {
	var nodes []*vnode
	var buf []int
	for _, it := range items {
		placed := false
		for _, n := range nodes {
			if buf = s.fitting(n, it, buf); len(buf) > 0 && !n.conflicts(it) {
				n.add(it, n.cands)
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		n := &vnode{cands: []int{i}, used: make([]int64, len(s.res))}
		if buf = s.fitting(n, it, buf); len(buf) == 0 {
			return nil
		}
		n.add(it, n.cands)
		nodes = append(nodes, n)
	}
	return nodes
}

// settle makes each node of nodes that holds a pod the cheapest
// candidate that holds its pods with room under its limit (on a tie in
// price, the zone with the fewest new nodes), counting it in add.
func (s *packSpace) settle(nodes []*vnode, used, add []int, perZone map[string]int) {
	for _, n := range nodes {
		if len(n.pods) == 0 {
			continue
		}
		best := -1
		for i := range s.types {
			if s.room[i] == nil || used[i]+add[i] >= s.types[i].Limit || !s.holds(i, n) {
				continue
			}
			if best < 0 || s.types[i].Cost < s.types[best].Cost ||
				(s.types[i].Cost == s.types[best].Cost && perZone[s.types[i].Zone] < perZone[s.types[best].Zone]) {
				best = i
			}
		}
		if best >= 0 {
			add[best]++
			perZone[s.types[best].Zone]++
		}
	}
}

// firstFit packs items as Karpenter's provisioner does: each pod, largest
// first, onto the first node opened that holds it, or onto a new node
// that may become any candidate holding it; each node then becomes the
// cheapest candidate that holds its pods, with room left under its limit
// (used: the nodes of each candidate there are already; on a tie in
// price, the zone with the fewest new nodes). It returns the nodes to add
// per candidate.
func (s *packSpace) firstFit(items []*packItem, used []int) []int {
	var nodes []*vnode
	var buf []int
	all := make([]int, 0, len(s.types))
	for _, it := range items {
		placed := false
		for _, n := range nodes {
			if buf = s.fitting(n, it, buf); len(buf) == 0 || n.conflicts(it) {
				continue
			}
			n.add(it, buf)
			placed = true
			break
		}
		if placed {
			continue
		}
		all = all[:0]
		for i := range s.types {
			if s.room[i] != nil && used[i] < s.types[i].Limit {
				all = append(all, i)
			}
		}
		n := &vnode{cands: all, used: make([]int64, len(s.res))}
		if buf = s.fitting(n, it, buf); len(buf) == 0 {
			continue
		}
		n.cands = nil
		n.add(it, buf)
		nodes = append(nodes, n)
	}
	add := make([]int, len(s.types))
	s.settle(nodes, used, add, map[string]int{})
	return add
}

// holds: candidate i could run every pod of n and holds them all.
func (s *packSpace) holds(i int, n *vnode) bool {
	for _, it := range n.pods {
		if !it.cands[i] {
			return false
		}
	}
	for j, u := range n.used {
		if u > s.room[i][j] {
			return false
		}
	}
	return true
}

// perNode is what the packer's relaxation adds to each node's price: a
// hundredth of the cheapest candidate's.
func (s *packSpace) perNode() float64 {
	least := math.Inf(1)
	for i, t := range s.types {
		if s.room[i] != nil {
			least = math.Min(least, t.Cost)
		}
	}
	if math.IsInf(least, 1) {
		return 0
	}
	return least / 100
}
