package questions

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// The annotations of a node type (a Node manifest given to capacity
// --node-types) and of the cluster's nodes (consolidate's prices).
const (
	// HourlyCostAnnotation is a node's price per hour, a decimal string.
	HourlyCostAnnotation = "simulation.kubesched.io/hourly-cost"
	// ZonesAnnotation lists the zones a node type is offered in, comma
	// separated; without it, the type is offered in its own zone label's
	// zone (or in none).
	ZonesAnnotation = "simulation.kubesched.io/zones"
	// MaxPerZoneAnnotation bounds how many nodes of a type may be added in
	// each zone.
	MaxPerZoneAnnotation = "simulation.kubesched.io/max-per-zone"
)

// NodeType is one candidate: a Node template in one zone, its price and
// how many may be added.
type NodeType struct {
	Type  string
	Zone  string
	Node  *v1.Node
	Cost  float64
	Limit int
}

// NodeTypes reads the candidates of a --node-types file: every Node of it
// must have a price; each is offered in each of its zones. maxNodes bounds
// the types without a limit of their own.
func NodeTypes(c *cluster.Cluster, file string, maxNodes int) ([]NodeType, error) {
	if len(c.Nodes) == 0 {
		return nil, fmt.Errorf("%s: no Node: give each node type as a Node manifest with the %s annotation", file, HourlyCostAnnotation)
	}
	var out []NodeType
	for _, n := range c.Nodes {
		src := c.NodeSources[n.Name]
		fail := func(field, msg string) error {
			return loading.SourceError(src, "Node "+n.Name, fmt.Errorf("%s: %s", field, msg))
		}
		price, ok := n.Annotations[HourlyCostAnnotation]
		if !ok {
			return nil, fail("metadata.annotations["+HourlyCostAnnotation+"]", "Required value: a node type needs its price per hour, e.g. \"0.192\"")
		}
		cost, err := strconv.ParseFloat(strings.TrimSpace(price), 64)
		if err != nil || cost < 0 || math.IsInf(cost, 0) || math.IsNaN(cost) {
			return nil, fail("metadata.annotations["+HourlyCostAnnotation+"]", fmt.Sprintf("Invalid value: %q: want a decimal price per hour, 0 or more", price))
		}
		limit := maxNodes
		if s, ok := n.Annotations[MaxPerZoneAnnotation]; ok {
			l, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || l < 0 {
				return nil, fail("metadata.annotations["+MaxPerZoneAnnotation+"]", fmt.Sprintf("Invalid value: %q: want a whole number of nodes, 0 or more", s))
			}
			limit = min(l, maxNodes)
		}
		zones := []string{n.Labels[v1.LabelTopologyZone]}
		if s, ok := n.Annotations[ZonesAnnotation]; ok {
			zones = nil
			seen := map[string]bool{}
			for _, z := range strings.Split(s, ",") {
				if z = strings.TrimSpace(z); z == "" {
					continue
				}
				if seen[z] {
					// Listed twice, the type would be offered twice in
					// the zone: twice its limit there.
					return nil, fail("metadata.annotations["+ZonesAnnotation+"]", fmt.Sprintf("Duplicate value: %q", z))
				}
				seen[z] = true
				zones = append(zones, z)
			}
			if len(zones) == 0 {
				return nil, fail("metadata.annotations["+ZonesAnnotation+"]", fmt.Sprintf("Invalid value: %q: want zones, comma separated", s))
			}
			// A zone label the annotation contradicts would be
			// overwritten for the zones it does not name: refused.
			for _, key := range []string{v1.LabelTopologyZone, v1.LabelFailureDomainBetaZone} {
				if lz, ok := n.Labels[key]; ok && (len(zones) != 1 || zones[0] != lz) {
					return nil, fail("metadata.labels["+key+"]", fmt.Sprintf("Invalid value: %q: contradicts %s %q; leave the label out: each zone of the annotation labels its nodes", lz, ZonesAnnotation, s))
				}
			}
		}
		for _, z := range zones {
			tmpl := n.DeepCopy()
			if z != "" {
				if tmpl.Labels == nil {
					tmpl.Labels = map[string]string{}
				}
				tmpl.Labels[v1.LabelTopologyZone] = z
			}
			out = append(out, NodeType{Type: n.Name, Zone: z, Node: tmpl, Cost: cost, Limit: limit})
		}
	}
	return out, nil
}

