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

// Workload preemption (a pod group's preemption; registered with the
// GenericWorkload gate, as upstream).
var (
	// WorkloadPreemptionAttempts counts pod groups' preemption attempts by
	// the result's code.
	WorkloadPreemptionAttempts = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      "scheduler",
		Name:           "workload_preemption_attempts_total",
		Help:           "Total preemption attempts initiated by workload (including pod groups) in the cluster till now.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result"})
	// WorkloadPreemptionVictims is the number of pods a group's
	// preemption evicts.
	WorkloadPreemptionVictims = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      "scheduler",
		Name:           "workload_preemption_victims",
		Help:           "Number of pod preemption victims caused by workload preemption.",
		Buckets:        metrics.ExponentialBuckets(1, 2, 11),
		StabilityLevel: metrics.ALPHA,
	})
	// PreemptionWorkloadDisruptions is the number of units (a pod, or a
	// whole group with disruptionMode All) a preemption evicts.
	PreemptionWorkloadDisruptions = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      "scheduler",
		Name:           "preemption_workload_disruptions",
		Help:           "Number of workload preemption units being preempted. A single preemption unit can be all pods in a pod group (in case of DisruptionMode=all), or a single pod (in case of DisruptionMode=single).",
		Buckets:        metrics.ExponentialBuckets(1, 2, 11),
		StabilityLevel: metrics.ALPHA,
	}, []string{"preemptor"})
)
