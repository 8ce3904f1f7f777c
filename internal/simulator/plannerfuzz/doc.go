// Package plannerfuzz is the planner fuzzer (issue 43): it checks
// capacity --node-types' answers (questions.CheapestNodes, used as a
// black box) against the optimum on random small clusters, with the
// simulator, the same scheduling core, as the only judge.
//
// The pieces:
//
//   - gen.go: a seeded generator of small cases: 0 to 5 existing nodes
//     in 1 to 3 zones (0: greenfield), a general and sometimes a tainted
//     batch pool, 5 to 40 pending pods in Deployments, ReplicaSets or
//     plain pods (unconstrained, pinned to a zone, in the batch pool with
//     its toleration, spread over zones with maxSkew 1 DoNotSchedule,
//     hostname anti-affine), running pods, DaemonSets in 40% of the
//     cases, PDBs and priority classes sometimes, and 2 to 4 priced
//     types offered in 1 to 3 zones with per-zone limits.
//   - env.go: the case as a manifest, loaded and simulated as the command
//     does (default profile, seed 1).
//   - judge.go: a plan (a count per type and zone) simulated with its
//     nodes joined as the search joins them, DaemonSet pods included
//     (questions.CheckPlan). It is feasible when it leaves no pod
//     unplaced but those the plan of every type at its limit leaves (the
//     floor; a new node's DaemonSet pod always counts); a new node
//     holding no pod but DaemonSet pods is empty. When that plan leaves
//     new nodes' DaemonSet pods unplaced (room short, the pods took
//     theirs), the floor is taken with those pods scheduled first, as
//     system-node-critical agents are; when no vector at all is feasible
//     (the exhaustive search says so), the case is unsatisfiable: counted,
//     not a defect.
//   - bounds.go, spread.go: necessary conditions of feasibility (Hall's
//     condition on the requests over the bins pods can use, pods per
//     node of each size, one node per pod of an anti-affine group,
//     DaemonSet pods' room on new nodes, a zone spread's least share per
//     domain), so that the exhaustive search simulates only the vectors
//     that could be feasible. Every case checks that they admit the
//     planner's feasible answer.
//   - optimum.go: the vectors cheaper than the answer the bounds admit,
//     cheapest first; run.go simulates them in that order, and the first
//     feasible one is the optimum (none: the answer is optimal).
//   - stats.go: the statistics and the worst cases, with their seeds.
//
// TestPlannerAgainstTheOptimum runs a few cases from a fixed seed in
// `make test` and fails on an infeasible answer, an answer with an empty
// node, or an error; `make fuzz-planner` runs 1,000 or more and enforces
// the optimality targets too (see its flags).
package plannerfuzz
