package questions

import (
	"errors"
	"sort"
	"sync"
)

// polish's budget: polishPodSims divided by the cluster's pods
// simulations (a simulation costs about its pods), between polishMinSims
// and polishMaxSims.
const (
	polishPodSims = 40000
	polishMinSims = 6
	polishMaxSims = 40
)

// polishMove is one node of candidate from dropped, or made one of to
// (-1: dropped), saving what it saves per hour.
type polishMove struct {
	from, to int
	saving   float64
}

// polish is a local search on the answer: one node dropped, or made a
// cheaper candidate of its zone, the largest saving first, kept when the
// scheduler leaves no more pods pending and no new node empty; again from
// each move kept, until none is or the budget is spent. The packer and
// finish decide by requests and by the nodes the scheduler used least;
// the scheduler spreads (LeastAllocated) and leaves every node a little
// room, so a type a size down, or one less, often places as much (the
// peer benchmark's 1,000 pods: an m5.4xlarge made an r5.large, 48.18 to
// 47.54 an hour before robust; 5,000 pods: three moves, 244.80 to
// 241.96).
//
// It runs before robust, which checks its answer in other orders; with
// inOrders, after it, each move kept only when robust's orders place as
// many pods too (inOrders): on small questions the exact search does
// not take (complete), where simulations are cheap. (On large ones it
// made one more node cheaper at 5,000 pods, 1.01/h for 11 s, and none
// at 1,000 for 4 s: left out.)
func (s *nodeTypeSearch) polish(counts []int, cur *nodeTypeWorld, pods int, inOrders bool) ([]int, *nodeTypeWorld, error) {
	if sumCounts(counts) == 0 || s.settled != nil && s.pending > robustLargePending {
		// On a large settled cluster each simulation takes seconds of
		// tens of thousands of pods (robust skips it too).
		return counts, cur, nil
	}
	budget := simBudget(polishPodSims, polishMinSims, polishMaxSims, pods)
	for spent := 0; spent < budget; {
		moves := s.polishMoves(counts)
		kept := false
		for at := 0; at < len(moves) && spent < budget && !kept; at += s.workers {
			batch := moves[at:min(len(moves), at+s.workers, at+budget-spent)]
			worlds := make([][]int, len(batch))
			results := make([]*nodeTypeWorld, len(batch))
			errs := make([]error, len(batch))
			var wg sync.WaitGroup
			for b, m := range batch {
				next := append([]int(nil), counts...)
				next[m.from]--
				if m.to >= 0 {
					next[m.to]++
				}
				worlds[b] = next
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[b], errs[b] = s.eval(next)
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				return nil, nil, err
			}
			spent += len(batch)
			for b, w := range results {
				if kept || s.short(w) > s.short(cur) || len(w.onNew) > len(cur.onNew) || hasEmpty(w) {
					s.forget(worlds[b], 0)
					continue
				}
				if inOrders {
					ok, err := s.inOrders(worlds[b], w)
					if err != nil {
						return nil, nil, err
					}
					if !ok {
						continue
					}
				}
				counts, cur, kept = worlds[b], w, true
				s.trace("polish", counts, cur)
			}
		}
		if !kept {
			break
		}
	}
	return counts, cur, nil
}

// forget drops the simulation of counts in variant from the memo: polish
// tries many vectors once each, and a world holds every pod of the
// cluster (at 5,000 pods, 0.9 GB more at the end of the search without).
func (s *nodeTypeSearch) forget(counts []int, variant int) {
	key := s.memoKey(counts, false, variant)
	s.mu.Lock()
	delete(s.memo, key)
	s.mu.Unlock()
}

// polishMoves are the moves from counts, the largest saving first (then
// in the candidates' order).
func (s *nodeTypeSearch) polishMoves(counts []int) []polishMove {
	var moves []polishMove
	for i, k := range counts {
		if k == 0 {
			continue
		}
		moves = append(moves, polishMove{from: i, to: -1, saving: s.types[i].Cost})
		for j, t := range s.types {
			if j != i && t.Zone == s.types[i].Zone && t.Cost < s.types[i].Cost && counts[j] < t.Limit && s.space.room[j] != nil {
				moves = append(moves, polishMove{from: i, to: j, saving: s.types[i].Cost - t.Cost})
			}
		}
	}
	sort.SliceStable(moves, func(a, b int) bool { return moves[a].saving > moves[b].saving })
	return moves
}
