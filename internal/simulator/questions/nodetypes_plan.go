package questions

import (
	"fmt"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// pendingAndSpread are the pods of pending (unplaced's results of w) and,
// for each zone spread constraint of theirs that may not be unsatisfied,
// how many pods it selects are bound in each zone.
func pendingAndSpread(w *simulator.World, results []report.PodResult, pending []report.PodResult) ([]*v1.Pod, map[string]map[string]int) {
	pods := make([]*v1.Pod, 0, len(pending))
	type sel struct {
		ns  string
		sel labels.Selector
	}
	selectors := map[string]sel{}
	owners := map[string]bool{}
	for _, r := range pending {
		var p *v1.Pod
		if r.Status == report.StatusPreempted {
			if ev, ok := w.Store.Evicted[r.Namespace+"/"+r.Name]; ok {
				p = ev.Pod
			}
		} else {
			p, _ = w.Store.GetPod(r.Namespace, r.Name)
		}
		if p == nil {
			continue
		}
		pods = append(pods, p)
		if k := controllerKey(p); k != "" && len(p.Spec.TopologySpreadConstraints) == 0 {
			owners[k] = true
		}
		for _, c := range p.Spec.TopologySpreadConstraints {
			if c.TopologyKey != v1.LabelTopologyZone || c.WhenUnsatisfiable != v1.DoNotSchedule {
				continue
			}
			key := spreadKey(p, c)
			if _, ok := selectors[key]; ok {
				continue
			}
			s, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
			if err != nil {
				s = labels.Nothing()
			}
			selectors[key] = sel{p.Namespace, s}
		}
	}
	if len(selectors) == 0 && len(owners) == 0 {
		return pods, nil
	}
	zoneOf := map[string]string{}
	for _, n := range w.Store.Nodes() {
		zoneOf[n.Name] = n.Labels[v1.LabelTopologyZone]
	}
	spread := make(map[string]map[string]int, len(selectors))
	for key := range selectors {
		spread[key] = map[string]int{}
	}
	for key := range owners {
		spread[key] = map[string]int{}
	}
	for _, r := range results {
		if r.Status != report.StatusScheduled || r.Node == "" {
			continue
		}
		p, ok := w.Store.GetPod(r.Namespace, r.Name)
		if !ok {
			continue
		}
		for key, s := range selectors {
			if s.ns == p.Namespace && s.sel.Matches(labels.Set(p.Labels)) {
				spread[key][zoneOf[r.Node]]++
			}
		}
		if k := controllerKey(p); owners[k] {
			spread[k][zoneOf[r.Node]]++
		}
	}
	return pods, spread
}

// daemonRequests are, per candidate, the requests of the DaemonSet pods a
// new node of it gets, and their count as pods, and those pods (of a node
// named kubesched-daemon-probe-<type>-<zone>; c: a loaded cluster the
// call changes, joining a node of each usable candidate).
func daemonRequests(c *cluster.Cluster, types []NodeType, usable []bool) ([]v1.ResourceList, [][]*v1.Pod, error) {
	out := make([]v1.ResourceList, len(types))
	probes := make([][]*v1.Pod, len(types))
	var nodes []*v1.Node
	at := map[string]int{}
	for i, t := range types {
		if !usable[i] {
			continue
		}
		tmpl := t.Node.DeepCopy()
		tmpl.Name = "kubesched-daemon-probe-" + t.Type + "-" + t.Zone
		n := NodeCopies(tmpl, 1, c)[0]
		at[n.Name] = i
		nodes = append(nodes, n)
	}
	pods := c.JoinNodes(nodes)
	if err := loading.DefaultPods(c, pods); err != nil {
		return nil, nil, err
	}
	for _, p := range pods {
		i, ok := at[cluster.DaemonPodNode(p)]
		if !ok {
			continue
		}
		probes[i] = append(probes[i], p)
		if out[i] == nil {
			out[i] = v1.ResourceList{}
		}
		for r, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			sum := out[i][r]
			sum.Add(q)
			out[i][r] = sum
		}
		n := out[i][v1.ResourcePods]
		n.Add(*resource.NewQuantity(1, resource.DecimalSI))
		out[i][v1.ResourcePods] = n
	}
	return out, probes, nil
}

