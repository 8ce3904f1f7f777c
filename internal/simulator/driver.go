package simulator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubesched/kubesched/internal/cluster/memory"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Epoch is the virtual time a simulation starts at, so output never
// depends on the wall clock.
var Epoch = cluster.Epoch

// maxVirtualTime bounds a simulation whose pods keep failing with errors
// or keep being retried; a world that reaches it answers nothing
// (LimitError).
const maxVirtualTime = 24 * time.Hour

// World is a loaded cluster wired to a scheduler on a fake clock.
type World struct {
	Store     *memory.Store
	Scheduler *scheduler.Scheduler
	Clock     *testingclock.FakeClock
	// Pending are the pods this scheduler is asked to place, in input order.
	Pending []*v1.Pod
	// Foreign are pending pods whose schedulerName is no profile of ours.
	Foreign []*v1.Pod
	// Cluster is the objects the world was made from; its controllers
	// keep creating pods into it as the world runs.
	Cluster *cluster.Cluster

	made     made
	objects  objects
	book     podBook
	run      runState
	attempts attempts
	// timeline, when set, watches the run (a Scenario's replay).
	timeline Timeline
}

// made is how the world was made, for the throwaway worlds explain
// builds (Like).
type made struct {
	cfg      *configv1.KubeSchedulerConfiguration
	registry runtime.Registry
	seed     int64
	opts     []scheduler.Option
}

// objects are what the plugins' listers and the resourceclaim controller
// hold beyond the store.
type objects struct {
	// addListed gives the listers an object created on the way.
	addListed func(interface{}) error
	// templates are the ResourceClaimTemplates by namespace/name.
	templates map[string]*resourceapi.ResourceClaimTemplate
}

// podBook is what the world remembers of its pods beyond the store.
type podBook struct {
	// listed are the pods in Pending or Foreign, by namespace/name.
	listed map[string]bool
	// running counts the pods bound when the simulation started.
	running int
	// gone says why each pod that left the world left; deletions counts
	// the pods deleted.
	gone      map[string]Gone
	deletions int
	// progressTotal and progressBound count pods to place and placed,
	// for a progress bar.
	progressTotal, progressBound atomic.Int64
	// attempts counts the scheduling attempts.
	attempts atomic.Int64
}

// Timeline watches a world run on virtual time (package timeline: a
// Scenario's replay).
type Timeline interface {
	// Advancing is told before the clock moves.
	Advancing()
	// Created is told of a pod created now (namespace/name); Bound, of a
	// pod bound now.
	Created(key string)
	Bound(key string)
	// Report is what the timeline adds to the world's report, nil for
	// nothing.
	Report() *report.TimelineReport
}

// NewWorld builds the in-memory world for a cluster: nodes and running
// pods first, then the pending pods, all delivered to the event handlers.
func NewWorld(ctx context.Context, c *cluster.Cluster, cfg *configv1.KubeSchedulerConfiguration, registry runtime.Registry, seed int64, opts ...scheduler.Option) (*World, error) {
	clk := testingclock.NewFakeClock(Epoch)
	store := memory.NewStore(clk)
	listers, addListed, err := framework.IndexedListers(c.Objects()...)
	if err != nil {
		return nil, err
	}
	w := &World{Store: store, Clock: clk, Cluster: c,
		made:    made{cfg: cfg, registry: registry, seed: seed, opts: opts},
		objects: objects{addListed: addListed},
		book:    podBook{listed: map[string]bool{}},
		run:     runState{limit: Epoch.Add(maxVirtualTime), lastFlushBindings: -1}}
	if c.Scenario != nil {
		if n := len(c.Scenario.Steps); n > 0 {
			w.run.limit = w.run.limit.Add(c.Scenario.Steps[n-1].At)
		}
	}
	opts = append([]scheduler.Option{scheduler.WithClock(clk), scheduler.WithSeed(seed), scheduler.WithListers(listers), scheduler.WithSynchronousBinding(), scheduler.WithSynchronousPreemption(), scheduler.WithoutExtenderBinding(), scheduler.WithAttemptObserver(w.observe)}, opts...)
	sched, err := scheduler.New(ctx, cfg, registry, store, opts...)
	if err != nil {
		return nil, err
	}
	store.SetHandler(sched)
	w.Scheduler = sched
	claims, templates := loading.Claims(c)
	w.objects.templates = templates
	if err := store.SetClaims(claims, addListed); err != nil {
		return nil, err
	}
	// The store plays the PV controller on the listers' volumes.
	w.objects.addListed = w.playVolumeControllers(listers, addListed)
	// The nodes reach the scheduler by name, as kube-scheduler's informer
	// lists them from the API server when it starts: the order its node
	// tree keeps them in (and so which nodes a partial search sees) does
	// not depend on the input's order.
	byName := slices.Clone(c.Nodes)
	slices.SortStableFunc(byName, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	for _, n := range byName {
		if err := store.AddNode(n); err != nil {
			return nil, fmt.Errorf("Node %s: %w", n.Name, err)
		}
	}
	if sched.Cache.PodGroupsEnabled() {
		for _, pg := range c.PodGroups {
			if err := store.AddPodGroup(pg); err != nil {
				return nil, fmt.Errorf("PodGroup %s/%s: %w", pg.Namespace, pg.Name, err)
			}
		}
	}
	for _, p := range c.Pods {
		if _, err := PodDuration(p); err != nil {
			return nil, loading.SourceError(c.Sources[cluster.PodKey(p)], "Pod "+cluster.PodKey(p), err)
		}
	}
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			if err := w.addPod(p); err != nil {
				return nil, err
			}
			w.book.running++
			w.scheduleFinish(p)
		}
	}
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			continue
		}
		if err := w.AddPending(p); err != nil {
			return nil, err
		}
	}
	store.Flush()
	return w, nil
}

