// Package runtime runs one profile's plugins at each extension point.
package runtime

import (
	"context"
	"fmt"
	"math/rand"
	"slices"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/framework/parallelize"
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
	Nominator Nominator
	// Listers read namespaces, services, controllers, PDBs and storage
	// objects; empty when unset.
	Listers *framework.Listers
	// EquivalenceCache turns on the equivalence cache (see
	// equivalence.go): the same decisions, computed once per class of pods
	// and node generation.
	EquivalenceCache bool
	// NodeGenerations, when set, is Snapshot's node list with the
	// generations kept beside it: the equivalence cache checks a pass over
	// the whole list against them without touching each NodeInfo.
	NodeGenerations NodeGenerations
	// World deletes preemption victims and clears nominations; nil makes
	// both no-ops (explain, tests).
	World interface {
		Evict(ctx context.Context, victim *v1.Pod, preemptor framework.Preemptor) error
		framework.VolumeWriter
		framework.ClaimWriter
		UpdatePodStatus(ctx context.Context, pod *v1.Pod, condition *v1.PodCondition, nominatedNodeName *string) error
		GetPod(namespace, name string) (*v1.Pod, bool)
		GetNode(name string) (*v1.Node, bool)
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
	// Extenders are the configuration's extenders, the ignorable ones
	// last (Handle.Extenders: preemption consults them).
	Extenders []framework.Extender
	// PodGroups reads the pod groups and their states (the GenericWorkload
	// gate; nil otherwise).
	PodGroups framework.PodGroupManager
}

// NodeGenerations is a node list that keeps its generations and names
// beside it: Generations()[i] is the Generation of List()[i] and Names()[i]
// its NodeName, or both are nil when the list keeps none. internal/cache's
// Snapshot is one.
type NodeGenerations interface {
	List() ([]*framework.NodeInfo, error)
	Generations() []int64
	Names() []string
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
	// placementFeasible is GangScheduling when pod groups are on (as
	// upstream, the only one).
	placementFeasible []framework.PlacementFeasiblePlugin
	// podGroupPostFilter preempt for a whole group (DefaultPreemption,
	// after DynamicResources), run only for pod groups (GenericWorkload).
	podGroupPostFilter []framework.PodGroupPostFilterPlugin
	// placementGenerate (at most one) and placementScore: the
	// TopologyAwareWorkloadScheduling gate's extension points.
	placementGenerate []framework.PlacementGeneratePlugin
	placementScore    []weightedPlacementScore

	// eq is the equivalence cache, nil when off or when no plugin of the
	// profile can use it.
	eq *equivalenceCache
	// preFilterSkips and preScoreSkips hold the cycles' skip lists.
	preFilterSkips, preScoreSkips skipSets
	// nominated keeps the last view of the nominated pods a pod's Filter
	// adds (nominated.go).
	nominated nominatedViews
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
		{"PodGroupPostFilter", &p.PodGroupPostFilter, func(pl framework.Plugin) bool { return appendIf(&f.podGroupPostFilter, pl) }},
		{"PlacementGenerate", &p.PlacementGenerate, func(pl framework.Plugin) bool { return appendIf(&f.placementGenerate, pl) }},
		{"PlacementScore", &p.PlacementScore, func(pl framework.Plugin) bool {
			sp, ok := pl.(framework.PlacementScorePlugin)
			if ok {
				f.placementScore = append(f.placementScore, weightedPlacementScore{PlacementScorePlugin: sp})
			}
			return ok
		}},
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
	case "PodGroupPostFilter":
		_, ok = pl.(framework.PodGroupPostFilterPlugin)
	case "PlacementGenerate":
		_, ok = pl.(framework.PlacementGeneratePlugin)
	case "PlacementScore":
		_, ok = pl.(framework.PlacementScorePlugin)
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
	// PlacementScore weights: the point's own list first, then MultiPoint's
	// (upstream's getValidScoreWeights: the first mention wins, 0 is 1).
	placementWeights := map[string]int64{}
	for _, e := range slices.Concat(p.PlacementScore.Enabled, p.MultiPoint.Enabled) {
		if _, seen := placementWeights[e.Name]; !seen {
			placementWeights[e.Name] = int64(ptr.Deref(e.Weight, 0))
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
	for i := range f.placementScore {
		w := placementWeights[f.placementScore[i].Name()]
		if w == 0 {
			w = 1
		}
		f.placementScore[i].weight = w
	}
	if len(f.queueSort) != 1 {
		return nil, fmt.Errorf("profile %q: exactly one queue sort plugin must be enabled, found %d", prof.SchedulerName, len(f.queueSort))
	}
	if len(f.bind) == 0 {
		return nil, fmt.Errorf("profile %q: at least one bind plugin is needed", prof.SchedulerName)
	}
	if len(f.placementGenerate) > 1 {
		return nil, fmt.Errorf("at most one placement generate plugin is allowed for profile with scheduler name %q", prof.SchedulerName)
	}
	if opts.PodGroups != nil {
		// Upstream takes GangScheduling as the only PlacementFeasible
		// plugin when GenericWorkload is on.
		if pl, ok := f.plugins["GangScheduling"].(framework.PlacementFeasiblePlugin); ok {
			f.placementFeasible = append(f.placementFeasible, pl)
		}
	}
	if opts.EquivalenceCache {
		f.eq = newEquivalenceCache(f)
	}
	return f, nil
}

// RunPlacementFeasiblePlugins asks whether a pod group can still meet its
// constraints: the first Unschedulable or error ends it, a Wait is kept
// while the others run (upstream's RunPlacementFeasiblePlugins).
func (f *Framework) RunPlacementFeasiblePlugins(ctx context.Context, state *framework.CycleState, pgi *framework.PodGroupInfo, progress framework.PlacementProgress) *framework.Status {
	var status *framework.Status
	for _, pl := range f.placementFeasible {
		st := pl.PlacementFeasible(ctx, state, pgi, progress)
		switch {
		case st.IsSuccess():
		case st.IsWait():
			status = st.WithPlugin(pl.Name())
		case st.Code() == framework.Unschedulable:
			return st.WithPlugin(pl.Name())
		case st.Code() == framework.Error:
			return framework.AsStatus(fmt.Errorf("running PlacementFeasible plugin: %w", st.AsError())).WithPlugin(pl.Name())
		default:
			return framework.AsStatus(fmt.Errorf("unexpected status from PlacementFeasible plugin: %v", st.Code())).WithPlugin(pl.Name())
		}
	}
	return status
}

// RunPodGroupPostFilterPlugins runs the PodGroupPostFilter plugins for a
// group that did not fit (upstream's RunPodGroupPostFilterPlugins): the
// first success or UnschedulableAndUnresolvable ends it; Unschedulable
// reasons are gathered; anything else is an error.
func (f *Framework) RunPodGroupPostFilterPlugins(ctx context.Context, state *framework.PodGroupCycleState, g *framework.QueuedPodGroupInfo, schedule framework.PodGroupSchedulingFunc) (*framework.PodGroupPostFilterResult, *framework.Status) {
	var reasons []string
	rejector := ""
	for _, pl := range f.podGroupPostFilter {
		res, st := pl.PodGroupPostFilter(ctx, state, g, schedule)
		switch {
		case st.IsSuccess():
			return res, st
		case st.Code() == framework.UnschedulableAndUnresolvable:
			return res, st.WithPlugin(pl.Name())
		case st.Code() == framework.Unschedulable:
			reasons = append(reasons, st.Reasons()...)
			if rejector == "" {
				rejector = pl.Name()
			}
		default:
			return nil, framework.AsStatus(fmt.Errorf("error in %q PodGroupPostFilter plugins: %s", pl.Name(), st.Message())).WithPlugin(pl.Name())
		}
	}
	return nil, framework.NewStatus(framework.Unschedulable, reasons...).WithPlugin(rejector)
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
	put("PodGroupPostFilter", namesOf(f.podGroupPostFilter))
	put("PlacementGenerate", namesOf(f.placementGenerate))
	var placementScores []string
	for _, p := range f.placementScore {
		placementScores = append(placementScores, fmt.Sprintf("%s(%d)", p.Name(), p.weight))
	}
	put("PlacementScore", placementScores)
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
