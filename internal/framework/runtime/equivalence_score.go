package runtime

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// scoreTotalsCached is the totals-only score pass when every score plugin
// of the cycle is cached (the plugins, their slots and whether each
// normalizes are in f.scoreScratch). Per node, the weighted sum of the
// plugins that do not normalize is kept in the node's entry, so a warm
// node costs one load for them; the normalizing plugins' raw scores are
// read from the cache into their lists and normalized as usual. Totals
// are the same sums as runScorePlugins' (integer addition, any order).
//
// ok is false, with nothing returned, when the pass can't be served this
// way: a plugin not cached, more than maxSerialMisses nodes with scores
// to compute, a score out of range or a failing plugin or normalizer; the
// caller then runs the general pass, which reports any error as before
// (what this pass computed stays cached, and is valid).
func (f *Framework) scoreTotalsCached(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, cy *eqCycle) ([]framework.NodePluginScores, bool) {
	buf := &f.scoreScratch
	plugins, slots, named := buf.plugins, buf.slots, buf.named
	var partialMask uint64
	norm := buf.norm[:0] // indexes in plugins of the normalizing ones
	for j, s := range slots {
		if s < 0 {
			return nil, false
		}
		if named[j] {
			norm = append(norm, j)
		} else {
			partialMask |= 1 << s
		}
	}
	buf.norm = norm
	lists := buf.lists(len(norm), len(nodes))
	out, _ := buf.results(len(nodes), 0)
	entries := cy.class.entries
	misses := 0
	for i, ni := range nodes {
		idx := ni.Index
		if idx < 0 || idx >= len(entries) {
			return nil, false
		}
		e := &entries[idx]
		if e.gen != ni.Generation {
			*e = eqEntry{gen: ni.Generation}
		}
		need := partialMask
		for _, j := range norm {
			need |= 1 << slots[j]
		}
		if e.scored&need != need || !(e.hasPartial && e.partialMask == partialMask) {
			// Only scores to compute count as misses: a sum of cached
			// scores (left by the general pass, which keeps no sums) is cheap.
			if e.scored&need != need {
				if misses++; misses > maxSerialMisses {
					return nil, false
				}
			}
			if !f.fillScores(ctx, state, pod, ni, cy, e, partialMask) {
				return nil, false
			}
		}
		at := idx * f.eq.numScore
		for k, j := range norm {
			lists[k][i] = framework.NodeScore{Name: ni.NodeName(), Score: cy.class.scores[at+slots[j]]}
		}
		out[i] = framework.NodePluginScores{Name: ni.NodeName(), TotalScore: e.partial}
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

// fillScores computes what ni's entry e lacks of this cycle's cached
// scores, and the weighted sum of the non-normalizing ones (the slots of
// partialMask); false when a plugin fails or a non-normalizing score is
// out of range.
func (f *Framework) fillScores(ctx context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, cy *eqCycle, e *eqEntry, partialMask uint64) bool {
	buf := &f.scoreScratch
	var partial int64
	for j, pl := range buf.plugins {
		s, st := f.cachedScore(ctx, pl.ScorePlugin, buf.slots[j], state, pod, ni, cy, e)
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
	e.partial, e.partialMask, e.hasPartial = partial, partialMask, true
	return true
}
