// Package podtopologyspread holds PodTopologySpread: DoNotSchedule
// constraints filter nodes whose domain would exceed maxSkew; ScheduleAnyway
// constraints (and, for pods with none, the system default spreading over
// the pods of the same Service or controller) score nodes by how few
// matching pods their domains hold.
package podtopologyspread

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
	"github.com/kubesched/kubesched/pkg/plugins/nodeaffinity"
)

// Name of the plugin.
const Name = "PodTopologySpread"

// Upstream's reasons.
const (
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ErrReasonNodeLabelNotMatch   = ErrReasonConstraintsNotMatch + " (missing required label)"
)

// systemDefaultConstraints are upstream's defaults for defaultingType System.
var systemDefaultConstraints = []v1.TopologySpreadConstraint{
	{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
}

// PodTopologySpread is a PreFilter, Filter, PreScore and Score plugin.
type PodTopologySpread struct {
	handle             framework.Handle
	defaultConstraints []v1.TopologySpreadConstraint
	systemDefaulted    bool
	// memos keep PreFilter's and PreScore's domain counts across cycles
	// (memo.go).
	memos helper.MemoSet[memo]
	// comparison: Gt and Lt tolerations compare values
	// (TaintTolerationComparisonOperators), for nodeTaintsPolicy Honor.
	comparison bool
}

var (
	_ framework.PreFilterPlugin   = &PodTopologySpread{}
	_ framework.FilterPlugin      = &PodTopologySpread{}
	_ framework.PreScorePlugin    = &PodTopologySpread{}
	_ framework.ScorePlugin       = &PodTopologySpread{}
	_ framework.EnqueueExtensions = &PodTopologySpread{}
)

// New builds the plugin from PodTopologySpreadArgs.
func New(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	args, err := helper.Args[configv1.PodTopologySpreadArgs](obj)
	if err != nil {
		return nil, err
	}
	pl := &PodTopologySpread{handle: h}
	if h != nil {
		pl.comparison = h.Features().TaintTolerationComparisonOperators
	}
	if args.DefaultingType == configv1.SystemDefaulting {
		pl.defaultConstraints = systemDefaultConstraints
		pl.systemDefaulted = true
	} else {
		pl.defaultConstraints = args.DefaultConstraints
	}
	return pl, nil
}

// Name implements framework.Plugin.
func (*PodTopologySpread) Name() string { return Name }

// constraint is a TopologySpreadConstraint with its selector parsed and
// its optional fields defaulted.
type constraint struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy v1.NodeInclusionPolicy
	NodeTaintsPolicy   v1.NodeInclusionPolicy
	// comparison is the plugin's TaintTolerationComparisonOperators.
	comparison bool
	// sameSelectorAs is the first earlier constraint with the same
	// selector, whose count of a node's pods this one reuses; -1: none.
	// The system defaults (hostname and zone) share one selector.
	sameSelectorAs int
	// selectorText is Selector rendered, for that comparison (explicit
	// constraints only).
	selectorText string
}

// includes applies the constraint's node inclusion policies: with Honor,
// nodes the pod's node affinity excludes, or whose NoSchedule/NoExecute
// taints it does not tolerate, do not count as domains.
func (c *constraint) includes(logger klog.Logger, pod *v1.Pod, node *v1.Node, affinity *nodeaffinity.RequiredMatcher) bool {
	if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && !affinity.Match(node) {
		return false
	}
	return c.NodeTaintsPolicy != v1.NodeInclusionPolicyHonor ||
		helper.ToleratesDoNotScheduleTaints(logger, pod.Spec.Tolerations, node.Spec.Taints, c.comparison)
}

// constraintsFor returns the pod's constraints of the given action, or
// the default ones (with the Service/controller selector) when it has none.
func (pl *PodTopologySpread) constraintsFor(pod *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]constraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		return pl.parseConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, action)
	}
	cs, err := pl.parseConstraints(pl.defaultConstraints, pod.Labels, action)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	sel := DefaultSelector(pod, pl.handle.Listers())
	if sel.Empty() {
		return nil, nil
	}
	for i := range cs {
		cs[i].Selector = sel
		cs[i].sameSelectorAs = -1
		if i > 0 {
			cs[i].sameSelectorAs = 0 // one selector for all
		}
	}
	return cs, nil
}

