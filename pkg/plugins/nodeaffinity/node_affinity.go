// Package nodeaffinity holds NodeAffinity: spec.nodeSelector and node
// affinity (required terms filter, preferred terms score), plus the
// scheduler-enforced addedAffinity of the plugin's args.
package nodeaffinity

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "NodeAffinity"

// Upstream's reasons.
const (
	ErrReasonPod      = "node(s) didn't match Pod's node affinity/selector"
	ErrReasonEnforced = "node(s) didn't match scheduler-enforced node affinity"
	ErrReasonConflict = "pod affinity terms conflict"
)

const (
	preFilterStateKey framework.StateKey = "PreFilter" + Name
	preScoreStateKey  framework.StateKey = "PreScore" + Name
)

// NodeAffinity is a PreFilter, Filter, PreScore and Score plugin.
type NodeAffinity struct {
	addedNodeSelector   *nodeaffinity.NodeSelector
	addedPrefSchedTerms *nodeaffinity.PreferredSchedulingTerms
}

var (
	_ framework.PreFilterPlugin   = &NodeAffinity{}
	_ framework.FilterPlugin      = &NodeAffinity{}
	_ framework.PreScorePlugin    = &NodeAffinity{}
	_ framework.ScorePlugin       = &NodeAffinity{}
	_ framework.EnqueueExtensions = &NodeAffinity{}
)

// New builds the plugin from *configv1.NodeAffinityArgs (nil: no added affinity).
func New(_ context.Context, obj runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	pl := &NodeAffinity{}
	if obj == nil {
		return pl, nil
	}
	args, ok := obj.(*configv1.NodeAffinityArgs)
	if !ok {
		return nil, fmt.Errorf("want args to be of type NodeAffinityArgs, got %T", obj)
	}
	if args == nil || args.AddedAffinity == nil {
		return pl, nil
	}
	var err error
	if ns := args.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		if pl.addedNodeSelector, err = nodeaffinity.NewNodeSelector(ns); err != nil {
			return nil, fmt.Errorf("parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: %w", err)
		}
	}
	if terms := args.AddedAffinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) > 0 {
		if pl.addedPrefSchedTerms, err = nodeaffinity.NewPreferredSchedulingTerms(terms); err != nil {
			return nil, fmt.Errorf("parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: %w", err)
		}
	}
	return pl, nil
}

// Name implements framework.Plugin.
func (*NodeAffinity) Name() string { return Name }

type preFilterState struct {
	required requiredMatcher
}

func (s *preFilterState) Clone() framework.StateData { return s }

func requiredTerms(pod *v1.Pod) []v1.NodeSelectorTerm {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
}

// PreFilter parses the pod's selector and required affinity once. When
// every required term names nodes by metadata.name, the search is
// restricted to those nodes.
func (pl *NodeAffinity) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	a := pod.Spec.Affinity
	noRequired := a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil
	if noRequired && pl.addedNodeSelector == nil && pod.Spec.NodeSelector == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, &preFilterState{required: compileRequired(pod)})
	terms := requiredTerms(pod)
	if len(terms) == 0 {
		return nil, nil
	}
	var nodeNames sets.Set[string]
	for _, t := range terms {
		var termNames sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == v1.NodeSelectorOpIn {
				s := sets.New(r.Values...)
				if termNames == nil {
					termNames = s
				} else {
					termNames = termNames.Intersection(s)
				}
			}
		}
		if termNames == nil {
			// This term allows any node name, and terms are ORed.
			return nil, nil
		}
		nodeNames = nodeNames.Union(termNames)
	}
	if nodeNames != nil && nodeNames.Len() == 0 {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
	}
	if nodeNames.Len() > 0 {
		return &framework.PreFilterResult{NodeNames: nodeNames}, nil
	}
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*NodeAffinity) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter checks the added affinity, then the pod's selector and required terms.
func (pl *NodeAffinity) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	node := ni.Node()
	if pl.addedNodeSelector != nil && !pl.addedNodeSelector.Match(node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonEnforced)
	}
	var required *requiredMatcher
	if s, err := state.Read(preFilterStateKey); err == nil {
		required = &s.(*preFilterState).required
	} else {
		m := compileRequired(pod)
		required = &m
	}
	// Terms that do not parse match no node, as upstream.
	if !required.Match(node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)
	}
	return nil
}

type preScoreState struct {
	preferred *nodeaffinity.PreferredSchedulingTerms
}

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore parses the preferred terms; without any (pod or added), Skip.
func (pl *NodeAffinity) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	var terms []v1.PreferredSchedulingTerm
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		terms = a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if len(terms) == 0 && pl.addedPrefSchedTerms == nil {
		return framework.NewStatus(framework.Skip)
	}
	preferred, err := nodeaffinity.NewPreferredSchedulingTerms(terms)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("parsing pod's preferred node affinity: %w", err))
	}
	state.Write(preScoreStateKey, &preScoreState{preferred: preferred})
	return nil
}

// Score sums the weights of the preferred terms the node matches.
func (pl *NodeAffinity) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	node := ni.Node()
	var score int64
	if pl.addedPrefSchedTerms != nil {
		score += pl.addedPrefSchedTerms.Score(node)
	}
	s, err := state.Read(preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, err))
	}
	if p := s.(*preScoreState).preferred; p != nil {
		score += p.Score(node)
	}
	return score, nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales by the best node.
func (*NodeAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	return helper.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
}

// EventsToRegister: node added or relabeled.
func (pl *NodeAffinity) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}, QueueingHintFn: pl.afterNodeEvent},
	}, nil
}

// afterNodeEvent: a node that now matches the pod's required affinity (and
// the added affinity) and did not before.
func (pl *NodeAffinity) afterNodeEvent(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil || cur == nil {
		return framework.Queue, err
	}
	m := compileRequired(pod)
	matches := func(n *v1.Node) bool {
		return (pl.addedNodeSelector == nil || pl.addedNodeSelector.Match(n)) && m.Match(n)
	}
	if matches(cur) && (old == nil || !matches(old)) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// AppendPodSignature implements framework.EquivalencePlugin: Filter and
// Score read the pod's nodeSelector and node affinity (the added affinity
// is the profile's, the same for every pod) and the node's labels and
// fields.
func (*NodeAffinity) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	pod := pi.Pod
	keys := slices.Sorted(maps.Keys(pod.Spec.NodeSelector))
	b = framework.AppendSigInt(b, int64(len(keys)))
	for _, k := range keys {
		b = framework.AppendSigString(b, k)
		b = framework.AppendSigString(b, pod.Spec.NodeSelector[k])
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		j, err := json.Marshal(a.NodeAffinity)
		if err != nil {
			return b, false
		}
		return framework.AppendSigBytes(b, j), true
	}
	return framework.AppendSigBytes(b, nil), true
}
