package framework

import "context"

// Placements (the TopologyAwareWorkloadScheduling feature gate, alpha and
// off by default in kube-scheduler v1.37): a pod group's cycle asks the
// PlacementGenerate plugin for candidate sets of nodes, runs the group's
// algorithm within each, and lets the PlacementScore plugins choose among
// the sets where the group fits.

// Placement is a set of nodes a group's cycle may use, in the snapshot's
// order; Name says which (a topology domain's value).
type Placement struct {
	Name  string
	Nodes []*NodeInfo
}

// PlacementGeneratePlugin turns the parent placement (every node) into
// candidate placements; an empty answer means the group fits nowhere.
type PlacementGeneratePlugin interface {
	Plugin
	GeneratePlacements(ctx context.Context, pgi *PodGroupInfo, parent *Placement) ([]*Placement, *Status)
}

// PodGroupAssignments is where a group's algorithm placed its members
// within one placement.
type PodGroupAssignments struct {
	Placement           *Placement
	ProposedAssignments []ProposedAssignment
}

// PlacementScore is a plugin's score for one placement.
type PlacementScore struct {
	Placement *Placement
	Score     int64
}

// PlacementScorePlugin scores the placements where the group fits; the
// highest weighted sum wins.
type PlacementScorePlugin interface {
	Plugin
	ScorePlacement(ctx context.Context, pgi *PodGroupInfo, a *PodGroupAssignments) (int64, *Status)
}

// PlacementScoreNormalizer is a PlacementScorePlugin that brings its
// scores into [MinNodeScore, MaxNodeScore] once all placements are scored.
type PlacementScoreNormalizer interface {
	NormalizePlacementScores(ctx context.Context, pgi *PodGroupInfo, scores []PlacementScore) *Status
}