func (pl *PodTopologySpread) parseConstraints(in []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction) ([]constraint, error) {
	var out []constraint
	for i := range in {
		c := &in[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("spec.topologySpreadConstraints[%d].labelSelector: %w", i, err)
		}
		// matchLabelKeys: the pod's values of those keys join the selector.
		var reqs []labels.Requirement
		for _, k := range c.MatchLabelKeys {
			if v, ok := podLabels[k]; ok {
				r, err := labels.NewRequirement(k, selection.Equals, []string{v})
				if err != nil {
					return nil, fmt.Errorf("spec.topologySpreadConstraints[%d].matchLabelKeys: %w", i, err)
				}
				reqs = append(reqs, *r)
			}
		}
		// A constraint without labelSelector selects nothing, and still
		// does with matchLabelKeys (labels.Nothing has no requirements to
		// merge with, and kube-scheduler keeps it as it is).
		if rs, selectable := sel.Requirements(); len(reqs) > 0 && selectable {
			sel = labels.NewSelector().Add(reqs...).Add(rs...)
		}
		tc := constraint{
			MaxSkew: c.MaxSkew, TopologyKey: c.TopologyKey, Selector: sel, MinDomains: 1,
			NodeAffinityPolicy: v1.NodeInclusionPolicyHonor, NodeTaintsPolicy: v1.NodeInclusionPolicyIgnore,
			comparison: pl.comparison,
		}
		if c.MinDomains != nil {
			tc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			tc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			tc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		tc.sameSelectorAs = -1
		tc.selectorText = sel.String()
		for j := range out {
			if out[j].sameSelectorAs < 0 && out[j].selectorText == tc.selectorText {
				tc.sameSelectorAs = j
				break
			}
		}
		out = append(out, tc)
	}
	return out, nil
}

var (
	rcKind  = v1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	stsKind = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}
)

// DefaultSelector is the selector of the pod's Services (merged), plus its
// controlling ReplicationController's, ReplicaSet's or StatefulSet's, as
// upstream derives it for default spreading. Empty when nothing selects it.
func DefaultSelector(pod *v1.Pod, l framework.Listers) labels.Selector {
	set := labels.Set{}
	if l.Services != nil {
		svcs, _ := l.Services.Services(pod.Namespace).List(labels.Everything())
		for _, s := range svcs {
			if s.Spec.Selector == nil {
				continue // a nil selector selects nothing
			}
			if labels.Set(s.Spec.Selector).AsSelectorPreValidated().Matches(labels.Set(pod.Labels)) {
				set = labels.Merge(set, s.Spec.Selector)
			}
		}
	}
	sel := set.AsSelector()
	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return sel
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return sel
	}
	addFrom := func(ls *metav1.LabelSelector) {
		if other, err := metav1.LabelSelectorAsSelector(ls); err == nil {
			if r, ok := other.Requirements(); ok {
				sel = sel.Add(r...)
			}
		}
	}
	switch gv.WithKind(owner.Kind) {
	case rcKind:
		if l.ReplicationControllers != nil {
			if rc, err := l.ReplicationControllers.ReplicationControllers(pod.Namespace).Get(owner.Name); err == nil {
				sel = labels.Merge(set, rc.Spec.Selector).AsSelector()
			}
		}
	case rsKind:
		if l.ReplicaSets != nil {
			if rs, err := l.ReplicaSets.ReplicaSets(pod.Namespace).Get(owner.Name); err == nil {
				addFrom(rs.Spec.Selector)
			}
		}
	case stsKind:
		if l.StatefulSets != nil {
			if ss, err := l.StatefulSets.StatefulSets(pod.Namespace).Get(owner.Name); err == nil {
				addFrom(ss.Spec.Selector)
			}
		}
	}
	return sel
}

