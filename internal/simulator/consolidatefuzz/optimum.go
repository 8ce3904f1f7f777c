package consolidatefuzz

import (
	"errors"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// subset is a set of nodes to remove and its saving in hundredths.
type subset struct {
	nodes []string
	cents int
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
				v, err := j.Check(s.nodes)
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
