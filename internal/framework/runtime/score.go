package runtime

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/framework/parallelize"
	"github.com/kubesched/kubesched/pkg/framework"
)

// ScoreBuffers are a score pass's working slices and its result. The
// caller owns them: a pass writes its result into them, and the result
// stays valid until the caller hands the same ScoreBuffers to another
// pass. Reusing them from cycle to cycle keeps a pass over hundreds of
// nodes from allocating per node. The zero value is ready to use.
type ScoreBuffers struct {
	// plugins, slots and named describe the pass's score plugins: slots
	// are their equivalence-cache slots (-1: not cached), named[j] says
	// plugins[j] normalizes (NormalizeScore may read the node names).
	plugins []weightedScore
	slots   []int
	named   []bool
	// norm, summed and normSlots are scoreTotalsCached's split of the
	// plugins into those that normalize and those summed in the cache.
	norm, summed, normSlots []int
	perPlugin               []framework.NodeScoreList
	scores                  []framework.NodeScore
	out                     []framework.NodePluginScores
	flat                    []framework.PluginScore
	names                   []string
	// Positions, when the caller knows them, are the positions of the
	// nodes to score in Options.NodeGenerations' list (the snapshot's),
	// one per node; a pass reads them only when each one holds.
	Positions []int32
}

// lists returns nPlugins lists of nNodes scores, not cleared: the caller
// writes every Score, and every Name that a normalizer may read.
func (s *ScoreBuffers) lists(nPlugins, nNodes int) []framework.NodeScoreList {
	if cap(s.scores) < nPlugins*nNodes {
		s.scores = make([]framework.NodeScore, nPlugins*nNodes)
	}
	all := s.scores[:nPlugins*nNodes]
	s.perPlugin = s.perPlugin[:0]
	for j := 0; j < nPlugins; j++ {
		s.perPlugin = append(s.perPlugin, all[j*nNodes:(j+1)*nNodes:(j+1)*nNodes])
	}
	return s.perPlugin
}

// results returns the per-node results and their per-plugin backing.
func (s *ScoreBuffers) results(nNodes, nPlugins int) ([]framework.NodePluginScores, []framework.PluginScore) {
	if cap(s.out) < nNodes {
		s.out = make([]framework.NodePluginScores, nNodes)
	}
	if cap(s.flat) < nNodes*nPlugins {
		s.flat = make([]framework.PluginScore, nNodes*nPlugins)
	}
	return s.out[:nNodes], s.flat[:nNodes*nPlugins]
}

var _ framework.Handle = &Framework{}

// RunPreScorePlugins runs PreScore on the feasible nodes; Skip is recorded
// in state.SkipScorePlugins.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) *framework.Status {
	var skip framework.PluginNames
	var skipMask uint64
	masked := len(f.preScore) <= maxSkipPlugins
	for i, pl := range f.preScore {
		var start time.Time
		if state.RecordPluginMetrics {
			start = time.Now()
		}
		st := pl.PreScore(ctx, state, pod, nodes)
		if state.RecordPluginMetrics {
			observePlugin(pl.Name(), "PreScore", st, start)
		}
		if st.IsSkip() {
			if masked {
				skipMask |= 1 << i
			} else {
				skip.Insert(pl.Name())
			}
			continue
		}
		if !st.IsSuccess() {
			return framework.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), st.AsError())).WithPlugin(pl.Name())
		}
	}
	if masked {
		skip = f.preScoreSkips.list(skipMask, len(f.preScore), func(i int) string { return f.preScore[i].Name() })
	}
	state.SkipScorePlugins = skip
	return nil
}

// RunScorePlugins scores every node with every non-skipped Score plugin in
// parallel over nodes, normalizes per plugin, and applies the weights.
// The result lives in buf until buf is passed to another pass; a nil buf
// makes the result the caller's alone.
func (f *Framework) RunScorePlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, buf *ScoreBuffers) ([]framework.NodePluginScores, *framework.Status) {
	if buf == nil {
		buf = &ScoreBuffers{}
	}
	return f.runScorePlugins(ctx, state, pod, nodes, true, buf)
}

// RunScorePluginsTotals is RunScorePlugins without the per-plugin scores
// (Scores is nil): what selecting a host needs, without writing a name per
// plugin per node every cycle.
func (f *Framework) RunScorePluginsTotals(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, buf *ScoreBuffers) ([]framework.NodePluginScores, *framework.Status) {
	if buf == nil {
		buf = &ScoreBuffers{}
	}
	return f.runScorePlugins(ctx, state, pod, nodes, false, buf)
}