// NodeTypesResult is capacity --node-types' answer.
type NodeTypesResult struct {
	Add        []NodeTypeCount `json:"add"`
	HourlyCost float64         `json:"hourlyCost"`
	// Scheduled counts the pending pods the added nodes let schedule;
	// Spared, the pods preempted without them that keep their place.
	Scheduled int `json:"scheduled"`
	Spared    int `json:"spared,omitempty"`
	// Pending are the pods no candidate can run, with why.
	Pending []PendingPod `json:"pending"`
}

// NodeTypeCount is how many nodes of a type to add in a zone, their cost
// and the pods placed on them.
type NodeTypeCount struct {
	Type       string  `json:"type"`
	Zone       string  `json:"zone"`
	Count      int     `json:"count"`
	HourlyCost float64 `json:"hourlyCost"`
	Pods       int     `json:"pods"`
}

// PendingPod is a pod left pending, and why.
type PendingPod struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

// nodeTypeWorld is what a simulation with some new nodes left.
type nodeTypeWorld struct {
	// pending are the pods left without a place (unplaced's).
	pending []report.PodResult
	// placed counts, per candidate, the pods (DaemonSet pods aside) bound
	// to its new nodes.
	placed []int
	// placedAll and placedRequests are, per candidate, all the pods bound
	// to its new nodes and the sums of their requests in milli-units (for
	// nodesHint).
	placedAll      []int
	placedRequests []map[v1.ResourceName]int64
}

// nodeTypeSearch runs the simulations of a search.
type nodeTypeSearch struct {
	ctx      context.Context
	load     func() (*cluster.Cluster, error)
	newWorld func(*cluster.Cluster) (*simulator.World, error)
	types    []NodeType
	// target says which pending pods count (nil: all).
	target func(*simulator.World, *v1.Pod) bool
	// workers is how many simulations run at once (the types of a round
	// are tried side by side).
	workers int

	// floor is how many pods stay pending with every type at its limit:
	// no counts leave fewer.
	floor int

	// memo holds the simulations done, by counts: a round's chosen counts
	// were one of its tries, and dropping asks again for counts it has
	// seen.
	mu   sync.Mutex
	memo map[string]*nodeTypeWorld
}

// eval simulates the cluster with counts[i] nodes of types[i] added, or
// returns what it found the last time it was asked for counts. It is safe
// for concurrent use: each simulation loads its own cluster.
func (s *nodeTypeSearch) eval(counts []int) (*nodeTypeWorld, error) {
	key := fmt.Sprint(counts)
	s.mu.Lock()
	w, ok := s.memo[key]
	s.mu.Unlock()
	if ok {
		return w, nil
	}
	w, err := s.simulate(counts)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.memo[key] = w
	s.mu.Unlock()
	return w, nil
}

// simulate is eval without the memo.
func (s *nodeTypeSearch) simulate(counts []int) (*nodeTypeWorld, error) {
	c, err := s.load()
	if err != nil {
		return nil, err
	}
	owner := map[string]int{} // new node -> candidate
	var joined []*v1.Node
	for i, k := range counts {
		if k == 0 {
			continue
		}
		t := s.types[i]
		tmpl := t.Node.DeepCopy()
		if t.Zone != "" {
			tmpl.Name = t.Type + "-" + t.Zone
		}
		// Each candidate's copies are named after it (<type>-<zone>-new-<i>):
		// apart from the cluster's nodes and the other candidates'.
		for _, n := range NodeCopies(tmpl, k, c) {
			owner[n.Name] = i
			joined = append(joined, n)
		}
	}
	if err := joinNodes(c, joined); err != nil {
		return nil, err
	}
	w, err := s.newWorld(c)
	if err != nil {
		return nil, err
	}
	if err := w.Run(s.ctx); err != nil {
		return nil, err
	}
	pods := w.PodResults()
	added := make(map[string]bool, len(owner))
	for n := range owner {
		added[n] = true
	}
	out := &nodeTypeWorld{pending: unplaced(w, pods, s.target, added), placed: make([]int, len(counts)),
		placedAll: make([]int, len(counts)), placedRequests: make([]map[v1.ResourceName]int64, len(counts))}
	for _, p := range pods {
		i, ok := owner[p.Node]
		if !ok || p.Status != report.StatusScheduled {
			continue
		}
		pod, ok := w.Store.GetPod(p.Namespace, p.Name)
		if ok {
			out.placedAll[i]++
			if out.placedRequests[i] == nil {
				out.placedRequests[i] = map[v1.ResourceName]int64{}
			}
			for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}) {
				out.placedRequests[i][name] += q.MilliValue()
			}
		}
		if ok && (cluster.IsDaemonSetPod(pod) || (s.target != nil && !s.target(w, pod))) {
			continue
		}
		out.placed[i]++
	}
	return out, s.ctx.Err()
}

