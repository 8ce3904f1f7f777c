package runtime

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// The extension points after a node is chosen: Reserve, Permit, PreBind,
// Bind and PostBind.

// HasPermitPlugins reports whether any Permit plugin is enabled.
func (f *Framework) HasPermitPlugins() bool { return len(f.permit) > 0 }

// HasPostFilterPlugins reports whether any PostFilter plugin is enabled.
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilter) > 0 }

// RunReservePluginsReserve runs Reserve; the first failure stops.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	for _, pl := range f.reserve {
		start := pluginStart(state)
		st := runReserve(ctx, pl, state, pod, node)
		if state.RecordPluginMetrics {
			observePlugin(pl.Name(), "Reserve", st, start)
		}
		if !st.IsSuccess() {
			return st.WithPlugin(pl.Name())
		}
	}
	return nil
}

func runReserve(ctx context.Context, pl framework.ReservePlugin, state *framework.CycleState, pod *v1.Pod, node string) (st *framework.Status) {
	defer recoverAsStatus(pl.Name(), "Reserve", &st)
	return pl.Reserve(ctx, state, pod, node)
}

// RunReservePluginsUnreserve runs Unreserve in reverse order; a plugin's
// panic is logged and the others still run (each releases its own).
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) {
	for i := len(f.reserve) - 1; i >= 0; i-- {
		runUnreserve(ctx, f.reserve[i], state, pod, node)
	}
}

func runUnreserve(ctx context.Context, pl framework.ReservePlugin, state *framework.CycleState, pod *v1.Pod, node string) {
	defer func() {
		if r := recover(); r != nil {
			klog.FromContext(ctx).Error(fmt.Errorf("%v", r), "Unreserve plugin panicked", "plugin", pl.Name(), "pod", klog.KObj(pod))
		}
	}()
	pl.Unreserve(ctx, state, pod, node)
}

func runPermit(ctx context.Context, pl framework.PermitPlugin, state *framework.CycleState, pod *v1.Pod, node string) (st *framework.Status, d time.Duration) {
	defer recoverAsStatus(pl.Name(), "Permit", &st)
	return pl.Permit(ctx, state, pod, node)
}

// RunPermitPlugins runs Permit; Wait registers the pod as waiting.
func (f *Framework) RunPermitPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	waits := map[string]time.Duration{}
	for _, pl := range f.permit {
		st, d := runPermit(ctx, pl, state, pod, node)
		switch {
		case st.IsSuccess():
		case st.IsWait():
			if d > maxPermitTimeout {
				d = maxPermitTimeout
			}
			waits[pl.Name()] = d
		case st.IsRejected():
			return st.WithPlugin(pl.Name())
		default:
			return framework.AsStatus(fmt.Errorf("running Permit plugin %q: %w", pl.Name(), st.AsError())).WithPlugin(pl.Name())
		}
	}
	if len(waits) > 0 {
		f.waiting.add(newWaitingPod(f.opts.Clock, pod, waits))
		return framework.NewStatus(framework.Wait, fmt.Sprintf("one or more plugins asked to wait and no plugin rejected pod %q", pod.Name))
	}
	return nil
}

const maxPermitTimeout = 15 * time.Minute

// WaitOnPermit blocks until a waiting pod is allowed or rejected.
func (f *Framework) WaitOnPermit(ctx context.Context, pod *v1.Pod) *framework.Status {
	wp := f.waiting.get(pod.UID)
	if wp == nil {
		return nil
	}
	defer f.waiting.remove(pod.UID)
	select {
	case st := <-wp.done:
		if st.Code() == framework.Error {
			// Preempted while waiting: an error, with upstream's words.
			return framework.AsStatus(fmt.Errorf("waiting on permit for pod: %w", st.AsError())).WithPlugin(st.Plugin())
		}
		return st
	case <-ctx.Done():
		return framework.AsStatus(ctx.Err())
	}
}

// RunPreBindPlugins runs PreBind.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	for _, pl := range f.preBind {
		start := pluginStart(state)
		st := pl.PreBind(ctx, state, pod, node)
		if state.RecordPluginMetrics {
			observePlugin(pl.Name(), "PreBind", st, start)
		}
		if st.IsRejected() {
			return st.WithPlugin(pl.Name())
		}
		if !st.IsSuccess() {
			// Upstream's wording, which the pod's event and condition show.
			return framework.AsStatus(fmt.Errorf("running PreBind plugin %q: %w", pl.Name(), st.AsError())).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunBindPlugins runs binders until one does not Skip.
func (f *Framework) RunBindPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	var st *framework.Status
	for _, pl := range f.bind {
		start := pluginStart(state)
		st = pl.Bind(ctx, state, pod, node)
		if state.RecordPluginMetrics {
			observePlugin(pl.Name(), "Bind", st, start)
		}
		if st.IsSkip() {
			continue
		}
		return st.WithPlugin(pl.Name())
	}
	return st
}

// RunPostBindPlugins runs PostBind.
func (f *Framework) RunPostBindPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) {
	for _, pl := range f.postBind {
		pl.PostBind(ctx, state, pod, node)
	}
}

// recoverAsStatus turns a plugin panic into an Error status, so one bad pod
// or plugin fails its cycle instead of the scheduler.
func recoverAsStatus(plugin, point string, st **framework.Status) {
	if r := recover(); r != nil {
		*st = framework.AsStatus(fmt.Errorf("plugin %s panicked in %s: %v", plugin, point, r)).WithPlugin(plugin)
	}
}

func typesUID(s string) types.UID { return types.UID(s) }
