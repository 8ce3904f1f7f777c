package questions

import "slices"

// answer is a count vector and its simulation.
type answer struct {
	counts []int
	world  *nodeTypeWorld
}

// complete takes an answer to its end: polished (on large questions, and
// on small ones the exact search did not take: too many candidates or
// pending pods), balanced over the zones when asked, checked and repaired
// in other orders (robust), and, on such small questions, polished again
// with each move checked in those orders too.
func (s *nodeTypeSearch) complete(counts []int, cur *nodeTypeWorld, pods int, balance bool) ([]int, *nodeTypeWorld, error) {
	var err error
	if !s.small || !s.exactRan {
		if counts, cur, err = s.polish(counts, cur, pods, false); err != nil {
			return nil, nil, err
		}
	}
	if balance {
		if counts, cur, err = s.balance(counts, cur); err != nil {
			return nil, nil, err
		}
	}
	if counts, cur, err = s.robust(counts, cur); err != nil {
		return nil, nil, err
	}
	if s.small && !s.exactRan && s.ordersShort == 0 {
		if counts, cur, err = s.polish(counts, cur, pods, true); err != nil {
			return nil, nil, err
		}
	}
	return counts, cur, nil
}

// completeBest completes each of alts (the small question's answers the
// exact search did not judge) and returns the best: one every other
// order places as many pods first, then by better.
//
// Why each: an answer the search's own order places with the least room
// to spare is the cheapest there and the dearest once robust has
// repaired it (the peer benchmark's mix at 60 pods: the proposal's
// 3.055/h of small nodes became 3.439/h in robust's orders, while the
// rounds' answer, 3.368/h in the search's order, polished to 2.940/h,
// which every order places).
func (s *nodeTypeSearch) completeBest(alts []answer, pods int, balance bool) ([]int, *nodeTypeWorld, error) {
	var best *answer
	orders, short := 0, 0
	for i, a := range alts {
		if slices.ContainsFunc(alts[:i], func(b answer) bool { return slices.Equal(a.counts, b.counts) }) {
			continue
		}
		c, w, err := s.complete(a.counts, a.world, pods, balance)
		if err != nil {
			return nil, nil, err
		}
		held, bestHeld := s.ordersShort == 0, short == 0
		if best == nil || held && !bestHeld || held == bestHeld && s.better(c, w, best.counts, best.world) {
			best = &answer{c, w}
			orders, short = s.orders, s.ordersShort
		}
	}
	s.orders, s.ordersShort = orders, short
	return best.counts, best.world, nil
}