// sumCounts is how many nodes counts adds.
func sumCounts(counts []int) int {
	n := 0
	for _, k := range counts {
		n += k
	}
	return n
}

// plus is a + b, a new slice.
func plus(a, b []int) []int {
	out := make([]int, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

// propose packs the pending pods of cur onto new nodes on top of counts
// (the relaxation's optimum, rounded), lets the scheduler place them by
// simulation, and repairs what it leaves pending: the nodes the pending
// pods need, packed the same way (twice, four, eight times as many after
// a round that left some pending), until nothing is pending or four
// rounds in a row place no more; of the last round's nodes it keeps the
// fewest (taken round-robin over their candidates) with which nothing is
// pending. It returns the counts reached and their simulation.
func (s *nodeTypeSearch) propose(space *packSpace, counts []int, cur *nodeTypeWorld) ([]int, *nodeTypeWorld, error) {
	for round, growth, stalled := 0, 0, 0; s.short(cur) > 0 && stalled < 4; round++ {
		add := space.pack(s.needing(cur), cur.spread, cur.onNew, counts)
		if sumCounts(add) == 0 {
			break
		}
		// A repair that places nothing more, or not all, is followed by
		// one of twice, four and eight times the nodes (the scheduler
		// puts other pods on new nodes too): a few rounds, not one per
		// node, on a large cluster.
		for k := range add {
			add[k] <<= growth
			add[k] = min(add[k], max(0, s.types[k].Limit-counts[k]))
		}
		all := plus(counts, add)
		w, err := s.eval(all)
		if err != nil {
			return nil, nil, err
		}
		if s.short(w) >= s.short(cur) {
			stalled++
			growth = min(growth+1, 3)
			continue
		}
		stalled = 0
		next := all
		// On the settled cluster (a large one: a simulation costs
		// seconds there) the round's nodes are kept: the finishing steps
		// drop the least used ones, a few simulations, where the fewest
		// of them would take a bisection's worth.
		if round > 0 && s.short(w) == 0 && s.settled == nil {
			// The fewest of the added nodes that leave none pending.
			order := roundRobin(add)
			k, err := fewestFitting(len(order), 0, func(k int) (bool, error) {
				w, err := s.eval(plus(counts, countsOf(order[:k], len(add))))
				return err == nil && s.short(w) == 0, err
			}, nil)
			if err != nil {
				return nil, nil, err
			}
			next = plus(counts, countsOf(order[:k], len(add)))
			if w, err = s.eval(next); err != nil {
				return nil, nil, err
			}
		} else if s.short(w) > 0 {
			growth = min(growth+1, 3)
		}
		s.trace("propose", next, w)
		counts, cur = next, w
	}
	return counts, cur, nil
}

// roundRobin lists the nodes of add one per candidate in turn: a prefix
// of it takes from every candidate alike.
func roundRobin(add []int) []int {
	left := slices.Clone(add)
	var out []int
	for more := true; more; {
		more = false
		for i := range left {
			if left[i] > 0 {
				out = append(out, i)
				left[i]--
				more = true
			}
		}
	}
	return out
}

// countsOf counts the candidates of nodes.
func countsOf(nodes []int, n int) []int {
	out := make([]int, n)
	for _, i := range nodes {
		out[i]++
	}
	return out
}

// dropEachMax is how many new nodes an answer may have for dropEach to
// run: a simulation per candidate per sweep, it finishes small answers
// (where one node is a large share of the cost) and would dominate the
// time of large ones, where dropLeastUsed has done most of its work.
const dropEachMax = 40

// dropEach drops nodes while the scheduler leaves no more pods pending,
// one at a time, the most expensive candidate first, until no candidate
// can lose one.
func (s *nodeTypeSearch) dropEach(counts []int, cur *nodeTypeWorld) ([]int, *nodeTypeWorld, error) {
	order := make([]int, len(s.types))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return s.types[order[a]].Cost > s.types[order[b]].Cost })
	for dropped := true; dropped; {
		dropped = false
		for _, i := range order {
			for counts[i] > 0 {
				c := append([]int(nil), counts...)
				c[i]--
				w, err := s.eval(c)
				if err != nil {
					return nil, nil, err
				}
				if s.short(w) > s.short(cur) {
					break
				}
				counts, cur, dropped = c, w, true
			}
		}
	}
	return counts, cur, nil
}

