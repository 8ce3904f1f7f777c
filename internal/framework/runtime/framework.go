// Package runtime runs one profile's plugins at each extension point.
package runtime

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/clock"

	"github.com/kubesched/kubesched/internal/framework/parallelize"
	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Registry maps plugin names to their factories.
type Registry = framework.Registry

// Profile is a resolved scheduling profile: its plugin sets are already
// merged with the defaults, and its args are decoded and defaulted.
type Profile struct {
	SchedulerName            string
	PercentageOfNodesToScore *int32
	Plugins                  *configv1.Plugins
	Args                     map[string]k8sruntime.Object
}

// Options are the world's roles the framework hands to plugins.
type Options struct {
	Snapshot      framework.SharedLister
	Binder        framework.Binder
	EventRecorder events.EventRecorder
	Parallelism   int
	Clock         clock.WithTickerAndDelayedExecution
	// Rand is the seeded random source plugins draw from (a fixed seed
	// when unset).
	Rand *rand.Rand
	// Nominator, if set, lets Filter account for pods nominated to a node.
	Nominator interface {
		HasNominatedPods() bool
		NominatedPodsForNode(node string) []*framework.PodInfo
		DeleteNominatedPodIfExists(pod *v1.Pod)
	}
	// Listers read namespaces, services, controllers, PDBs and storage
	// objects; empty when unset.
	Listers *framework.Listers
	// EquivalenceCache turns on the equivalence cache (see
	// equivalence.go): the same decisions, computed once per class of pods
	// and node generation.
	EquivalenceCache bool
	// World deletes preemption victims and clears nominations; nil makes
	// both no-ops (explain, tests).
	World interface {
		Evict(ctx context.Context, victim, preemptor *v1.Pod) error
		framework.VolumeWriter
		framework.ClaimWriter
		UpdatePodStatus(ctx context.Context, pod *v1.Pod, condition *v1.PodCondition, nominatedNodeName *string) error
		GetPod(namespace, name string) (*v1.Pod, bool)
	}
	// Activator moves waiting pods to activeQ (the queue, built after the
	// frameworks); nil makes Activate a no-op.
	Activator interface {
		Activate(pods ...*v1.Pod)
	}
	// AsyncPreemption: preemption's API calls run in the background (the
	// SchedulerAsyncPreemption feature gate, off in the simulator).
	AsyncPreemption bool
	// Features are the feature gates the plugins read (Handle.Features).
	Features framework.Features
	// DRAManager is the scheduler-wide state of device allocation, shared
	// by the profiles.
	DRAManager framework.DRAManager
}

type weightedScore struct {
	framework.ScorePlugin
	weight int64
}

// Framework runs one profile.
type Framework struct {
	name         string
	percentage   *int32
	opts         Options
	parallelizer parallelize.Parallelizer
	waiting      *waitingPods

	plugins    map[string]framework.Plugin
	preEnqueue []framework.PreEnqueuePlugin
	queueSort  []framework.QueueSortPlugin
	preFilter  []framework.PreFilterPlugin
	filter     []framework.FilterPlugin
	postFilter []framework.PostFilterPlugin
	preScore   []framework.PreScorePlugin
	score      []weightedScore
	reserve    []framework.ReservePlugin
	permit     []framework.PermitPlugin
	preBind    []framework.PreBindPlugin
	bind       []framework.BindPlugin
	postBind   []framework.PostBindPlugin

	// eq is the equivalence cache, nil when off or when no plugin of the
	// profile can use it.
	eq *equivalenceCache
	// scoreScratch holds RunScorePlugins' buffers, reused cycle after cycle.
	scoreScratch scoreScratch
	// preFilterSkips and preScoreSkips hold the cycles' skip lists.
	preFilterSkips, preScoreSkips skipSets
}

// extensionPoint names a point, the config's set for it and a function that
// appends a plugin if it implements the point's interface.
type extensionPoint struct {
	name string
	set  *configv1.PluginSet
	add  func(framework.Plugin) bool
}

