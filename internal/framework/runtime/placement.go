package runtime

import (
	"context"
	"fmt"

	"github.com/kubesched/kubesched/pkg/framework"
)

// weightedPlacementScore is a PlacementScore plugin with its weight.
type weightedPlacementScore struct {
	framework.PlacementScorePlugin
	weight int64
}

// RunPlacementGeneratePlugins returns the candidate placements for a group
// (upstream's RunPlacementGeneratePlugins): the parent placement itself
// without a PlacementGenerate plugin; Unschedulable "no feasible placements
// found" when the plugin returns none.
func (f *Framework) RunPlacementGeneratePlugins(ctx context.Context, pgi *framework.PodGroupInfo, nodes []*framework.NodeInfo) ([]*framework.Placement, *framework.Status) {
	parent := &framework.Placement{Nodes: nodes}
	if len(f.placementGenerate) == 0 {
		return []*framework.Placement{parent}, nil
	}
	pl := f.placementGenerate[0]
	placements, st := pl.GeneratePlacements(ctx, pgi, parent)
	if !st.IsSuccess() {
		return nil, st.WithPlugin(pl.Name())
	}
	if len(placements) == 0 {
		return nil, framework.NewStatus(framework.Unschedulable, "no feasible placements found").WithPlugin(pl.Name())
	}
	return placements, nil
}

// RunPlacementScorePlugins scores the placements where the group fits and
// returns each one's weighted total, in the order given (upstream's
// RunPlacementScorePlugins: score, normalize, check the range, weigh).
func (f *Framework) RunPlacementScorePlugins(ctx context.Context, pgi *framework.PodGroupInfo, assignments []*framework.PodGroupAssignments) ([]int64, *framework.Status) {
	totals := make([]int64, len(assignments))
	scores := make([]framework.PlacementScore, len(assignments))
	for _, pl := range f.placementScore {
		for i, a := range assignments {
			s, st := pl.ScorePlacement(ctx, pgi, a)
			if !st.IsSuccess() {
				return nil, framework.AsStatus(fmt.Errorf("running PlacementScore plugins: plugin %q failed with: %w", pl.Name(), st.AsError()))
			}
			scores[i] = framework.PlacementScore{Placement: a.Placement, Score: s}
		}
		if n, ok := pl.PlacementScorePlugin.(framework.PlacementScoreNormalizer); ok {
			if st := n.NormalizePlacementScores(ctx, pgi, scores); !st.IsSuccess() {
				return nil, framework.AsStatus(fmt.Errorf("running NormalizePlacementScore on PlacementScore plugins: plugin %q failed with: %w", pl.Name(), st.AsError()))
			}
		}
		for i, s := range scores {
			if s.Score > framework.MaxNodeScore || s.Score < framework.MinNodeScore {
				return nil, framework.AsStatus(fmt.Errorf("applying score defaultWeights on PlacementScore plugins: plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing", pl.Name(), s.Score, framework.MinNodeScore, framework.MaxNodeScore))
			}
			totals[i] += s.Score * pl.weight
		}
	}
	return totals, nil
}
