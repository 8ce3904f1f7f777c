// Package defaultpreemption holds DefaultPreemption, the PostFilter that
// makes room for a pod that fits nowhere: on each node where evicting
// lower-priority pods would let it fit, it picks the fewest, least
// important victims (PodDisruptionBudgets respected as a preference), then
// chooses a node by upstream's order, evicts the victims and nominates the
// node so the pod is scheduled there once they are gone. With
// SchedulerAsyncPreemption (async.go) the evictions run in the background
// and PreEnqueue holds the preemptor back until they are issued.
package defaultpreemption

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/framework/metrics"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "DefaultPreemption"

// Upstream's messages.
const (
	msgNotEligibleNever       = "not eligible due to preemptionPolicy=Never."
	msgNotEligibleTerminating = "not eligible due to a terminating pod on the nominated node."
	msgNoVictims              = "No preemption victims found for incoming pod"
	msgNotHelpful             = "Preemption is not helpful for scheduling"
)

// DefaultPreemption is a PostFilter plugin.
type DefaultPreemption struct {
	handle framework.Handle
	args   configv1.DefaultPreemptionArgs
	// exec runs preemptions in the background; nil when the handle says
	// preemption is synchronous (async.go).
	exec *executor
	// lowest keeps each node's lowest pod priority (lowest_priority.go).
	lowest lowestPriorities
	// dryRuns keeps the dry runs that found no room (dry_run_memo.go).
	dryRuns dryRunMemo
}

var (
	_ framework.PostFilterPlugin  = &DefaultPreemption{}
	_ framework.PreEnqueuePlugin  = &DefaultPreemption{}
	_ framework.EnqueueExtensions = &DefaultPreemption{}
)

// New builds the plugin from DefaultPreemptionArgs.
func New(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	args, err := helper.Args[configv1.DefaultPreemptionArgs](obj)
	if err != nil {
		return nil, err
	}
	pl := &DefaultPreemption{handle: h, args: *args}
	if h.AsyncPreemption() {
		pl.exec = newExecutor()
	}
	return pl, nil
}

// Name implements framework.Plugin.
func (*DefaultPreemption) Name() string { return Name }

// candidate is a node where preemption lets the pod fit, with its victims
// (most important first).
type candidate struct {
	node          string
	victims       []*v1.Pod
	pdbViolations int
}

// PostFilter tries to make room for pod. Its status message, prefixed with
// "preemption: ", ends the pod's FitError message.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, m framework.NodeToStatusReader) (*framework.PostFilterResult, *framework.Status) {
	metrics.PreemptionAttempts.Inc()
	result, st := pl.preempt(ctx, state, pod, m)
	if msg := st.Message(); msg != "" {
		return result, framework.NewStatus(st.Code(), "preemption: "+msg)
	}
	return result, st
}

// ReplayPostFilter implements framework.PostFilterReplayer: an outcome
// without a nomination (the pod not eligible, or no node where evicting
// lower-priority pods makes it fit) is a function of what the interface
// lists. The PDBs only order the victims of a candidate, and a candidate
// means a nomination. A replayed call counts as an attempt.
func (pl *DefaultPreemption) ReplayPostFilter(*v1.Pod) {
	metrics.PreemptionAttempts.Inc()
}

func (pl *DefaultPreemption) preempt(ctx context.Context, state *framework.CycleState, pod *v1.Pod, m framework.NodeToStatusReader) (*framework.PostFilterResult, *framework.Status) {
	if ok, msg := pl.eligible(pod, m); !ok {
		return nil, framework.NewStatus(framework.Unschedulable, msg)
	}
	all, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	candidates, statuses, err := pl.findCandidates(ctx, state, pod, all, m)
	if err != nil && len(candidates) == 0 {
		return nil, framework.AsStatus(err)
	}
	if len(candidates) == 0 {
		statuses.AbsentNodesStatus = framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNotHelpful)
		fe := &framework.FitError{Pod: pod, NumAllNodes: len(all), Diagnosis: framework.Diagnosis{NodeToStatus: statuses}}
		// An empty nomination clears a stale one.
		return &framework.PostFilterResult{}, framework.NewStatus(framework.Unschedulable, fe.Error())
	}
	candidates, st := pl.callExtenders(ctx, pod, candidates)
	if !st.IsSuccess() {
		return nil, st
	}
	if len(candidates) == 0 {
		return nil, framework.NewStatus(framework.Unschedulable, "no candidate node for preemption")
	}
	best := pickOne(candidates)
	metrics.PreemptionVictims.Observe(float64(len(best.victims)))
	if pl.exec != nil {
		pl.actuateAsync(pod, best)
	} else if st := pl.actuate(ctx, pod, best); !st.IsSuccess() {
		return nil, st
	}
	return &framework.PostFilterResult{NominatedNodeName: best.node}, framework.NewStatus(framework.Success,
		fmt.Sprintf("found a potential placement for pod on node %v, preempting %d victims", best.node, len(best.victims)))
}