func (f *Framework) extensionPoints(p *configv1.Plugins) []extensionPoint {
	return []extensionPoint{
		{"PreEnqueue", &p.PreEnqueue, func(pl framework.Plugin) bool { return appendIf(&f.preEnqueue, pl) }},
		{"QueueSort", &p.QueueSort, func(pl framework.Plugin) bool { return appendIf(&f.queueSort, pl) }},
		{"PreFilter", &p.PreFilter, func(pl framework.Plugin) bool { return appendIf(&f.preFilter, pl) }},
		{"Filter", &p.Filter, func(pl framework.Plugin) bool { return appendIf(&f.filter, pl) }},
		{"PostFilter", &p.PostFilter, func(pl framework.Plugin) bool { return appendIf(&f.postFilter, pl) }},
		{"PreScore", &p.PreScore, func(pl framework.Plugin) bool { return appendIf(&f.preScore, pl) }},
		{"Score", &p.Score, func(pl framework.Plugin) bool {
			sp, ok := pl.(framework.ScorePlugin)
			if ok {
				f.score = append(f.score, weightedScore{ScorePlugin: sp})
			}
			return ok
		}},
		{"Reserve", &p.Reserve, func(pl framework.Plugin) bool { return appendIf(&f.reserve, pl) }},
		{"Permit", &p.Permit, func(pl framework.Plugin) bool { return appendIf(&f.permit, pl) }},
		{"PreBind", &p.PreBind, func(pl framework.Plugin) bool { return appendIf(&f.preBind, pl) }},
		{"Bind", &p.Bind, func(pl framework.Plugin) bool { return appendIf(&f.bind, pl) }},
		{"PostBind", &p.PostBind, func(pl framework.Plugin) bool { return appendIf(&f.postBind, pl) }},
	}
}

// implements tells whether a plugin has the interface of a point.
func implements(pl framework.Plugin, point string) bool {
	var ok bool
	switch point {
	case "PreEnqueue":
		_, ok = pl.(framework.PreEnqueuePlugin)
	case "QueueSort":
		_, ok = pl.(framework.QueueSortPlugin)
	case "PreFilter":
		_, ok = pl.(framework.PreFilterPlugin)
	case "Filter":
		_, ok = pl.(framework.FilterPlugin)
	case "PostFilter":
		_, ok = pl.(framework.PostFilterPlugin)
	case "PreScore":
		_, ok = pl.(framework.PreScorePlugin)
	case "Score":
		_, ok = pl.(framework.ScorePlugin)
	case "Reserve":
		_, ok = pl.(framework.ReservePlugin)
	case "Permit":
		_, ok = pl.(framework.PermitPlugin)
	case "PreBind":
		_, ok = pl.(framework.PreBindPlugin)
	case "Bind":
		_, ok = pl.(framework.BindPlugin)
	case "PostBind":
		_, ok = pl.(framework.PostBindPlugin)
	}
	return ok
}

func appendIf[T any](list *[]T, pl framework.Plugin) bool {
	t, ok := pl.(T)
	if ok {
		*list = append(*list, t)
	}
	return ok
}

