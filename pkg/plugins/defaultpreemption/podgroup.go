package defaultpreemption

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/framework/metrics"
)

// Preemption for a whole pod group (the GenericWorkload gate): upstream's
// PodGroupPostFilter (framework/preemption/podgrouppreemption.go in
// v1.37.2), read for its behaviour:
//
//   - the group may preempt unless a member has preemptionPolicy Never;
//   - a group whose members are nominated to nodes where a lower-priority
//     victim of an earlier preemption is still terminating waits for it;
//   - the domain is the whole cluster: every scheduled pod of lower
//     priority is a potential victim, a pod of a group with disruptionMode
//     All together with its group's other scheduled pods, priorities being
//     the groups' where pods belong to one;
//   - all potential victims are removed from the snapshot and the group's
//     algorithm run once; then the victims are reprieved one by one, the
//     PDB-violating ones first, the most important first (priority, then
//     group over pod, larger groups, earlier start), each kept if every
//     placed member still passes Filter where it was placed;
//   - the victims left are evicted (in the background with asynchronous
//     preemption), with "Preempted by podgroup <uid> on node cluster"
//     events, and each placed member is nominated to its node.

const (
	msgGroupNoVictims      = "No preemption victims found for incoming preemptor"
	msgGroupWaiting        = "waiting for the preemption for this pod group to be finished"
	groupPreemptionNode    = "cluster"
	groupPreemptionMsgHead = "pod group preemption: "
)

var _ framework.PodGroupPostFilterPlugin = &DefaultPreemption{}

// groupVictim is a unit of eviction: one pod, or every scheduled pod of a
// group with disruptionMode All.
type groupVictim struct {
	pods     []*framework.PodInfo
	priority int32
	// group: the pods belong to a pod group (upstream's PodGroupKeyType).
	group    bool
	earliest time.Time
}

func moreImportantVictim(a, b *groupVictim) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.group != b.group {
		return a.group
	}
	if len(a.pods) != len(b.pods) {
		return len(a.pods) > len(b.pods)
	}
	return a.earliest.Before(b.earliest)
}

// PodGroupPostFilter implements framework.PodGroupPostFilterPlugin.
func (pl *DefaultPreemption) PodGroupPostFilter(ctx context.Context, _ *framework.PodGroupCycleState, g *framework.QueuedPodGroupInfo, schedule framework.PodGroupSchedulingFunc) (*framework.PodGroupPostFilterResult, *framework.Status) {
	res, st := pl.preemptForGroup(ctx, g, schedule)
	metrics.WorkloadPreemptionAttempts.WithLabelValues(st.Code().String()).Inc()
	if msg := st.Message(); msg != "" {
		return res, framework.NewStatus(st.Code(), groupPreemptionMsgHead+msg)
	}
	return res, st
}

