// Package metrics defines kubesched's metrics with kube-scheduler's names,
// labels, buckets and stability levels (subsystem "scheduler"), registered
// in component-base's legacy registry, so existing dashboards and alerts work.
package metrics

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	pluginmetrics "github.com/kubesched/kubesched/pkg/framework/metrics"
)

const subsystem = "scheduler"

// Result labels of schedule attempts.
const (
	ScheduledResult     = "scheduled"
	UnschedulableResult = "unschedulable"
	ErrorResult         = "error"
)

// PrioritizingExtender is the operation label of an extender's
// Prioritize call in Goroutines.
const PrioritizingExtender = "prioritizing_extender"

// Binding is the operation label of binding cycles in Goroutines.
const Binding = "binding"

// Queue labels of pending pods.
const (
	ActiveQ        = "active"
	BackoffQ       = "backoff"
	UnschedulableQ = "unschedulable"
	Gated          = "gated"
)

var (
	// ScheduleAttempts counts scheduling attempts by result and profile.
	ScheduleAttempts = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "schedule_attempts_total",
		Help:           "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
		StabilityLevel: metrics.STABLE,
	}, []string{"result", "profile"})

	// SchedulingAttemptDuration is the latency of an attempt (algorithm + binding).
	SchedulingAttemptDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "scheduling_attempt_duration_seconds",
		Help:           "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.STABLE,
	}, []string{"result", "profile"})

	// PendingPods is the number of pending pods per queue.
	PendingPods = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "pending_pods",
		Help:           "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
		StabilityLevel: metrics.STABLE,
	}, []string{"queue"})

	// QueueIncomingPods counts pods added to a queue, by the event that did it.
	QueueIncomingPods = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "queue_incoming_pods_total",
		Help:           "Number of pods added to scheduling queues by event and queue type.",
		StabilityLevel: metrics.STABLE,
	}, []string{"queue", "event"})

	// FrameworkExtensionPointDuration is the latency of one extension point.
	FrameworkExtensionPointDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "framework_extension_point_duration_seconds",
		Help:           "Latency for running all plugins of a specific extension point.",
		Buckets:        metrics.ExponentialBuckets(0.0001, 2, 12),
		StabilityLevel: metrics.STABLE,
	}, []string{"extension_point", "status", "profile"})

	// PluginExecutionDuration is the latency of one plugin at one point.
	PluginExecutionDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "plugin_execution_duration_seconds",
		Help:           "Duration for running a plugin at a specific extension point.",
		Buckets:        metrics.ExponentialBuckets(0.00001, 1.5, 20),
		StabilityLevel: metrics.ALPHA,
	}, []string{"plugin", "extension_point", "status"})

	// PodSchedulingAttempts is how many attempts a scheduled pod took.
	PodSchedulingAttempts = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "pod_scheduling_attempts",
		Help:           "Number of attempts to successfully schedule a pod.",
		Buckets:        metrics.ExponentialBuckets(1, 2, 5),
		StabilityLevel: metrics.STABLE,
	})

	// PodSchedulingSLIDuration is a pod's time from entering the queue to being scheduled.
	PodSchedulingSLIDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "pod_scheduling_sli_duration_seconds",
		Help:           "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
		Buckets:        metrics.ExponentialBuckets(0.01, 2, 20),
		StabilityLevel: metrics.BETA,
	}, []string{"attempts"})

	// PreemptionAttempts and PreemptionVictims are recorded by the
	// preemption plugin; they live in the public plugin API.
	PreemptionAttempts = pluginmetrics.PreemptionAttempts
	PreemptionVictims  = pluginmetrics.PreemptionVictims
	// PreemptionGoroutinesDuration and PreemptionGoroutinesExecutionTotal
	// are recorded by asynchronous preemption.
	PreemptionGoroutinesDuration       = pluginmetrics.PreemptionGoroutinesDuration
	PreemptionGoroutinesExecutionTotal = pluginmetrics.PreemptionGoroutinesExecutionTotal
	// DRABindingConditionsAllocationsTotal and
	// DRABindingConditionsWaitDuration are recorded by DynamicResources.
	DRABindingConditionsAllocationsTotal = pluginmetrics.DRABindingConditionsAllocationsTotal
	DRABindingConditionsWaitDuration     = pluginmetrics.DRABindingConditionsWaitDuration
	// ResourceClaimCreatesTotal counts the special claims DynamicResources
	// creates for extended resources backed by DRA.
	ResourceClaimCreatesTotal = pluginmetrics.ResourceClaimCreatesTotal

	// PodsScheduledAfterFlush counts pods that were scheduled after the
	// unschedulable flush, not a cluster event, brought them back: each
	// one points at a cluster event no rejecting plugin registered for
	// (a missing queueing hint). kubesched's own; kube-scheduler has none.
	PodsScheduledAfterFlush = metrics.NewCounter(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "pods_scheduled_after_flush_total",
		Help:           "Number of pods scheduled after the periodic flush of unschedulable pods moved them, rather than a cluster event. A growing count means an event that could make pods schedulable is not registered by the plugin that rejected them.",
		StabilityLevel: metrics.ALPHA,
	})

	// Goroutines is kube-scheduler's scheduler_goroutines gauge. Its
	// "binding" series counts binding cycles started and not finished.
	// kube-scheduler starts a goroutine per binding cycle, so there the
	// two are the same; kubesched runs them on a bounded pool and counts
	// the ones waiting for a worker too, so the gauge means the same
	// thing to a dashboard: bindings in flight.
	Goroutines = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Subsystem:      subsystem,
		Name:           "goroutines",
		Help:           "Number of running goroutines split by the work they do such as binding.",
		StabilityLevel: metrics.BETA,
	}, []string{"operation"})

	all = []metrics.Registerable{Goroutines, ScheduleAttempts, SchedulingAttemptDuration, PendingPods, QueueIncomingPods,
		FrameworkExtensionPointDuration, PluginExecutionDuration, PodSchedulingAttempts, PodSchedulingSLIDuration, PreemptionAttempts,
		PreemptionVictims, PreemptionGoroutinesDuration, PreemptionGoroutinesExecutionTotal, PodsScheduledAfterFlush,
		DRABindingConditionsAllocationsTotal, DRABindingConditionsWaitDuration, ResourceClaimCreatesTotal}
	once sync.Once
)