// New builds a profile's plugins. Plugins named in multiPoint join every
// extension point they implement, after the plugins named explicitly at
// that point, unless disabled there; a plugin named explicitly at a point it
// does not implement is an error.
func New(ctx context.Context, registry Registry, prof *Profile, opts Options) (*Framework, error) {
	if opts.Parallelism == 0 {
		opts.Parallelism = parallelize.DefaultParallelism
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewSource(1))
	}
	if opts.Listers == nil {
		l := framework.EmptyListers()
		opts.Listers = &l
	}
	f := &Framework{
		name: prof.SchedulerName, percentage: prof.PercentageOfNodesToScore, opts: opts,
		parallelizer: parallelize.New(opts.Parallelism), waiting: newWaitingPods(),
		plugins: map[string]framework.Plugin{},
	}
	p := prof.Plugins
	if p == nil {
		p = &configv1.Plugins{}
	}
	points := f.extensionPoints(p)
	weights := map[string]int64{}
	// Instantiate every plugin named anywhere, in order of first mention.
	var names []string
	seen := sets.New[string]()
	note := func(set configv1.PluginSet) {
		for _, e := range set.Enabled {
			if !seen.Has(e.Name) {
				seen.Insert(e.Name)
				names = append(names, e.Name)
			}
		}
	}
	note(p.MultiPoint)
	for _, ep := range points {
		note(*ep.set)
	}
	for _, e := range p.MultiPoint.Enabled {
		if e.Weight != nil {
			weights[e.Name] = int64(*e.Weight)
		}
	}
	for _, e := range p.Score.Enabled {
		if e.Weight != nil {
			weights[e.Name] = int64(*e.Weight)
		}
	}
	for _, name := range names {
		factory, ok := registry[name]
		if !ok {
			return nil, fmt.Errorf("profile %q: plugin %q does not exist", prof.SchedulerName, name)
		}
		pl, err := factory(ctx, prof.Args[name], f)
		if err != nil {
			return nil, fmt.Errorf("profile %q: initializing plugin %q: %w", prof.SchedulerName, name, err)
		}
		f.plugins[name] = pl
	}
	multi := sets.New[string]()
	for _, e := range p.MultiPoint.Enabled {
		multi.Insert(e.Name)
	}
	for _, ep := range points {
		explicit := sets.New[string]()
		for _, e := range ep.set.Enabled {
			if explicit.Has(e.Name) {
				return nil, fmt.Errorf("profile %q: plugin %q already registered as %q", prof.SchedulerName, e.Name, ep.name)
			}
			explicit.Insert(e.Name)
			if !implements(f.plugins[e.Name], ep.name) {
				return nil, fmt.Errorf("profile %q: plugin %q does not extend %s plugin", prof.SchedulerName, e.Name, ep.name)
			}
		}
		disabled := sets.New[string]()
		for _, d := range ep.set.Disabled {
			disabled.Insert(d.Name)
		}
		// Upstream's order: plugins re-listed at this point that are also
		// multiPoint ones, then the other multiPoint ones, then the plugins
		// only listed at this point.
		for _, e := range ep.set.Enabled {
			if multi.Has(e.Name) {
				ep.add(f.plugins[e.Name])
			}
		}
		if !disabled.Has("*") {
			for _, e := range p.MultiPoint.Enabled {
				if !explicit.Has(e.Name) && !disabled.Has(e.Name) {
					ep.add(f.plugins[e.Name])
				}
			}
		}
		for _, e := range ep.set.Enabled {
			if !multi.Has(e.Name) {
				ep.add(f.plugins[e.Name])
			}
		}
	}
	for i := range f.score {
		w := weights[f.score[i].Name()]
		if w == 0 {
			w = 1
		}
		f.score[i].weight = w
	}
	if len(f.queueSort) != 1 {
		return nil, fmt.Errorf("profile %q: exactly one queue sort plugin must be enabled, found %d", prof.SchedulerName, len(f.queueSort))
	}
	if len(f.bind) == 0 {
		return nil, fmt.Errorf("profile %q: at least one bind plugin is needed", prof.SchedulerName)
	}
	if opts.EquivalenceCache {
		f.eq = newEquivalenceCache(f)
	}
	return f, nil
}

// ProfileName is the profile's schedulerName.
func (f *Framework) ProfileName() string { return f.name }

// PercentageOfNodesToScore is the profile's override, or nil.
func (f *Framework) PercentageOfNodesToScore() *int32 { return f.percentage }

// QueueSortFunc returns the queue's ordering.
func (f *Framework) QueueSortFunc() func(a, b *framework.QueuedPodInfo) bool {
	return f.queueSort[0].Less
}

// QueueSortName names the queue sort plugin (profiles must agree on it).
func (f *Framework) QueueSortName() string { return f.queueSort[0].Name() }

// ListPlugins returns the plugin names per extension point, in run order;
// score plugins carry their weight, e.g. "NodeAffinity(2)".
func (f *Framework) ListPlugins() map[string][]string {
	out := map[string][]string{}
	put := func(point string, names []string) {
		if len(names) > 0 {
			out[point] = names
		}
	}
	put("PreEnqueue", namesOf(f.preEnqueue))
	put("QueueSort", namesOf(f.queueSort))
	put("PreFilter", namesOf(f.preFilter))
	put("Filter", namesOf(f.filter))
	put("PostFilter", namesOf(f.postFilter))
	put("PreScore", namesOf(f.preScore))
	var scores []string
	for _, p := range f.score {
		scores = append(scores, fmt.Sprintf("%s(%d)", p.Name(), p.weight))
	}
	put("Score", scores)
	put("Reserve", namesOf(f.reserve))
	put("Permit", namesOf(f.permit))
	put("PreBind", namesOf(f.preBind))
	put("Bind", namesOf(f.bind))
	put("PostBind", namesOf(f.postBind))
	return out
}

func namesOf[T framework.Plugin](list []T) []string {
	out := make([]string, 0, len(list))
	for _, p := range list {
		out = append(out, p.Name())
	}
	return out
}

