package questions

import (
	"context"
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// jointCandidates is the most candidates the joint search takes: each
// kept, removed or replaced, 3^7 = 2,187 assignments times the types.
const jointCandidates = 7

// jointSims bounds the joint search's trials (each a small world made
// again from the settled cluster).
const jointSims = 2000

// joint is the joint search of a small question with node types: the
// removals are chosen before the replacements, so a removal can take the
// room a better replacement needed. Every assignment of the candidates to
// kept, removed (drained together) and replaced (by one new node of a
// type strictly cheaper than them, after the removals) that saves more
// than res is tried, the most saving first, each from the settled
// cluster as the plan will run; the first that holds becomes the answer.
type joint struct {
	ctx         context.Context
	newWorld    func(*cluster.Cluster) (*simulator.World, error)
	settled     *cluster.Cluster
	nodes       []*v1.Node // the settled cluster's nodes
	basePending map[string]bool
	budgets     []*cluster.Budget
	rc          *ruleContext
	full        *cluster.Cluster
	price       map[string]float64
	priced      map[string]bool // the nodes with a price annotation
	types       []NodeType
}

type jointOption struct {
	remove, replace []int
	t               int // -1: no replacement
	saving          float64
}

// search answers in res when it finds a plan saving more.
func (j *joint) search(names []string, moves [][]*v1.Pod, res *ConsolidateResult) error {
	n := len(names)
	var opts []jointOption
	total := 1
	for range n {
		total *= 3
	}
	for code := 1; code < total; code++ {
		var o jointOption
		o.t = -1
		c := code
		var rp, sp float64
		for i := range n {
			switch c % 3 {
			case 1:
				o.remove = append(o.remove, i)
				rp += j.price[names[i]]
			case 2:
				o.replace = append(o.replace, i)
				sp += j.price[names[i]]
			}
			c /= 3
		}
		if len(o.replace) == 0 {
			if o.saving = rp; o.saving > res.HourlySaving+1e-9 {
				opts = append(opts, o)
			}
			continue
		}
		for ti, t := range j.types {
			if t.Cost < sp && rp+sp-t.Cost > res.HourlySaving+1e-9 {
				opts = append(opts, jointOption{remove: o.remove, replace: o.replace, t: ti, saving: rp + sp - t.Cost})
			}
		}
	}
	sort.SliceStable(opts, func(a, b int) bool {
		if opts[a].saving != opts[b].saving {
			return opts[a].saving > opts[b].saving
		}
		return len(opts[a].remove)+len(opts[a].replace) < len(opts[b].remove)+len(opts[b].replace)
	})
	failedRemoval := map[string]bool{}
	sims := 0
	for _, o := range opts {
		if sims >= jointSims {
			return nil
		}
		key := fmt.Sprint(o.remove)
		if failedRemoval[key] {
			continue
		}
		j.settled.Nodes = j.nodes
		f, err := newDrainer(j.ctx, j.newWorld, j.settled, j.basePending)
		if err != nil {
			return err
		}
		f.stall = stallOf(j.budgets, f)
		pick := func(idx []int) ([]string, [][]*v1.Pod) {
			var ns []string
			var ms [][]*v1.Pod
			for _, i := range idx {
				ns = append(ns, names[i])
				ms = append(ms, moves[i])
			}
			return ns, ms
		}
		rNames, rMoves := pick(o.remove)
		if len(rNames) > 0 {
			if f.room.noRoomFor(rNames, rMoves, zeroRoom) != "" {
				failedRemoval[key] = true
				continue
			}
			sims++
			pod, _, err := f.drainAll(rNames, rMoves, true)
			if err != nil {
				return err
			}
			if pod != "" {
				failedRemoval[key] = true
				continue
			}
		}
		var rep *Replacement
		if o.t >= 0 {
			rc := *j.rc
			rc.count = func() []int32 { return cluster.HealthyPods(f.pods(), j.budgets) }
			rc.healthy = nil
			r := &replacer{d: f, rc: &rc, full: j.full, price: j.price, budget: -1}
			sNames, _ := pick(o.replace)
			sMoves, sTotal, ok := r.movesOf(sNames)
			if !ok {
				continue
			}
			sims++
			if rep, err = r.tryType(sNames, sMoves, sTotal, j.types[o.t], true); err != nil {
				return err
			}
			if rep == nil {
				continue
			}
		}
		j.answer(names, o, rNames, rep, res)
		return nil
	}
	return nil
}

// answer rewrites res as the plan o: its removals and replacement, the
// other nodes kept (those the answer before took, with why not now).
func (j *joint) answer(names []string, o jointOption, remove []string, rep *Replacement, res *ConsolidateResult) {
	before := append(slices.Clone(res.Remove), func() []string {
		var out []string
		for _, r := range res.Replace {
			out = append(out, r.Nodes...)
		}
		return out
	}()...)
	taken := map[string]bool{}
	res.Remove, res.Replace, res.Unpriced, res.HourlySaving = []string{}, nil, nil, 0
	for _, n := range remove {
		taken[n] = true
		res.Remove = append(res.Remove, n)
		res.HourlySaving += j.price[n]
		if !j.priced[n] {
			res.Unpriced = append(res.Unpriced, n)
		}
	}
	if rep != nil {
		for _, n := range rep.Nodes {
			taken[n] = true
		}
		res.Replace = []Replacement{*rep}
		res.HourlySaving += rep.HourlySaving
	}
	res.Keep = slices.DeleteFunc(res.Keep, func(k KeptNode) bool { return taken[k.Node] })
	for _, n := range before {
		if !taken[n] {
			res.Keep = append(res.Keep, KeptNode{Node: n, Reason: fmt.Sprintf("kept for a plan that saves more: removing %v and replacing %v", remove, repNodes(rep))})
		}
	}
}

func repNodes(r *Replacement) []string {
	if r == nil {
		return nil
	}
	return r.Nodes
}
