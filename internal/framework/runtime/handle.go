package runtime

import (
	"context"
	"math/rand"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"

	"github.com/kubesched/kubesched/internal/framework/parallelize"
	"github.com/kubesched/kubesched/pkg/framework"
)

// The framework.Handle the plugins get.

// SnapshotSharedLister implements framework.Handle.
func (f *Framework) SnapshotSharedLister() framework.SharedLister { return f.opts.Snapshot }

// Binder implements framework.Handle.
func (f *Framework) Binder() framework.Binder { return f.opts.Binder }

// EventRecorder implements framework.Handle.
func (f *Framework) EventRecorder() events.EventRecorder { return f.opts.EventRecorder }

// Listers implements framework.Handle.
func (f *Framework) Listers() framework.Listers { return *f.opts.Listers }

// NominatedPodsForNode implements framework.Handle.
func (f *Framework) NominatedPodsForNode(node string) []*framework.PodInfo {
	if f.opts.Nominator == nil {
		return nil
	}
	return f.opts.Nominator.NominatedPodsForNode(node)
}

// Evict implements framework.Handle.
func (f *Framework) Evict(ctx context.Context, victim *v1.Pod, preemptor framework.Preemptor) error {
	if f.opts.World == nil {
		return nil
	}
	return f.opts.World.Evict(ctx, victim, preemptor)
}

// Clock implements framework.Handle.
func (f *Framework) Clock() clock.WithTicker { return f.opts.Clock }

// VolumeWriter implements framework.Handle; nil without a world.
func (f *Framework) VolumeWriter() framework.VolumeWriter {
	if f.opts.World == nil {
		return nil
	}
	return f.opts.World
}

// nodeDetailer is a plugin that can say what a feasible node would give
// the pod, for explain (DynamicResources: the devices it would allocate).
// It is the runtime's question, not an extension point of the plugin API:
// a plugin answers it by having the method.
type nodeDetailer interface {
	NodeDetails(state *framework.CycleState, nodeName string) []string
}

// NodeDetails collects what the plugins with a NodeDetails method say a
// feasible node would give the pod (explain), in the order of the
// plugins' names.
func (f *Framework) NodeDetails(state *framework.CycleState, nodeName string) []string {
	names := make([]string, 0, len(f.plugins))
	for n, pl := range f.plugins {
		if _, ok := pl.(nodeDetailer); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		out = append(out, f.plugins[n].(nodeDetailer).NodeDetails(state, nodeName)...)
	}
	return out
}

// rejectionExplainer is a plugin that can say in more detail why it
// rejected a node, for explain (DynamicResources: which request of which
// claim cannot be allocated, and why). Like nodeDetailer, the runtime's
// question, not an extension point.
type rejectionExplainer interface {
	RejectionDetails(state *framework.CycleState, nodeName string) []string
}

// RejectionDetails asks the plugin that rejected a node why, in more
// detail than its status (explain); nil when it has no more to say.
func (f *Framework) RejectionDetails(state *framework.CycleState, plugin, nodeName string) []string {
	if re, ok := f.plugins[plugin].(rejectionExplainer); ok {
		return re.RejectionDetails(state, nodeName)
	}
	return nil
}

// SharedDRAManager implements framework.Handle.
func (f *Framework) SharedDRAManager() framework.DRAManager { return f.opts.DRAManager }

// ClaimWriter implements framework.Handle; nil without a world.
func (f *Framework) ClaimWriter() framework.ClaimWriter {
	if f.opts.World == nil {
		return nil
	}
	return f.opts.World
}

// ClearNominatedNodeName implements framework.Handle.
func (f *Framework) ClearNominatedNodeName(ctx context.Context, pod *v1.Pod) error {
	if f.opts.Nominator != nil {
		f.opts.Nominator.DeleteNominatedPodIfExists(pod)
	}
	if f.opts.World == nil {
		return nil
	}
	empty := ""
	return f.opts.World.UpdatePodStatus(ctx, pod, nil, &empty)
}

// AsyncPreemption implements framework.Handle.
func (f *Framework) AsyncPreemption() bool { return f.opts.AsyncPreemption }

// Extenders implements framework.Handle.
func (f *Framework) Extenders() []framework.Extender { return f.opts.Extenders }

// PodGroupManager implements framework.Handle.
func (f *Framework) PodGroupManager() framework.PodGroupManager { return f.opts.PodGroups }

// HasScorePlugins is true when the profile scores nodes.
func (f *Framework) HasScorePlugins() bool { return len(f.score) > 0 }

// DetachCycleCache stops the equivalence cache from serving state's cycle:
// what is scored from here on is not the snapshot's nodes (an extender
// that is not node-cache-capable answers with Node objects of its own).
func (f *Framework) DetachCycleCache(state *framework.CycleState) {
	if f.eq != nil && f.eq.state == state {
		f.eq.state = nil
	}
}

// Features implements framework.Handle.
func (f *Framework) Features() framework.Features { return f.opts.Features }

// Activate implements framework.Handle.
func (f *Framework) Activate(pods ...*v1.Pod) {
	if f.opts.Activator != nil {
		f.opts.Activator.Activate(pods...)
	}
}

// GetPod implements framework.Handle; without a world no pod exists.
func (f *Framework) GetPod(namespace, name string) (*v1.Pod, bool) {
	if f.opts.World == nil {
		return nil, false
	}
	return f.opts.World.GetPod(namespace, name)
}

// GetNode implements framework.Handle; without a world no node exists.
func (f *Framework) GetNode(name string) (*v1.Node, bool) {
	if f.opts.World == nil {
		return nil, false
	}
	return f.opts.World.GetNode(name)
}

// Parallelism implements framework.Handle.
func (f *Framework) Parallelism() int { return f.parallelizer.Parallelism() }

// Rand implements framework.Handle.
func (f *Framework) Rand() *rand.Rand { return f.opts.Rand }

// Parallelizer returns the worker pool.
func (f *Framework) Parallelizer() parallelize.Parallelizer { return f.parallelizer }

// IterateOverWaitingPods implements framework.Handle.
func (f *Framework) IterateOverWaitingPods(fn func(framework.WaitingPod)) { f.waiting.iterate(fn) }

// GetWaitingPod implements framework.Handle.
func (f *Framework) GetWaitingPod(uid string) framework.WaitingPod {
	if wp := f.waiting.get(typesUID(uid)); wp != nil {
		return wp
	}
	return nil
}
