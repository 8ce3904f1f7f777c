// Package nodeunschedulable holds NodeUnschedulable: cordoned nodes take
// only pods that tolerate the unschedulable taint.
package nodeunschedulable

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "NodeUnschedulable"

// Upstream's reasons.
const (
	ErrReasonUnschedulable    = "node(s) were unschedulable"
	ErrReasonUnknownCondition = "node(s) had unknown conditions"
)

// NodeUnschedulable is a Filter plugin.
type NodeUnschedulable struct {
	// comparison: Gt and Lt tolerations compare values
	// (TaintTolerationComparisonOperators).
	comparison bool
}

var (
	_ framework.FilterPlugin      = &NodeUnschedulable{}
	_ framework.EnqueueExtensions = &NodeUnschedulable{}
)

var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	pl := &NodeUnschedulable{}
	if h != nil {
		pl.comparison = h.Features().TaintTolerationComparisonOperators
	}
	return pl, nil
}

// Name implements framework.Plugin.
func (*NodeUnschedulable) Name() string { return Name }

// Filter rejects a cordoned node unless the pod tolerates
// node.kubernetes.io/unschedulable:NoSchedule.
func (pl *NodeUnschedulable) Filter(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	node := ni.Node()
	if node == nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnknownCondition)
	}
	if !node.Spec.Unschedulable {
		return nil
	}
	if v1helper.TolerationsTolerateTaint(framework.Logger(ctx), pod.Spec.Tolerations, &unschedulableTaint, pl.comparison) {
		return nil
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
}

// EventsToRegister: a node added or uncordoned (spec.unschedulable is
// reported as a taint change, as upstream does).
func (*NodeUnschedulable) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint}, QueueingHintFn: afterNodeEvent},
		{Event: framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodToleration}},
	}, nil
}

// afterNodeEvent: a node added schedulable, or uncordoned.
func afterNodeEvent(_ klog.Logger, _ *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil || cur == nil {
		return framework.Queue, err
	}
	if !cur.Spec.Unschedulable && (old == nil || old.Spec.Unschedulable) {
		return framework.Queue, nil
	}
	return framework.QueueSkip, nil
}

// AppendPodSignature implements framework.EquivalencePlugin: Filter reads
// the pod's tolerations and the node's unschedulable flag.
func (*NodeUnschedulable) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	pod := pi.Pod
	return framework.AppendSigTolerations(b, pod.Spec.Tolerations), true
}