// NodeTypesOptions shape CheapestNodes' search.
type NodeTypesOptions struct {
	// Target says which pending pods count (nil: all).
	Target func(*simulator.World, *v1.Pod) bool
	// ResourcesIgnored: the configuration has NodeResourcesFit ignore
	// some resources (its ignoredResources or ignoredResourceGroups, or an
	// extender's managed resource ignoredByScheduler): a node type without
	// an extended resource a pod requests may still run it.
	ResourcesIgnored bool
}

// CheapestNodes answers capacity --node-types: a cheap set of new nodes
// among types that lets every pending pod (those target accepts, when
// set) schedule, and the pods that no type can ever run. Every count is
// decided by simulating the whole cluster with the scheduler:
//
//  1. The floor: with every type added up to its limit (or as many nodes
//     as there are pending pods), the pods still pending can run on no
//     type; they are reported with their reason, and the search aims at
//     leaving only them.
//  2. Bin packing by the scheduler, type by type: each round tries every
//     type alone on top of what was chosen, searching for the fewest nodes
//     of it that place all it can place (from the count the previous round
//     found for it, or in the first round the count its pods' requests
//     need), and keeps the type that places the most pods per unit of
//     cost. A type that placed nothing in a round is left out of the next
//     while another places more. The types' tries run side by side, one per
//     core (each simulation holds a whole cluster), and no counts are
//     simulated twice.
//
// A type no pod to schedule could run on (usableTypes) is left out of
// every step.
//  3. Dropping: one node at a time, the most expensive first, each removal
//     kept when nothing more is left pending, until no node can go: with
//     any one node of the answer removed, some pod does not schedule.
func CheapestNodes(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), types []NodeType, opts NodeTypesOptions) (*NodeTypesResult, error) {
	s := &nodeTypeSearch{ctx: ctx, load: load, newWorld: newWorld, types: types, target: opts.Target, workers: runtime.GOMAXPROCS(0), memo: map[string]*nodeTypeWorld{}}
	none := make([]int, len(types))
	before, err := s.eval(none)
	if err != nil {
		return nil, err
	}
	res := &NodeTypesResult{Add: []NodeTypeCount{}, Pending: []PendingPod{}}
	if len(before.pending) == 0 {
		return res, nil
	}
	c, err := load()
	if err != nil {
		return nil, err
	}
	usable := usableTypes(c, types, opts.ResourcesIgnored)
	limitOf := func(i int) int {
		if !usable[i] {
			return 0
		}
		return min(types[i].Limit, len(before.pending))
	}
	all := make([]int, len(types))
	for i := range types {
		all[i] = limitOf(i)
	}
	floorWorld, err := s.eval(all)
	if err != nil {
		return nil, err
	}
	s.floor = len(floorWorld.pending)
	counts := make([]int, len(types))
	cur := before
	var tries []typeTry // the last round's: where this round's searches start
	for len(cur.pending) > s.floor {
		// Each type is tried alone on top of counts; the tries are
		// independent simulations, run side by side, and compared in the
		// types' order (the answer does not depend on which ends first).
		// A type that placed nothing more in the last round is left out
		// while another places more; when none does, every type is tried
		// again before the search ends.
		skip := func(i int) bool { return tries != nil && tries[i].gain <= 0 }
		if tries, err = s.tryEach(counts, len(cur.pending), limitOf, tries, skip); err != nil {
			return nil, err
		}
		best, bestK := bestTry(types, tries)
		if best < 0 && slices.ContainsFunc(tries, func(t typeTry) bool { return t.skipped }) {
			if tries, err = s.tryEach(counts, len(cur.pending), limitOf, tries, func(i int) bool { return !tries[i].skipped }); err != nil {
				return nil, err
			}
			best, bestK = bestTry(types, tries)
		}
		if best < 0 {
			break // no type places any more pods
		}
		counts[best] += bestK
		if cur, err = s.eval(counts); err != nil {
			return nil, err
		}
	}
	// Drop nodes while nothing more is left pending, the most expensive
	// type first.
	order := make([]int, len(types))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return types[order[a]].Cost > types[order[b]].Cost })
	for dropped := true; dropped; {
		dropped = false
		for _, i := range order {
			for counts[i] > 0 {
				c := append([]int(nil), counts...)
				c[i]--
				w, err := s.eval(c)
				if err != nil {
					return nil, err
				}
				if len(w.pending) > len(cur.pending) {
					break
				}
				counts, cur, dropped = c, w, true
			}
		}
	}
	for i, t := range types {
		if counts[i] == 0 {
			continue
		}
		cost := float64(counts[i]) * t.Cost
		res.Add = append(res.Add, NodeTypeCount{Type: t.Type, Zone: t.Zone, Count: counts[i], HourlyCost: roundCents(cost), Pods: cur.placed[i]})
		res.HourlyCost += cost
	}
	res.HourlyCost = roundCents(res.HourlyCost)
	res.Scheduled = count(before.pending, report.StatusUnschedulable) - count(cur.pending, report.StatusUnschedulable)
	res.Spared = count(before.pending, report.StatusPreempted) - count(cur.pending, report.StatusPreempted)
	for _, p := range cur.pending {
		res.Pending = append(res.Pending, PendingPod{Pod: p.Namespace + "/" + p.Name, Reason: p.Message})
	}
	return res, nil
}

