package questions

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/internal/gcpace"
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
	// LowerBound is the cost of the cheapest fractional nodes whose room
	// (their DaemonSet pods' requests aside) holds the requests of the
	// pods pending without new nodes, each pod on candidates it could run
	// on, in every resource the pods request: no answer costs less (0:
	// not known, e.g. a pod no candidate could run).
	LowerBound float64 `json:"lowerBound,omitempty"`
	// Limits names the candidates whose limit the answer reached while
	// pods stayed pending ("type in zone").
	Limits []string `json:"limitsReached,omitempty"`
	// NodesJoin says when the simulations that decided the answer had
	// the new nodes join: JoinAtStart (there from the start, as simulate
	// of the cluster with them added) or JoinSettled (once the scheduler
	// has placed what the existing nodes take; nodetypes_settled.go).
	NodesJoin string `json:"nodesJoin"`
	// Orders is how many other orders of the new nodes (their names, the
	// order they join in and the scheduler's draws between equally
	// scored nodes) the answer was checked in; OrdersShort, how many of
	// them leave more pods pending than the answer does (0 unless the
	// limits stopped the repair).
	Orders      int `json:"orders,omitempty"`
	OrdersShort int `json:"ordersShort,omitempty"`
}

// When the new nodes join, in the simulations of capacity --node-types.
const (
	JoinAtStart = "start"
	JoinSettled = "settled"
)

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
	// pendingPods are pending's pods (what the packer packs), spread the
	// pods bound per zone that each zone spread constraint of theirs
	// selects (by spreadKey), and nodes the new nodes' pods (DaemonSet
	// pods aside), by candidate.
	pendingPods []*v1.Pod
	spread      map[string]map[string]int
	// onNew are the pending DaemonSet pods of new nodes, with their
	// node's candidate: the pods that took their room need another node
	// of it.
	onNew map[*v1.Pod]int
	// free is, in a simulation without new nodes, the room the existing
	// nodes have left, summed over them, in milli-units (the exact
	// search's room test: pending pods may land there once others move).
	free  map[v1.ResourceName]int64
	nodes []newNode
}

// newNode is a new node of a simulation: its candidate and its pods,
// DaemonSet pods aside.
type newNode struct {
	cand int
	pods []*v1.Pod
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
	// floorSet are the floor world's pending pods (namespace/name), its
	// new nodes' DaemonSet pods aside: an answer that leaves only pods of
	// it pending leaves only pods some plan must leave (acceptable).
	floorSet map[string]bool
	// floorCost is the most the floor's simulations cost: no answer
	// needs more nodes than they have.
	floorCost float64

	// memo holds the simulations done, by counts: a round's chosen counts
	// were one of its tries, and dropping asks again for counts it has
	// seen.
	mu   sync.Mutex
	memo map[string]*nodeTypeWorld

	// space is the packer's view of the candidates (not safe for
	// concurrent use: the search's own goroutine only).
	space *packSpace

	// settledMin is the size, in existing nodes, from which the search
	// runs on the settled cluster (0: never); settleFrom is the world
	// without new nodes once simulated on such a cluster, settled the
	// settled cluster made of it (nodetypes_settled.go).
	settledMin int
	settleFrom *simulator.World
	settled    *settledBase
	// small: the question has roundsMaxPending pending pods at most;
	// pending is how many pods are pending without new nodes.
	small   bool
	pending int
	// exactRan: the exact search ran (a small question with at most
	// exactMaxPods pending pods and exactMaxCands candidates).
	exactRan bool
	// orders and ordersShort are robust's: the other orders of the new
	// nodes the answer was checked in, and how many of them leave more
	// pods pending.
	orders, ordersShort int
}

// eval simulates the cluster with counts[i] nodes of types[i] added, or
// returns what it found the last time it was asked for counts. It is safe
// for concurrent use: each simulation loads its own cluster.
func (s *nodeTypeSearch) eval(counts []int) (*nodeTypeWorld, error) {
	return s.evalWith(counts, false)
}

// agentsFirstPriority is system-node-critical's priority, which evalWith
// gives the new nodes' DaemonSet pods when asked to place them first.
const agentsFirstPriority = 2000001000

// evalWith is eval; agentsFirst gives the new nodes' DaemonSet pods
// system-node-critical's priority, so that they are placed before every
// other pod (see setFloor).
func (s *nodeTypeSearch) evalWith(counts []int, agentsFirst bool) (*nodeTypeWorld, error) {
	return s.evalJoined(counts, agentsFirst, 0)
}

