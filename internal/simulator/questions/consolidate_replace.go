package questions

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// Replacement is a set of nodes replaced by one new, cheaper node: the
// new node joins, then the set is cordoned and drained, its pods placed
// on the new node and the others.
type Replacement struct {
	// Nodes are the nodes replaced.
	Nodes []string `json:"nodes"`
	// Type and Zone are the new node's type (a node of --node-types) and
	// zone; Node its name in the simulation.
	Type       string  `json:"type"`
	Zone       string  `json:"zone,omitempty"`
	Node       string  `json:"node"`
	HourlyCost float64 `json:"hourlyCost"`
	// HourlySaving is what the replaced nodes cost less the new node.
	HourlySaving float64 `json:"hourlySaving"`
}

// replaceTrials bounds the prefixes one replacement round tries.
const replaceTrials = 12

// replacer looks for replacements, as Karpenter's consolidation does
// (computeConsolidation's Replace decision): the candidates' pods placed
// together on the nodes left and exactly one new node, of a type whose
// price is strictly below the candidates' together, the cheapest type
// that places them all chosen. Each round finds by bisection the longest
// run of candidates, in order, that one new node replaces (Karpenter's
// multi-node consolidation tries runs of 2 to 100 nodes, its single-node
// one each node alone: a run of 1 here), then does it.
type replacer struct {
	d      *drainer
	rc     *ruleContext
	types  []NodeType // cheapest first
	full   *cluster.Cluster
	price  map[string]float64
	budget int // simulations left, negative: no bound
}

// tryRun tries to replace cands[:k]: the cheapest type, cheaper than
// them, whose one new node takes their pods with the nodes left. It
// keeps the replacement when keep is set.
func (r *replacer) tryRun(cands []string, k int, keep bool) (*Replacement, error) {
	names := cands[:k]
	moves, total, ok := r.movesOf(names)
	if !ok {
		return nil, nil
	}
	for _, t := range r.types {
		if t.Cost >= total || r.budget == 0 {
			break
		}
		rep, err := r.tryType(names, moves, total, t, keep)
		if rep != nil || err != nil {
			return rep, err
		}
	}
	return nil, nil
}

// movesOf are the pods of names that move and their price together;
// false when a pod that came since keeps one of them.
func (r *replacer) movesOf(names []string) ([][]*v1.Pod, float64, bool) {
	moves := make([][]*v1.Pod, len(names))
	total := 0.0
	for i, n := range names {
		move, pod, _ := r.rc.node(r.d.podsOn[n])
		if pod != nil {
			return nil, 0, false
		}
		moves[i] = move
		total += r.price[n]
	}
	return moves, total, true
}

// tryType tries to replace names by one node of t.
func (r *replacer) tryType(names []string, moves [][]*v1.Pod, total float64, t NodeType, keep bool) (*Replacement, error) {
	tmpl := t.Node.DeepCopy()
	if t.Zone != "" {
		tmpl.Name = t.Type + "-" + t.Zone
	}
	add := NodeCopies(tmpl, 1, r.d.w.Cluster)[0]
	agents := cluster.DaemonPods(r.full, add)
	// Room the new node leaves for the pods once its agents run: a run
	// whose pods cannot fit it and the others' free room is skipped
	// without a simulation.
	room := allocatableOf(add)
	for _, a := range agents {
		req := resourcehelper.PodRequests(a, resourcehelper.PodResourcesOptions{})
		room.MilliCPU -= req.Cpu().MilliValue()
		room.Memory -= req.Memory().Value()
		room.AllowedPodNumber--
	}
	if r.d.room.noRoomFor(names, moves, room) != "" {
		return nil, nil
	}
	r.budget--
	pod, _, err := r.d.drainWith(names, moves, add, agents, keep)
	if err != nil || pod != "" {
		return nil, err
	}
	return &Replacement{Nodes: slices.Clone(names), Type: t.Type, Zone: t.Zone, Node: add.Name,
		HourlyCost: t.Cost, HourlySaving: roundCents(total - t.Cost)}, nil
}

// exact is a small question's replacement: every subset of cands with
// every type strictly cheaper than it, the most saving first (then fewer
// nodes, then the candidates' order), the first that holds done (nil
// when none does). complete says it tried every option it had to.
func (r *replacer) exact(cands []string) (rep *Replacement, complete bool, err error) {
	type option struct {
		mask   uint32
		t      int
		saving float64
	}
	n := len(cands)
	var opts []option
	price := make([]float64, 1<<n)
	for m := uint32(1); m < 1<<n; m++ {
		for i := range n {
			if m&(1<<i) != 0 {
				price[m] += r.price[cands[i]]
			}
		}
		for ti, t := range r.types {
			if t.Cost < price[m] {
				opts = append(opts, option{m, ti, price[m] - t.Cost})
			}
		}
	}
	sort.SliceStable(opts, func(a, b int) bool {
		x, y := opts[a], opts[b]
		if x.saving != y.saving {
			return x.saving > y.saving
		}
		if bits.OnesCount32(x.mask) != bits.OnesCount32(y.mask) {
			return bits.OnesCount32(x.mask) < bits.OnesCount32(y.mask)
		}
		return bits.Reverse32(x.mask) > bits.Reverse32(y.mask)
	})
	start := r.budget
	for _, o := range opts {
		if r.budget == 0 || start-r.budget >= exactSims {
			return nil, false, nil
		}
		var names []string
		for i := range n {
			if o.mask&(1<<i) != 0 {
				names = append(names, cands[i])
			}
		}
		moves, total, ok := r.movesOf(names)
		if !ok {
			continue
		}
		rep, err := r.tryType(names, moves, total, r.types[o.t], false)
		if err != nil {
			return nil, false, err
		}
		if rep == nil {
			continue
		}
		// Done for good; a tie-break that falls another way this time
		// sends the search on.
		if rep, err = r.tryType(names, moves, total, r.types[o.t], true); rep != nil || err != nil {
			return rep, true, err
		}
	}
	return nil, true, nil
}

