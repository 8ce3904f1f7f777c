package questions

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
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
	// Rules is the rule set the drains followed.
	Rules Rules `json:"rules"`
	// Remove are the nodes to remove, in the order the search removed
	// them (each drained with every pod still running).
	Remove       []string `json:"remove"`
	HourlySaving float64  `json:"hourlySaving"`
	// Unpriced are the nodes of Remove without a price: HourlySaving
	// leaves them out.
	Unpriced []string `json:"unpriced,omitempty"`
	// Replace are the replacements of kept nodes by cheaper new ones
	// (with ConsolidateOptions.NodeTypes), done after the removals; their
	// savings are in HourlySaving.
	Replace []Replacement `json:"replace,omitempty"`
	// Keep are the other nodes, each with the pod that keeps it and why.
	Keep []KeptNode `json:"keep"`
}

// KeptNode is a node that must stay, the pod that keeps it, and why.
type KeptNode struct {
	Node   string `json:"node"`
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

// ConsolidateOptions are consolidate's settings.
type ConsolidateOptions struct {
	// MaxDrains bounds the drains simulated: negative is
	// DefaultMaxDrains of the cluster's node count, 0 no limit.
	MaxDrains int
	// Rules is the rule set ("" is cluster-autoscaler's).
	Rules Rules
	// Now is the time the rules read (terminating pods, do-not-disrupt
	// durations); zero is the wall clock's.
	Now time.Time
	// NodeTypes, when given, are the types a set of kept nodes may be
	// replaced by (one new node cheaper than the set).
	NodeTypes []NodeType
}

// Consolidate answers which nodes can be removed with every pod still
// running. The cluster is simulated to its end (pending pods placed); on
// what it settles to, the rule set says of each node's pods which move,
// which go with the node and which keep it. The candidates (nodes no pod
// keeps) are ordered the most expensive first, then the fewest pods to
// move. A plan cordons all its nodes before the first drain, as
// cluster-autoscaler and Karpenter do: first the longest run of
// candidates that drains together is found by bisection (Karpenter's
// multi-node consolidation), then each other candidate is drained alone
// on the cluster the drains before it left, the drain kept when the pods
// that move (their controllers' replacements) all schedule on the nodes
// left, the pods pending before the drains aside; last the whole plan is
// checked with all its nodes drained together, and cut to its longest
// start that holds. The PodDisruptionBudgets are counted as the
// disruption controller counts them (cluster.Budgets: expected pods from
// the controllers' scales, the pods pending before the drains included),
// their healthy pods on the pods running after the drains before it.
//
// Two cheap checks spare a simulation: a node whose moving pods request
// more CPU or memory than the other schedulable nodes have free is kept
// at once; and past MaxDrains simulated drains the other candidates are
// kept untried. The drains run one after another in one world (drainer),
// a failed one undone.
func Consolidate(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), o ConsolidateOptions, started func(i, n int, node string)) (*ConsolidateResult, error) {
	if o.Rules == "" {
		o.Rules = RulesClusterAutoscaler
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	c, err := load()
	if err != nil {
		return nil, err
	}
	if err := checkPrices(c); err != nil {
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
	// The budgets count every pod, those pending included.
	var all []*v1.Pod
	w.Store.EachPod(func(p *v1.Pod) { all = append(all, p) })
	budgets := w.Cluster.Budgets(all)
	// The pods pending before any drain are left out of the drains'
	// simulations: a drain only takes room away, so they stay pending, and
	// each would be tried against every node at every drain.
	settled := settle(w, basePending)
	maxDrains := o.MaxDrains
	if maxDrains < 0 {
		maxDrains = DefaultMaxDrains(len(settled.Nodes))
	}
	res := &ConsolidateResult{Rules: o.Rules, Remove: []string{}, Keep: []KeptNode{}}
	price := map[string]float64{}
	podsOn := byNode(settled.Pods)
	origin := make(map[string]string, len(settled.Pods)) // pod -> node, before the drains
	for _, p := range settled.Pods {
		origin[cluster.PodKey(p)] = p.Spec.NodeName
	}
	rc := &ruleContext{rules: o.Rules, budgets: budgets, now: o.Now, owners: Owners(w.Cluster), count: func() []int32 { return cluster.HealthyPods(settled.Pods, budgets) }}
	type candidate struct {
		node string
		pods int
		move []*v1.Pod
	}
	var candidates []candidate
	hasPrice := map[string]bool{}
	for _, n := range settled.Nodes {
		price[n.Name] = NodeHourlyCost(n)
		_, hasPrice[n.Name] = n.Annotations[HourlyCostAnnotation]
		if o.Rules == RulesKarpenter && n.Annotations[DoNotDisruptAnnotation] == "true" {
			res.Keep = append(res.Keep, KeptNode{Node: n.Name, Reason: fmt.Sprintf("%s (the node is annotated %s: \"true\")", `disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation`, DoNotDisruptAnnotation)})
			continue
		}
		move, pod, reason := rc.node(podsOn[n.Name])
		if pod != nil {
			res.Keep = append(res.Keep, KeptNode{Node: n.Name, Pod: cluster.PodKey(pod), Reason: reason})
			continue
		}
		candidates = append(candidates, candidate{n.Name, len(move), move})
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
	settledNodes := settled.Nodes // the live world's drains set its cluster's
	d, err := newDrainer(ctx, newWorld, settled, basePending)
	if err != nil {
		return nil, err
	}
	rc.count = func() []int32 { return cluster.HealthyPods(d.pods(), budgets) }
	rc.healthy = nil
	d.stall = stallOf(budgets, d)
	drains := 0
	removed := func(node string) {
		res.Remove = append(res.Remove, node)
		res.HourlySaving += price[node]
		if !hasPrice[node] {
			res.Unpriced = append(res.Unpriced, node)
		}
	}
	names := make([]string, len(candidates))
	moves := make([][]*v1.Pod, len(candidates))
	for i, cand := range candidates {
		names[i], moves[i] = cand.node, cand.move
	}
	// First the longest run of candidates, in order, that drains
	// together, by bisection as Karpenter's multi-node consolidation
	// finds it (firstNConsolidationOption): every node of the run
	// cordoned, all their pods placed at once.
	// A small question is answered by the exact search: the subset that
	// saves the most and drains together.
	together := 0
	exact := false
	if len(candidates) <= exactCandidates {
		budget := exactSims
		if maxDrains > 0 {
			budget = min(budget, maxDrains)
		}
		best, tried, complete, err := d.bestSubset(names, moves, price, budget)
		if err != nil {
			return nil, err
		}
		drains += tried
		if complete {
			exact = true
			// The subset's nodes first, in the candidates' order; the
			// others after it, as the search below tries them.
			in := make([]bool, len(candidates))
			for _, i := range best {
				in[i] = true
			}
			order := make([]candidate, 0, len(candidates))
			for i, cand := range candidates {
				if in[i] {
					order = append(order, cand)
				}
			}
			for i, cand := range candidates {
				if !in[i] {
					order = append(order, cand)
				}
			}
			candidates = order
			for i, cand := range candidates {
				names[i], moves[i] = cand.node, cand.move
			}
			together = len(best)
			for i := range together {
				if started != nil {
					started(i, len(candidates), names[i])
				}
				removed(names[i])
			}
		}
	}
	if !exact {
		t, tried, err := d.longestTogether(names, moves, maxDrains)
		if err != nil {
			return nil, err
		}
		drains += tried
		together = t
		for i := range together {
			if started != nil {
				started(i, len(candidates), names[i])
			}
			removed(names[i])
		}
	}
	// Then each other candidate alone, on the cluster the drains before
	// it left.
	for i, cand := range candidates {
		if i < together {
			continue
		}
		if started != nil {
			started(i, len(candidates), cand.node)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// The budgets may allow less than when the node was first read:
		// the drains before it moved pods.
		move, pod, reason := rc.node(d.podsOn[cand.node])
		if pod != nil {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Pod: cluster.PodKey(pod), Reason: reason})
			continue
		}
		if reason := d.room.noRoomElsewhere(cand.node, move); reason != "" {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Pod: cluster.PodKey(move[0]), Reason: reason})
			continue
		}
		if maxDrains > 0 && drains >= maxDrains {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Reason: fmt.Sprintf("not tried: %d drains were simulated (--max-drains)", maxDrains)})
			continue
		}
		drains++
		pod2, reason, err := d.drain(cand.node, move)
		if err != nil {
			return nil, err
		}
		if pod2 != "" {
			res.Keep = append(res.Keep, KeptNode{Node: cand.node, Pod: pod2, Reason: reason})
			continue
		}
		rc.healthy = nil // counted again when a budget is next read
		removed(cand.node)
	}
	// The plan cordons every node it removes before the first drain, as
	// cluster-autoscaler and Karpenter do; the drains one at a time above
	// may have put pods on nodes removed after them. So the plan is
	// checked as it will run: from the settled cluster, all its nodes
	// drained together. When that leaves a pod without its place, the
	// longest start of the plan that holds is kept.
	moveOf := make(map[string][]*v1.Pod, len(candidates))
	for _, cand := range candidates {
		moveOf[cand.node] = cand.move
	}
	planMoves := func() [][]*v1.Pod {
		out := make([][]*v1.Pod, len(res.Remove))
		for i, n := range res.Remove {
			out[i] = moveOf[n]
		}
		return out
	}
	// plan is a drainer in the state the plan leaves: the live one when
	// it holds the plan as drained together, else made below.
	plan := d
	if len(res.Remove) > together {
		settled.Nodes = settledNodes
		v, err := newDrainer(ctx, newWorld, settled, basePending)
		if err != nil {
			return nil, err
		}
		v.stall = stallOf(budgets, v)
		holds, pod, reason, err := v.longestHolding(res.Remove, planMoves(), together)
		if err != nil {
			return nil, err
		}
		if holds < len(res.Remove) {
			cut := res.Remove
			res.Remove, res.HourlySaving, res.Unpriced = []string{}, 0, nil
			for _, n := range cut[:holds] {
				removed(n)
			}
			for _, n := range cut[holds:] {
				res.Keep = append(res.Keep, KeptNode{Node: n, Pod: pod,
					Reason: fmt.Sprintf(cutReason+", but not with the plan's %d nodes before it cordoned together: %s", holds, reason)})
			}
		}
		plan = nil
		if len(o.NodeTypes) > 0 {
			if pod, _, err := v.drainAll(res.Remove, planMoves(), true); err != nil {
				return nil, err
			} else if pod == "" {
				plan = v
			}
		}
	}
	if len(o.NodeTypes) > 0 && plan != nil {
		gone := map[string]bool{}
		for _, n := range res.Remove {
			gone[n] = true
		}
		var rest []string
		for _, cand := range candidates {
			if !gone[cand.node] {
				rest = append(rest, cand.node)
			}
		}
		budget := -1
		if maxDrains > 0 {
			budget = max(maxDrains-drains, 0)
		}
		rc.count = func() []int32 { return cluster.HealthyPods(plan.pods(), budgets) }
		rc.healthy = nil
		r := &replacer{d: plan, rc: rc, types: slices.Clone(o.NodeTypes), full: w.Cluster, price: price, budget: budget}
		if err := r.replace(rest, res); err != nil {
			return nil, err
		}
		if len(res.Replace) > 0 {
			// The rounds ran on the placements the drains before them
			// happened to make; the plan is replayed from the settled
			// cluster as it will run, and a replacement that does not
			// hold there is dropped.
			settled.Nodes = settledNodes
			f, err := newDrainer(ctx, newWorld, settled, basePending)
			if err != nil {
				return nil, err
			}
			f.stall = stallOf(budgets, f)
			if err := replay(f, rc, res, planMoves(), price, budgets, w.Cluster, o.NodeTypes); err != nil {
				return nil, err
			}
		}
		if len(candidates) <= jointCandidates {
			names := make([]string, len(candidates))
			moves := make([][]*v1.Pod, len(candidates))
			for i, cand := range candidates {
				names[i], moves[i] = cand.node, cand.move
			}
			j := &joint{ctx: ctx, newWorld: newWorld, settled: settled, nodes: settledNodes, basePending: basePending,
				budgets: budgets, rc: rc, full: w.Cluster, price: price, priced: hasPrice, types: slices.Clone(o.NodeTypes)}
			if err := j.search(names, moves, res); err != nil {
				return nil, err
			}
		}
	}
	// A reason may name a pod an earlier drain of the plan moved to the
	// node kept: in the cluster, that pod runs elsewhere until then, and
	// its replacement gets a new name (a StatefulSet's keeps it).
	drained := make(map[string]bool, len(res.Remove))
	for _, n := range res.Remove {
		drained[n] = true
	}
	for i, k := range res.Keep {
		if from := origin[k.Pod]; drained[from] && from != k.Node && !strings.HasPrefix(k.Reason, cutReason) {
			res.Keep[i].Reason += fmt.Sprintf(" (the pod runs on %s now: the plan's drain of %s moves it here)", from, from)
		}
	}
	res.HourlySaving = roundCents(res.HourlySaving)
	sort.SliceStable(res.Keep, func(i, j int) bool { return res.Keep[i].Node < res.Keep[j].Node })
	return res, nil
}