// eligible: a pod with preemptionPolicy Never never preempts; a pod
// already nominated waits while a victim of its earlier preemption is
// still terminating there (unless that node is now out of reach anyway).
func (pl *DefaultPreemption) eligible(pod *v1.Pod, m framework.NodeToStatusReader) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, msgNotEligibleNever
	}
	nominated := pod.Status.NominatedNodeName
	if nominated == "" {
		return true, ""
	}
	if m.Get(nominated).Code() == framework.UnschedulableAndUnresolvable {
		return true, ""
	}
	if ni, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(nominated); err == nil && ni != nil {
		prio := corev1helpers.PodPriority(pod)
		for _, p := range ni.Pods() {
			if corev1helpers.PodPriority(p.Pod) < prio && terminatingByPreemption(p.Pod) {
				return false, msgNotEligibleTerminating
			}
		}
	}
	return true, ""
}

func terminatingByPreemption(p *v1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler {
			return true
		}
	}
	return false
}

// numCandidates is how many candidates to look for: the percentage of
// the potential nodes, at least the absolute minimum, at most all.
func (pl *DefaultPreemption) numCandidates(n int) int {
	c := n * int(*pl.args.MinCandidateNodesPercentage) / 100
	c = max(c, int(*pl.args.MinCandidateNodesAbsolute))
	return min(c, n)
}

// findCandidates dry-runs preemption on the nodes whose filters said
// Unschedulable (preemption cannot help UnschedulableAndUnresolvable),
// from a random offset (the scheduler's seeded source, as upstream's
// GetOffsetAndNumCandidates) so preemption does not pile onto the first
// nodes, until enough candidates are found. Upstream runs the dry runs in
// parallel and takes them as they finish; ours goes in order from the
// offset, so the same input and seed make the same choice.
func (pl *DefaultPreemption) findCandidates(ctx context.Context, state *framework.CycleState, pod *v1.Pod, all []*framework.NodeInfo, m framework.NodeToStatusReader) ([]candidate, *framework.NodeToStatus, error) {
	statuses := framework.NewNodeToStatus()
	var potential []*framework.NodeInfo
	if nts, ok := m.(*framework.NodeToStatus); ok {
		for j, st := range nts.StatusesOf(all) {
			if st.Code() == framework.Unschedulable {
				potential = append(potential, all[j])
			}
		}
	} else {
		for _, ni := range all {
			if m.Get(ni.NodeName()).Code() == framework.Unschedulable {
				potential = append(potential, ni)
			}
		}
	}
	if len(potential) == 0 {
		return nil, statuses, nil
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if l := pl.handle.Listers().PodDisruptionBudgets; l != nil {
		var err error
		if pdbs, err = l.List(labels.Everything()); err != nil {
			return nil, statuses, err
		}
	}
	want := pl.numCandidates(len(potential))
	offset := 0
	if r := pl.handle.Rand(); r != nil {
		offset = r.Intn(len(potential))
	}
	var nonViolating, violating []candidate
	var errs []error
	memo := pl.dryRuns.classFor(state.FilterClass, corev1helpers.PodPriority(pod), len(all))
	for i := range potential {
		ni := potential[(offset+i)%len(potential)]
		var nominated []*framework.PodInfo
		if memo != nil {
			nominated = pl.handle.NominatedPodsForNode(ni.NodeName())
			if st := memo.failed(ni, nominated); st != nil {
				statuses.AddNew(ni, st)
				continue
			}
		}
		victims, violations, st := pl.selectVictimsOnNode(ctx, state, pod, ni, pdbs)
		if st.IsSuccess() && len(victims) > 0 {
			c := candidate{node: ni.NodeName(), victims: victims, pdbViolations: violations}
			if violations == 0 {
				nonViolating = append(nonViolating, c)
			} else {
				violating = append(violating, c)
			}
			if len(nonViolating) > 0 && len(nonViolating)+len(violating) >= want {
				break
			}
			continue
		}
		if st.IsSuccess() {
			st = framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", ni.NodeName()))
		}
		if st.Code() == framework.Error {
			errs = append(errs, st.AsError())
		} else if memo != nil && slices.Equal(nominated, pl.handle.NominatedPodsForNode(ni.NodeName())) {
			// Kept when the node's nominated pods did not change while
			// the dry run read them (the nominator is shared).
			memo.record(ni, nominated, st)
		}
		statuses.AddNew(ni, st) // each potential node is tried once
	}
	var err error
	if len(errs) > 0 {
		err = errs[0]
	}
	return append(nonViolating, violating...), statuses, err
}

// selectVictimsOnNode removes every lower-priority pod from a copy of the
// node (and of state: neither ni nor state is changed); if the pod then fits, it puts them back one by one, most important
// first (those whose eviction would violate a PDB before the others), and
// keeps as victims only those without which the pod no longer fits.
func (pl *DefaultPreemption) selectVictimsOnNode(ctx context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*v1.Pod, int, *framework.Status) {
	prio := corev1helpers.PodPriority(pod)
	if pl.lowest.of(ni) >= prio {
		return nil, 0, framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNoVictims)
	}
	var potential []*framework.PodInfo
	for _, pi := range ni.Pods() {
		if corev1helpers.PodPriority(pi.Pod) < prio {
			potential = append(potential, pi)
		}
	}
	if len(potential) == 0 {
		return nil, 0, framework.NewStatus(framework.UnschedulableAndUnresolvable, msgNoVictims)
	}
	state, ni = state.Clone(), ni.Snapshot()
	remove := func(pi *framework.PodInfo) error {
		if err := ni.RemovePod(pi.Pod); err != nil {
			return err
		}
		return pl.handle.RunPreFilterExtensionRemovePod(ctx, state, pod, pi, ni).AsError()
	}
	add := func(pi *framework.PodInfo) error {
		ni.AddPodInfo(pi)
		return pl.handle.RunPreFilterExtensionAddPod(ctx, state, pod, pi, ni).AsError()
	}
	for _, pi := range potential {
		if err := remove(pi); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
	}
	if st := pl.handle.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni); !st.IsSuccess() {
		return nil, 0, st
	}
	sort.SliceStable(potential, func(i, j int) bool { return moreImportant(potential[i].Pod, potential[j].Pod) })
	violatingPods, nonViolatingPods := splitByPDBViolation(potential, pdbs)
	var victims []*v1.Pod
	reprieve := func(pi *framework.PodInfo) (bool, error) {
		if err := add(pi); err != nil {
			return false, err
		}
		if pl.handle.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni).IsSuccess() {
			return true, nil
		}
		if err := remove(pi); err != nil {
			return false, err
		}
		victims = append(victims, pi.Pod)
		return false, nil
	}
	violations := 0
	for _, pi := range violatingPods {
		fits, err := reprieve(pi)
		if err != nil {
			return nil, 0, framework.AsStatus(err)
		}
		if !fits {
			violations++
		}
	}
	for _, pi := range nonViolatingPods {
		if _, err := reprieve(pi); err != nil {
			return nil, 0, framework.AsStatus(err)
		}
	}
	if len(violatingPods) > 0 && len(nonViolatingPods) > 0 {
		sort.SliceStable(victims, func(i, j int) bool { return moreImportant(victims[i], victims[j]) })
	}
	return victims, violations, nil
}

