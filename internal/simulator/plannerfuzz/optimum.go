package plannerfuzz

import (
	"errors"
	"slices"
	"sort"
)

// errTooMany: the vectors cheaper than the answer that the bounds admit
// are more than the search may list; the case is left undecided.
var errTooMany = errors.New("too many vectors to list")

// vector is a count per candidate and its cost in hundredths.
type vector struct {
	counts []int
	cents  int
	nodes  int
}

// cheaperVectors lists every count vector costing less than below
// (hundredths) that the bounds admit, cheapest first (then the fewest
// nodes, then in the candidates' order), at most limit of them.
//
// The search walks the candidates in order, each from 0 to its bound
// (limit, pods that could use it, budget left), and leaves a branch as
// soon as the nodes still affordable could not give the room every pod
// needs (bounds.couldReach).
func cheaperVectors(b *bounds, cents []int, below, limit int) ([]vector, error) {
	var out []vector
	counts := make([]int, len(cents))
	var walk func(i, spent int) error
	walk = func(i, spent int) error {
		if !b.couldReach(counts, i, cents, below-1-spent) {
			return nil
		}
		if i == len(cents) {
			if !b.admits(counts) {
				return nil
			}
			if len(out) >= limit {
				return errTooMany
			}
			n := 0
			for _, k := range counts {
				n += k
			}
			out = append(out, vector{counts: slices.Clone(counts), cents: spent, nodes: n})
			return nil
		}
		most := 0
		if b.usable[i] {
			most = b.ub[i]
		}
		for k := 0; k <= most && spent+k*cents[i] < below; k++ {
			counts[i] = k
			if err := walk(i+1, spent+k*cents[i]); err != nil {
				counts[i] = 0
				return err
			}
		}
		counts[i] = 0
		return nil
	}
	err := walk(0, 0)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].cents != out[j].cents {
			return out[i].cents < out[j].cents
		}
		return out[i].nodes < out[j].nodes
	})
	return out, err
}

// costOf is a vector's cost in hundredths.
func costOf(counts, cents []int) int {
	c := 0
	for i, k := range counts {
		c += k * cents[i]
	}
	return c
}