// cutReason starts the reason of a node the whole plan's check cut.
const cutReason = "drains on the cluster the drains before it left"

// stallOf is the drainer's stall check: a drain evicting more pods of a
// budget than it allows, whose replacements wait, pending while the nodes
// are cordoned, as many as it allows: its evictions past them are
// refused until a replacement runs, and those wait for the nodes'
// deletion, which waits for the drain. The budget's healthy pods before
// the drain are those running now and the replacements waiting.
func stallOf(budgets []*cluster.Budget, d *drainer) func(names []string, moves [][]*v1.Pod, waiting []*v1.Pod) string {
	if len(budgets) == 0 {
		return nil
	}
	return func(names []string, moves [][]*v1.Pod, waiting []*v1.Pod) string {
		var healthy []int32
		for i, b := range budgets {
			evicted, waits := int32(0), int32(0)
			for _, m := range moves {
				for _, p := range m {
					if b.Selects(p) {
						evicted++
					}
				}
			}
			for _, p := range waiting {
				if b.Selects(p) {
					waits++
				}
			}
			if waits == 0 {
				continue
			}
			if healthy == nil {
				healthy = cluster.HealthyPods(d.pods(), budgets)
			}
			allowed := b.Allowed(healthy[i] + waits)
			if evicted > allowed && waits >= allowed {
				return fmt.Sprintf("the drain may stall: PodDisruptionBudget %s/%s allows %d disruption(s), the drain evicts %d of its pods, and %d replacement(s) wait for the nodes' deletion (a topology spread or affinity counts the cordoned nodes) while the budget refuses the next eviction",
					b.PDB.Namespace, b.PDB.Name, allowed, evicted, waits)
			}
		}
		return ""
	}
}

// checkPrices refuses a node whose price annotation is not a price,
// naming where it was read: counted as 0, it would make the saving a
// guess.
func checkPrices(c *cluster.Cluster) error {
	for _, n := range c.Nodes {
		v, ok := n.Annotations[HourlyCostAnnotation]
		if !ok {
			continue
		}
		cost, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || cost < 0 || math.IsInf(cost, 0) || math.IsNaN(cost) {
			return loading.SourceError(c.NodeSources[n.Name], "Node "+n.Name,
				fmt.Errorf("metadata.annotations[%s]: Invalid value: %q: want a decimal price per hour, 0 or more", HourlyCostAnnotation, v))
		}
	}
	return nil
}

// notAllRunning names the first pod a drain left without its place (one
// that pends, not pending before the drains, or that a replacement
// preempted), and why.
func notAllRunning(pods []report.PodResult, basePending map[string]bool, drained string) (string, string) {
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		switch {
		case p.Status == report.StatusUnschedulable && !basePending[key]:
			return key, "with " + drained + " drained, this pod would not schedule: " + p.Message
		case p.Status == report.StatusPreempted:
			return key, "with " + drained + " drained, this pod would be preempted: " + p.Message
		}
	}
	return "", ""
}