// Like builds a world of cluster c as this one was made (configuration,
// plugins, seed, options), with opts added.
func (w *World) Like(ctx context.Context, c *cluster.Cluster, opts ...scheduler.Option) (*World, error) {
	all := append(append([]scheduler.Option(nil), w.made.opts...), opts...)
	return NewWorld(ctx, c, w.made.cfg, w.made.registry, w.made.seed, all...)
}

// Watch has tl told of the world's run from now on.
func (w *World) Watch(tl Timeline) { w.timeline = tl }

func (w *World) addPod(p *v1.Pod) error {
	if err := w.Store.AddPod(p); err != nil {
		return loading.SourceError(w.Cluster.Sources[cluster.PodKey(p)], "Pod "+cluster.PodKey(p), err)
	}
	return nil
}

// AddPending creates a pod in the world (its claims from templates
// first, as the resourceclaim controller would): a pod to place, or,
// with a node already, a running one.
func (w *World) AddPending(p *v1.Pod) error {
	if err := w.GenerateClaims(p); err != nil {
		return err
	}
	if err := w.addPod(p); err != nil {
		return err
	}
	k := cluster.PodKey(p)
	// A controller may recreate a pod of a name that went (a
	// StatefulSet's): the report shows the new one.
	delete(w.book.gone, k)
	if w.timeline != nil {
		w.timeline.Created(k)
	}
	if p.Spec.NodeName != "" {
		w.scheduleFinish(p) // created running, by a scenario step
		return nil
	}
	if w.book.listed[k] {
		return nil
	}
	w.book.listed[k] = true
	if w.Scheduler.ResponsibleForPod(p) {
		w.book.progressTotal.Add(1)
		w.Pending = append(w.Pending, p)
	} else {
		w.Foreign = append(w.Foreign, p)
	}
	return nil
}

// Listed: the pod namespace/name is in Pending or Foreign.
func (w *World) Listed(key string) bool { return w.book.listed[key] }

// createOrdered runs the controllers of the OrderedReady StatefulSets
// that wait for a pod now bound (the simulation's Running and Ready): each
// creates its next pod, or deletes what a scale down left. It reports
// whether any pod was created or deleted.
func (w *World) createOrdered() bool {
	bound := func(key string) bool {
		ns, name, _ := strings.Cut(key, "/")
		p, ok := w.Store.GetPod(ns, name)
		return ok && p.Spec.NodeName != ""
	}
	if !slices.ContainsFunc(w.Cluster.Ordered, func(o *cluster.OrderedSet) bool { return o.After != "" && bound(o.After) }) {
		return false
	}
	created, deleted := w.runControllers(func() { w.Cluster.ReconcileOrdered(bound) })
	return created+deleted > 0
}

// Waiting: the pod namespace/name is a StatefulSet's, not created yet.
func (w *World) Waiting(key string) bool {
	for _, o := range w.Cluster.Ordered {
		for _, p := range o.Waiting {
			if cluster.PodKey(p) == key {
				return true
			}
		}
	}
	return false
}

// Progress returns how many pods this scheduler was asked to place, how
// many it bound, and the virtual time; safe to call while Run runs.
func (w *World) Progress() (total, bound int64, virtual time.Duration) {
	return w.book.progressTotal.Load(), w.book.progressBound.Load(), w.Clock.Now().Sub(Epoch)
}

// Attempts counts the scheduling attempts made so far.
func (w *World) Attempts() int64 { return w.book.attempts.Load() }

// Run schedules until nothing more can be scheduled (RunUntil with no
// deadline); a *LimitError says the world reached its limit first.
func (w *World) Run(ctx context.Context) error {
	return w.RunUntil(ctx, w.run.limit)
}
