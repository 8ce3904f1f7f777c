package questions

import (
	"math/bits"
	"sort"

	v1 "k8s.io/api/core/v1"
)

// exactCandidates is the most candidates whose every subset the exact
// search may try (2^12 = 4,096 subsets, most refused by the room check
// before any simulation).
const exactCandidates = 12

// exactSims bounds the exact search's simulations.
const exactSims = 2000

// bestSubset is the exact search of a small question: the candidates'
// subsets in decreasing saving (then more nodes, then the candidates'
// order), each drained together, the first whose pods all run taken
// and done. It returns the subset's indexes in the candidates' order
// (none when no subset drains), the simulations spent, and whether it
// tried every subset it had to (false: the bound stopped it first, and
// the caller searches as for a large question).
func (d *drainer) bestSubset(names []string, moves [][]*v1.Pod, price map[string]float64, budget int) ([]int, int, bool, error) {
	n := len(names)
	masks := make([]uint32, 0, 1<<n-1)
	saving := make([]float64, 1<<n)
	for m := uint32(1); m < 1<<n; m++ {
		masks = append(masks, m)
		for i := range n {
			if m&(1<<i) != 0 {
				saving[m] += price[names[i]]
			}
		}
	}
	sort.SliceStable(masks, func(a, b int) bool {
		x, y := masks[a], masks[b]
		if saving[x] != saving[y] {
			return saving[x] > saving[y]
		}
		if bits.OnesCount32(x) != bits.OnesCount32(y) {
			return bits.OnesCount32(x) > bits.OnesCount32(y)
		}
		return bits.Reverse32(x) > bits.Reverse32(y) // the first candidates first
	})
	sims := 0
	for _, m := range masks {
		if sims >= budget {
			return nil, sims, false, nil
		}
		var idx []int
		var sub []string
		var subMoves [][]*v1.Pod
		for i := range n {
			if m&(1<<i) != 0 {
				idx = append(idx, i)
				sub = append(sub, names[i])
				subMoves = append(subMoves, moves[i])
			}
		}
		if d.room.noRoomFor(sub, subMoves, zeroRoom) != "" {
			continue
		}
		sims++
		pod, _, err := d.drainAll(sub, subMoves, false)
		if err != nil {
			return nil, sims, false, err
		}
		if pod != "" {
			continue
		}
		// Done for good; a tie-break that falls another way this time
		// sends the search on to the next subset.
		sims++
		pod, _, err = d.drainAll(sub, subMoves, true)
		if err != nil {
			return nil, sims, false, err
		}
		if pod == "" {
			return idx, sims, true, nil
		}
	}
	return nil, sims, true, nil
}