// Register registers every metric once in the legacy registry. Until it
// is called the metrics are no-ops, so simulation and tests pay nothing.
func Register() {
	once.Do(func() {
		for _, m := range all {
			legacyregistry.MustRegister(m)
		}
	})
}

// WaitingOnPreemptionResult is the result label of a pod group's attempt
// that preempted and waits for its victims.
const WaitingOnPreemptionResult = "waiting_on_preemption"

var (
	// PodGroupScheduleAttempts counts pod groups' attempts by result and
	// profile (the GenericWorkload gate).
	PodGroupScheduleAttempts = metrics.NewCounterVec(&metrics.CounterOpts{
		Subsystem:      subsystem,
		Name:           "podgroup_schedule_attempts_total",
		Help:           "Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod group could not be scheduled, while 'error' means an internal scheduler problem.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"result", "profile"})
	// PodGroupSchedulingAttemptDuration is a pod group's attempt latency.
	PodGroupSchedulingAttemptDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "podgroup_scheduling_attempt_duration_seconds",
		Help:           "Pod group scheduling attempt latency in seconds",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"result", "profile"})
	// PodGroupSchedulingAlgorithmDuration is the group algorithm's latency.
	PodGroupSchedulingAlgorithmDuration = metrics.NewHistogram(&metrics.HistogramOpts{
		Subsystem:      subsystem,
		Name:           "podgroup_scheduling_algorithm_duration_seconds",
		Help:           "Pod group scheduling algorithm latency in seconds",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	})
	podGroupsOnce sync.Once
)

// RegisterPodGroups registers the metrics kube-scheduler adds with the
// GenericWorkload gate.
func RegisterPodGroups() {
	podGroupsOnce.Do(func() {
		for _, m := range []metrics.Registerable{PodGroupScheduleAttempts, PodGroupSchedulingAttemptDuration, PodGroupSchedulingAlgorithmDuration,
			pluginmetrics.WorkloadPreemptionAttempts, pluginmetrics.WorkloadPreemptionVictims, pluginmetrics.PreemptionWorkloadDisruptions} {
			legacyregistry.MustRegister(m)
		}
	})
}

// SinceInSeconds is the seconds elapsed since start.
func SinceInSeconds(start time.Time) float64 { return time.Since(start).Seconds() }
