package scheduler

import (
	"math/rand"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/pkg/framework"
)

// A cluster under pressure fails the same pods again and again: a queue of
// GPU pods where no GPU is free, each retried after the unschedulable
// pods' flush, one after the other, on a cluster that does not change in
// between. Each failure runs Filter on every node, counts the FitError's
// reasons over every node and dry-runs preemption on every node where it
// might help: ~5 ms at 15,000 nodes.
//
// The failure memo keeps the last such outcome and hands it to the next
// pod whose outcome must be the same, with nothing run again:
//
//   - the pod's equivalence class is the same, and every filter plugin
//     that runs for it is cached (its verdict on a node is then a function
//     of the class, the node's content and the nominated pods added);
//   - the same priority and preemption policy (preemption's inputs beside
//     the class), no nominated node, and the pod nominated nowhere (Filter
//     leaves a pod's own nomination out);
//   - the snapshot's version and the nominator's version are unchanged (no
//     node changed, no nomination came or went), and so is the profile;
//   - PreFilter restricted no nodes;
//   - every PostFilter plugin is a framework.PostFilterReplayer and the
//     outcome nominated nobody.
//
// The replay takes as many draws from the random source as the PostFilter
// it stands for did, so every later decision is the one the full cycle
// would have led to: the equivalence cache's promise of byte-identical
// output with the cache off (where no class exists and the memo is never
// used) holds.

// failureKey is what an outcome depends on.
type failureKey struct {
	fwk       *runtime.Framework
	class     string
	priority  int32
	policy    v1.PreemptionPolicy
	snapshot  uint64
	nominated uint64
	numNodes  int
}

// failureMemo is a failed cycle's outcome: its FitError (the statuses are
// shared with every replay, read-only, and so is the rendered histogram)
// and its PostFilter's.
type failureMemo struct {
	key    failureKey
	fitErr *framework.FitError
	// nominating: PostFilter returned a result (with no node), which
	// clears a stale nomination.
	nominating bool
	draws      uint64
}

// failureKeyOf returns the cycle's key when its outcome may be memoized
// or replayed.
func (s *Scheduler) failureKeyOf(fwk *runtime.Framework, state *framework.CycleState, pod *v1.Pod, pfr *framework.PreFilterResult) (failureKey, bool) {
	// Extenders answer over the network: the same snapshot may get
	// another answer, so nothing is replayed when there are any.
	// A pod group's member runs no PostFilter: its failures are not
	// memoized nor replayed.
	if state.PodGroupCycle || len(s.extenders) > 0 || pod.Status.NominatedNodeName != "" || !pfr.AllNodes() || !fwk.PostFilterReplayable() {
		return failureKey{}, false
	}
	class := state.FilterClass
	if class == "" || s.Queue.Nominator.Has(pod.UID) {
		return failureKey{}, false
	}
	k := failureKey{
		fwk:       fwk,
		class:     class,
		priority:  corev1helpers.PodPriority(pod),
		snapshot:  s.snapshot.Version(),
		nominated: s.Queue.Nominator.NominatedVersion(),
		numNodes:  s.snapshot.NumNodes(),
	}
	if pod.Spec.PreemptionPolicy != nil {
		k.policy = *pod.Spec.PreemptionPolicy
	}
	return k, true
}

// replayDiagnosis is the memo's diagnosis for another pod: the statuses
// shared, the sets copied (the queue keeps them with the pod).
func (m *failureMemo) replayDiagnosis() framework.Diagnosis {
	d := m.fitErr.Diagnosis
	d.UnschedulablePlugins = d.UnschedulablePlugins.Clone()
	d.PendingPlugins = d.PendingPlugins.Clone()
	return d
}

// countingSource is the scheduler's random source, counting its draws so a
// replay can take as many.
type countingSource struct {
	src   rand.Source64
	draws uint64
}

func newCountingSource(seed int64) *countingSource {
	return &countingSource{src: rand.NewSource(seed).(rand.Source64)}
}

func (c *countingSource) Int63() int64 { c.draws++; return c.src.Int63() }

func (c *countingSource) Uint64() uint64 { c.draws++; return c.src.Uint64() }

func (c *countingSource) Seed(seed int64) { c.src.Seed(seed) }

// Reseed restarts the random source that breaks ties from seed; called
// before the first scheduling cycle, it is WithSeed(seed).
func (s *Scheduler) Reseed(seed int64) {
	s.randSrc.Seed(seed)
	s.randSrc.draws = 0
}

// skip takes n draws.
func (c *countingSource) skip(n uint64) {
	for range n {
		c.Uint64()
	}
}

// replayFailure completes a replayed cycle's FitError with the memo's
// PostFilter outcome, and takes what the PostFilter it stands for would
// have: its plugins' bookkeeping and its draws.
func (s *Scheduler) replayFailure(fwk *runtime.Framework, pod *v1.Pod, fitErr *framework.FitError) cycleResult {
	m := s.failed
	s.replays.Add(1)
	fitErr.Diagnosis.PostFilterMsg = m.fitErr.Diagnosis.PostFilterMsg
	fitErr.ShareHistogram(m.fitErr)
	out := cycleResult{}
	if fwk.HasPostFilterPlugins() {
		fwk.ReplayPostFilter(pod)
		s.randSrc.skip(m.draws)
	}
	if m.nominating {
		none := ""
		out.nominatingInfo = &none
	}
	return out
}

// memoizeFailure keeps a failed cycle's outcome when the cycle's key
// allows it and nothing it depends on moved while it ran (the nominator
// may change from other goroutines).
func (s *Scheduler) memoizeFailure(fitErr *framework.FitError, nominating bool, draws uint64) {
	if !s.cycleMemo || s.Queue.Nominator.NominatedVersion() != s.cycleKey.nominated {
		return
	}
	s.failed = &failureMemo{key: s.cycleKey, fitErr: fitErr, nominating: nominating, draws: draws}
}

// ReplayedFailures counts the cycles that took a memoized failure's
// outcome (simulate --stats).
func (s *Scheduler) ReplayedFailures() int64 { return s.replays.Load() }