// splitByPDBViolation sorts pods (most important first) into those whose
// eviction would exceed a matching PDB's disruptionsAllowed, counting
// down the budgets as it goes, and the others.
func splitByPDBViolation(pods []*framework.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*framework.PodInfo) {
	budget := newPDBBudget(pdbs)
	for _, pi := range pods {
		if budget.violates(pi.Pod) {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}

// pdbBudget counts down the PDBs' disruptionsAllowed as victims are taken.
type pdbBudget struct {
	pdbs      []*policyv1.PodDisruptionBudget
	allowed   []int32
	selectors []labels.Selector
}

func newPDBBudget(pdbs []*policyv1.PodDisruptionBudget) *pdbBudget {
	b := &pdbBudget{pdbs: pdbs, allowed: make([]int32, len(pdbs)), selectors: make([]labels.Selector, len(pdbs))}
	for i, pdb := range pdbs {
		b.allowed[i] = pdb.Status.DisruptionsAllowed
		if s, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			b.selectors[i] = s
		}
	}
	return b
}

// violates takes p from every matching budget; true when one goes below 0.
func (b *pdbBudget) violates(p *v1.Pod) bool {
	if len(p.Labels) == 0 {
		return false
	}
	violated := false
	for i, pdb := range b.pdbs {
		// A PDB with a nil, empty or invalid selector matches nothing.
		if pdb.Namespace != p.Namespace || b.selectors[i] == nil || b.selectors[i].Empty() || !b.selectors[i].Matches(labels.Set(p.Labels)) {
			continue
		}
		if _, disrupted := pdb.Status.DisruptedPods[p.Name]; disrupted {
			continue // already counted by the API server
		}
		b.allowed[i]--
		if b.allowed[i] < 0 {
			violated = true
		}
	}
	return violated
}

// farFuture stands for "now" as the start time of a pod that has none:
// later than any real start, the same for every such pod.
var farFuture = time.Unix(math.MaxInt32, 0)

func startTime(p *v1.Pod) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return farFuture
}

