// Package timeline replays a Scenario on a world: it runs the scheduler
// up to each step's virtual time, applies the step (create, delete,
// scale, cordon, drain, delete nodes, taint), and runs on; it samples the
// cluster's curves (pending, running, requested share, fragmentation)
// and measures the pods' queueing delay, into a report.TimelineReport.
//
// It imports the World (package simulator), the cluster, loading (the
// defaults of the objects a step creates) and report. cmd/ (simulate)
// and the questions (capacity --workload scales a workload as a step
// would) import it.
package timeline
