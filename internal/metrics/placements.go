package metrics

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// The metrics kube-scheduler v1.37.2 adds with the
// TopologyAwareWorkloadScheduling gate (names, help, buckets and labels
// as its metrics.go).
var (
	// GeneratedPlacementsTotal counts the candidate placements generated.
	GeneratedPlacementsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "generated_placements_total",
		Help:           "Number of candidate placements generated when scheduling pod groups.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile"})
	// PlacementEvaluations counts the placements tried, by result.
	PlacementEvaluations = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "placement_evaluations_total",
		Help:           "Number of candidate placements evaluated when scheduling pod groups, by result. 'feasible' means the pod group fit into the placement, while 'infeasible' means it did not.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result", "profile"})
	// PlacementEvaluationDuration is the latency of one placement's trial.
	PlacementEvaluationDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "placement_evaluation_duration_seconds",
		Help:           "Latency in seconds of evaluating a single candidate placement when scheduling pod groups, by result. 'feasible' means the pod group fit into the placement, while 'infeasible' means it did not.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result", "profile"})

	placementsOnce sync.Once
)

// The results of PlacementEvaluations.
const (
	FeasibleResult   = "feasible"
	InfeasibleResult = "infeasible"
)

// RegisterPlacements registers the placement metrics (with the
// TopologyAwareWorkloadScheduling gate, as upstream).
func RegisterPlacements() {
	placementsOnce.Do(func() {
		legacyregistry.MustRegister(GeneratedPlacementsTotal, PlacementEvaluations, PlacementEvaluationDuration)
	})
}
