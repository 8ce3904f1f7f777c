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

	// PreemptionGoroutinesDuration and PreemptionGoroutinesExecutionTotal
	// time and count the background goroutines of asynchronous preemption
	// (SchedulerAsyncPreemption), by result ("success" or "error"); ALPHA
	// and deprecated in 1.37.0 upstream, as here.
	PreemptionGoroutinesDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:         "scheduler",
		Name:              "preemption_goroutines_duration_seconds",
		Help:              "Duration in seconds for running goroutines for the preemption.",
		Buckets:           metrics.ExponentialBuckets(0.01, 2, 20),
		StabilityLevel:    metrics.ALPHA,
		DeprecatedVersion: "1.37.0",
	}, []string{"result"})
	PreemptionGoroutinesExecutionTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "scheduler",
		Name:           "preemption_goroutines_execution_total",
		Help:           "Number of preemption goroutines executed.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
)

// DRABindingConditionsAllocationsTotal and DRABindingConditionsWaitDuration
// count and time DynamicResources' wait in PreBind for devices' binding
// conditions, per profile, driver and status ("success", "failure",
// "timeout", "error"); ALPHA, as upstream's
// (DRADeviceBindingConditions).
var (
	DRABindingConditionsAllocationsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "scheduler",
		Name:           "dra_bindingconditions_allocations_total",
		Help:           "Number of allocations using devices with BindingConditions, counted per driver per scheduling attempt",
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "driver", "status"})
	DRABindingConditionsWaitDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "scheduler",
		Name:           "dra_bindingconditions_wait_duration_seconds",
		Help:           "Time in seconds spent waiting for BindingConditions to be satisfied during PreBind.",
		Buckets:        metrics.ExponentialBuckets(0.1, 2, 14),
		StabilityLevel: metrics.ALPHA,
	}, []string{"profile", "driver", "status"})
)

// The status label of the binding conditions' metrics.
const (
	BindingConditionsStatusSuccess = "success"
	BindingConditionsStatusFailed  = "failure"
	BindingConditionsStatusTimeout = "timeout"
	BindingConditionsStatusError   = "error"
)

// The result label of the preemption goroutines' metrics.
const (
	GoroutineResultSuccess = "success"
	GoroutineResultError   = "error"
)
