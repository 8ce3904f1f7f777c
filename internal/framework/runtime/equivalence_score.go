package runtime

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// holds tells whether ni has a place in the cycle's class.
func (cy *eqCycle) holds(ni *framework.NodeInfo) bool {
	return ni.Index() >= 0 && ni.Index() < len(cy.class.entries)
}

// cachedScore returns the raw score of the cached score plugin pl (at
// slot) on ni, which the class holds, computing and recording it when the
// class has none for ni's generation.
func (f *Framework) cachedScore(ctx context.Context, pl framework.ScorePlugin, slot int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, cy *eqCycle) (int64, *framework.Status) {
	cell := &cy.class.scores[ni.Index()*f.eq.numScore+slot]
	if cell.gen == ni.Generation() {
		return cell.score, nil
	}
	s, st := runScore(ctx, pl, state, pod, ni)
	if st.IsSuccess() {
		*cell = scoreCell{gen: ni.Generation(), score: s}
	}
	return s, st
}

// scoresCached tells whether the class holds the scores of the slots
// (-1: a plugin not cached) on all but maxSerialMisses of nodes: then the
// pass is cheaper in the calling goroutine.
func (f *Framework) scoresCached(cy *eqCycle, nodes []*framework.NodeInfo, slots []int) bool {
	for _, s := range slots {
		if s < 0 {
			return false
		}
	}
	misses := 0
	for _, ni := range nodes {
		if !cy.holds(ni) {
			return false
		}
		if !f.haveScores(cy, ni, slots) {
			if misses++; misses > maxSerialMisses {
				return false
			}
		}
	}
	return true
}

// haveScores tells whether the class holds the scores of slots on ni,
// which it holds.
func (f *Framework) haveScores(cy *eqCycle, ni *framework.NodeInfo, slots []int) bool {
	return f.haveScoresAt(cy, ni.Index(), ni.Generation(), slots)
}

// haveScoresAt is haveScores for the node at position idx of generation
// gen.
func (f *Framework) haveScoresAt(cy *eqCycle, idx int, gen int64, slots []int) bool {
	cells := cy.class.scores[idx*f.eq.numScore:]
	for _, s := range slots {
		if cells[s].gen != gen {
			return false
		}
	}
	return true
}

// knownPositions returns positions (nodes[i] is at positions[i] of the
// snapshot's list) with the generations and names the snapshot keeps
// beside its list, when they hold for every node; else nils. The check
// compares pointers of the list, not the NodeInfos' contents.
func (f *Framework) knownPositions(nodes []*framework.NodeInfo, positions []int32) ([]int32, []int64, []string) {
	ng := f.opts.NodeGenerations
	if ng == nil || len(positions) != len(nodes) || len(nodes) == 0 {
		return nil, nil, nil
	}
	list, _ := ng.List()
	gens, names := ng.Generations(), ng.Names()
	if len(gens) != len(list) || len(names) != len(list) {
		return nil, nil, nil
	}
	for i, p := range positions {
		if p < 0 || int(p) >= len(list) || list[p] != nodes[i] {
			return nil, nil, nil
		}
	}
	return positions, gens, names
}

