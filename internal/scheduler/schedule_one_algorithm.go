package scheduler

import (
	"context"
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/pkg/framework"
)

// The scheduling algorithm proper (upstream's schedulePod and its
// helpers): PreFilter, Filter over the candidate nodes, Score, and the
// choice of a host.

// SchedulePod runs the filters and scores for one pod on a fresh snapshot.
func (s *Scheduler) SchedulePod(ctx context.Context, fwk *runtime.Framework, state *framework.CycleState, pod *v1.Pod) (ScheduleResult, error) {
	if !s.pinSnapshot {
		s.Cache.UpdateSnapshot(s.snapshot)
	}
	// In a pod group's placement (TopologyAwareWorkloadScheduling) the
	// placement's nodes are all the nodes there are.
	if s.snapshot.NumInPlacement() == 0 {
		return ScheduleResult{}, ErrNoNodesAvailable
	}
	start := s.clock.Now()
	feasible, diagnosis, _, err := s.findNodesThatFitPod(ctx, fwk, state, pod, false)
	s.observe(fwk, "Filter", framework.AsStatus(err), start)
	if err != nil {
		return ScheduleResult{}, err
	}
	if len(feasible) == 0 {
		return ScheduleResult{}, &framework.FitError{Pod: pod, NumAllNodes: s.snapshot.NumInPlacement(), Diagnosis: diagnosis}
	}
	evaluated := len(feasible) + diagnosis.NodeToStatus.Len()
	if len(feasible) == 1 {
		return ScheduleResult{SuggestedHost: feasible[0].NodeName(), EvaluatedNodes: evaluated, FeasibleNodes: 1}, nil
	}
	start = s.clock.Now()
	scores, err := s.prioritizeNodes(ctx, fwk, state, pod, feasible)
	s.observe(fwk, "Score", framework.AsStatus(err), start)
	if err != nil {
		return ScheduleResult{}, err
	}
	host := s.selectHost(scores)
	return ScheduleResult{SuggestedHost: host, EvaluatedNodes: evaluated, FeasibleNodes: len(feasible)}, nil
}

// findNodesThatFitPod runs PreFilter, then Filter over the nodes (or the
// ones PreFilter restricted to); it also returns PreFilter's restriction.
// explain and scheduleOne both come here: with every set (explain), every
// candidate node is evaluated whatever the percentage, the nominated node
// gets no head start, and the rotating start index does not move.
func (s *Scheduler) findNodesThatFitPod(ctx context.Context, fwk *runtime.Framework, state *framework.CycleState, pod *v1.Pod, every bool) ([]*framework.NodeInfo, framework.Diagnosis, *framework.PreFilterResult, error) {
	all, _ := s.snapshot.List()
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewNodeToStatus(), UnschedulablePlugins: sets.New[string]()}
	pfr, st, rejectors := fwk.RunPreFilterPlugins(ctx, state, pod, all)
	if rejectors != nil {
		diagnosis.UnschedulablePlugins = rejectors
	}
	if !st.IsSuccess() {
		if !st.IsRejected() {
			return nil, diagnosis, nil, st.AsError()
		}
		// Every node gets the PreFilter's status.
		diagnosis.NodeToStatus.AbsentNodesStatus = st
		msg := st.Message()
		diagnosis.PreFilterMsg = msg
		if rejectors.Len() == 0 && st.Plugin() != "" {
			diagnosis.UnschedulablePlugins.Insert(st.Plugin())
		}
		return nil, diagnosis, pfr, nil
	}
	// A pod nominated by an earlier preemption tries its node first: the
	// room was made for it there (upstream's evaluateNominatedNode).
	if nnn := pod.Status.NominatedNodeName; nnn != "" && !every && s.snapshot.InPlacement(nnn) {
		if ni, err := s.snapshot.Get(nnn); err == nil && ni != nil {
			feasible, err := s.findNodesThatPassFilters(ctx, fwk, state, pod, &diagnosis, []*framework.NodeInfo{ni}, false)
			if err == nil && len(s.extenders) > 0 {
				feasible, err = s.findNodesThatPassExtenders(ctx, fwk, state, pod, feasible, diagnosis.NodeToStatus)
			}
			if err != nil {
				klog.FromContext(ctx).Error(err, "Evaluation failed on nominated node", "pod", klog.KObj(pod), "node", nnn)
			}
			if len(feasible) != 0 {
				return feasible, diagnosis, pfr, nil
			}
		}
	}
	// A pod whose outcome a memoized failure already gives takes it
	// (failure_memo.go). Explain evaluates every node and never memoizes.
	// PreFilter saw every node; the candidates are the placement's.
	cands := s.snapshot.ListInPlacement()
	if !every {
		// (A pod group's member, the only pod judged within a placement,
		// never takes a memoized failure: failureKeyOf.)
		s.cycleKey, s.cycleMemo = s.failureKeyOf(fwk, state, pod, pfr)
		if m := s.failed; s.cycleMemo && m != nil && m.key == s.cycleKey {
			s.replayed = true
			d := m.replayDiagnosis()
			// Every node was looked at: the rotating start moves by all
			// of them, as below.
			s.nextStartNodeIndex = (s.nextStartNodeIndex + d.NodeToStatus.Len()) % len(all)
			return nil, d, pfr, nil
		}
	}
	nodes := cands
	if !pfr.AllNodes() {
		nodes = make([]*framework.NodeInfo, 0, pfr.NodeNames.Len())
		for _, n := range cands {
			if pfr.NodeNames.Has(n.NodeName()) {
				nodes = append(nodes, n)
			}
		}
		diagnosis.NodeToStatus.AbsentNodesStatus = restrictionStatus(pfr)
		diagnosis.UnschedulablePlugins.Insert(pfr.Restrictors...)
	}
	feasible, err := s.findNodesThatPassFilters(ctx, fwk, state, pod, &diagnosis, nodes, every)
	if !every {
		// The rotating start moves past every node looked at, over all
		// nodes (upstream's formula); the nominated-node probe alone does
		// not move it.
		processed := len(feasible) + diagnosis.NodeToStatus.Len()
		s.nextStartNodeIndex = (s.nextStartNodeIndex + processed) % len(cands)
	}
	if err != nil {
		return nil, diagnosis, pfr, err
	}
	feasible, err = s.filterWithExtenders(ctx, fwk, state, pod, feasible, &diagnosis)
	return feasible, diagnosis, pfr, err
}

