// Package consolidatefuzz is the consolidation fuzzer: it checks
// consolidate's plans (questions.Consolidate, used as a black box)
// against the exhaustive optimum on random small clusters, with the
// simulator, the same scheduling core, as the only judge of placement.
//
// The pieces:
//
//   - gen.go: a seeded generator of small cases: 2 to 7 priced nodes of
//     1 or 2 sizes in 1 to 3 zones, running pods bound to them (owned by
//     Deployments through their ReplicaSets, ReplicaSets, StatefulSets,
//     Jobs; bare pods, kube-system pods, mirror pods, pods whose
//     ReplicaSet is gone, pods with an emptyDir, pods annotated
//     safe-to-evict or do-not-disrupt), zone and hostname constraints
//     (node selectors, hostname anti-affinity, topology spreads),
//     DaemonSets, PodDisruptionBudgets of every form, sometimes a pod
//     left pending, and the rule set (cluster-autoscaler's or
//     Karpenter's) drawn per case; in 30% of the cases, 1 to 3 priced
//     node types consolidate may replace nodes by (drawn from a stream of
//     their own: a seed's cluster is the same with or without them).
//   - rules.go, budgets.go: the judge's own reading of the README's table
//     of which pods move, go with their node or keep it, and its own count
//     of the budgets, as kube-controller-manager v1.37's disruption
//     controller counts them (getExpectedPodCount, countHealthyPods): no
//     code of questions' rules is called, so that the fuzzer checks them
//     rather than repeats them.
//   - judge.go, replace.go: a plan (nodes to remove, then swaps: sets of
//     nodes each replaced by one new node of a type, with its DaemonSet
//     pods) is feasible when none of its nodes holds a pod that keeps it,
//     every pod a budget guards (when the rules read its budgets) leaves
//     it a disruption, and, drain after drain in one simulated world (the
//     removals together, then each swap), the replacements of the moving
//     pods and the new node's DaemonSet pods are all placed, nothing
//     preempted: the drain's nodes cordoned, as a plan cordons them before
//     its first eviction, the pods pending before the drains left aside. A
//     replacement that a topology spread keeps pending while the nodes are
//     cordoned (their domains still counted) is retried once they are
//     deleted, the others staying where they went, as kube-scheduler
//     retries it: the drain holds if it is placed then, nothing
//     preempted, unless a budget stalls the drain first (-strict-cordon
//     refuses every such plan).
//   - optimum.go: every subset of the nodes (128 at most) and, with node
//     types, every plan that also swaps one set of the other nodes for a
//     type cheaper than it (6,561 at most); the feasible one with the
//     largest saving, found by judging them from the largest saving down,
//     most refused by room checks without a simulation.
//   - run.go, stats.go: a case's outcome, and the statistics of a run with
//     the seeds of its defects, of its plans below the optimum and of
//     those whose replacements wait for their nodes' deletion; the cases
//     with node types counted apart, the savings by removals and by
//     replacements apart.
//
// TestConsolidateAgainstTheOptimum runs a few cases from a fixed seed in
// `make test` and fails on an infeasible plan, a misreported saving or an
// error; `make fuzz-consolidate` runs 1,000 and enforces the optimality
// targets too.
package consolidatefuzz
