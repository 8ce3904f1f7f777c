// Package scheduler wires the queue, the cache and the profiles' frameworks
// into kube-scheduler's loop: scheduleOne pops a pod, runs the scheduling
// cycle synchronously, assumes the pod, and binds it in its own goroutine.
package scheduler

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/clock"

	"github.com/kubesched/kubesched/internal/cache"
	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/queue"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/dynamicresources"
)

// lazyNominator lets the frameworks, built before the queue, read the
// queue's nominator and activate pods in it.
type lazyNominator struct {
	n *queue.Nominator
	q *queue.PriorityQueue
}

func (l *lazyNominator) Activate(pods ...*v1.Pod) {
	if l.q != nil {
		l.q.Activate(pods...)
	}
}

func (l *lazyNominator) HasNominatedPods() bool { return l.n != nil && l.n.HasNominatedPods() }

func (l *lazyNominator) DeleteNominatedPodIfExists(pod *v1.Pod) {
	if l.n != nil {
		l.n.DeleteNominatedPodIfExists(pod)
	}
}

func (l *lazyNominator) NominatedVersion() uint64 {
	if l.n == nil {
		return 0
	}
	return l.n.NominatedVersion()
}

func (l *lazyNominator) RangeNominated(fn func(node string)) {
	if l.n != nil {
		l.n.RangeNominated(fn)
	}
}

func (l *lazyNominator) NominatedPodsForNode(node string) []*framework.PodInfo {
	if l.n == nil {
		return nil
	}
	return l.n.NominatedPodsForNode(node)
}

// Scheduler is the core. It is driven by event handler calls and Run (or,
// in simulation, by ScheduleOne directly).
type Scheduler struct {
	Cache    *cache.Cache
	Queue    *queue.PriorityQueue
	Profiles map[string]*runtime.Framework

	world    cluster.World
	snapshot *cache.Snapshot
	// pinSnapshot: a pod group's preemption dry run has changed the
	// snapshot; SchedulePod must not refresh it until the run ends.
	pinSnapshot bool
	// dra is the device allocation state the profiles share.
	dra   *dynamicresources.Manager
	clock clock.WithTickerAndDelayedExecution
	rand  *rand.Rand
	// randSrc is rand's source, counting draws (failure_memo.go).
	randSrc *countingSource
	logger  klog.Logger

	percentageOfNodesToScore int32
	nextStartNodeIndex       int
	// sampleCounter picks one cycle in ten for per-plugin metrics.
	sampleCounter int
	// statusBuf is findNodesThatPassFilters' per-node status buffer.
	statusBuf []*framework.Status
	// failedBuf collects the nodes findNodesThatPassFilters rejects.
	failedBuf []nodeStatus
	// feasibleBuf backs findNodesThatPassFilters' result (one cycle's);
	// feasiblePos holds the last result's positions in the node list it
	// was found in, for the score pass (ScoreBuffers.Positions).
	feasibleBuf []*framework.NodeInfo
	feasiblePos []int32
	// scoreBuf backs prioritizeNodes' result (one cycle's: selectHost
	// reads it before the next cycle scores).
	scoreBuf runtime.ScoreBuffers
	// failed is the last memoized failure (failure_memo.go); cycleKey is
	// the running cycle's key when cycleMemo, and replayed says the cycle
	// took failed's outcome.
	// extenders are the configuration's (extenders.go), ignorable last.
	extenders []framework.Extender
	// noExtenderBinding: WithoutExtenderBinding.
	noExtenderBinding bool

	// placements: pod groups' cycles try candidate placements (the
	// TopologyAwareWorkloadScheduling gate; schedule_one_placement.go).
	placements bool

	failed    *failureMemo
	cycleKey  failureKey
	cycleMemo bool
	replayed  bool
	replays   atomic.Int64

	bindings sync.WaitGroup
	// syncBinding: binding cycles run inline (WithSynchronousBinding).
	syncBinding bool
	observer    func(Attempt)
	// binders run the binding cycles' Bind.
	binders binderPool
	// preBinding holds the cancel of each binding cycle before Bind.
	preBinding preBindings
}

type options struct {
	clock clock.WithTickerAndDelayedExecution
	seed  int64
	// percentageOfNodesToScore overrides the configuration (explain uses 100).
	percentage *int32
	listers    *framework.Listers
	// draFeatures, when set, are the DRA allocator's features.
	draFeatures      *structured.Features
	draFilterTimeout bool
	draTaintRules    bool
	// noEquivalenceCache turns the equivalence cache off (on by default).
	noEquivalenceCache bool
	syncBinding        bool
	// asyncPreemption is the SchedulerAsyncPreemption gate;
	// syncPreemption (WithSynchronousPreemption) overrides it.
	asyncPreemption, syncPreemption bool
	// pluginFeatures are the gates the plugins read (Handle.Features).
	pluginFeatures framework.Features
	observer       func(Attempt)
	// extenders, when set, replace the configuration's (tests).
	extenders []framework.Extender
	// noExtenderBinding: binding extenders are not asked to bind.
	noExtenderBinding bool
}

// Option configures New.
type Option func(*options)

