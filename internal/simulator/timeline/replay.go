package timeline

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
)

// sampleEvery is the least virtual time between two samples of the
// timeline's curves (steps and the end are always sampled).
const sampleEvery = time.Minute

// Timeline is a Scenario's replay on a world: the steps' outcomes, the
// cluster sampled over virtual time, and each pod's wait from its
// creation to its binding.
type Timeline struct {
	w          *simulator.World
	report     report.TimelineReport
	lastSample time.Time
	sampled    bool
	// bindings and evictions when the current step began.
	bindings, evictions int
	// created is when each pod was created; delays, the time from
	// creation to binding of the pods bound.
	created map[string]time.Time
	delays  []time.Duration
}

// Run replays the world's Scenario (Cluster.Scenario): it runs the
// scheduler up to each step's time, applies the step, and runs on after
// the last one. Without a Scenario it is w.Run. A world that reaches its
// limit returns the *simulator.LimitError and no replay.
func Run(ctx context.Context, w *simulator.World) error {
	sc := w.Cluster.Scenario
	if sc == nil {
		return w.Run(ctx)
	}
	tl := &Timeline{w: w, created: map[string]time.Time{}}
	// The pods the world was made with were created now.
	for _, p := range append(w.Pending[:len(w.Pending):len(w.Pending)], w.Foreign...) {
		tl.created[cluster.PodKey(p)] = w.Clock.Now()
	}
	w.Watch(tl)
	tl.report.Scenario = sc.Name
	tl.report.Steps = []report.StepResult{}
	tl.report.Samples = []report.Sample{}
	for i, st := range sc.Steps {
		at := simulator.Epoch.Add(st.At)
		if err := w.RunUntil(ctx, at); err != nil {
			return err
		}
		if w.Clock.Now().Before(at) {
			w.Advance(at)
		}
		tl.closeStep()
		tl.sample(true)
		res := report.StepResult{At: formatTime(w.Clock.Now()), Name: st.Name, After: w.Clock.Now().Sub(simulator.Epoch)}
		if err := Apply(w, &st, &res); err != nil {
			return loading.SourceError(sc.Source, cluster.ScenarioKind+" "+sc.Name, fmt.Errorf("spec.steps[%d] (%s): %w", i, st.Name, err))
		}
		w.Store.Flush()
		tl.report.Steps = append(tl.report.Steps, res)
		tl.bindings, tl.evictions = w.Store.Bindings, len(w.Store.Evicted)
		tl.sample(true)
	}
	if err := w.RunUntil(ctx, w.Limit()); err != nil {
		return err
	}
	tl.closeStep()
	tl.sample(true)
	if n := len(tl.delays); n > 0 {
		d := slices.Clone(tl.delays)
		slices.Sort(d)
		tl.report.QueueingDelay.P50 = d[(n-1)*50/100].String()
		tl.report.QueueingDelay.P99 = d[(n-1)*99/100].String()
	}
	return ctx.Err()
}

// Advancing samples the cluster before virtual time moves.
func (tl *Timeline) Advancing() { tl.sample(false) }

// Created notes when a pod was created.
func (tl *Timeline) Created(key string) { tl.created[key] = tl.w.Clock.Now() }

// Bound measures a pod's wait from its creation.
func (tl *Timeline) Bound(key string) {
	if c, ok := tl.created[key]; ok {
		tl.delays = append(tl.delays, tl.w.Clock.Now().Sub(c))
	}
}

// Report is the replay's report.
func (tl *Timeline) Report() *report.TimelineReport { return &tl.report }

// closeStep fills in the running step's outcome.
func (tl *Timeline) closeStep() {
	if len(tl.report.Steps) == 0 {
		return
	}
	w := tl.w
	r := &tl.report.Steps[len(tl.report.Steps)-1]
	r.Scheduled = w.Store.Bindings - tl.bindings
	r.Preempted = len(w.Store.Evicted) - tl.evictions
	r.Pending = tl.pendingNow()
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// pendingNow counts the pods this scheduler has yet to place.
func (tl *Timeline) pendingNow() int {
	n := 0
	for _, p := range tl.w.Pending {
		if cur, ok := tl.w.Store.GetPod(p.Namespace, p.Name); ok && cur.Spec.NodeName == "" {
			n++
		}
	}
	return n
}

// sample records the cluster's state now; unless forced, at most once
// per sampleEvery of virtual time.
func (tl *Timeline) sample(force bool) {
	w := tl.w
	now := w.Clock.Now()
	if tl.sampled && !now.Equal(tl.lastSample) && !force && now.Sub(tl.lastSample) < sampleEvery {
		return
	}
	if tl.sampled && now.Equal(tl.lastSample) {
		// A later state at the same instant replaces the earlier one.
		tl.report.Samples = tl.report.Samples[:len(tl.report.Samples)-1]
	}
	tl.sampled, tl.lastSample = true, now
	s := report.Sample{T: formatTime(now)}
	requested := map[string]*framework.Resource{}
	pods := map[string]int{}
	var pendingCPU, pendingMem []int64
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName == "" {
			if w.Listed(cluster.PodKey(p)) && w.Scheduler.ResponsibleForPod(p) {
				s.Pending++
				req := framework.NewPodInfo(p).Requests
				pendingCPU = append(pendingCPU, req.MilliCPU)
				pendingMem = append(pendingMem, req.Memory)
			}
			continue
		}
		s.Running++
		pods[p.Spec.NodeName]++
		r := requested[p.Spec.NodeName]
		if r == nil {
			r = &framework.Resource{}
			requested[p.Spec.NodeName] = r
		}
		r.AddResource(&framework.NewPodInfo(p).Requests)
	}
	// The median pending pod, by cpu and by memory (each its own median).
	var medianCPU, medianMem int64
	if len(pendingCPU) > 0 {
		slices.Sort(pendingCPU)
		slices.Sort(pendingMem)
		medianCPU, medianMem = pendingCPU[len(pendingCPU)/2], pendingMem[len(pendingMem)/2]
	}
	var allocCPU, allocMem, reqCPU, reqMem, free, stranded int64
	for _, n := range w.Store.Nodes() {
		a := framework.NewResource(n.Status.Allocatable)
		allocCPU += a.MilliCPU
		allocMem += a.Memory
		var r framework.Resource
		if x := requested[n.Name]; x != nil {
			r = *x
		}
		reqCPU += r.MilliCPU
		reqMem += r.Memory
		if f := a.MilliCPU - r.MilliCPU; f > 0 {
			free += f
			// Stranded: the node cannot take the median pending pod, for
			// cpu, memory or its pod count ("Too many pods").
			if s.Pending > 0 && (f < medianCPU || a.Memory-r.Memory < medianMem || int64(pods[n.Name]) >= a.AllowedPodNumber) {
				stranded += f
			}
		}
	}
	s.CPU, s.Memory = report.PercentTenths(reqCPU, allocCPU), report.PercentTenths(reqMem, allocMem)
	s.Fragmentation = report.PercentTenths(stranded, free)
	tl.report.Samples = append(tl.report.Samples, s)
}