// countMatching counts the pods in ns that match sel, terminating pods
// excluded. An empty selector (`labelSelector: {}`) counts no pod, as
// kube-scheduler's countPodsMatchSelector, although it matches every pod
// elsewhere (the incoming pod's own match). Allocation-free.
func countMatching(pods []*framework.PodInfo, sel labels.Selector, ns string) int {
	if sel.Empty() {
		return 0
	}
	n := 0
	for _, pi := range pods {
		p := pi.Pod
		if p.DeletionTimestamp != nil || p.Namespace != ns {
			continue
		}
		if sel.Matches(labels.Set(p.Labels)) {
			n++
		}
	}
	return n
}

// maxShared is how many constraints' counts nodeCounts remembers; more
// are counted without sharing.
const maxShared = 8

// nodeCounts counts the matching pods of one node per constraint, once per
// distinct selector (sameSelectorAs): the system defaults' two constraints
// share one count. A zero value per node; allocation-free.
type nodeCounts struct {
	done [maxShared]int // count+1 per constraint; 0: not counted yet
}

// of is constraint i's count of ni's pods in ns.
func (nc *nodeCounts) of(ni *framework.NodeInfo, cs []constraint, i int, ns string) int {
	j := i
	if s := cs[i].sameSelectorAs; s >= 0 {
		j = s
	}
	if j < maxShared && nc.done[j] > 0 {
		return nc.done[j] - 1
	}
	n := countMatching(ni.Pods(), cs[j].Selector, ns)
	if j < maxShared {
		nc.done[j] = n + 1
	}
	return n
}

// hasAllKeys is true when the node has every constraint's topology key.
func hasAllKeys(nodeLabels map[string]string, cs []constraint) bool {
	for i := range cs {
		if _, ok := nodeLabels[cs[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// EventsToRegister: pods with matching labels coming or going, and nodes
// gaining labels (domains) or losing taints, can change the skew.
func (pl *PodTopologySpread) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete}, QueueingHintFn: pl.afterAssignedPodChange},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.Delete | framework.UpdateNodeLabel | framework.UpdateNodeTaint}, QueueingHintFn: pl.afterNodeChange},
	}, nil
}

func selectedByAny(cs []constraint, podLabels map[string]string) bool {
	for i := range cs {
		if cs[i].Selector.Matches(labels.Set(podLabels)) {
			return true
		}
	}
	return false
}

// afterAssignedPodChange, as upstream's hint: a placed pod in the pod's
// namespace that a DoNotSchedule constraint selects coming or going, or
// whose labels change what the constraints select.
func (pl *PodTopologySpread) afterAssignedPodChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	involved := func(p *v1.Pod) bool { return p.Spec.NodeName != "" && p.Namespace == pod.Namespace }
	if (cur != nil && !involved(cur)) || (old != nil && !involved(old)) {
		return framework.QueueSkip, nil
	}
	cs, err := pl.constraintsFor(pod, v1.DoNotSchedule)
	if err != nil {
		return framework.Queue, err
	}
	switch {
	case old != nil && cur != nil:
		for i := range cs {
			if cs[i].Selector.Matches(labels.Set(old.Labels)) != cs[i].Selector.Matches(labels.Set(cur.Labels)) {
				return framework.Queue, nil
			}
		}
		return framework.QueueSkip, nil
	case cur != nil:
		if selectedByAny(cs, cur.Labels) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if selectedByAny(cs, old.Labels) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// afterNodeChange, as upstream's hint: a node with every topology key
// added or deleted, one gaining or losing them, or one with them whose
// topology values or taints change.
func (pl *PodTopologySpread) afterNodeChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	cs, err := pl.constraintsFor(pod, v1.DoNotSchedule)
	if err != nil {
		return framework.Queue, err
	}
	oldMatch := old != nil && hasAllKeys(old.Labels, cs)
	curMatch := cur != nil && hasAllKeys(cur.Labels, cs)
	switch {
	case old != nil && cur != nil:
		if oldMatch != curMatch {
			return framework.Queue, nil
		}
		if curMatch {
			for i := range cs {
				if old.Labels[cs[i].TopologyKey] != cur.Labels[cs[i].TopologyKey] {
					return framework.Queue, nil
				}
			}
			if !equality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) {
				return framework.Queue, nil
			}
		}
		return framework.QueueSkip, nil
	case cur != nil:
		if curMatch {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if oldMatch {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}