// WithClock sets the clock every timer uses.
func WithClock(c clock.WithTickerAndDelayedExecution) Option { return func(o *options) { o.clock = c } }

// WithListers gives plugins the cluster's other objects.
func WithListers(l framework.Listers) Option { return func(o *options) { o.listers = &l } }

// WithDRAFeatures sets the structured allocator's features and whether
// DynamicResources' Filter has a timeout (the DRA feature gates); v1.37's
// defaults otherwise.
func WithDRAFeatures(f structured.Features, filterTimeout, taintRules bool) Option {
	return func(o *options) { o.draFeatures, o.draFilterTimeout, o.draTaintRules = &f, filterTimeout, taintRules }
}

// WithEquivalenceCache turns the equivalence cache on or off (the
// EquivalenceCache feature gate; on by default), and with it the
// snapshot's change log that plugins' memos refresh from (off, they
// compare every node's generation). Decisions are the same either way.
func WithEquivalenceCache(on bool) Option { return func(o *options) { o.noEquivalenceCache = !on } }

// WithSynchronousBinding runs each binding cycle in the scheduling
// goroutine, right after its scheduling cycle: for the simulator, which
// waits for every binding before the next pod anyway, so the only
// difference is a goroutine handoff per pod saved.
func WithSynchronousBinding() Option { return func(o *options) { o.syncBinding = true } }

// WithAsyncPreemption runs preemption's API calls in the background, as
// kube-scheduler does with SchedulerAsyncPreemption (on by default since
// 1.33): the preemptor is nominated at once and kept out of activeQ by
// DefaultPreemption's PreEnqueue until its victims' deletions are issued.
func WithAsyncPreemption(on bool) Option { return func(o *options) { o.asyncPreemption = on } }

// WithPluginFeatures sets the feature gates the plugins read.
func WithPluginFeatures(f framework.Features) Option {
	return func(o *options) { o.pluginFeatures = f }
}

// WithSynchronousPreemption runs preemption's API calls in the scheduling
// cycle whatever WithAsyncPreemption says: for the simulator, whose API
// calls complete at once, so the background goroutine would have finished
// before anything else happened anyway (one order of the concurrent run,
// and a deterministic one).
func WithSynchronousPreemption() Option { return func(o *options) { o.syncPreemption = true } }

// Attempt is the outcome of one scheduling attempt, as an observer set
// with WithAttemptObserver sees it: Status is nil when the pod was bound
// to Node; after a failed attempt Nominated is the node preemption made
// room on (nil when it did not run, "" when it cleared a nomination).
type Attempt struct {
	Pod       *v1.Pod
	Attempts  int
	Node      string
	Status    *framework.Status
	Nominated *string
}

// WithAttemptObserver calls f after each scheduling attempt, once its
// binding cycle (if any) is over, in the goroutine that ran it: the
// simulator's --trace. f must be quick and must not call the scheduler.
func WithAttemptObserver(f func(Attempt)) Option { return func(o *options) { o.observer = f } }

// WithExtenders uses these extenders instead of building the
// configuration's HTTP ones (tests).
func WithExtenders(e ...framework.Extender) Option { return func(o *options) { o.extenders = e } }

// WithoutExtenderBinding binds through the Bind plugins even when an
// extender has a bindVerb: for the simulator, whose world is its own (an
// extender binds in a real cluster). Filter, prioritize and preempt are
// still asked.
func WithoutExtenderBinding() Option { return func(o *options) { o.noExtenderBinding = true } }

// WithSeed seeds the tie-breaking random source.
func WithSeed(seed int64) Option { return func(o *options) { o.seed = seed } }

// WithPercentageOfNodesToScore overrides the configured percentage.
func WithPercentageOfNodesToScore(p int32) Option { return func(o *options) { o.percentage = &p } }

