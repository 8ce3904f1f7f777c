// Package nodeports holds NodePorts: a pod's host ports must be free on the node.
package nodeports

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "NodePorts"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// NodePorts is a PreFilter and Filter plugin.
type NodePorts struct{}

var (
	_ framework.PreFilterPlugin   = &NodePorts{}
	_ framework.FilterPlugin      = &NodePorts{}
	_ framework.EnqueueExtensions = &NodePorts{}
)

type preFilterState []v1.ContainerPort

func (s preFilterState) Clone() framework.StateData { return s }

// New builds the plugin.
func New(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
	return &NodePorts{}, nil
}

// Name implements framework.Plugin.
func (*NodePorts) Name() string { return Name }

// PreFilter collects the pod's host ports; a pod without any skips Filter.
func (*NodePorts) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	ports := framework.HostPortsOf(pod)
	if len(ports) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, preFilterState(ports))
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*NodePorts) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter implements framework.FilterPlugin.
func (*NodePorts) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	var ports []v1.ContainerPort
	if s, err := state.Read(preFilterStateKey); err == nil {
		ports = s.(preFilterState)
	} else if err == framework.ErrNotFound {
		ports = framework.HostPortsOf(pod)
	} else {
		return framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err))
	}
	if Fits(ports, ni) {
		return nil
	}
	return framework.NewStatus(framework.Unschedulable, ErrReason)
}

// Fits reports whether none of the ports is taken on the node.
func Fits(ports []v1.ContainerPort, ni *framework.NodeInfo) bool {
	for i := range ports {
		if ni.UsedPorts().CheckConflict(ports[i].HostIP, string(ports[i].Protocol), ports[i].HostPort) {
			return false
		}
	}
	return true
}

// EventsToRegister: a pod deleted from a node, or a node added.
func (*NodePorts) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}, QueueingHintFn: afterPodDelete},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}},
	}, nil
}

// afterPodDelete: only a deleted pod that held one of the pod's host ports
// frees it.
func afterPodDelete(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, _, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil || old == nil {
		return framework.Queue, err
	}
	held := framework.HostPortInfo{}
	for _, p := range framework.HostPortsOf(old) {
		held.Add(p.HostIP, string(p.Protocol), p.HostPort)
	}
	for _, p := range framework.HostPortsOf(pod) {
		if held.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// AppendPodSignature implements framework.EquivalencePlugin: Filter reads
// the pod's host ports and the node's used ports.
func (*NodePorts) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	ports := pi.HostPorts
	b = framework.AppendSigInt(b, int64(len(ports)))
	for i := range ports {
		b = framework.AppendSigString(b, ports[i].HostIP)
		b = framework.AppendSigString(b, string(ports[i].Protocol))
		b = framework.AppendSigInt(b, int64(ports[i].HostPort))
	}
	return b, true
}
