// Package tainttoleration holds TaintToleration: NoSchedule and NoExecute
// taints filter, PreferNoSchedule taints lower the score.
package tainttoleration

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "TaintToleration"

// ErrReasonNotMatch is upstream's reason.
const ErrReasonNotMatch = "node(s) had untolerated taint(s)"

const preScoreStateKey framework.StateKey = "PreScore" + Name

// TaintToleration is a Filter and Score plugin.
type TaintToleration struct {
	// comparison: Gt and Lt tolerations compare values
	// (TaintTolerationComparisonOperators).
	comparison bool
}

var (
	_ framework.FilterPlugin      = &TaintToleration{}
	_ framework.PreScorePlugin    = &TaintToleration{}
	_ framework.ScorePlugin       = &TaintToleration{}
	_ framework.EnqueueExtensions = &TaintToleration{}
)

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	pl := &TaintToleration{}
	if h != nil {
		pl.comparison = h.Features().TaintTolerationComparisonOperators
	}
	return pl, nil
}

// Name implements framework.Plugin.
func (*TaintToleration) Name() string { return Name }

// Filter rejects a node with a NoSchedule or NoExecute taint that the pod
// does not tolerate.
func (pl *TaintToleration) Filter(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	if !helper.ToleratesDoNotScheduleTaints(framework.Logger(ctx), pod.Spec.Tolerations, ni.Node().Spec.Taints, pl.comparison) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotMatch)
	}
	return nil
}

type preScoreState struct {
	tolerations []v1.Toleration
}

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore keeps the tolerations that matter for PreferNoSchedule.
func (*TaintToleration) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	var tols []v1.Toleration
	for _, t := range pod.Spec.Tolerations {
		if t.Effect == "" || t.Effect == v1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	state.Write(preScoreStateKey, &preScoreState{tolerations: tols})
	return nil
}

// Score counts the PreferNoSchedule taints the pod does not tolerate.
func (pl *TaintToleration) Score(ctx context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	s, err := state.Read(preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, err))
	}
	tols := s.(*preScoreState).tolerations
	logger := framework.Logger(ctx)
	var n int64
	taints := ni.Node().Spec.Taints
	for i := range taints {
		if taints[i].Effect != v1.TaintEffectPreferNoSchedule {
			continue
		}
		if !v1helper.TolerationsTolerateTaint(logger, tols, &taints[i], pl.comparison) {
			n++
		}
	}
	return n, nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *TaintToleration) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore reverses: fewer untolerated taints is better.
func (*TaintToleration) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	return helper.DefaultNormalizeScore(framework.MaxNodeScore, true, scores)
}

// EventsToRegister: node taints changed, or the pod's tolerations.
func (pl *TaintToleration) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}, QueueingHintFn: pl.afterNodeEvent},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodToleration}},
	}, nil
}

// tolerated: the pod tolerates every NoSchedule/NoExecute taint of node.
func (pl *TaintToleration) tolerated(logger klog.Logger, pod *v1.Pod, node *v1.Node) bool {
	return helper.ToleratesDoNotScheduleTaints(logger, pod.Spec.Tolerations, node.Spec.Taints, pl.comparison)
}

// afterNodeEvent: a node whose taints the pod now tolerates and did not before.
func (pl *TaintToleration) afterNodeEvent(logger klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil || cur == nil {
		return framework.Queue, err
	}
	if pl.tolerated(logger, pod, cur) && (old == nil || !pl.tolerated(logger, pod, old)) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// AppendPodSignature implements framework.EquivalencePlugin: Filter and
// Score read the pod's tolerations and the node's taints.
func (*TaintToleration) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	pod := pi.Pod
	return framework.AppendSigTolerations(b, pod.Spec.Tolerations), true
}
