package runtime

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/pkg/framework"
)

// The extension points of the scheduling cycle up to Filter: PreEnqueue,
// PreFilter, Filter and PostFilter.

// RunPreEnqueuePlugins gates a pod; the first non-success stops.
func (f *Framework) RunPreEnqueuePlugins(ctx context.Context, pod *v1.Pod) *framework.Status {
	for _, pl := range f.preEnqueue {
		if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
			if st.Code() == framework.Error {
				return st.WithPlugin(pl.Name())
			}
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, st.Reasons()...).WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunPreFilterPlugins runs PreFilter. It returns the merged node
// restriction, a status, and the plugins that rejected the pod. Plugins
// that return Skip are recorded in state.SkipFilterPlugins. It begins a
// cycle: from there on the equivalence cache serves state (and no other)
// until the next RunPreFilterPlugins.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status, sets.Set[string]) {
	if f.eq != nil {
		// A new cycle: the cache serves no state until beginCycle.
		f.eq.state = nil
	}
	state.FilterClass = ""
	var result *framework.PreFilterResult
	var skip framework.PluginNames
	var skipMask uint64
	masked := len(f.preFilter) <= maxSkipPlugins
	var rejectors sets.Set[string] // made on the first rejection
	var restrictors []string
	var returnStatus *framework.Status
	for i, pl := range f.preFilter {
		r, st := f.runPreFilter(ctx, pl, state, pod, nodes)
		if st.IsSkip() {
			if masked {
				skipMask |= 1 << i
			} else {
				skip.Insert(pl.Name())
			}
			continue
		}
		if !st.IsSuccess() {
			st = st.WithPlugin(pl.Name())
			if st.IsRejected() {
				if rejectors == nil {
					rejectors = sets.New[string]()
				}
				rejectors.Insert(pl.Name())
				if st.Code() == framework.UnschedulableAndUnresolvable || returnStatus == nil {
					returnStatus = st
				}
				if st.Code() == framework.UnschedulableAndUnresolvable {
					break
				}
				continue
			}
			return nil, framework.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), st.AsError())).WithPlugin(pl.Name()), nil
		}
		if !r.AllNodes() {
			restrictors = append(restrictors, pl.Name())
		}
		result = result.Merge(r)
		if !result.AllNodes() && result.NodeNames.Len() == 0 {
			// Named in sorted order, as kube-scheduler lists its set.
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sets.List(sets.New(restrictors...)))
			if len(restrictors) == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", restrictors[0])
			}
			if rejectors == nil {
				rejectors = sets.New[string]()
			}
			rejectors.Insert(restrictors...)
			return result, framework.NewStatus(framework.UnschedulableAndUnresolvable, msg), rejectors
		}
	}
	if masked {
		skip = f.preFilterSkips.list(skipMask, len(f.preFilter), func(i int) string { return f.preFilter[i].Name() })
	}
	state.SkipFilterPlugins = skip
	if returnStatus != nil {
		return nil, returnStatus, rejectors
	}
	if f.eq != nil {
		f.eq.beginCycle(state, state.PodInfoOf(pod), skip, f.filter, len(nodes))
		if cy := f.cycleOf(state); cy != nil && cy.cachedOnly {
			state.FilterClass = cy.class.key
		}
		if f.opts.Nominator != nil && f.opts.Nominator.HasNominatedPods() {
			f.eq.cycle.sizeNominated(len(nodes))
		}
	}
	if result != nil {
		// A sorted set, as kube-scheduler names them to the nodes left out.
		result.Restrictors = sets.List(sets.New(restrictors...))
	}
	return result, nil, nil
}

func (f *Framework) runPreFilter(ctx context.Context, pl framework.PreFilterPlugin, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (r *framework.PreFilterResult, st *framework.Status) {
	defer recoverAsStatus(pl.Name(), "PreFilter", &st)
	if !state.RecordPluginMetrics {
		return pl.PreFilter(ctx, state, pod, nodes)
	}
	start := time.Now()
	r, st = pl.PreFilter(ctx, state, pod, nodes)
	observePlugin(pl.Name(), "PreFilter", st, start)
	return r, st
}

// pluginStart is the time a plugin call starts, read only in the cycles
// sampled for per-plugin metrics.
func pluginStart(state *framework.CycleState) time.Time {
	if state.RecordPluginMetrics {
		return time.Now()
	}
	return time.Time{}
}

// observePlugin records one plugin call's duration (sampled cycles only:
// upstream samples 10% of cycles, so the hot path pays nothing otherwise).
func observePlugin(plugin, point string, st *framework.Status, start time.Time) {
	metrics.PluginExecutionDuration.WithLabelValues(plugin, point, st.Code().String()).Observe(time.Since(start).Seconds())
}

// RunFilterPlugins runs Filter on one node and returns the first rejection,
// stamped with its plugin.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	for _, pl := range f.filter {
		if state.SkipFilterPlugins.Has(pl.Name()) {
			continue
		}
		if st := f.runFilter(ctx, pl, state, pod, nodeInfo); !st.IsSuccess() {
			if !st.IsRejected() {
				st = framework.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), st.AsError()))
			}
			return st.WithPlugin(pl.Name())
		}
	}
	return nil
}

