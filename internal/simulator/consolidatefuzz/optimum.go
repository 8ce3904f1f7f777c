package consolidatefuzz

import (
	"errors"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// subset is a plan the search judges: a set of nodes to remove, at most
// one swap, and its saving in hundredths.
type subset struct {
	nodes []string
	swap  *Swap
	cents int
}

// plan is the subset as a Plan.
func (s subset) plan() Plan {
	p := Plan{Remove: s.nodes}
	if s.swap != nil {
		p.Swaps = []Swap{*s.swap}
	}
	return p
}

// subsets lists every subset of the case's nodes (2^7 = 128 at most),
// the largest saving first, then the most nodes (of two sets saving as
// much, the one that removes more is the better answer), then in the
// nodes' order: the order the optimum is searched in.
func subsets(c *Case) []subset {
	n := len(c.Nodes)
	out := make([]subset, 0, 1<<n)
	for mask := range 1 << n {
		var s subset
		for i, name := range c.Nodes {
			if mask&(1<<i) != 0 {
				s.nodes = append(s.nodes, name)
				s.cents += c.Cents[name]
			}
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].cents != out[j].cents {
			return out[i].cents > out[j].cents
		}
		return len(out[i].nodes) > len(out[j].nodes)
	})
	return out
}

// maxSwapNodes bounds the cases whose swaps plans searches: 3^7 ways to
// split 7 nodes between kept, removed and swapped, times 3 types, is
// 6,561 plans at most, nearly all refused by the room checks or priced
// below the plan's saving, without a simulation.
const maxSwapNodes = 7

// plans are subsets' plans and, with the case's node types, every plan
// that also swaps a set S of the nodes left for one new node of a type
// cheaper than S's nodes together, with the same order: the largest
// saving first; of two saving as much, the one without a swap, then the
// one that removes more nodes.
func plans(c *Case) []subset {
	out := subsets(c)
	n := len(c.Nodes)
	if len(c.Types) == 0 || n > maxSwapNodes {
		return out
	}
	pow := 1
	for range n {
		pow *= 3
	}
	// Each node's digit in base 3: 0 kept, 1 removed, 2 swapped.
	for code := range pow {
		var s subset
		var swapped []string
		swapCents := 0
		for i, x := 0, code; i < n; i, x = i+1, x/3 {
			switch x % 3 {
			case 1:
				s.nodes = append(s.nodes, c.Nodes[i])
				s.cents += c.Cents[c.Nodes[i]]
			case 2:
				swapped = append(swapped, c.Nodes[i])
				swapCents += c.Cents[c.Nodes[i]]
			}
		}
		if len(swapped) == 0 {
			continue
		}
		for t, cost := range c.TypeCents {
			if cost < swapCents {
				out = append(out, subset{nodes: s.nodes, swap: &Swap{Nodes: swapped, Type: t}, cents: s.cents + swapCents - cost})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.cents != b.cents:
			return a.cents > b.cents
		case (a.swap == nil) != (b.swap == nil):
			return a.swap == nil
		}
		return len(a.nodes) > len(b.nodes)
	})
	return out
}

// optimum is the feasible subset saving the most among those saving more
// than above hundredths: the judge's verdicts from the largest saving
// down, the first feasible one in that order. found is false when none
// saving more than above is. The verdicts run side by side, a batch of
// one per core at a time; the answer is the first feasible one in the
// order, whichever simulation ends first.
func optimum(j *Judge, subs []subset, above int) (best subset, found bool, err error) {
	var todo []subset
	for _, s := range subs {
		if s.cents > above {
			todo = append(todo, s)
		}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	for start := 0; start < len(todo); start += workers {
		batch := todo[start:min(start+workers, len(todo))]
		feasible := make([]bool, len(batch))
		errs := make([]error, len(batch))
		var wg sync.WaitGroup
		for i, s := range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := j.CheckPlan(s.plan())
				if err != nil {
					errs[i] = err
					return
				}
				feasible[i] = v.Feasible
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return subset{}, false, err
		}
		if i := slices.Index(feasible, true); i >= 0 {
			return batch[i], true, nil
		}
	}
	return subset{}, false, nil
}
