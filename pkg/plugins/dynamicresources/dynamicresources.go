// Package dynamicresources holds DynamicResources, inert until device
// allocation (DRA) is built: it is in the default profile so a default
// configuration names exactly upstream's plugins and explain shows
// upstream's score (0). A pod with ResourceClaims is refused with a clear
// message rather than placed without its devices.
package dynamicresources

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "DynamicResources"

// ErrReasonNotSupported is why a pod with ResourceClaims is not scheduled.
const ErrReasonNotSupported = "pod has ResourceClaims: kubesched does not allocate devices (DynamicResources) yet"

// DynamicResources is a PreFilter, Filter and Score plugin.
type DynamicResources struct{}

var (
	_ framework.PreFilterPlugin   = &DynamicResources{}
	_ framework.FilterPlugin      = &DynamicResources{}
	_ framework.ScorePlugin       = &DynamicResources{}
	_ framework.EnqueueExtensions = &DynamicResources{}
	_ framework.EquivalencePlugin = &DynamicResources{}
)

// New builds the plugin (DynamicResourcesArgs are accepted).
func New(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
	return &DynamicResources{}, nil
}

// Name implements framework.Plugin.
func (*DynamicResources) Name() string { return Name }

// EventsToRegister: none. No cluster event makes a pod with claims
// schedulable before DRA is built (its own update re-queues it anyway), and
// registering nothing keeps such pods from being retried on every event.
func (*DynamicResources) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{}, nil
}

// PreFilter skips pods without ResourceClaims and refuses the others.
func (*DynamicResources) PreFilter(_ context.Context, _ *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if len(pod.Spec.ResourceClaims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotSupported)
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*DynamicResources) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter is never reached with a claim (PreFilter refused the pod).
func (*DynamicResources) Filter(context.Context, *framework.CycleState, *v1.Pod, *framework.NodeInfo) *framework.Status {
	return nil
}

// Score is 0, as upstream's for pods without claims.
func (*DynamicResources) Score(context.Context, *framework.CycleState, *v1.Pod, *framework.NodeInfo) (int64, *framework.Status) {
	return 0, nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (*DynamicResources) ScoreExtensions() framework.ScoreExtensions { return nil }

// AppendPodSignature implements framework.EquivalencePlugin: for a pod
// without claims Filter passes and Score is 0 on every node, whatever the
// node; a pod with claims is not cached (PreFilter refuses it today, and
// an allocation depends on more than the node).
func (*DynamicResources) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	pod := pi.Pod
	return b, len(pod.Spec.ResourceClaims) == 0
}