// New builds a scheduler from a defaulted, validated configuration.
func New(ctx context.Context, cfg *configv1.KubeSchedulerConfiguration, registry runtime.Registry, world cluster.World, opts ...Option) (*Scheduler, error) {
	o := options{clock: clock.RealClock{}, seed: 1}
	for _, opt := range opts {
		opt(&o)
	}
	logger := klog.FromContext(ctx)
	s := &Scheduler{
		world:    world,
		snapshot: cache.NewEmptySnapshot(),
		clock:    o.clock,
		randSrc:  newCountingSource(o.seed),
		logger:   logger,
		Profiles: map[string]*runtime.Framework{},
		Cache:    cache.New(logger),

		syncBinding: o.syncBinding,
		observer:    o.observer,

		noExtenderBinding: o.noExtenderBinding,
	}
	s.rand = rand.New(s.randSrc)
	var podGroups framework.PodGroupManager
	if o.pluginFeatures.GenericWorkload {
		s.Cache.EnablePodGroups()
		podGroups = s.Cache
		s.placements = o.pluginFeatures.TopologyAwareWorkloadScheduling
	}
	if o.noEquivalenceCache {
		s.snapshot.WithoutChangeLog()
	}
	if cfg.PercentageOfNodesToScore != nil {
		s.percentageOfNodesToScore = *cfg.PercentageOfNodesToScore
	}
	if o.percentage != nil {
		s.percentageOfNodesToScore = *o.percentage
	}
	var errs field.ErrorList
	var queueSort string
	nominator := &lazyNominator{}
	interest := map[string][]framework.ClusterEventWithHint{}
	// One DRA manager for all profiles, as kube-scheduler's: an
	// allocation in flight in one profile is a taken device in another.
	draListers := framework.EmptyListers()
	if o.listers != nil {
		draListers = *o.listers
	}
	s.dra = dynamicresources.NewManager(draListers)
	if o.draFeatures != nil {
		s.dra.SetFeatures(*o.draFeatures, o.draFilterTimeout, o.draTaintRules)
	}
	s.dra.SetCache(!o.noEquivalenceCache)
	if o.extenders != nil {
		s.extenders = o.extenders
	} else {
		exts, err := buildExtenders(cfg)
		if err != nil {
			return nil, err
		}
		s.extenders = exts
	}
	for i, prof := range cfg.Profiles {
		rp := &runtime.Profile{
			SchedulerName:            *prof.SchedulerName,
			PercentageOfNodesToScore: prof.PercentageOfNodesToScore,
			Plugins:                  prof.Plugins,
			Args:                     argsByName(prof.PluginConfig),
		}
		if o.percentage != nil {
			rp.PercentageOfNodesToScore = o.percentage
		}
		fwk, err := runtime.New(ctx, registry, rp, runtime.Options{
			Snapshot:      s.snapshot,
			Binder:        world,
			EventRecorder: world.EventRecorder(rp.SchedulerName),
			Parallelism:   int(*cfg.Parallelism),
			Clock:         o.clock,
			Rand:          s.rand,
			Nominator:     nominator,
			Activator:     nominator,
			Listers:       o.listers,
			World:         world,
			DRAManager:    s.dra,

			EquivalenceCache: !o.noEquivalenceCache,
			NodeGenerations:  s.snapshot,
			AsyncPreemption:  o.asyncPreemption && !o.syncPreemption,
			Features:         o.pluginFeatures,
			Extenders:        s.extenders,
			PodGroups:        podGroups,
		})
		if err != nil {
			return nil, err
		}
		if i == 0 {
			queueSort = fwk.QueueSortName()
		} else if fwk.QueueSortName() != queueSort {
			errs = append(errs, field.Invalid(field.NewPath("profiles").Index(i).Child("plugins", "queueSort"), fwk.QueueSortName(), "queueSort must be the same for all profiles"))
		}
		ei, err := fwk.EventInterest(ctx)
		if err != nil {
			return nil, err
		}
		for k, v := range ei {
			interest[k] = append(interest[k], v...)
		}
		if len(s.extenders) > 0 {
			// Extenders register no events: any may undo their rejection.
			interest[framework.ExtenderName] = framework.Events(framework.ClusterEvent{Resource: framework.WildCard, ActionType: framework.All})
		}
		s.Profiles[rp.SchedulerName] = fwk
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	first := s.Profiles[*cfg.Profiles[0].SchedulerName]
	s.Queue = queue.New(logger, first.QueueSortFunc(), queue.Options{
		Clock:          o.clock,
		InitialBackoff: time.Duration(*cfg.PodInitialBackoffSeconds) * time.Second,
		MaxBackoff:     time.Duration(*cfg.PodMaxBackoffSeconds) * time.Second,
		PreEnqueue:     s.preEnqueue,
		EventInterest:  interest,
		PodGroups:      podGroups != nil,
	})
	nominator.n = s.Queue.Nominator
	nominator.q = s.Queue
	return s, nil
}

func argsByName(pcs []configv1.PluginConfig) map[string]k8sruntime.Object {
	out := map[string]k8sruntime.Object{}
	for _, pc := range pcs {
		if pc.Args.Object != nil {
			out[pc.Name] = pc.Args.Object
		}
	}
	return out
}

// Run schedules until ctx ends: the queue's timers and scheduleOne in a
// loop. In-flight binding cycles go on after
// it returns (they do not inherit ctx's cancellation); WaitForBindings.
func (s *Scheduler) Run(ctx context.Context) {
	s.Queue.Run(ctx)
	go func() {
		<-ctx.Done()
		s.Queue.Close()
	}()
	for ctx.Err() == nil {
		s.ScheduleOne(ctx)
	}
}

// WaitForBindings blocks until every in-flight binding cycle has ended.
func (s *Scheduler) WaitForBindings() { s.bindings.Wait() }

// WaitForBindingsTimeout is WaitForBindings bounded by d (real time); false
// when some binding cycle was still running.
func (s *Scheduler) WaitForBindingsTimeout(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		s.bindings.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// Profile returns the framework for a schedulerName.
func (s *Scheduler) Profile(name string) (*runtime.Framework, error) {
	fwk, ok := s.Profiles[name]
	if !ok {
		return nil, fmt.Errorf("profile not found for scheduler name %q", name)
	}
	return fwk, nil
}

// Known is the set of plugin names in a registry.
func Known(r runtime.Registry) sets.Set[string] {
	out := sets.New[string]()
	for k := range r {
		out.Insert(k)
	}
	return out
}
