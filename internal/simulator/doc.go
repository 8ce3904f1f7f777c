// Package simulator is the World: a loaded cluster wired to the
// scheduling core on a fake clock.
//
// It owns the store, the scheduler, the clock and the pods to place; the
// run on virtual time (drain the queue, bind, step to the next backoff
// expiry or unschedulable flush, end the pods whose duration is over,
// have the workloads' controllers replace what went), its limit (a run
// that reaches it is a LimitError, never an answer), and ScheduleNow
// (the queue's pods attempted at once, without waiting for the flush); the world's
// changes a timeline step or a question makes (AddPending, Remove,
// Change); the record of the attempts (the trace, the watched pod's last
// view); the Report of the final state; and the invariants the
// scheduler's decisions must keep.
//
// The rooms around it:
//
//	cluster/    Cluster and the workloads' controllers (imports nothing of the simulator)
//	loading/    manifests -> Cluster: decoding, defaults, quantities (imports cluster)
//	report/     the documents and their table, JSON, YAML, HTML (imports nothing of the simulator)
//	simulator   World (imports cluster, loading, report)
//	timeline/   a Scenario's replay (imports simulator, cluster, loading, report)
//	questions/  capacity, compare, explain (imports all of the above)
//
// cmd/ imports loading, simulator, timeline, questions and report.
package simulator
