// Package podgrouppodscount holds PodGroupPodsCount, kube-scheduler
// v1.37.2's PlacementScore plugin (the TopologyAwareWorkloadScheduling
// gate, alpha): among the placements where a pod group fits, it favours
// the ones that hold more of its pods.
package podgrouppodscount

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "PodGroupPodsCount"

// PodGroupPodsCount is a PlacementScore plugin.
type PodGroupPodsCount struct {
	handle framework.Handle
}

var (
	_ framework.PlacementScorePlugin     = &PodGroupPodsCount{}
	_ framework.PlacementScoreNormalizer = &PodGroupPodsCount{}
)

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &PodGroupPodsCount{handle: h}, nil
}

// Name implements framework.Plugin.
func (*PodGroupPodsCount) Name() string { return Name }

// ScorePlacement implements framework.PlacementScorePlugin: the group's
// pods already scheduled plus the ones the placement holds.
func (pl *PodGroupPodsCount) ScorePlacement(_ context.Context, pgi *framework.PodGroupInfo, a *framework.PodGroupAssignments) (int64, *framework.Status) {
	scheduled := 0
	if groups := pl.handle.PodGroupManager(); groups != nil {
		st, ok := groups.PodGroupState(pgi.Namespace, pgi.Name)
		if !ok {
			return 0, framework.AsStatus(fmt.Errorf("pod group state not found for pod group %s/%s", pgi.Namespace, pgi.Name))
		}
		scheduled = st.ScheduledPodsCount()
	}
	return int64(scheduled + len(a.ProposedAssignments)), nil
}

// NormalizePlacementScores implements framework.PlacementScoreNormalizer:
// scores scaled so that the largest count is MaxNodeScore (minCount is
// deliberately not the reference, as upstream).
func (pl *PodGroupPodsCount) NormalizePlacementScores(_ context.Context, _ *framework.PodGroupInfo, scores []framework.PlacementScore) *framework.Status {
	maxCount := int64(0)
	for _, s := range scores {
		maxCount = max(maxCount, s.Score)
	}
	if maxCount == 0 {
		return framework.AsStatus(errors.New("no pods from pod group are assigned to any of the candidate placements"))
	}
	for i := range scores {
		scores[i].Score = framework.MinNodeScore + scores[i].Score*(framework.MaxNodeScore-framework.MinNodeScore)/maxCount
	}
	return nil
}