// moreImportant: higher priority, then the older pod.
func moreImportant(a, b *v1.Pod) bool {
	pa, pb := corev1helpers.PodPriority(a), corev1helpers.PodPriority(b)
	if pa != pb {
		return pa > pb
	}
	return startTime(a).Before(startTime(b))
}

// pickOne chooses among candidates by upstream's criteria, each breaking
// the previous one's ties: fewest PDB violations, lowest highest-victim
// priority, lowest sum of priorities, fewest victims, latest start of the
// most important victims; then the first in node order.
func pickOne(cs []candidate) candidate {
	scores := []func(c *candidate) int64{
		func(c *candidate) int64 { return -int64(c.pdbViolations) },
		func(c *candidate) int64 { return -int64(corev1helpers.PodPriority(c.victims[0])) },
		func(c *candidate) int64 {
			var sum int64
			for _, p := range c.victims {
				sum += int64(corev1helpers.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(c *candidate) int64 { return -int64(len(c.victims)) },
		func(c *candidate) int64 { return earliestStart(c.victims).UnixNano() },
	}
	left := cs
	for _, score := range scores {
		var best []candidate
		top := int64(math.MinInt64)
		for i := range left {
			s := score(&left[i])
			if s > top {
				top, best = s, best[:0]
			}
			if s == top {
				best = append(best, left[i])
			}
		}
		if len(best) == 1 {
			return best[0]
		}
		left = best
	}
	return left[0]
}

// earliestStart is the earliest start among the victims of the highest
// priority.
func earliestStart(victims []*v1.Pod) time.Time {
	top := corev1helpers.PodPriority(victims[0])
	earliest := startTime(victims[0])
	for _, p := range victims {
		switch pr := corev1helpers.PodPriority(p); {
		case pr == top && startTime(p).Before(earliest):
			earliest = startTime(p)
		case pr > top:
			top, earliest = pr, startTime(p)
		}
	}
	return earliest
}

// actuate evicts the victims (preempting in memory those still waiting at Permit),
// each with a Preempted event, then clears the nominations of
// lower-priority pods on the node: upstream's synchronous prepareCandidate
// (SchedulerAsyncPreemption off, and the simulator). A victim already
// being deleted gets no second call; the world marks each victim with a
// DisruptionTarget condition before deleting it, and one already gone
// (NotFound) counts as evicted, with no event.
func (pl *DefaultPreemption) actuate(ctx context.Context, pod *v1.Pod, c candidate) *framework.Status {
	for _, victim := range c.victims {
		if victim.DeletionTimestamp != nil && pl.handle.GetWaitingPod(string(victim.UID)) == nil {
			continue
		}
		if _, err := pl.preemptPod(ctx, pod, c.node, victim); err != nil {
			return framework.AsStatus(err)
		}
	}
	_ = pl.clearLowerNominations(ctx, pod, c.node) // logged; not critical
	return nil
}

// preemptPod preempts one victim for pod: a pod waiting at Permit is
// preempted in memory (inMemory: no deletion will follow; it backs off
// and is retried, as after an error), any other is evicted, as is a
// waiting pod allowed meanwhile; each gets upstream's Preempted event.
func (pl *DefaultPreemption) preemptPod(ctx context.Context, pod *v1.Pod, node string, victim *v1.Pod) (inMemory bool, err error) {
	return pl.preemptFor(ctx, framework.PodPreemptor(pod), node, victim)
}

// preemptFor is preemptPod for a pod or a pod group.
func (pl *DefaultPreemption) preemptFor(ctx context.Context, preemptor framework.Preemptor, node string, victim *v1.Pod) (inMemory bool, err error) {
	rec := pl.handle.EventRecorder()
	if wp := pl.handle.GetWaitingPod(string(victim.UID)); wp != nil && wp.Preempt(Name, "preempted") {
		if rec != nil {
			rec.Eventf(victim, preemptor.Object, v1.EventTypeNormal, "Preempted", "Preempting", "Preempted by %s %v on node %v (in kube-scheduler memory).", preemptor.Kind, preemptor.UID, node)
		}
		return true, nil
	}
	if err := pl.handle.Evict(ctx, victim, preemptor); err != nil {
		if apierrors.IsNotFound(err) {
			// Already deleted: evicted, and no event (upstream's PreemptPod).
			return false, nil
		}
		return false, fmt.Errorf("preempting %s/%s: %w", victim.Namespace, victim.Name, err)
	}
	if rec != nil {
		rec.Eventf(victim, preemptor.Object, v1.EventTypeNormal, "Preempted", "Preempting", "Preempted by %s %v on node %v", preemptor.Kind, preemptor.UID, node)
	}
	return false, nil
}