func (f *Framework) runScorePlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, perPlugin bool, buf *ScoreBuffers) ([]framework.NodePluginScores, *framework.Status) {
	plugins, slots, named := buf.plugins[:0], buf.slots[:0], buf.named[:0]
	cy := f.cycleOf(state)
	for i, pl := range f.score {
		if !state.SkipScorePlugins.Has(pl.Name()) {
			plugins = append(plugins, pl)
			slot := -1 // the equivalence cache's score slot, or -1
			if cy != nil {
				slot = cy.scoreSlot[i]
			}
			slots = append(slots, slot)
			// named[j]: plugin j normalizes, and NormalizeScore may read the names.
			named = append(named, pl.ScoreExtensions() != nil)
		}
	}
	buf.plugins, buf.slots, buf.named = plugins, slots, named
	if cy != nil && !perPlugin {
		if out, ok := f.scoreTotalsCached(ctx, state, pod, nodes, cy, buf); ok {
			return out, nil
		}
	}
	scores := buf.lists(len(plugins), len(nodes))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errCh := make(chan *framework.Status, 1)
	until := f.parallelizer.Until
	if cy != nil && f.scoresCached(cy, nodes, slots) {
		until = parallelize.Serially
	}
	until(ctx, len(nodes), func(i int) {
		ni := nodes[i]
		name := ni.NodeName()
		cached := cy != nil && cy.holds(ni)
		for j, pl := range plugins {
			var s int64
			var st *framework.Status
			if slot := slots[j]; slot >= 0 && cached {
				s, st = f.cachedScore(ctx, pl.ScorePlugin, slot, state, pod, ni, cy)
			} else {
				s, st = runScore(ctx, pl.ScorePlugin, state, pod, ni)
			}
			if !st.IsSuccess() {
				select {
				case errCh <- framework.AsStatus(fmt.Errorf("plugin %q failed with: %w", pl.Name(), st.AsError())).WithPlugin(pl.Name()):
				default:
				}
				cancel()
				return
			}
			if named[j] {
				scores[j][i] = framework.NodeScore{Name: name, Score: s}
			} else {
				scores[j][i].Score = s
			}
		}
	})
	select {
	case st := <-errCh:
		return nil, st
	default:
	}
	for j, pl := range plugins {
		if ext := pl.ScoreExtensions(); ext != nil {
			if st := ext.NormalizeScore(ctx, state, pod, scores[j]); !st.IsSuccess() {
				return nil, framework.AsStatus(fmt.Errorf("running Normalize on Score plugins: %w", st.AsError())).WithPlugin(pl.Name())
			}
		}
		for i := range scores[j] {
			s := scores[j][i].Score
			if s > framework.MaxNodeScore || s < framework.MinNodeScore {
				return nil, framework.AsStatus(fmt.Errorf("plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing", pl.Name(), s, framework.MinNodeScore, framework.MaxNodeScore))
			}
		}
	}
	if !perPlugin {
		out, _ := buf.results(len(nodes), 0)
		for i := range nodes {
			var total int64
			for j, pl := range plugins {
				total += scores[j][i].Score * pl.weight
			}
			out[i] = framework.NodePluginScores{Name: nodes[i].NodeName(), TotalScore: total}
		}
		return out, nil
	}
	out, flat := buf.results(len(nodes), len(plugins))
	names := buf.names[:0]
	for _, pl := range plugins {
		names = append(names, pl.Name())
	}
	buf.names = names
	for i := range nodes {
		o := &out[i]
		*o = framework.NodePluginScores{Name: nodes[i].NodeName(), Scores: flat[i*len(plugins) : (i+1)*len(plugins) : (i+1)*len(plugins)]}
		for j, pl := range plugins {
			w := scores[j][i].Score * pl.weight
			o.Scores[j] = framework.PluginScore{Name: names[j], Score: w}
			o.TotalScore += w
		}
	}
	return out, nil
}

func runScore(ctx context.Context, pl framework.ScorePlugin, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (s int64, st *framework.Status) {
	defer recoverAsStatus(pl.Name(), "Score", &st)
	if !state.RecordPluginMetrics {
		return pl.Score(ctx, state, pod, ni)
	}
	start := time.Now()
	s, st = pl.Score(ctx, state, pod, ni)
	observePlugin(pl.Name(), "Score", st, start)
	return s, st
}
