// Package metrics holds the metrics that plugins record, with
// kube-scheduler's names, buckets and stability levels. kubesched
// registers them with its own (internal/metrics); until then they are
// no-ops, so a simulation pays nothing.
package metrics

import "k8s.io/component-base/metrics"

var (
	// PreemptionAttempts counts preemption attempts.
	PreemptionAttempts = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      "scheduler",
		Name:           "preemption_attempts_total",
		Help:           "Total preemption attempts in the cluster till now",
		StabilityLevel: metrics.STABLE,
	})

	// PreemptionVictims is the number of victims of each preemption.
	PreemptionVictims = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      "scheduler",
		Name:           "preemption_victims",
		Help:           "Number of selected preemption victims",
		Buckets:        metrics.ExponentialBuckets(1, 2, 7),
		StabilityLevel: metrics.STABLE,
	})
)
