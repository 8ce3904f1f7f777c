package scheduler

import (
	"context"
	"fmt"

	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/pkg/framework"
)

// A pod group's cycle with placements (the TopologyAwareWorkloadScheduling
// gate, alpha), after kube-scheduler v1.37.2's
// podGroupSchedulingPlacementAlgorithm: the PlacementGenerate plugin turns
// every node into candidate placements (TopologyPlacementGenerator: one
// per value of the group's topology key); the group's algorithm runs
// within each in turn, its members' candidates limited to the placement's
// nodes and every placement undone after; the PlacementScore plugins
// (PodGroupPodsCount) choose among the placements where the group fits,
// and that placement's results are the group's.
//
// Upstream tries the placements in map order and draws among equal
// scores; kubesched tries them in the generator's order (domains sorted)
// and draws among equal scores with its seeded source.

// placementTrial is one placement's outcome.
type placementTrial struct {
	placement    *framework.Placement
	results      []memberResult
	status       *framework.Status
	anyScheduled bool
}

// podGroupPlacementAlgorithm returns the chosen placement's results and
// status; when the group fits in none, the first placement's results with
// upstream's "0/N placements are available" status.
func (s *Scheduler) podGroupPlacementAlgorithm(ctx context.Context, fwk *runtime.Framework, g *framework.QueuedPodGroupInfo, dry bool) ([]memberResult, *framework.Status, bool) {
	if !s.pinSnapshot {
		s.Cache.UpdateSnapshot(s.snapshot)
	}
	placements, st := fwk.RunPlacementGeneratePlugins(ctx, g.PodGroupInfo, s.snapshot.ListInPlacement())
	if !st.IsSuccess() {
		return nil, st, false
	}
	metrics.GeneratedPlacementsTotal.WithLabelValues(fwk.ProfileName()).Add(float64(len(placements)))
	defer s.snapshot.ForgetPlacement()
	var first *placementTrial
	var feasible []*placementTrial
	for _, p := range placements {
		klog.FromContext(ctx).V(4).Info("Assuming placement in snapshot", "placement", p.Name)
		start := s.clock.Now()
		if err := s.snapshot.AssumePlacement(p); err != nil {
			return nil, framework.AsStatus(fmt.Errorf("failed to assume pod group placement: %w", err)), false
		}
		results, status, anyScheduled := s.podGroupAlgorithm(ctx, fwk, g, dry)
		s.snapshot.ForgetPlacement()
		if status.Code() == framework.Error {
			return results, status, false
		}
		t := &placementTrial{placement: p, results: results, status: status, anyScheduled: anyScheduled}
		if first == nil {
			first = t
		}
		outcome := metrics.InfeasibleResult
		if status.IsSuccess() {
			outcome = metrics.FeasibleResult
			feasible = append(feasible, t)
		}
		metrics.PlacementEvaluations.WithLabelValues(outcome, fwk.ProfileName()).Inc()
		metrics.PlacementEvaluationDuration.WithLabelValues(outcome, fwk.ProfileName()).Observe(s.clock.Since(start).Seconds())
	}
	if len(feasible) == 0 {
		return first.results, podGroupUnschedulable(fmt.Sprintf("0/%d placements are available, first placement status: %v", len(placements), first.status.AsError())), false
	}
	best, st := s.bestPlacement(ctx, fwk, g, feasible)
	if !st.IsSuccess() {
		return nil, st, false
	}
	return best.results, best.status, best.anyScheduled
}

// bestPlacement runs the PlacementScore plugins over the placements where
// the group fits and takes the highest total (one placement: no scoring).
func (s *Scheduler) bestPlacement(ctx context.Context, fwk *runtime.Framework, g *framework.QueuedPodGroupInfo, feasible []*placementTrial) (*placementTrial, *framework.Status) {
	if len(feasible) == 1 {
		return feasible[0], nil
	}
	assignments := make([]*framework.PodGroupAssignments, len(feasible))
	for i, t := range feasible {
		a := &framework.PodGroupAssignments{Placement: t.placement}
		for _, r := range t.results {
			if r.status.IsSuccess() && r.host != "" {
				a.ProposedAssignments = append(a.ProposedAssignments, framework.ProposedAssignment{PodInfo: r.pInfo.PodInfo, Node: r.host, State: r.state})
			}
		}
		assignments[i] = a
	}
	totals, st := fwk.RunPlacementScorePlugins(ctx, g.PodGroupInfo, assignments)
	if !st.IsSuccess() {
		return nil, st
	}
	var best []int
	for i, t := range totals {
		switch {
		case len(best) == 0 || t > totals[best[0]]:
			best = append(best[:0], i)
		case t == totals[best[0]]:
			best = append(best, i)
		}
	}
	pick := best[0]
	if len(best) > 1 {
		pick = best[s.rand.Intn(len(best))]
	}
	return feasible[pick], nil
}

// PlacementsEnabled tells whether pod groups' cycles try placements (the
// TopologyAwareWorkloadScheduling gate with GenericWorkload).
func (s *Scheduler) PlacementsEnabled() bool { return s.placements }