// typeTry is what adding nodes of one type alone does: gain is how many
// fewer pods it leaves pending with as many as it may add, nodes the
// fewest of it that leave as few; skipped, that the round did not try it
// (gain and nodes are the round's before).
type typeTry struct {
	gain, nodes int
	skipped     bool
}

// bestTry is the type whose try places the most pods per unit of cost
// (on a tie, the fewest nodes; then the first), and its nodes; -1 when no
// try places any.
func bestTry(types []NodeType, tries []typeTry) (best, nodes int) {
	best = -1
	var bestRate float64
	for i, t := range types {
		tr := tries[i]
		if tr.gain <= 0 || tr.skipped {
			continue
		}
		rate := math.Inf(1)
		if cost := float64(tr.nodes) * t.Cost; cost > 0 {
			rate = float64(tr.gain) / cost
		}
		if best < 0 || rate > bestRate || (rate == bestRate && tr.nodes < nodes) {
			best, nodes, bestRate = i, tr.nodes, rate
		}
	}
	return best, nodes
}

// tryEach tries every type with room alone on top of counts, s.workers
// at a time, but those skip names (whose last try it keeps, marked
// skipped); pending is how many pods counts leaves pending, and last the
// previous round's tries (nil in the first).
func (s *nodeTypeSearch) tryEach(counts []int, pending int, limitOf func(int) int, last []typeTry, skip func(int) bool) ([]typeTry, error) {
	out := make([]typeTry, len(s.types))
	for i := range out {
		if skip(i) {
			out[i] = last[i]
			out[i].skipped = true
		}
	}
	errs := make([]error, len(s.types))
	next := make(chan int)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range max(1, min(s.workers, len(s.types))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				hint := 0
				if last != nil {
					hint = last[i].nodes
				}
				if out[i], errs[i] = s.tryType(counts, i, limitOf(i)-counts[i], pending, hint); errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	for i := range s.types {
		if failed.Load() {
			break // a simulation failed: start no more
		}
		if !out[i].skipped {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}

// tryType searches for the fewest nodes of type i (room at most) that
// leave as few pods pending as room of them do.
//
// hint, when not 0, is what the previous round found for the type, on
// fewer nodes of the other types: the answer is most often the same or a
// little less. The search then starts there and gallops (1, 2, 4, ...
// nodes away) to a bracket before it bisects: 3 simulations when nothing
// changed, where a bisection from scratch takes log2(room). Either way the
// answer is a count k that places as many pods as room nodes and k-1 does
// not; when that is true of one k only (more nodes never leave more pods
// pending), both find it.
func (s *nodeTypeSearch) tryType(counts []int, i, room, pending, hint int) (typeTry, error) {
	if room <= 0 {
		return typeTry{}, nil
	}
	try := func(k int) (*nodeTypeWorld, error) {
		c := slices.Clone(counts)
		c[i] += k
		return s.eval(c)
	}
	// Where the last round found an answer, a few more nodes than it most
	// often leave as few pods pending as the floor: no count can leave
	// fewer, so the search needs no simulation of room nodes.
	var most *nodeTypeWorld
	if k := hint + hint/8 + 1; hint > 0 && k < room {
		w, err := try(k)
		if err != nil {
			return typeTry{}, err
		}
		if len(w.pending) <= s.floor {
			most, room = w, k
		}
	}
	if most == nil {
		var err error
		if most, err = try(room); err != nil {
			return typeTry{}, err
		}
	}
	gain := pending - len(most.pending)
	if gain <= 0 {
		return typeTry{}, nil
	}
	if hint == 0 {
		hint = nodesHint(most, i, s.types[i])
	}
	nodes, err := fewestFitting(room, hint, func(k int) (bool, error) {
		w, err := try(k)
		if err != nil {
			return false, err
		}
		return len(w.pending) <= len(most.pending), nil
	}, func(k int) int {
		// k nodes leave some pods pending: as many more nodes as hold
		// them at the pods per node placed on these.
		w, err := try(k) // simulated already: the memo's
		if err != nil || w.placed[i] == 0 {
			return 0
		}
		short := len(w.pending) - len(most.pending)
		return k + (short*k+w.placed[i]-1)/w.placed[i]
	})
	return typeTry{gain: gain, nodes: nodes}, err
}

// fewestFitting finds a k in 1..room with fits(k) and not fits(k-1),
// fits(room) and not fits(0) being given, starting at hint when it is in
// 1..room-1 (see tryType). When fits holds from one count on, k is that
// count.
//
// estimate, when not nil, guesses from a count that does not fit the
// fewest that do (tryType: from the pods still pending and the pods per
// node placed). After a count that does not fit, the next probe is the
// guess, and when the guess fits, one less is tried next: a good guess
// ends the search in two simulations. A guess that does not fit is
// followed by a bisection step, and a bisection step follows every
// confirmed guess, so that poor guesses cost a few bisections' worth of
// simulations at most.
func fewestFitting(room, hint int, fits func(int) (bool, error), estimate func(int) int) (int, error) {
	lo, hi := 0, room // lo does not fit, hi does
	// probe asks about k, lo < k < hi, and narrows the bracket.
	probe := func(k int) (bool, error) {
		fit, err := fits(k)
		if err == nil {
			if fit {
				hi = k
			} else {
				lo = k
			}
		}
		return fit, err
	}
	const (
		plain     = iota // bisect
		guess            // lo just failed: probe the estimate
		confirm          // the estimate fitted: probe one less
		afterMiss        // an estimate failed: bisect once, then guess
	)
	mode := plain
	if hint > 0 && hint < room {
		ok, err := probe(hint)
		if err != nil {
			return 0, err
		}
		if !ok && estimate != nil {
			mode = guess
		} else {
			// Gallop away from the hint, 1, 2, 4, ... counts at a time,
			// until the answer is bracketed.
			for step := 1; hi-lo > 1; step *= 2 {
				k := hi - step
				if !ok {
					k = lo + step
				}
				if k <= lo || k >= hi {
					break
				}
				fit, err := probe(k)
				if err != nil {
					return 0, err
				}
				if fit != ok {
					break
				}
			}
		}
	}
	for hi-lo > 1 {
		k, next := (lo+hi)/2, plain
		switch {
		case mode == guess && estimate != nil && lo > 0:
			if e := estimate(lo); e > lo {
				k, next = min(e, hi-1), confirm
			}
		case mode == confirm:
			k = hi - 1
		case mode == afterMiss:
			next = guess
		}
		fit, err := probe(k)
		if err != nil {
			return 0, err
		}
		switch {
		case next == confirm && !fit:
			mode = afterMiss
		case next == confirm:
			mode = confirm
		case !fit && estimate != nil && (mode == plain || next == guess):
			mode = guess
		default:
			mode = plain
		}
	}
	return hi, nil
}

// OfWorkload is a CheapestNodes target: the pods of one workload.
func OfWorkload(kind, ns, name string) func(*simulator.World, *v1.Pod) bool {
	return func(w *simulator.World, p *v1.Pod) bool {
		// WorkloadOf indexes Cluster.Workloads (DaemonSets first), not the
		// input order WorkloadIndex counts in: compare the workloads.
		i, ok := w.Cluster.WorkloadOf[cluster.PodKey(p)]
		if !ok || i < 0 || i >= len(w.Cluster.Workloads) {
			return false
		}
		wl := w.Cluster.Workloads[i]
		return wl.Kind == kind && wl.Namespace == ns && wl.Name == name
	}
}

// roundCents rounds a price to a hundredth of a cent, so that sums of
// decimal prices print as the decimals they are.
func roundCents(x float64) float64 { return math.Round(x*10000) / 10000 }

// RoundCents rounds a cost as the answers do (to 1/10000).
func RoundCents(x float64) float64 { return roundCents(x) }

// NodeHourlyCost is an existing node's price per hour, from its
// HourlyCostAnnotation: 0 when absent or not a number (consolidate's
// saving).
func NodeHourlyCost(n *v1.Node) float64 {
	cost, _ := strconv.ParseFloat(strings.TrimSpace(n.Annotations[HourlyCostAnnotation]), 64)
	return cost
}