func (pl *DefaultPreemption) preemptForGroup(ctx context.Context, g *framework.QueuedPodGroupInfo, schedule framework.PodGroupSchedulingFunc) (*framework.PodGroupPostFilterResult, *framework.Status) {
	members := g.UnscheduledPods
	for _, p := range members {
		if p.Spec.PreemptionPolicy != nil && *p.Spec.PreemptionPolicy == v1.PreemptNever {
			return nil, framework.NewStatus(framework.Unschedulable, msgNotEligibleNever)
		}
	}
	prio := framework.PodGroupPriority(g.PodGroup)
	lister := pl.handle.SnapshotSharedLister()
	snap, ok := lister.(framework.MutableSnapshot)
	if !ok {
		return nil, framework.AsStatus(errors.New("failed to start mutations: the snapshot cannot be changed"))
	}
	nodes, err := lister.NodeInfos().List()
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if pl.groupPreemptionOngoing(members, prio) {
		n := map[types.NamespacedName]string{}
		for _, p := range members {
			n[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p.Status.NominatedNodeName
		}
		return &framework.PodGroupPostFilterResult{Nominations: n}, framework.NewStatus(framework.Success, "ongoing preemption on nominated nodes")
	}
	var potential []*groupVictim
	for _, v := range pl.clusterVictims(nodes) {
		if v.priority < prio {
			potential = append(potential, v)
		}
	}
	if len(potential) == 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, msgGroupNoVictims)
	}
	nodeOf := func(pi *framework.PodInfo) *framework.NodeInfo {
		ni, _ := lister.NodeInfos().Get(pi.Pod.Spec.NodeName)
		return ni
	}
	for _, v := range potential {
		for _, pi := range v.pods {
			if err := snap.RemovePod(pi.Pod.Spec.NodeName, pi.Pod); err != nil {
				return nil, framework.AsStatus(err)
			}
		}
	}
	assignments, st := schedule(ctx)
	if !st.IsSuccess() {
		return nil, st
	}
	sort.SliceStable(potential, func(i, j int) bool { return moreImportantVictim(potential[i], potential[j]) })
	violating, nonViolating, violations := splitVictimsByPDB(potential, pl.pdbs())

	// reprieve puts v back and keeps it if every placed member still
	// passes Filter on its node, the members before it placed there too.
	reprieve := func(v *groupVictim) (bool, error) {
		for _, pi := range v.pods {
			if err := snap.AddPodInfo(pi.Pod.Spec.NodeName, pi); err != nil {
				return false, err
			}
			for _, a := range assignments {
				if st := pl.handle.RunPreFilterExtensionAddPod(ctx, a.State, a.PodInfo.Pod, pi, nodeOf(pi)); !st.IsSuccess() {
					return false, st.AsError()
				}
			}
		}
		var placed []framework.ProposedAssignment
		defer func() {
			for i := len(placed) - 1; i >= 0; i-- {
				_ = snap.RemovePod(placed[i].Node, placed[i].PodInfo.Pod)
			}
		}()
		for _, a := range assignments {
			ni, err := lister.NodeInfos().Get(a.Node)
			if err != nil {
				return false, err
			}
			if !pl.handle.RunFilterPluginsWithNominatedPods(ctx, a.State, a.PodInfo.Pod, ni).IsSuccess() {
				for _, pi := range v.pods {
					if err := snap.RemovePod(pi.Pod.Spec.NodeName, pi.Pod); err != nil {
						return false, err
					}
					for _, a := range assignments {
						if st := pl.handle.RunPreFilterExtensionRemovePod(ctx, a.State, a.PodInfo.Pod, pi, nodeOf(pi)); !st.IsSuccess() {
							return false, st.AsError()
						}
					}
				}
				return false, nil
			}
			if err := snap.AddPodInfo(a.Node, a.PodInfo); err != nil {
				return false, err
			}
			placed = append(placed, a)
		}
		return true, nil
	}
	var evict []*groupVictim
	pdbViolations := 0
	for i, v := range violating {
		fits, err := reprieve(v)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		if !fits {
			evict = append(evict, v)
			pdbViolations += violations[i]
		}
	}
	for _, v := range nonViolating {
		fits, err := reprieve(v)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		if !fits {
			evict = append(evict, v)
		}
	}
	sort.SliceStable(evict, func(i, j int) bool { return moreImportantVictim(evict[i], evict[j]) })
	var victims []*v1.Pod
	disruptions := 0
	for _, v := range evict {
		if v.group {
			disruptions++
		}
		for _, pi := range v.pods {
			victims = append(victims, pi.Pod)
		}
	}
	metrics.WorkloadPreemptionVictims.Observe(float64(len(victims)))
	if disruptions > 0 {
		metrics.PreemptionWorkloadDisruptions.WithLabelValues("podgroup").Observe(float64(disruptions))
	}
	nominations := make(map[types.NamespacedName]string, len(assignments))
	for _, a := range assignments {
		nominations[types.NamespacedName{Namespace: a.PodInfo.Pod.Namespace, Name: a.PodInfo.Pod.Name}] = a.Node
	}
	klog.FromContext(ctx).V(5).Info("Pod group preemption", "victims", len(victims), "pdbViolations", pdbViolations)
	preemptor := framework.Preemptor{Kind: "podgroup", Namespace: g.Namespace, Name: g.Name, SchedulerName: members[0].Spec.SchedulerName}
	if g.PodGroup != nil {
		preemptor.UID, preemptor.Object = g.PodGroup.UID, g.PodGroup
	}
	if pl.exec != nil {
		pl.actuateGroupAsync(preemptor, members, victims)
	} else {
		for _, victim := range victims {
			if victim.DeletionTimestamp != nil && pl.handle.GetWaitingPod(string(victim.UID)) == nil {
				continue
			}
			if _, err := pl.preemptFor(ctx, preemptor, groupPreemptionNode, victim); err != nil {
				return nil, framework.AsStatus(err)
			}
		}
	}
	return &framework.PodGroupPostFilterResult{Nominations: nominations}, framework.NewStatus(framework.Success,
		fmt.Sprintf("found a placement for podgroup, preempting %d victims", len(victims)))
}