func (f *Framework) runFilter(ctx context.Context, pl framework.FilterPlugin, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (st *framework.Status) {
	defer recoverAsStatus(pl.Name(), "Filter", &st)
	if !state.RecordPluginMetrics {
		return pl.Filter(ctx, state, pod, ni)
	}
	start := time.Now()
	st = pl.Filter(ctx, state, pod, ni)
	observePlugin(pl.Name(), "Filter", st, start)
	return st
}

// RunFilterPluginsWithNominatedPods runs Filter twice when pods of equal or
// higher priority are nominated to the node: once as if they were running
// there (they must still fit), once without them (pod affinity may need
// them absent to pass); both must pass.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *framework.CycleState, pod *v1.Pod, info *framework.NodeInfo) *framework.Status {
	// The node and the cycle state are copied only when some nominated
	// pod of higher or equal priority is added.
	cy := f.cycleOf(state)
	if nominated := f.nominatedFor(f.nominatedView(), pod, info); len(nominated) > 0 {
		if st, ok := cy.nominatedVerdict(info, nominated); ok {
			if !st.IsSuccess() {
				return st
			}
		} else {
			st := f.filterWithNominated(ctx, state, pod, info, nominated)
			if cy != nil {
				st = f.eq.rejections.Intern(st)
			}
			cy.recordNominated(info, nominated, st)
			if !st.IsSuccess() {
				return st
			}
		}
	}
	if cy != nil {
		return f.runFilterPluginsCached(ctx, state, pod, info, cy)
	}
	return f.RunFilterPlugins(ctx, state, pod, info)
}

// filterWithNominated runs Filter on a copy of info with the nominated
// pods added (and a copy of state told of them).
func (f *Framework) filterWithNominated(ctx context.Context, state *framework.CycleState, pod *v1.Pod, info *framework.NodeInfo, nominated []*framework.PodInfo) *framework.Status {
	withNominated, stateWith := info.Snapshot(), state.Clone()
	for _, pi := range nominated {
		withNominated.AddPodInfo(pi)
		if st := f.RunPreFilterExtensionAddPod(ctx, stateWith, pod, pi, withNominated); !st.IsSuccess() {
			return st
		}
	}
	return f.RunFilterPlugins(ctx, stateWith, pod, withNominated)
}

// RunPreFilterExtensionAddPod implements framework.Handle.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, add *framework.PodInfo, info *framework.NodeInfo) *framework.Status {
	return f.runPreFilterExtensions(state, func(ext framework.PreFilterExtensions) *framework.Status {
		return ext.AddPod(ctx, state, pod, add, info)
	})
}

// RunPreFilterExtensionRemovePod implements framework.Handle.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, remove *framework.PodInfo, info *framework.NodeInfo) *framework.Status {
	return f.runPreFilterExtensions(state, func(ext framework.PreFilterExtensions) *framework.Status {
		return ext.RemovePod(ctx, state, pod, remove, info)
	})
}

// runPreFilterExtensions calls the extensions of the PreFilter plugins that
// did not skip, stopping at the first failure.
func (f *Framework) runPreFilterExtensions(state *framework.CycleState, call func(framework.PreFilterExtensions) *framework.Status) *framework.Status {
	for _, pl := range f.preFilter {
		if ext := pl.PreFilterExtensions(); ext != nil && !state.SkipFilterPlugins.Has(pl.Name()) {
			if st := call(ext); !st.IsSuccess() {
				return st.WithPlugin(pl.Name())
			}
		}
	}
	return nil
}

// RunPostFilterPlugins runs PostFilter until one succeeds.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, m framework.NodeToStatusReader) (*framework.PostFilterResult, *framework.Status) {
	var reasons []string
	var result *framework.PostFilterResult
	for _, pl := range f.postFilter {
		r, st := pl.PostFilter(ctx, state, pod, m)
		if st.IsSuccess() {
			return r, st.WithPlugin(pl.Name())
		}
		if st.Code() == framework.Error {
			return nil, st.WithPlugin(pl.Name())
		}
		reasons = append(reasons, st.Reasons()...)
		if r != nil {
			result = r
		}
	}
	return result, framework.NewStatus(framework.Unschedulable, reasons...)
}

// PostFilterReplayable is true when every PostFilter plugin is a
// framework.PostFilterReplayer (or there is none).
func (f *Framework) PostFilterReplayable() bool {
	for _, pl := range f.postFilter {
		if _, ok := pl.(framework.PostFilterReplayer); !ok {
			return false
		}
	}
	return true
}

// ReplayPostFilter stands for a RunPostFilterPlugins whose outcome, no
// nomination, is reused: every plugin ran in it (none succeeded or
// failed with an error), so each is told.
func (f *Framework) ReplayPostFilter(pod *v1.Pod) {
	for _, pl := range f.postFilter {
		pl.(framework.PostFilterReplayer).ReplayPostFilter(pod)
	}
}
