// Package questions answers what a simulated cluster is asked beyond
// "where does each pod go": how many more copies of a pod or replicas of
// a workload fit (capacity), how many nodes like one would schedule
// every pending pod (capacity --add-nodes), what a second configuration
// changes (simulate --compare), and why a pod goes where it goes, now
// or as its last attempt saw the cluster (explain, simulate --explain,
// the HTML report's explanations).
//
// A question is a function over a World: it imports the World (package
// simulator), the cluster, loading, the timeline and report, and only
// cmd/ imports it. A new subcommand's question is a new file here.
package questions