// restrictionStatus is the status of the nodes a PreFilter result cut,
// with upstream's message.
func restrictionStatus(pfr *framework.PreFilterResult) *framework.Status {
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", pfr.Restrictors))
}

// NumFeasibleNodesToFind is upstream's adaptive bound: all nodes below 100;
// otherwise the percentage (50% minus 1% per 125 nodes, at least 5%, when
// unset), and never fewer than 100.
func NumFeasibleNodesToFind(percentage int32, numAllNodes int32) int32 {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	if percentage == 0 {
		percentage = int32(50) - numAllNodes/125
		if percentage < minFeasibleNodesPercentageToFind {
			percentage = minFeasibleNodesPercentageToFind
		}
	}
	n := numAllNodes * percentage / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

// findNodesThatPassFilters runs Filter in parallel, starting at a rotating
// index, until enough feasible nodes are found. Unlike upstream, whose
// workers race to fill the quota, nodes are checked in windows and the
// results taken in node order, so the same input always yields the same
// feasible set (the simulator's byte-identical promise) at nearly the same cost.
// filterPart is how many nodes a Filter worker takes at a time.
const filterPart = 16

func (s *Scheduler) findNodesThatPassFilters(ctx context.Context, fwk *runtime.Framework, state *framework.CycleState, pod *v1.Pod, diagnosis *framework.Diagnosis, nodes []*framework.NodeInfo, every bool) ([]*framework.NodeInfo, error) {
	numAll := len(nodes)
	if numAll == 0 {
		return nil, nil
	}
	pct := s.percentageOfNodesToScore
	if p := fwk.PercentageOfNodesToScore(); p != nil {
		pct = *p
	}
	toFind := int(NumFeasibleNodesToFind(pct, int32(numAll)))
	if !s.hasExtenderFilters() && !s.hasScoring(fwk) {
		// Nothing would choose among several: the first one is the answer.
		toFind = 1
	}
	start := s.nextStartNodeIndex % numAll
	if every {
		toFind, start = numAll, 0
	}
	// The feasible list lives until the next cycle (scoring reads it);
	// explain keeps its own.
	var feasible []*framework.NodeInfo
	if every {
		feasible = make([]*framework.NodeInfo, 0, toFind)
	} else {
		if cap(s.feasibleBuf) < toFind {
			s.feasibleBuf = make([]*framework.NodeInfo, 0, toFind)
		}
		feasible = s.feasibleBuf[:0]
	}
	positions := s.feasiblePos[:0]
	// Cycles run one at a time: the status buffer is reused, so a search
	// that stops after a few hundred of 5,000 nodes does not allocate 5,000.
	if cap(s.statusBuf) < numAll {
		s.statusBuf = make([]*framework.Status, numAll)
	}
	statuses := s.statusBuf[:numAll]
	failed := s.failedBuf[:0]
	var firstErr atomic.Pointer[framework.Status]
	processed := 0
	lastRejector := ""
	par := fwk.Parallelizer()
	for processed < numAll && len(feasible) < toFind {
		window := toFind - len(feasible)
		if min := 4 * par.Parallelism(); window < min {
			window = min
		}
		if processed+window > numAll {
			window = numAll - processed
		}
		base := processed
		// The equivalence cache answers a prefix of the window (all of
		// it, once warm); the workers evaluate what it leaves.
		done := fwk.FilterCachedPrefix(ctx, state, pod, nodes, start+base, window, statuses[base:base+window])
		for _, st := range statuses[base : base+done] {
			if st.Code() == framework.Error {
				firstErr.CompareAndSwap(nil, st)
			}
		}
		if left := window - done; left > 0 {
			// Workers take the rest in parts of filterPart nodes.
			parts := (left + filterPart - 1) / filterPart
			par.Until(ctx, parts, func(p int) {
				from := done + p*filterPart
				n := min(filterPart, window-from)
				out := statuses[base+from : base+from+n]
				fwk.FilterRange(ctx, state, pod, nodes, start+base+from, n, out)
				for _, st := range out {
					if st.Code() == framework.Error {
						firstErr.CompareAndSwap(nil, st)
					}
				}
			})
		}
		if st := firstErr.Load(); st != nil {
			clear(statuses[base : base+window])
			return nil, st.AsError()
		}
		if err := ctx.Err(); err != nil {
			clear(statuses[base : base+window])
			return nil, err
		}
		for i := 0; i < window; i++ {
			processed++
			j := (start + base + i) % numAll
			ni := nodes[j]
			st := statuses[base+i]
			if st.IsSuccess() {
				feasible = append(feasible, ni)
				positions = append(positions, int32(j))
				if len(feasible) == toFind {
					break
				}
			} else {
				failed = append(failed, nodeStatus{ni, st})
				// Rejections come in runs of one plugin: insert on a change.
				if p := st.Plugin(); p != "" && p != lastRejector {
					diagnosis.UnschedulablePlugins.Insert(p)
					lastRejector = p
				}
			}
		}
		clear(statuses[base : base+window]) // the buffer outlives the cycle
	}
	// The rejected nodes go into the diagnosis at once, in a map sized
	// for them (a pod that fits nowhere records every node).
	// A node can already be there only from the nominated-node probe.
	nts := diagnosis.NodeToStatus
	if nts.Len() == 0 {
		nts.Reserve(len(failed))
		for _, f := range failed {
			nts.AddNew(f.ni, f.st)
		}
	} else {
		for _, f := range failed {
			nts.Set(f.ni.NodeName(), f.st)
		}
	}
	clear(failed)
	s.failedBuf = failed[:0]
	s.feasiblePos = positions
	return feasible, nil
}

// nodeStatus is a node Filter rejected, with the status.
type nodeStatus struct {
	ni *framework.NodeInfo
	st *framework.Status
}

// prioritizeNodes runs PreScore and Score on the feasible nodes.
func (s *Scheduler) prioritizeNodes(ctx context.Context, fwk *runtime.Framework, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) ([]framework.NodePluginScores, error) {
	if st := fwk.RunPreScorePlugins(ctx, state, pod, nodes); !st.IsSuccess() {
		return nil, st.AsError()
	}
	// The positions of the last filter pass, if it found these nodes (the
	// score pass checks each one against the snapshot's list).
	s.scoreBuf.Positions = nil
	if len(s.feasiblePos) == len(nodes) {
		s.scoreBuf.Positions = s.feasiblePos
	}
	scores, st := fwk.RunScorePluginsTotals(ctx, state, pod, nodes, &s.scoreBuf)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	s.addExtenderScores(ctx, pod, nodes, scores)
	return scores, nil
}

// selectHost picks the highest total, breaking ties uniformly at random
// with the seeded source: one draw among the nodes tied for the best, the
// k-th of them in list order. (kube-scheduler v1.37.2 pops a heap built
// over the feasible list, whose order its Filter workers' race sets, and
// draws a number per node only for nodes an extender scored; one draw per
// pod keeps the seeded sequence independent of how many nodes tie. See
// the README's differences.)
func (s *Scheduler) selectHost(scores []framework.NodePluginScores) string {
	best, count := scores[0].TotalScore, 0
	for i := range scores {
		switch t := scores[i].TotalScore; {
		case t > best:
			best, count = t, 1
		case t == best:
			count++
		}
	}
	k := 0
	if count > 1 {
		k = s.rand.Intn(count)
	}
	for i := range scores {
		if scores[i].TotalScore == best {
			if k == 0 {
				return scores[i].Name
			}
			k--
		}
	}
	return scores[0].Name // not reached
}
