package simulator

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	testingclock "k8s.io/utils/clock/testing"

	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/cluster/memory"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Epoch is the virtual time a simulation starts at, so output never
// depends on the wall clock.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// maxVirtualTime bounds a simulation whose pods keep failing with errors.
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
	// Workloads and WorkloadOf are the cluster's (Cluster.Workloads).
	Workloads  []Workload
	WorkloadOf map[string]int
	// ordered are the StatefulSets still creating pods one at a time.
	ordered []*OrderedSet
	sources map[string]string
	// running counts the pods bound when the simulation started.
	running int
	// trace, when set, writes each attempt (TraceTo).
	trace *tracer
	// evictionsSeen is how many evictions earlier attempts accounted for.
	evictionsSeen int
	// watch is the pod whose attempts are captured (WatchPod), lastSeen
	// the state its last attempt saw.
	watch    string
	lastSeen *seen
	// How the world was made, for the throwaway worlds explain builds.
	cfg      *configv1.KubeSchedulerConfiguration
	registry runtime.Registry
	seed     int64
	opts     []scheduler.Option
	// progress counts pods to place and placed, for a progress bar.
	progressTotal, progressBound atomic.Int64

	// The timeline's state (timeline.go, steps.go).
	cluster           *Cluster
	addListed         func(interface{}) error
	templates         map[string]*resourceapi.ResourceClaimTemplate
	gone              map[string]gone
	deletions         int // pods steps deleted
	finishes          finishHeap
	finishSeq         int
	limit             time.Time
	lastFlushBindings int
	stepErr           error
	created           map[string]time.Time
	listed            map[string]bool // in Pending or Foreign
	delays            []time.Duration
	tl                *timelineState
}

// NewWorld builds the in-memory world for a cluster: nodes and running
// pods first, then the pending pods, all delivered to the event handlers.
func NewWorld(ctx context.Context, c *Cluster, cfg *configv1.KubeSchedulerConfiguration, registry runtime.Registry, seed int64, opts ...scheduler.Option) (*World, error) {
	clk := testingclock.NewFakeClock(Epoch)
	store := memory.NewStore(clk)
	listers, addListed, err := framework.IndexedListers(c.Objects()...)
	if err != nil {
		return nil, err
	}
	w := &World{Store: store, Clock: clk, Workloads: c.Workloads, WorkloadOf: c.WorkloadOf, sources: c.Sources,
		cluster: c, addListed: addListed, cfg: cfg, registry: registry, seed: seed, opts: opts, limit: Epoch.Add(maxVirtualTime), lastFlushBindings: -1, created: map[string]time.Time{}, listed: map[string]bool{}}
	if c.Scenario != nil {
		w.tl = &timelineState{}
		if n := len(c.Scenario.Steps); n > 0 {
			w.limit = w.limit.Add(c.Scenario.Steps[n-1].At)
		}
	}
	opts = append([]scheduler.Option{scheduler.WithClock(clk), scheduler.WithSeed(seed), scheduler.WithListers(listers), scheduler.WithSynchronousBinding(), scheduler.WithSynchronousPreemption(), scheduler.WithAttemptObserver(w.observe)}, opts...)
	sched, err := scheduler.New(ctx, cfg, registry, store, opts...)
	if err != nil {
		return nil, err
	}
	store.SetHandler(sched)
	w.Scheduler = sched
	claims, templates := claimsOf(c)
	w.templates = templates
	if err := store.SetClaims(claims, addListed); err != nil {
		return nil, err
	}
	// The store plays the PV controller on the listers' volumes.
	store.SetVolumes(listers, addListed)
	for _, o := range c.Ordered {
		cp := *o
		w.ordered = append(w.ordered, &cp)
	}
	for _, n := range c.Nodes {
		if err := store.AddNode(n); err != nil {
			return nil, fmt.Errorf("Node %s: %w", n.Name, err)
		}
	}
	for _, p := range c.Pods {
		if _, err := podDuration(p); err != nil {
			return nil, fmt.Errorf("%s: Pod %s: %w", w.sources[podKey(p)], podKey(p), err)
		}
	}
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			if err := w.addPod(p); err != nil {
				return nil, err
			}
			w.running++
			w.scheduleFinish(p)
		}
	}
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			continue
		}
		if err := w.addPending(p); err != nil {
			return nil, err
		}
	}
	store.Flush()
	return w, nil
}

func (w *World) addPod(p *v1.Pod) error {
	if err := w.Store.AddPod(p); err != nil {
		return fmt.Errorf("%s: Pod %s: %w", w.sources[podKey(p)], podKey(p), err)
	}
	return nil
}

func (w *World) addPending(p *v1.Pod) error {
	if err := w.generateClaims(p); err != nil {
		return err
	}
	if err := w.addPod(p); err != nil {
		return err
	}
	k := podKey(p)
	// A controller may recreate a pod of a name that went (a
	// StatefulSet's): the report shows the new one.
	delete(w.gone, k)
	if w.tl != nil {
		w.created[k] = w.Clock.Now()
	}
	if p.Spec.NodeName != "" {
		w.scheduleFinish(p) // created running, by a scenario step
		return nil
	}
	if w.listed[k] {
		return nil
	}
	w.listed[k] = true
	if w.Scheduler.ResponsibleForPod(p) {
		w.progressTotal.Add(1)
		w.Pending = append(w.Pending, p)
	} else {
		w.Foreign = append(w.Foreign, p)
	}
	return nil
}

// createOrdered creates the next pod of each OrderedReady StatefulSet
// whose previous pod is bound (the simulation's Running and Ready),
// reporting whether it created any.
func (w *World) createOrdered() bool {
	created := false
	for _, o := range w.ordered {
		for len(o.Waiting) > 0 {
			if o.After != "" {
				ns, name, _ := strings.Cut(o.After, "/")
				if p, ok := w.Store.GetPod(ns, name); !ok || p.Spec.NodeName == "" {
					break
				}
			}
			next := o.Waiting[0]
			o.Waiting = o.Waiting[1:]
			o.After = podKey(next)
			if err := w.addPending(next); err != nil {
				// Names were checked unique when the cluster was loaded;
				// the pod is reported as not created.
				klog.ErrorS(err, "Creating a StatefulSet pod", "pod", klog.KObj(next))
				o.Failed = append(o.Failed, next)
				continue
			}
			created = true
		}
	}
	return created
}

// Progress returns how many pods this scheduler was asked to place, how
// many it bound, and the virtual time; safe to call while Run runs.
func (w *World) Progress() (total, bound int64, virtual time.Duration) {
	return w.progressTotal.Load(), w.progressBound.Load(), w.Clock.Now().Sub(Epoch)
}

// Run schedules until nothing more can be scheduled (runUntil with no
// deadline).
func (w *World) Run(ctx context.Context) {
	w.runUntil(ctx, w.limit)
}