// round finds the longest run of 2 or more of cands that one new node
// replaces and does it, as Karpenter's multi-node consolidation; failing
// that, the first candidate one new node replaces alone, as its
// single-node one (nil when none is).
func (r *replacer) round(cands []string) (*Replacement, error) {
	lo, hi, best := 2, len(cands), 0
	for tried := 0; lo <= hi && tried < replaceTrials && r.budget != 0; tried++ {
		mid := (lo + hi) / 2
		rep, err := r.tryRun(cands, mid, false)
		if err != nil {
			return nil, err
		}
		if rep != nil {
			best, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	if best > 0 {
		return r.tryRun(cands, best, true)
	}
	for i := range cands {
		if r.budget == 0 {
			break
		}
		rep, err := r.tryRun(cands[i:], 1, true)
		if rep != nil || err != nil {
			return rep, err
		}
	}
	return nil, nil
}

// replace runs rounds on the candidates left (in order) until none
// replaces any, and answers them in res: each replaced node leaves Keep.
func (r *replacer) replace(cands []string, res *ConsolidateResult) error {
	sort.SliceStable(r.types, func(i, j int) bool { return r.types[i].Cost < r.types[j].Cost })
	for len(cands) > 0 && r.budget != 0 {
		var rep *Replacement
		complete := false
		var err error
		if len(cands) <= exactCandidates {
			rep, complete, err = r.exact(cands)
		}
		if !complete && err == nil {
			rep, err = r.round(cands)
		}
		if err != nil {
			return err
		}
		if rep == nil {
			return nil
		}
		res.Replace = append(res.Replace, *rep)
		res.HourlySaving += rep.HourlySaving
		gone := map[string]bool{}
		for _, n := range rep.Nodes {
			gone[n] = true
		}
		res.Keep = slices.DeleteFunc(res.Keep, func(k KeptNode) bool { return gone[k.Node] })
		cands = slices.DeleteFunc(cands, func(n string) bool { return gone[n] })
	}
	return nil
}

// String is the replacement as the table says it.
func (r Replacement) String() string {
	zone := ""
	if r.Zone != "" {
		zone = " in " + r.Zone
	}
	return fmt.Sprintf("%d node(s) (%v) by one %s%s at %g per hour, saving %g per hour", len(r.Nodes), r.Nodes, r.Type, zone, r.HourlyCost, r.HourlySaving)
}

// replay does res's plan in f, a drainer of the settled cluster: the
// removals together, then each replacement in turn (its type found in
// types by name and zone). A replacement that does not hold is dropped,
// its nodes kept with the reason, its saving taken back.
func replay(f *drainer, rc *ruleContext, res *ConsolidateResult, removeMoves [][]*v1.Pod, price map[string]float64, budgets []*cluster.Budget, full *cluster.Cluster, types []NodeType) error {
	if len(res.Remove) > 0 {
		pod, reason, err := f.drainAll(res.Remove, removeMoves, true)
		if err != nil {
			return err
		}
		if pod != "" {
			// The removals held together when checked; a tie-break fell
			// otherwise: the replacements are not answered.
			for _, rep := range res.Replace {
				res.HourlySaving -= rep.HourlySaving
				for _, n := range rep.Nodes {
					res.Keep = append(res.Keep, KeptNode{Node: n, Pod: pod, Reason: "its replacement was not checked: replayed, the removals left " + reason})
				}
			}
			res.Replace = nil
			return nil
		}
	}
	rc.count = func() []int32 { return cluster.HealthyPods(f.pods(), budgets) }
	rc.healthy = nil
	r := &replacer{d: f, rc: rc, full: full, price: price, budget: -1}
	kept := res.Replace[:0]
	for _, rep := range res.Replace {
		i := slices.IndexFunc(types, func(t NodeType) bool { return t.Type == rep.Type && t.Zone == rep.Zone })
		moves, total, ok := r.movesOf(rep.Nodes)
		var got *Replacement
		var err error
		if i >= 0 && ok {
			got, err = r.tryType(rep.Nodes, moves, total, types[i], true)
			if err != nil {
				return err
			}
		}
		rc.healthy = nil
		if got == nil {
			res.HourlySaving -= rep.HourlySaving
			for _, n := range rep.Nodes {
				res.Keep = append(res.Keep, KeptNode{Node: n, Reason: fmt.Sprintf("one %s replaced it on the cluster the drains before left, but not when the plan is replayed from the start", rep.Type)})
			}
			continue
		}
		kept = append(kept, *got)
	}
	res.Replace = kept
	return nil
}
