// Package difffuzz is a differential fuzzer of kubesched's per-node
// scheduling decisions against upstream kube-scheduler v1.37.2's own
// framework, both run in this process.
//
// The pieces:
//
//   - oracle.go: upstream's scheduler.New (default profile, default feature
//     gates, percentageOfNodesToScore 100) over a fake clientset, its own
//     informers, event handlers, cache and snapshot; Explain runs PreFilter,
//     Filter on every node, PreScore, Score and NormalizeScore, and builds the
//     FitError message, as ../shared/conformance's expected.json files were made.
//   - kubesched.go: the same question asked of kubesched through
//     internal/simulator (one World kept across a sequence of pods).
//   - answer.go: the answer in the expected.json schema and the comparer.
//   - gen*.go: a seeded generator of small clusters and pending pods over the
//     fields the default profile's plugins read; api.go puts every object
//     through upstream's API defaulting and validation.
//   - sequence.go: a case is a cluster and a stream of pods, each explained by
//     both, placed on kubesched's choice (checked against upstream's best
//     nodes) and applied to both sides.
//   - coverage.go: the field paths and corner values drawn, and the fields the
//     plugins read that were never drawn.
//   - minimize.go and scenario.go: a divergence shrunk to a small scenario,
//     printed in the conformance scenario format with upstream's answer.
//
// The tests (difffuzz_test.go) check the oracle against the conformance
// scenarios copied into testdata/, then run a fixed seed for a bounded time
// and fail on any divergence. KUBESCHED_DIFFFUZZ_DURATION and
// KUBESCHED_DIFFFUZZ_SEED let `make fuzz-differential` run longer.
package difffuzz
