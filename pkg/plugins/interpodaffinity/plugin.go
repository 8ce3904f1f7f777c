// Package interpodaffinity holds InterPodAffinity: required pod affinity
// and anti-affinity (the pod's own, and existing pods' anti-affinity
// against it) filter nodes; preferred terms on both sides, and existing
// pods' required affinity (hardPodAffinityWeight), score them.
package interpodaffinity

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "InterPodAffinity"

// Upstream's reasons.
const (
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	ErrReasonAffinityRulesNotMatch             = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinityRulesNotMatch         = "node(s) didn't match pod anti-affinity rules"
)

// InterPodAffinity is a PreFilter, Filter, PreScore and Score plugin.
type InterPodAffinity struct {
	handle framework.Handle
	args   configv1.InterPodAffinityArgs
	// memos keep PreFilter's counts of incoming terms across cycles,
	// antiMemos those of existing pods' anti-affinity against the pod,
	// scoreMemos PreScore's domain scores (memo.go).
	memos      helper.MemoSet[incomingMemo]
	antiMemos  helper.MemoSet[antiMemo]
	scoreMemos helper.MemoSet[scoreMemo]
}

var (
	_ framework.PreFilterPlugin   = &InterPodAffinity{}
	_ framework.FilterPlugin      = &InterPodAffinity{}
	_ framework.PreScorePlugin    = &InterPodAffinity{}
	_ framework.ScorePlugin       = &InterPodAffinity{}
	_ framework.EnqueueExtensions = &InterPodAffinity{}
)

// New builds the plugin from InterPodAffinityArgs.
func New(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	args, err := helper.Args[configv1.InterPodAffinityArgs](obj)
	if err != nil {
		return nil, err
	}
	return &InterPodAffinity{handle: h, args: *args}, nil
}

// Name implements framework.Plugin.
func (*InterPodAffinity) Name() string { return Name }

// EventsToRegister: pods coming, going or relabeled, and nodes gaining
// labels (topology domains), can satisfy a term that failed.
func (pl *InterPodAffinity) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add | framework.UpdatePodLabel | framework.Delete}, QueueingHintFn: pl.afterAssignedPodChange},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: afterNodeChange},
	}, nil
}

// matchesAny is true when some term selects p (in namespace labels ns).
func matchesAny(terms []framework.AffinityTerm, p *v1.Pod, ns labels.Set) bool {
	for i := range terms {
		if terms[i].Matches(p, ns) {
			return true
		}
	}
	return false
}

// matchesAllTerms is true when every term selects p (and there is one).
func matchesAllTerms(terms []framework.AffinityTerm, p *v1.Pod, ns labels.Set) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(p, ns) {
			return false
		}
	}
	return true
}

// afterAssignedPodChange, as upstream's hint: a placed pod that now
// matches all the pod's affinity terms, that stops matching (or is deleted
// while matching) its anti-affinity, or a deleted pod whose anti-affinity
// selected the pod.
func (pl *InterPodAffinity) afterAssignedPodChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	unplaced := func(p *v1.Pod) bool { return p != nil && p.Spec.NodeName == "" && p.Status.NominatedNodeName == "" }
	if unplaced(cur) || unplaced(old) {
		return framework.QueueSkip, nil
	}
	pi := framework.ParseAffinity(pod)
	l := pl.handle.Listers()
	nsOf := func(p *v1.Pod) labels.Set { return l.NamespaceLabels(p.Namespace) }
	switch {
	case old != nil && cur != nil:
		if !matchesAllTerms(pi.RequiredAffinityTerms, old, nsOf(old)) && matchesAllTerms(pi.RequiredAffinityTerms, cur, nsOf(cur)) {
			return framework.Queue, nil
		}
		if matchesAny(pi.RequiredAntiAffinityTerms, old, nsOf(old)) && !matchesAny(pi.RequiredAntiAffinityTerms, cur, nsOf(cur)) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	case cur != nil:
		if matchesAllTerms(pi.RequiredAffinityTerms, cur, nsOf(cur)) {
			return framework.Queue, nil
		}
		return framework.QueueSkip, nil
	}
	if matchesAny(pi.RequiredAntiAffinityTerms, old, nsOf(old)) {
		return framework.Queue, nil
	}
	if matchesAny(framework.ParseAffinity(old).RequiredAntiAffinityTerms, pod, nsOf(pod)) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// afterNodeChange: a node that gains (or moves within) a topology key of
// the pod's affinity, or loses or moves one of its anti-affinity; any new
// node when the pod has anti-affinity.
func afterNodeChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil || cur == nil {
		return framework.Queue, err
	}
	pi := framework.ParseAffinity(pod)
	for _, t := range pi.RequiredAffinityTerms {
		nv, nok := cur.Labels[t.TopologyKey]
		if old == nil {
			if nok {
				return framework.Queue, nil
			}
			continue
		}
		ov, ook := old.Labels[t.TopologyKey]
		if (!ook && nok) || (ook && nok && ov != nv) {
			return framework.Queue, nil
		}
	}
	for _, t := range pi.RequiredAntiAffinityTerms {
		if old == nil {
			return framework.Queue, nil
		}
		ov, ook := old.Labels[t.TopologyKey]
		nv, nok := cur.Labels[t.TopologyKey]
		if (ook && !nok) || (ook && nok && ov != nv) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// resolveNamespaces returns copies of the incoming pod's terms whose
// namespaceSelector is replaced by the names of the namespaces it selects
// now (as upstream merges them), so that matching an existing pod needs no
// namespace lookup. An empty selector ({}: every namespace) is kept.
func (pl *InterPodAffinity) resolveNamespaces(terms []framework.AffinityTerm) ([]framework.AffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	out := make([]framework.AffinityTerm, len(terms))
	copy(out, terms)
	for i := range out {
		t := &out[i]
		// Without a selector there is nothing to resolve (it selects no
		// namespace); an empty one ({}) selects all and is kept as is.
		if !t.HasNamespaceSelector || t.NamespaceSelector.Empty() {
			continue
		}
		nsl := pl.handle.Listers().Namespaces
		t.Namespaces = t.Namespaces.Clone()
		if nsl != nil {
			nss, err := nsl.List(t.NamespaceSelector)
			if err != nil {
				return nil, err
			}
			for _, ns := range nss {
				t.Namespaces.Insert(ns.Name)
			}
		}
		t.NamespaceSelector = labels.Nothing()
	}
	return out, nil
}

func resolveWeighted(pl *InterPodAffinity, terms []framework.WeightedAffinityTerm) ([]framework.WeightedAffinityTerm, error) {
	plain := make([]framework.AffinityTerm, len(terms))
	for i := range terms {
		plain[i] = terms[i].AffinityTerm
	}
	resolved, err := pl.resolveNamespaces(plain)
	if err != nil {
		return nil, err
	}
	out := make([]framework.WeightedAffinityTerm, len(terms))
	for i := range terms {
		out[i] = framework.WeightedAffinityTerm{AffinityTerm: resolved[i], Weight: terms[i].Weight}
	}
	return out, nil
}