// groupPreemptionOngoing: a member is nominated to a node where a pod of
// lower priority is terminating by preemption.
func (pl *DefaultPreemption) groupPreemptionOngoing(members []*v1.Pod, prio int32) bool {
	seen := map[string]bool{}
	for _, p := range members {
		node := p.Status.NominatedNodeName
		if node == "" || seen[node] {
			continue
		}
		seen[node] = true
		ni, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(node)
		if err != nil || ni == nil {
			continue
		}
		for _, pi := range ni.Pods() {
			if pl.effectivePriority(pi.Pod) < prio && terminatingByPreemption(pi.Pod) {
				return true
			}
		}
	}
	return false
}

// effectivePriority is a pod's priority as a victim: its group's when it
// belongs to one the scheduler knows (upstream's GetPodPriority).
func (pl *DefaultPreemption) effectivePriority(p *v1.Pod) int32 {
	if name := framework.PodGroupName(p); name != "" {
		if m := pl.handle.PodGroupManager(); m != nil {
			if pg, ok := m.PodGroup(p.Namespace, name); ok {
				return framework.PodGroupPriority(pg)
			}
		}
	}
	return corev1helpers.PodPriority(p)
}

// clusterVictims lists every scheduled pod as a unit of eviction, the pods
// of a group with disruptionMode All as one (upstream's
// getCrossNodesVictims), in node then pod order.
func (pl *DefaultPreemption) clusterVictims(nodes []*framework.NodeInfo) []*groupVictim {
	m := pl.handle.PodGroupManager()
	seen := map[string]bool{}
	var out []*groupVictim
	for _, ni := range nodes {
		for _, pi := range ni.Pods() {
			p := pi.Pod
			name := framework.PodGroupName(p)
			if name != "" && m != nil {
				if pg, ok := m.PodGroup(p.Namespace, name); ok && pg.Spec.DisruptionMode != nil && pg.Spec.DisruptionMode.All != nil {
					key := "podgroup/" + framework.PodGroupKey(p.Namespace, name)
					if seen[key] {
						continue
					}
					seen[key] = true
					out = append(out, pl.wholeGroupVictim(pi, pg.Name, framework.PodGroupPriority(pg)))
					continue
				}
			}
			out = append(out, &groupVictim{pods: []*framework.PodInfo{pi}, priority: pl.effectivePriority(p),
				group: name != "" && m != nil, earliest: startTime(p)})
		}
	}
	return out
}

// wholeGroupVictim is every scheduled pod of pi's group, found in the
// snapshot; pi alone when the group's state is unknown.
func (pl *DefaultPreemption) wholeGroupVictim(pi *framework.PodInfo, group string, prio int32) *groupVictim {
	v := &groupVictim{priority: prio, group: true, earliest: farFuture}
	if st, ok := pl.handle.PodGroupManager().PodGroupState(pi.Pod.Namespace, group); ok {
		for _, p := range st.ScheduledPods() {
			ni, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(p.Spec.NodeName)
			if err != nil || ni == nil {
				continue
			}
			for _, q := range ni.Pods() {
				if q.Pod.UID == p.UID {
					v.pods = append(v.pods, q)
				}
			}
		}
	}
	if len(v.pods) == 0 {
		v.pods = []*framework.PodInfo{pi}
	}
	for _, q := range v.pods {
		if t := startTime(q.Pod); t.Before(v.earliest) {
			v.earliest = t
		}
	}
	return v
}

func (pl *DefaultPreemption) pdbs() []*policyv1.PodDisruptionBudget {
	l := pl.handle.Listers().PodDisruptionBudgets
	if l == nil {
		return nil
	}
	pdbs, _ := l.List(labels.Everything())
	return pdbs
}

// splitVictimsByPDB: a victim violates when evicting any of its pods
// would exceed a budget, counting down the budgets in victim order
// (upstream's FilterVictimsWithPDBViolation); counts are the violating
// pods of each violating victim.
func splitVictimsByPDB(victims []*groupVictim, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*groupVictim, counts []int) {
	budget := newPDBBudget(pdbs)
	for _, v := range victims {
		n := 0
		for _, pi := range v.pods {
			if budget.violates(pi.Pod) {
				n++
			}
		}
		if n > 0 {
			violating = append(violating, v)
			counts = append(counts, n)
		} else {
			nonViolating = append(nonViolating, v)
		}
	}
	return violating, nonViolating, counts
}