// scoreTotalsCached is the totals-only score pass when every score plugin
// of the cycle is cached (the plugins, their slots and whether each
// normalizes are in buf). Per node, the weighted sum of the plugins that
// do not normalize is kept in the node's entry, so a warm node costs one
// load for them; the normalizing plugins' raw scores are read from the
// cache into their lists and normalized as usual. Totals are the same sums
// as runScorePlugins' (integer addition, any order).
//
// ok is false, with nothing returned, when the pass can't be served this
// way: a plugin not cached, more than maxSerialMisses nodes with scores
// to compute, a score out of range or a failing plugin or normalizer; the
// caller then runs the general pass, which reports any error as before
// (what this pass computed stays cached, and is valid).
func (f *Framework) scoreTotalsCached(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, cy *eqCycle, buf *ScoreBuffers) ([]framework.NodePluginScores, bool) {
	plugins, slots, named := buf.plugins, buf.slots, buf.named
	norm := buf.norm[:0]     // indexes in plugins of the normalizing ones
	summed := buf.summed[:0] // slots of the others, summed in the entries
	normSlots := buf.normSlots[:0]
	for j, s := range slots {
		if s < 0 {
			return nil, false
		}
		if named[j] {
			norm = append(norm, j)
			normSlots = append(normSlots, s)
		} else {
			summed = append(summed, s)
		}
	}
	buf.norm, buf.summed, buf.normSlots = norm, summed, normSlots
	set := f.eq.partialSetOf(summed)
	lists := buf.lists(len(norm), len(nodes))
	out, _ := buf.results(len(nodes), 0)
	entries := cy.class.entries
	misses := 0
	// With the nodes' positions in the snapshot's list (buf.Positions),
	// their generations and names come from the arrays the snapshot keeps
	// beside it: on a large cluster, reading hundreds of NodeInfos
	// scattered over the heap was a cache miss each, the pass's main cost
	// once its scores are cached.
	pos, gens, names := f.knownPositions(nodes, buf.Positions)
	for i, ni := range nodes {
		var idx int
		var gen int64
		var name string
		if pos != nil {
			idx = int(pos[i])
			gen, name = gens[idx], names[idx]
		} else {
			if !cy.holds(ni) {
				return nil, false
			}
			idx, gen, name = ni.Index(), ni.Generation(), ni.NodeName()
		}
		if idx >= len(entries) {
			return nil, false
		}
		e := &entries[idx]
		if e.gen != gen {
			*e = eqEntry{gen: gen}
		}
		summedOK, normOK := e.partialSet == set, f.haveScoresAt(cy, idx, gen, normSlots)
		if !summedOK || !normOK {
			// Only scores to compute count as misses: a sum of cached
			// scores (left by the general pass, which keeps no sums) is cheap.
			if !normOK || (!summedOK && !f.haveScoresAt(cy, idx, gen, summed)) {
				if misses++; misses > maxSerialMisses {
					return nil, false
				}
			}
			if !f.fillScores(ctx, state, pod, ni, cy, e, set, buf) {
				return nil, false
			}
		}
		cells := cy.class.scores[idx*f.eq.numScore:]
		for k, s := range normSlots {
			lists[k][i] = framework.NodeScore{Name: name, Score: cells[s].score}
		}
		out[i] = framework.NodePluginScores{Name: name, TotalScore: e.partial}
	}
	for k, j := range norm {
		pl := plugins[j]
		if st := pl.ScoreExtensions().NormalizeScore(ctx, state, pod, lists[k]); !st.IsSuccess() {
			return nil, false
		}
		for i := range lists[k] {
			s := lists[k][i].Score
			if s > framework.MaxNodeScore || s < framework.MinNodeScore {
				return nil, false
			}
			out[i].TotalScore += s * pl.weight
		}
	}
	return out, true
}

// fillScores computes what the class lacks of this cycle's scores on ni
// (whose entry is e), and keeps in e the weighted sum of the
// non-normalizing ones (the partial set set); false when a plugin fails
// or a non-normalizing score is out of range.
func (f *Framework) fillScores(ctx context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, cy *eqCycle, e *eqEntry, set int, buf *ScoreBuffers) bool {
	var partial int64
	for j, pl := range buf.plugins {
		s, st := f.cachedScore(ctx, pl.ScorePlugin, buf.slots[j], state, pod, ni, cy)
		if !st.IsSuccess() {
			return false
		}
		if buf.named[j] {
			continue
		}
		if s > framework.MaxNodeScore || s < framework.MinNodeScore {
			return false
		}
		partial += s * pl.weight
	}
	e.partial, e.partialSet = partial, set
	return true
}