// dropLeastUsed drops the new nodes the scheduler used least (by the
// largest share of a resource their pods take), as many as it can while
// the scheduler leaves no more pods pending: a gallop then a bisection
// over how many, up to a quarter of the nodes.
func (s *nodeTypeSearch) dropLeastUsed(counts []int, cur *nodeTypeWorld) ([]int, *nodeTypeWorld, error) {
	if s.space == nil || len(cur.nodes) < 2 {
		return counts, cur, nil
	}
	type use struct {
		cand, node int
		share      float64
	}
	uses := make([]use, 0, len(cur.nodes))
	for i, n := range cur.nodes {
		uses = append(uses, use{n.cand, i, s.space.share(n)})
	}
	sort.SliceStable(uses, func(a, b int) bool { return uses[a].share < uses[b].share })
	without := func(m int) []int {
		c := append([]int(nil), counts...)
		for _, u := range uses[:m] {
			c[u.cand]--
		}
		return c
	}
	// Gallop up from one node (one simulation when none can go), then
	// bisect.
	lo, hi := 0, len(uses)/4+1 // lo can go; hi cannot (or is past the cap)
	ok := func(m int) (bool, error) {
		w, err := s.eval(without(m))
		s.traceStep(fmt.Sprintf("drop the %d least used: %d pending", m, len(w.pending)))
		return err == nil && s.short(w) <= s.short(cur), err
	}
	start := 1
	if s.settled != nil {
		// On the settled cluster (a large one: a simulation costs
		// seconds), the gallop starts at what the packer says can go.
		ordered := make([]newNode, len(uses))
		for i, u := range uses {
			ordered[i] = cur.nodes[u.node]
		}
		start = max(1, s.space.canGo(ordered, hi-1))
	}
	for m := start; m < hi; m *= 2 {
		fit, err := ok(m)
		if err != nil {
			return nil, nil, err
		}
		if !fit {
			hi = m
			break
		}
		lo = m
		if start > 1 {
			// The packer's count fits: it knows of no room for more
			// (and the scheduler packs no tighter than it).
			hi = m + 1
			break
		}
	}
	if lo == 0 && start > 1 && hi == start {
		// The estimate did not fit: one node, then the bisection below
		// the estimate.
		fit, err := ok(1)
		if err != nil {
			return nil, nil, err
		}
		if !fit {
			hi = 1
		} else {
			lo = 1
		}
	}
	// On the settled cluster (a large one), the bisection stops within
	// an eighth of what can go: a few simulations of seconds each for
	// a node or two more.
	within := func() int {
		if s.settled == nil {
			return 1
		}
		return max(1, lo/8)
	}
	for hi-lo > within() {
		m := (lo + hi) / 2
		fit, err := ok(m)
		if err != nil {
			return nil, nil, err
		}
		if fit {
			lo = m
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return counts, cur, nil
	}
	c := without(lo)
	w, err := s.eval(c)
	if err != nil {
		return nil, nil, err
	}
	s.trace("dropped least used", c, w)
	return c, w, nil
}

// share is the largest share of a resource of n's candidate that its
// pods take (DaemonSet pods aside).
func (s *packSpace) share(n newNode) float64 {
	used := make([]int64, len(s.res))
	for _, p := range n.pods {
		for j, v := range s.demand(p) {
			if j < len(used) {
				used[j] += v
			}
		}
	}
	out := 0.0
	for j, u := range used {
		if j >= len(s.room[n.cand]) {
			continue
		}
		if r := s.room[n.cand][j]; r > 0 && r < 1<<61 {
			out = math.Max(out, float64(u)/float64(r))
		}
	}
	return out
}

// roundsMaxPending is how many pending pods a question may have for the
// search by rounds to run beside the packer's proposal: it simulates
// each type alone at several counts per round, affordable while
// simulations are small.
const roundsMaxPending = 400

// roundsMaxPods is how many pods (bound or not) the cluster may hold for
// the search by rounds: each round tries every type at up to hundreds of
// nodes, and each of those simulations costs about the cluster's pods
// times its nodes (108 pending pods among 1,000 on 62 nodes, 27 types:
// its rounds ran past 8 minutes; the proposal's answer took 3 s).
const roundsMaxPods = 600

// finish removes what an answer does not need: the nodes holding no pod,
// each node made the cheapest candidate holding its pods, the least used
// nodes, and (on small answers) any one node.
func (s *nodeTypeSearch) finish(counts []int, cur *nodeTypeWorld) ([]int, *nodeTypeWorld, error) {
	var err error
	if counts, cur, err = s.pruneEmpty(counts, cur); err != nil {
		return nil, nil, err
	}
	if counts, cur, err = s.shrink(s.space, counts, cur); err != nil {
		return nil, nil, err
	}
	if counts, cur, err = s.dropLeastUsed(counts, cur); err != nil {
		return nil, nil, err
	}
	if sumCounts(counts) <= dropEachMax {
		if counts, cur, err = s.dropEach(counts, cur); err != nil {
			return nil, nil, err
		}
	}
	return counts, cur, nil
}

// cost is what counts cost per hour.
func (s *nodeTypeSearch) cost(counts []int) float64 { return costOf(s.types, counts) }

// costOf is what counts of types cost per hour.
func costOf(types []NodeType, counts []int) float64 {
	c := 0.0
	for i, k := range counts {
		c += float64(k) * types[i].Cost
	}
	return c
}

// pruneEmpty leaves out the new nodes of cur that hold no pod but
// DaemonSet pods, when the scheduler then leaves no more pods pending.
func (s *nodeTypeSearch) pruneEmpty(counts []int, cur *nodeTypeWorld) ([]int, *nodeTypeWorld, error) {
	counts, cur, err := s.keepWhileNoWorse(counts, cur, func(next []int, cur *nodeTypeWorld) bool {
		empty := false
		for _, n := range cur.nodes {
			if len(n.pods) == 0 && next[n.cand] > 0 {
				next[n.cand]--
				empty = true
			}
		}
		return empty
	})
	if err == nil {
		s.trace("pruned", counts, cur)
	}
	return counts, cur, err
}

// keepWhileNoWorse applies change to a copy of counts (it says whether it
// changed anything, from cur, counts' simulation), keeps the result while
// the scheduler then leaves no more pods pending, and tries again from
// it, three times at most.
func (s *nodeTypeSearch) keepWhileNoWorse(counts []int, cur *nodeTypeWorld, change func(next []int, cur *nodeTypeWorld) bool) ([]int, *nodeTypeWorld, error) {
	for range 3 {
		next := slices.Clone(counts)
		if !change(next, cur) {
			break
		}
		w, err := s.eval(next)
		if err != nil {
			return nil, nil, err
		}
		if s.short(w) > s.short(cur) {
			break
		}
		counts, cur = next, w
	}
	return counts, cur, nil
}

// shrink makes each new node of cur the cheapest candidate of its zone
// that holds the pods the scheduler put on it (with its DaemonSet pods),
// and keeps the change when the scheduler then leaves no more pods
// pending.
func (s *nodeTypeSearch) shrink(space *packSpace, counts []int, cur *nodeTypeWorld) ([]int, *nodeTypeWorld, error) {
	return s.keepWhileNoWorse(counts, cur, func(next []int, cur *nodeTypeWorld) bool {
		changed := false
		for _, n := range cur.nodes {
			if len(n.pods) == 0 {
				continue
			}
			j := space.cheapestHolding(n)
			if j < 0 || j == n.cand || s.types[j].Cost >= s.types[n.cand].Cost || next[j] >= s.types[j].Limit {
				continue
			}
			next[n.cand]--
			next[j]++
			changed = true
		}
		return changed
	})
}

// cheapestHolding is the cheapest candidate in n's zone that every pod of
// n could run on and that holds them all; -1 when none.
func (s *packSpace) cheapestHolding(n newNode) int {
	zone := s.types[n.cand].Zone
	used := make([]int64, len(s.res))
	var cands []bool
	for _, p := range n.pods {
		d := s.demand(p)
		for len(used) < len(d) {
			used = append(used, 0)
		}
		for j, v := range d {
			used[j] += v
		}
		c := s.candidates(p)
		if cands == nil {
			cands = append([]bool(nil), c...)
		} else {
			for i := range cands {
				cands[i] = cands[i] && c[i]
			}
		}
	}
	best := -1
	for i, t := range s.types {
		if !cands[i] || t.Zone != zone || s.room[i] == nil {
			continue
		}
		fits := true
		for j, u := range used {
			if j < len(s.room[i]) && u > s.room[i][j] {
				fits = false
				break
			}
		}
		if fits && (best < 0 || t.Cost < s.types[best].Cost) {
			best = i
		}
	}
	return best
}

// hasDeviceClasses: the input has a DeviceClass (an extended resource a
// node lacks may come from it).
func hasDeviceClasses(c *cluster.Cluster) bool {
	for _, o := range c.Others {
		if _, ok := o.(*resourceapi.DeviceClass); ok {
			return true
		}
	}
	return false
}

// trace writes a step of the search to the standard error when
// KUBESCHED_TRACE_PLAN is set (for studying the search, not a
// user-facing output): "pods" adds each pending pod, "exact" each vector
// the exact search simulates.
func (s *nodeTypeSearch) trace(step string, counts []int, w *nodeTypeWorld) {
	if os.Getenv("KUBESCHED_TRACE_PLAN") == "" {
		return
	}
	var parts []string
	for i, k := range counts {
		if k > 0 {
			parts = append(parts, fmt.Sprintf("%s/%s=%d", s.types[i].Type, s.types[i].Zone, k))
		}
	}
	fmt.Fprintf(os.Stderr, "%s sims=%d: %s: %.3f/h, %d nodes, %d pending: %s\n", time.Now().Format("15:04:05.000"), len(s.memo), step, s.cost(counts), sumCounts(counts), len(w.pending), strings.Join(parts, " "))
	if os.Getenv("KUBESCHED_TRACE_PLAN") == "pods" {
		for _, p := range w.pending {
			fmt.Fprintf(os.Stderr, "  pending %s/%s: %s\n", p.Namespace, p.Name, p.Message)
		}
	}
}

// traceStep writes a step without counts (as trace).
func (s *nodeTypeSearch) traceStep(step string) {
	if os.Getenv("KUBESCHED_TRACE_PLAN") != "" {
		fmt.Fprintf(os.Stderr, "%s sims=%d: %s\n", time.Now().Format("15:04:05.000"), len(s.memo), step)
	}
}

// balance spreads each type's nodes evenly over the zones it is offered
// in (counts differing by one at most, as cluster-autoscaler's
// balance-similar-node-groups keeps similar groups), then adds nodes
// where the scheduler leaves pods pending (pods pinned to a zone need
// that zone's), as the proposal's repair does. It keeps counts when that
// leaves more pods pending than they do.
func (s *nodeTypeSearch) balance(counts []int, cur *nodeTypeWorld) ([]int, *nodeTypeWorld, error) {
	byType := map[string][]int{}
	var names []string
	for i, t := range s.types {
		if s.space != nil && s.space.room[i] == nil {
			continue
		}
		if _, ok := byType[t.Type]; !ok {
			names = append(names, t.Type)
		}
		byType[t.Type] = append(byType[t.Type], i)
	}
	even := slices.Clone(counts)
	raised := slices.Clone(counts)
	for _, name := range names {
		at := byType[name]
		total := 0
		for _, i := range at {
			total += counts[i]
		}
		if total == 0 || len(at) < 2 {
			continue
		}
		// The zones holding the most get the remainder's extra node.
		order := slices.Clone(at)
		sort.SliceStable(order, func(a, b int) bool { return counts[order[a]] > counts[order[b]] })
		for r, i := range order {
			share := total / len(at)
			if r < total%len(at) {
				share++
			}
			even[i] = min(share, s.types[i].Limit)
			raised[i] = max(counts[i], min((total+len(at)-1)/len(at), s.types[i].Limit))
		}
	}
	w, err := s.eval(even)
	if err != nil || s.short(w) <= s.short(cur) {
		return even, w, err
	}
	// Nodes where the even split leaves pods pending (pods pinned to a
	// zone need their zone's), as the proposal's repair adds them.
	c, w, err := s.propose(s.space, even, w)
	if err != nil || s.short(w) > s.short(cur) {
		return counts, cur, err
	}
	return c, w, nil
}