// evalJoined is evalWith with the new nodes joined in the order of
// variant: 0 is newNodes' order, each other value a shuffle of it (see
// robust).
func (s *nodeTypeSearch) evalJoined(counts []int, agentsFirst bool, variant int) (*nodeTypeWorld, error) {
	settled := s.settled != nil && sumCounts(counts) > 0
	key := s.memoKey(counts, agentsFirst, variant)
	s.mu.Lock()
	w, ok := s.memo[key]
	s.mu.Unlock()
	if ok {
		return w, nil
	}
	var err error
	if settled {
		w, err = s.simulateSettled(counts, agentsFirst, variant)
	} else {
		w, err = s.simulate(counts, agentsFirst, variant)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.memo[key] = w
	s.mu.Unlock()
	return w, nil
}

// memoKey is the memo's key of evalJoined's simulation of counts.
func (s *nodeTypeSearch) memoKey(counts []int, agentsFirst bool, variant int) string {
	settled := s.settled != nil && sumCounts(counts) > 0
	return fmt.Sprint(counts, agentsFirst, settled, variant)
}

// newNodes are the nodes counts adds to c, and the candidate of each.
// Each candidate's copies are named after it (<type>-<zone>-new-<i>):
// apart from the cluster's nodes and the other candidates'. They are in
// the candidates' order, or, when variant is not 0, shuffled by it.
func (s *nodeTypeSearch) newNodes(counts []int, c *cluster.Cluster, variant int) (joined []*v1.Node, owner map[string]int) {
	owner = map[string]int{}
	for i, k := range counts {
		if k == 0 {
			continue
		}
		t := s.types[i]
		tmpl := t.Node.DeepCopy()
		if t.Zone != "" {
			tmpl.Name = t.Type + "-" + t.Zone
		}
		for _, n := range NodeCopies(tmpl, k, c) {
			owner[n.Name] = i
			joined = append(joined, n)
		}
	}
	if variant != 0 {
		joined, owner = renamed(joined, owner, c, variant)
	}
	return joined, owner
}

// renamed is joined shuffled by variant and named in its new order
// (new-<variant>-<i>, apart from c's nodes), owner following: the nodes
// as a cluster might name them and the scheduler meet them, whose ties
// fall by the nodes' order and names.
func renamed(joined []*v1.Node, owner map[string]int, c *cluster.Cluster, variant int) ([]*v1.Node, map[string]int) {
	used := make(map[string]bool, len(c.Nodes))
	for _, n := range c.Nodes {
		used[n.Name] = true
	}
	r := rand.New(rand.NewPCG(uint64(variant), 0))
	r.Shuffle(len(joined), func(a, b int) { joined[a], joined[b] = joined[b], joined[a] })
	out := make(map[string]int, len(owner))
	k := 0
	for _, n := range joined {
		name := ""
		for name == "" || used[name] {
			k++
			name = fmt.Sprintf("new-%d-%05d", variant, k)
		}
		out[name] = owner[n.Name]
		n.Name, n.UID = name, types.UID("node-"+name)
		n.Labels[v1.LabelHostname] = name
	}
	return joined, out
}

// simulate is eval without the memo.
func (s *nodeTypeSearch) simulate(counts []int, agentsFirst bool, variant int) (*nodeTypeWorld, error) {
	c, err := s.load()
	if err != nil {
		return nil, err
	}
	joined, owner := s.newNodes(counts, c, variant)
	if err := joinNodes(c, joined); err != nil {
		return nil, err
	}
	if agentsFirst {
		prio := int32(agentsFirstPriority)
		for _, p := range c.Pods {
			if _, ok := owner[cluster.DaemonPodNode(p)]; ok && cluster.IsDaemonSetPod(p) {
				p.Spec.Priority = &prio
			}
		}
	}
	w, err := s.newWorld(c)
	if err != nil {
		return nil, err
	}
	reseed(w, variant)
	if err := w.Run(s.ctx); err != nil {
		return nil, err
	}
	if len(joined) == 0 && s.settleFrom == nil && s.settledMin > 0 && len(c.Nodes) >= s.settledMin {
		s.settleFrom = w // the world CheapestNodes settles (see settled)
	}
	return s.result(w, counts, owner, joined)
}

// result is what the world w, run with the new nodes joined (owner: the
// candidate of each), left.
func (s *nodeTypeSearch) result(w *simulator.World, counts []int, owner map[string]int, joined []*v1.Node) (*nodeTypeWorld, error) {
	pods := w.PodResults()
	added := make(map[string]bool, len(owner))
	for n := range owner {
		added[n] = true
	}
	out := &nodeTypeWorld{pending: unplaced(w, pods, s.target, added), placed: make([]int, len(counts)),
		placedAll: make([]int, len(counts)), placedRequests: make([]map[v1.ResourceName]int64, len(counts))}
	out.pendingPods, out.spread = pendingAndSpread(w, pods, out.pending)
	if len(joined) == 0 {
		out.free = freeRoom(w)
	}
	for _, p := range out.pendingPods {
		if i, ok := owner[cluster.DaemonPodNode(p)]; ok && cluster.IsDaemonSetPod(p) {
			if out.onNew == nil {
				out.onNew = map[*v1.Pod]int{}
			}
			out.onNew[p] = i
		}
	}
	nodeAt := map[string]int{}
	for _, n := range joined {
		nodeAt[n.Name] = len(out.nodes)
		out.nodes = append(out.nodes, newNode{cand: owner[n.Name]})
	}
	for _, p := range pods {
		i, ok := owner[p.Node]
		if !ok || p.Status != report.StatusScheduled {
			continue
		}
		pod, ok := w.Store.GetPod(p.Namespace, p.Name)
		if ok && !cluster.IsDaemonSetPod(pod) {
			n := &out.nodes[nodeAt[p.Node]]
			n.pods = append(n.pods, pod)
		}
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
	// SettledMinNodes is the size, in existing nodes, from which the
	// search runs on the settled cluster (nodetypes_settled.go); 0 means
	// settledMinNodes, negative never.
	SettledMinNodes int
	// BalanceZones spreads each type's nodes evenly over the zones it is
	// offered in (see balance).
	BalanceZones bool
	// ResourcesIgnored: the configuration has NodeResourcesFit ignore
	// some resources (its ignoredResources or ignoredResourceGroups, or an
	// extender's managed resource ignoredByScheduler): a node type without
	// an extended resource a pod requests may still run it.
	ResourcesIgnored bool
}

// CheapestNodes answers capacity --node-types: a cheap set of new nodes
// among types that lets every pending pod (those target accepts, when
// set) schedule, and the pods that no type can ever run. It proposes as a
// packer would and decides as the scheduler does: every answer is a
// simulation of the whole cluster with the new nodes added (each with the
// DaemonSet pods a joining node gets), and the pods it leaves pending are
// what the answer says it leaves.
//
//  1. The proposal (propose): the pods pending without new nodes are
//     packed from the optimum of the packing's linear relaxation
//     (fractional, with each type's room less its DaemonSet pods'
//     requests): its whole nodes, then the cheapest nodes for the rest.
//     The pods the scheduler leaves pending on it are packed again, and
//     of the nodes added for them the fewest that place as many are kept,
//     until none is left pending or a round places no more.
//  2. Finishing (finish): nodes that hold no pod are dropped, each node
//     made the cheapest type of its zone holding the pods the scheduler
//     put on it, the least used nodes dropped while nothing more is left
//     pending, and, on answers of at most dropEachMax nodes, any one node.
//  3. On small questions (roundsMaxPending pending pods at most), the
//     floor first (setFloor); on those of a cluster of at most
//     roundsMaxPods pods, the search by rounds of types (rounds) runs
//     too, from nothing, its answer kept when cheaper; and then the
//     exact search (exact): every cheaper set of counts whose nodes could
//     hold the pending pods (sizeNeeds, zoneNeeds) is simulated, cheapest
//     first, within bounds; it takes the first that robust's other
//     orders place too (inOrders).
//  4. The answer is simulated in other orders of its new nodes and
//     repaired (robust).
//
// A type no pod to schedule could run on (usableTypes) is left out of
// every step. The answer also carries the relaxation's cost, a lower
// bound of any answer's (LowerBound), and the limits it reached.
func CheapestNodes(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), types []NodeType, opts NodeTypesOptions) (*NodeTypesResult, error) {
	s := &nodeTypeSearch{ctx: ctx, load: load, newWorld: newWorld, types: types, target: opts.Target, workers: runtime.GOMAXPROCS(0), memo: map[string]*nodeTypeWorld{}, settledMin: opts.settledMin()}
	// From here, world after world of the whole cluster (see
	// gcpace.Searching), the first one the cluster without new nodes: on
	// a large cluster, its simulation is most of the answer's time.
	defer gcpace.Searching()()
	none := make([]int, len(types))
	before, err := s.eval(none)
	if err != nil {
		return nil, err
	}
	settleFrom := s.settleFrom
	s.settleFrom = nil
	s.traceStep("simulated without new nodes")
	res := &NodeTypesResult{Add: []NodeTypeCount{}, Pending: []PendingPod{}, NodesJoin: JoinAtStart}
	if len(before.pending) == 0 {
		return res, nil
	}
	s.pending = len(before.pending)
	s.small = s.pending <= roundsMaxPending
	c, err := load()
	if err != nil {
		return nil, err
	}
	s.traceStep("loaded")
	usable := usableTypes(c, types, opts.ResourcesIgnored)
	// The cluster as loaded, before daemonRequests joins its probes: the
	// exact search's, on small questions only (on a large cluster it
	// would keep every pod alive through the search).
	var loaded *cluster.Cluster
	if len(before.pending) <= roundsMaxPending {
		loaded = &cluster.Cluster{Nodes: slices.Clone(c.Nodes), Pods: slices.Clone(c.Pods)}
	}
	daemon, probes, err := daemonRequests(c, types, usable)
	if err != nil {
		return nil, err
	}
	space := newPackSpace(types, usable, daemon, opts.ResourcesIgnored || hasDeviceClasses(c))
	s.space = space
	if settleFrom != nil {
		s.settled = newSettledBase(settleFrom, probes)
		settleFrom = nil
		res.NodesJoin = JoinSettled
		s.traceStep("settled")
	}
	if plan, ok := space.fractional(space.items(before.pendingPods, nil, nil, false), 0, limits(types)); ok {
		res.LowerBound = roundCents(plan.Cost)
	}
	// On small questions, first the floor (every type at its limit): the
	// pods it leaves pending are those no plan is expected to place, and
	// the search compares answers by the others (short).
	if len(before.pending) <= roundsMaxPending {
		if err := s.setFloor(usable, before.pendingPods, c.Pods); err != nil {
			return nil, err
		}
	}
	// The packer's proposal, repaired by the scheduler's answers.
	counts, cur, err := s.propose(space, make([]int, len(types)), before)
	if err != nil {
		return nil, err
	}
	if counts, cur, err = s.finish(counts, cur); err != nil {
		return nil, err
	}
	// On small questions (each simulation cheap), the search by rounds of
	// types, from nothing and, where the proposal leaves pods pending,
	// from it: its answer is kept when it is better (alts: each answer,
	// for completeBest).
	var alts []answer
	if len(before.pending) <= roundsMaxPending && len(c.Pods) <= roundsMaxPods {
		var starts [][]int
		if s.short(cur) > 0 {
			starts = append(starts, counts)
		}
		if len(before.pending) <= roundsMaxPending {
			starts = append(starts, make([]int, len(types)))
		}
		alts = append(alts, answer{counts, cur})
		for _, start := range starts {
			w, err := s.eval(start)
			if err != nil {
				return nil, err
			}
			c, w, err := s.rounds(usable, slices.Clone(start), w)
			if err != nil {
				return nil, err
			}
			if c, w, err = s.finish(c, w); err != nil {
				return nil, err
			}
			alts = append(alts, answer{c, w})
			if s.better(c, w, counts, cur) {
				counts, cur = c, w
			}
		}
	}
	// On the smallest questions, the cheapest answer, by simulating
	// every cheaper one that could hold the pods.
	if len(before.pending) <= roundsMaxPending {
		if counts, cur, err = s.exact(loaded, usable, before, counts, cur); err != nil {
			return nil, err
		}
	}
	if s.small && !s.exactRan && len(alts) > 1 {
		counts, cur, err = s.completeBest(alts, len(c.Pods), opts.BalanceZones)
	} else {
		counts, cur, err = s.complete(counts, cur, len(c.Pods), opts.BalanceZones)
	}
	if err != nil {
		return nil, err
	}
	s.trace("dropped", counts, cur)
	for i, t := range types {
		if counts[i] == 0 {
			continue
		}
		cost := float64(counts[i]) * t.Cost
		res.Add = append(res.Add, NodeTypeCount{Type: t.Type, Zone: t.Zone, Count: counts[i], HourlyCost: roundCents(cost), Pods: cur.placed[i]})
		res.HourlyCost += cost
	}
	res.HourlyCost = roundCents(res.HourlyCost)
	res.Orders, res.OrdersShort = s.orders, s.ordersShort
	res.Scheduled = count(before.pending, report.StatusUnschedulable) - count(cur.pending, report.StatusUnschedulable)
	res.Spared = count(before.pending, report.StatusPreempted) - count(cur.pending, report.StatusPreempted)
	for _, p := range cur.pending {
		res.Pending = append(res.Pending, PendingPod{Pod: p.Namespace + "/" + p.Name, Reason: p.Message})
	}
	if len(cur.pending) > 0 {
		for i, t := range types {
			if usable[i] && counts[i] >= t.Limit {
				name := t.Type
				if t.Zone != "" {
					name += " in " + t.Zone
				}
				res.Limits = append(res.Limits, name)
			}
		}
	}
	return res, nil
}

// limits are the types' limits.
func limits(types []NodeType) []int {
	out := make([]int, len(types))
	for i, t := range types {
		out[i] = t.Limit
	}
	return out
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

// settledMin is o's SettledMinNodes, 0 for never.
func (o NodeTypesOptions) settledMin() int {
	switch {
	case o.SettledMinNodes < 0:
		return 0
	case o.SettledMinNodes == 0:
		return settledMinNodes
	}
	return o.SettledMinNodes
}