// EventInterest returns, per plugin that can reject pods, the cluster events
// that may make such pods schedulable. A rejecting plugin without
// EnqueueExtensions is interested in every event.
func (f *Framework) EventInterest(ctx context.Context) (map[string][]framework.ClusterEventWithHint, error) {
	out := map[string][]framework.ClusterEventWithHint{}
	for name, pl := range f.plugins {
		ext, ok := pl.(framework.EnqueueExtensions)
		if !ok {
			out[name] = framework.Events(framework.ClusterEvent{Resource: framework.WildCard, ActionType: framework.All})
			continue
		}
		evs, err := ext.EventsToRegister(ctx)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", name, err)
		}
		out[name] = evs
	}
	return out, nil
}

// Handle ------------------------------------------------------------------

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
func (f *Framework) Evict(ctx context.Context, victim, preemptor *v1.Pod) error {
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

// NodeDetails collects what the NodeDetailer plugins say a feasible node
// would give the pod (explain), in the order of the plugins' names.
func (f *Framework) NodeDetails(state *framework.CycleState, nodeName string) []string {
	names := make([]string, 0, len(f.plugins))
	for n, pl := range f.plugins {
		if _, ok := pl.(framework.NodeDetailer); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		out = append(out, f.plugins[n].(framework.NodeDetailer).NodeDetails(state, nodeName)...)
	}
	return out
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

// Extension points -----------------------------------------------------

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
// that return Skip are recorded in state.SkipFilterPlugins.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status, sets.Set[string]) {
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
		if cy := f.eq.beginCycle(state.PodInfoOf(pod), skip, f.filter, len(nodes)); cy != nil {
			state.Equivalence = cy
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
	if f.opts.Nominator == nil || !f.opts.Nominator.HasNominatedPods() {
		if cy, ok := state.Equivalence.(*eqCycle); ok {
			return f.runFilterPluginsCached(ctx, state, pod, info, cy)
		}
		return f.RunFilterPlugins(ctx, state, pod, info)
	}
	// The node and the cycle state are copied only when some nominated
	// pod of higher or equal priority is added.
	var withNominated *framework.NodeInfo
	var stateWith *framework.CycleState
	prio := corev1helpers.PodPriority(pod)
	for _, pi := range f.opts.Nominator.NominatedPodsForNode(info.NodeName()) {
		if pi.Pod.UID == pod.UID || corev1helpers.PodPriority(pi.Pod) < prio {
			continue
		}
		if withNominated == nil {
			withNominated, stateWith = info.Snapshot(), state.Clone()
		}
		withNominated.AddPodInfo(pi)
		if st := f.RunPreFilterExtensionAddPod(ctx, stateWith, pod, pi, withNominated); !st.IsSuccess() {
			return st
		}
	}
	if withNominated != nil {
		if st := f.RunFilterPlugins(ctx, stateWith, pod, withNominated); !st.IsSuccess() {
			return st
		}
	}
	if cy, ok := state.Equivalence.(*eqCycle); ok {
		return f.runFilterPluginsCached(ctx, state, pod, info, cy)
	}
	return f.RunFilterPlugins(ctx, state, pod, info)
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

// HasPermitPlugins reports whether any Permit plugin is enabled.
func (f *Framework) HasPermitPlugins() bool { return len(f.permit) > 0 }

// HasPostFilterPlugins reports whether any PostFilter plugin is enabled.
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilter) > 0 }

// RunReservePluginsReserve runs Reserve; the first failure stops.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	for _, pl := range f.reserve {
		start := pluginStart(state)
		st := pl.Reserve(ctx, state, pod, node)
		if state.RecordPluginMetrics {
			observePlugin(pl.Name(), "Reserve", st, start)
		}
		if !st.IsSuccess() {
			return st.WithPlugin(pl.Name())
		}
	}
	return nil
}

// RunReservePluginsUnreserve runs Unreserve in reverse order.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) {
	for i := len(f.reserve) - 1; i >= 0; i-- {
		f.reserve[i].Unreserve(ctx, state, pod, node)
	}
}

// RunPermitPlugins runs Permit; Wait registers the pod as waiting.
func (f *Framework) RunPermitPlugins(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	waits := map[string]time.Duration{}
	for _, pl := range f.permit {
		st, d := pl.Permit(ctx, state, pod, node)
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
