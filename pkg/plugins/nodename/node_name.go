// Package nodename holds NodeName: a pod that names its node fits only there.
package nodename

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "NodeName"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't match the requested node name"

// NodeName is a PreFilter and Filter plugin.
type NodeName struct{}

var (
	_ framework.PreFilterPlugin   = &NodeName{}
	_ framework.FilterPlugin      = &NodeName{}
	_ framework.EnqueueExtensions = &NodeName{}
)

// New builds the plugin.
func New(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
	return &NodeName{}, nil
}

// Name implements framework.Plugin.
func (*NodeName) Name() string { return Name }

// PreFilter restricts the search to spec.nodeName, or skips.
func (*NodeName) PreFilter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if pod.Spec.NodeName == "" {
		return nil, framework.NewStatus(framework.Skip)
	}
	return &framework.PreFilterResult{NodeNames: sets.New(pod.Spec.NodeName)}, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*NodeName) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter implements framework.FilterPlugin.
func (*NodeName) Filter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	if pod.Spec.NodeName != "" && pod.Spec.NodeName != ni.Node().Name {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// EventsToRegister: a node of that name appearing.
func (*NodeName) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return framework.Events(framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}), nil
}

// AppendPodSignature implements framework.EquivalencePlugin.
func (*NodeName) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	pod := pi.Pod
	return framework.AppendSigString(b, pod.Spec.NodeName), true
}
