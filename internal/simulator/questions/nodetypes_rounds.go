package questions

import (
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// floorUncappedMin: setFloor's worlds whose counts are not capped at the
// pending pods are simulated only when they add at most this many nodes
// (or four per pending pod): the fuzzer's cases, whose limits are a few
// nodes per type, not a catalogue of types at 1,000 nodes per zone.
const floorUncappedMin = 200

// setFloor simulates every usable type at its limit, and at as many
// nodes as there are pending pods that could run on it, and pods of the
// cluster's (more nodes of a type than pods for them only change where
// the scheduler puts pods, and spreading over more nodes may leave more
// pending), each capped at the pending pods and (when not too many
// nodes, floorUncappedMin) not: the pods all these worlds leave pending
// are the floor, where rounds stops.
func (s *nodeTypeSearch) setFloor(usable []bool, pending, pods []*v1.Pod) error {
	byPending, byAll := s.space.users(pending), s.space.users(pods)
	var floor map[string]bool
	// Each world is one draw of the scheduler's scores (default
	// spreading, LeastAllocated): a pod one leaves pending another may
	// place. The more worlds the floor is taken over, the fewer pods it
	// wrongly gives up; each costs one simulation of a small question
	// (a world asked twice is the memo's).
	var worlds [][]int
	for _, most := range []func(i int) int{
		func(i int) int { return s.types[i].Limit },
		func(i int) int { return min(s.types[i].Limit, byPending[i]) },
		func(i int) int { return min(s.types[i].Limit, byAll[i]) },
	} {
		for _, capped := range []bool{true, false} {
			all := make([]int, len(s.types))
			for i := range s.types {
				if usable[i] {
					all[i] = most(i)
					if capped {
						all[i] = min(all[i], len(pending))
					}
				}
			}
			if !capped && sumCounts(all) > max(floorUncappedMin, 4*len(pending)) {
				continue // a world of thousands of nodes: seconds each
			}
			worlds = append(worlds, all)
		}
	}
	for _, all := range worlds {
		s.floorCost = max(s.floorCost, s.cost(all))
		w, err := s.eval(all)
		if err != nil {
			return err
		}
		// A new node's agent left pending there is the floor world's own
		// crowding, not a pod no plan can place.
		if len(w.onNew) > 0 {
			// The room was short and the pods took the new nodes' agents':
			// what it leaves is no set a plan with every agent in leaves. The
			// floor is taken with the agents first (as system-node-critical
			// agents are placed), as the planner fuzzer's judge takes it.
			if w, err = s.evalWith(all, true); err != nil {
				return err
			}
		}
		s.trace("floor", all, w)
		left := map[string]bool{}
		for _, p := range w.pendingPods {
			if _, ok := w.onNew[p]; !ok && (floor == nil || floor[p.Namespace+"/"+p.Name]) {
				left[p.Namespace+"/"+p.Name] = true
			}
		}
		floor = left
	}
	// Set once, before the simulations that run side by side read it.
	s.floorSet, s.floor = floor, len(floor)
	return nil
}

// users counts, per candidate, the pods that could run on it (candidates),
// DaemonSet pods aside.
func (s *packSpace) users(pods []*v1.Pod) []int {
	out := make([]int, len(s.types))
	for _, p := range pods {
		if cluster.IsDaemonSetPod(p) {
			continue
		}
		for i, ok := range s.candidates(p) {
			if ok {
				out[i]++
			}
		}
	}
	return out
}

// rounds is the search by rounds of types, from counts (cur its
// simulation): each round, every type tried alone on top of counts, the
// one placing the most pods per unit of cost kept, until no more than
// the floor's pods are left pending or no type places more.
func (s *nodeTypeSearch) rounds(usable []bool, counts []int, cur *nodeTypeWorld) ([]int, *nodeTypeWorld, error) {
	types := s.types
	limitOf := func(i int) int {
		if !usable[i] {
			return 0
		}
		return max(types[i].Limit, counts[i]) // never below what the proposal has
	}
	var err error
	var tries []typeTry // the last round's: where this round's searches start
	for len(cur.pending) > s.floor {
		// Each type is tried alone on top of counts; the tries are
		// independent simulations, run side by side, and compared in the
		// types' order (the answer does not depend on which ends first).
		// A type that placed nothing more in the last round is left out
		// while another places more; when none does, every type is tried
		// again before the search ends.
		skip := func(i int) bool { return tries != nil && tries[i].gain <= 0 }
		if tries, err = s.tryEach(counts, len(cur.pending), limitOf, tries, skip); err != nil {
			return nil, nil, err
		}
		best, bestK := bestTry(types, tries)
		if best < 0 && slices.ContainsFunc(tries, func(t typeTry) bool { return t.skipped }) {
			if tries, err = s.tryEach(counts, len(cur.pending), limitOf, tries, func(i int) bool { return !tries[i].skipped }); err != nil {
				return nil, nil, err
			}
			best, bestK = bestTry(types, tries)
		}
		if best < 0 {
			break // no type places any more pods
		}
		counts[best] += bestK
		if cur, err = s.eval(counts); err != nil {
			return nil, nil, err
		}
	}
	return counts, cur, nil
}

// typeTry is what adding nodes of one type alone does: gain is how many
// fewer pods it leaves pending with as many as it may add, nodes the
// fewest of it that leave as few; skipped, that the round did not try it
// (gain and nodes are the round's before).
type typeTry struct {
	gain, nodes int
	skipped     bool
}

// bestTry is the type whose try places the most pods per unit of cost
// (on a tie, the fewest nodes; then the first), and its nodes; -1 when no
// try places any.
func bestTry(types []NodeType, tries []typeTry) (best, nodes int) {
	best = -1
	var bestRate float64
	for i, t := range types {
		tr := tries[i]
		if tr.gain <= 0 || tr.skipped {
			continue
		}
		rate := math.Inf(1)
		if cost := float64(tr.nodes) * t.Cost; cost > 0 {
			rate = float64(tr.gain) / cost
		}
		if best < 0 || rate > bestRate || (rate == bestRate && tr.nodes < nodes) {
			best, nodes, bestRate = i, tr.nodes, rate
		}
	}
	return best, nodes
}

// tryEach tries every type with room alone on top of counts, s.workers
// at a time, but those skip names (whose last try it keeps, marked
// skipped); pending is how many pods counts leaves pending, and last the
// previous round's tries (nil in the first).
func (s *nodeTypeSearch) tryEach(counts []int, pending int, limitOf func(int) int, last []typeTry, skip func(int) bool) ([]typeTry, error) {
	out := make([]typeTry, len(s.types))
	for i := range out {
		if skip(i) {
			out[i] = last[i]
			out[i].skipped = true
		}
	}
	errs := make([]error, len(s.types))
	next := make(chan int)
	var wg sync.WaitGroup
	var failed atomic.Bool
	for range max(1, min(s.workers, len(s.types))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				hint := 0
				if last != nil {
					hint = last[i].nodes
				}
				if out[i], errs[i] = s.tryType(counts, i, limitOf(i)-counts[i], pending, hint); errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	for i := range s.types {
		if failed.Load() {
			break // a simulation failed: start no more
		}
		if !out[i].skipped {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}

// tryType searches for the fewest nodes of type i (room at most) that
// leave as few pods pending as room of them do.
//
// hint, when not 0, is what the previous round found for the type, on
// fewer nodes of the other types: the answer is most often the same or a
// little less. The search then starts there and gallops (1, 2, 4, ...
// nodes away) to a bracket before it bisects: 3 simulations when nothing
// changed, where a bisection from scratch takes log2(room). Either way the
// answer is a count k that places as many pods as room nodes and k-1 does
// not; when that is true of one k only (more nodes never leave more pods
// pending), both find it.
func (s *nodeTypeSearch) tryType(counts []int, i, room, pending, hint int) (typeTry, error) {
	if room <= 0 {
		return typeTry{}, nil
	}
	try := func(k int) (*nodeTypeWorld, error) {
		c := slices.Clone(counts)
		c[i] += k
		return s.eval(c)
	}
	// Where the last round found an answer, a few more nodes than it most
	// often leave as few pods pending as the floor: no count can leave
	// fewer, so the search needs no simulation of room nodes.
	var most *nodeTypeWorld
	if k := hint + hint/8 + 1; hint > 0 && k < room {
		w, err := try(k)
		if err != nil {
			return typeTry{}, err
		}
		if len(w.pending) <= s.floor {
			most, room = w, k
		}
	}
	if most == nil {
		var err error
		if most, err = try(room); err != nil {
			return typeTry{}, err
		}
	}
	gain := pending - len(most.pending)
	if gain <= 0 {
		return typeTry{}, nil
	}
	if hint == 0 {
		hint = nodesHint(most, i, s.types[i])
	}
	nodes, err := fewestFitting(room, hint, func(k int) (bool, error) {
		w, err := try(k)
		if err != nil {
			return false, err
		}
		return len(w.pending) <= len(most.pending), nil
	}, func(k int) int {
		// k nodes leave some pods pending: as many more nodes as hold
		// them at the pods per node placed on these.
		w, err := try(k) // simulated already: the memo's
		if err != nil || w.placed[i] == 0 {
			return 0
		}
		short := len(w.pending) - len(most.pending)
		return k + (short*k+w.placed[i]-1)/w.placed[i]
	})
	return typeTry{gain: gain, nodes: nodes}, err
}

// fewestFitting finds a k in 1..room with fits(k) and not fits(k-1),
// fits(room) and not fits(0) being given, starting at hint when it is in
// 1..room-1 (see tryType). When fits holds from one count on, k is that
// count.
//
// estimate, when not nil, guesses from a count that does not fit the
// fewest that do (tryType: from the pods still pending and the pods per
// node placed). After a count that does not fit, the next probe is the
// guess, and when the guess fits, one less is tried next: a good guess
// ends the search in two simulations. A guess that does not fit is
// followed by a bisection step, and a bisection step follows every
// confirmed guess, so that poor guesses cost a few bisections' worth of
// simulations at most.
func fewestFitting(room, hint int, fits func(int) (bool, error), estimate func(int) int) (int, error) {
	lo, hi := 0, room // lo does not fit, hi does
	// probe asks about k, lo < k < hi, and narrows the bracket.
	probe := func(k int) (bool, error) {
		fit, err := fits(k)
		if err == nil {
			if fit {
				hi = k
			} else {
				lo = k
			}
		}
		return fit, err
	}
	const (
		plain     = iota // bisect
		guess            // lo just failed: probe the estimate
		confirm          // the estimate fitted: probe one less
		afterMiss        // an estimate failed: bisect once, then guess
	)
	mode := plain
	if hint > 0 && hint < room {
		ok, err := probe(hint)
		if err != nil {
			return 0, err
		}
		if !ok && estimate != nil {
			mode = guess
		} else {
			// Gallop away from the hint, 1, 2, 4, ... counts at a time,
			// until the answer is bracketed.
			for step := 1; hi-lo > 1; step *= 2 {
				k := hi - step
				if !ok {
					k = lo + step
				}
				if k <= lo || k >= hi {
					break
				}
				fit, err := probe(k)
				if err != nil {
					return 0, err
				}
				if fit != ok {
					break
				}
			}
		}
	}
	for hi-lo > 1 {
		k, next := (lo+hi)/2, plain
		switch {
		case mode == guess && estimate != nil && lo > 0:
			if e := estimate(lo); e > lo {
				k, next = min(e, hi-1), confirm
			}
		case mode == confirm:
			k = hi - 1
		case mode == afterMiss:
			next = guess
		}
		fit, err := probe(k)
		if err != nil {
			return 0, err
		}
		switch {
		case next == confirm && !fit:
			mode = afterMiss
		case next == confirm:
			mode = confirm
		case !fit && estimate != nil && (mode == plain || next == guess):
			mode = guess
		default:
			mode = plain
		}
	}
	return hi, nil
}

// acceptable: w leaves pending only pods the floor world leaves (and no
// new node's DaemonSet pod); without a floor, nothing pending.
func (s *nodeTypeSearch) acceptable(w *nodeTypeWorld) bool {
	if len(w.onNew) > 0 {
		return false
	}
	for _, p := range w.pendingPods {
		if !s.floorSet[p.Namespace+"/"+p.Name] {
			return false
		}
	}
	return len(w.pendingPods) == len(w.pending)
}

// short is how many pods w leaves pending that some plan places: those
// outside the floor world's (all of them before the floor is known, or
// on questions too large for it). The search compares answers by it: a
// plan that leaves more pods pending, all of them the floor's, is
// better than one that leaves a pod pending another plan places.
func (s *nodeTypeSearch) short(w *nodeTypeWorld) int {
	if s.floorSet == nil {
		return len(w.pending)
	}
	n := 0
	for _, p := range w.pending {
		if !s.floorSet[p.Namespace+"/"+p.Name] {
			n++
		}
	}
	return n
}

// needing are w's pending pods that some plan places (see short): the
// pods the packer packs.
func (s *nodeTypeSearch) needing(w *nodeTypeWorld) []*v1.Pod {
	if s.floorSet == nil {
		return w.pendingPods
	}
	var out []*v1.Pod
	for _, p := range w.pendingPods {
		if !s.floorSet[p.Namespace+"/"+p.Name] {
			out = append(out, p)
		}
	}
	return out
}

// better: answer a (counts, its world) beats b: acceptable when b is not,
// else fewer pods pending that some plan places, else cheaper.
func (s *nodeTypeSearch) better(ac []int, a *nodeTypeWorld, bc []int, b *nodeTypeWorld) bool {
	if oa, ob := s.acceptable(a), s.acceptable(b); oa != ob {
		return oa
	}
	if sa, sb := s.short(a), s.short(b); sa != sb {
		return sa < sb
	}
	return s.cost(ac) < s.cost(bc)-1e-9
}
