package simulator

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Pod outcomes a timeline adds.
const (
	// StatusFinished: the pod ran its duration and went away.
	StatusFinished = "Finished"
	// StatusDeleted: a step deleted the pod (or drained or deleted its node).
	StatusDeleted = "Deleted"
)

// sampleEvery is the least virtual time between two samples of the
// timeline's curves (steps and the end are always sampled).
const sampleEvery = time.Minute

// TimelineReport is what a Scenario's replay adds to the report.
type TimelineReport struct {
	Scenario string       `json:"scenario"`
	Steps    []StepResult `json:"steps"`
	Samples  []Sample     `json:"samples"`
	// QueueingDelay is the time from a pod's creation to its binding, over
	// the pods bound during the run: 50th and 99th percentiles.
	QueueingDelay struct {
		P50 string `json:"p50"`
		P99 string `json:"p99"`
	} `json:"queueingDelay"`
}

// StepResult is one step: what it did, then what the scheduler did
// until the next step (or the end).
type StepResult struct {
	At      string `json:"at"`
	Name    string `json:"name"`
	Created int    `json:"created"` // pods, the controllers' included
	Deleted int    `json:"deleted"` // pods
	// Scheduled and Preempted count bindings and evictions after the step;
	// Pending is the pods left unscheduled when the next step begins.
	Scheduled int `json:"scheduled"`
	Preempted int `json:"preempted"`
	Pending   int `json:"pending"`

	after time.Duration
}

// Sample is the cluster at one virtual time. CPU and Memory are the
// requested share of allocatable, in percent. Fragmentation is the share
// of free CPU (allocatable less requested) that sits on nodes too full
// for the median pending pod's CPU request: free capacity that exists
// but cannot take the typical waiting pod; 0 with nothing pending.
type Sample struct {
	T             string  `json:"t"`
	Pending       int     `json:"pending"`
	Running       int     `json:"running"`
	CPU           float64 `json:"cpu"`
	Memory        float64 `json:"memory"`
	Fragmentation float64 `json:"fragmentation"`
}

type timelineState struct {
	report     TimelineReport
	lastSample time.Time
	sampled    bool
	// bindings and evictions when the current step began.
	bindings, evictions int
	// evicted is the evictions the controllers have replaced.
	evicted int
}

// RunScenario replays the cluster's Scenario: it runs the scheduler up to
// each step's time, applies the step, and runs on after the last one.
func (w *World) RunScenario(ctx context.Context) error {
	sc := w.cluster.Scenario
	if sc == nil {
		w.Run(ctx)
		return nil
	}
	tl := w.tl
	tl.report.Scenario = sc.Name
	tl.report.Steps = []StepResult{}
	tl.report.Samples = []Sample{}
	for i, st := range sc.Steps {
		at := Epoch.Add(st.At)
		w.runUntil(ctx, at)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if w.Clock.Now().Before(at) {
			w.advance(at)
		}
		w.closeStep()
		w.sample(true)
		res := StepResult{At: formatTime(w.Clock.Now()), Name: st.Name, after: w.Clock.Now().Sub(Epoch)}
		if err := w.apply(&st, &res); err != nil {
			return fmt.Errorf("%s: %s: spec.steps[%d] (%s): %w", sc.Source, ScenarioKind+" "+sc.Name, i, st.Name, err)
		}
		w.Store.Flush()
		tl.report.Steps = append(tl.report.Steps, res)
		tl.bindings, tl.evictions = w.Store.Bindings, len(w.Store.Evicted)
		w.sample(true)
	}
	w.runUntil(ctx, w.limit)
	w.closeStep()
	w.sample(true)
	if n := len(w.delays); n > 0 {
		d := slices.Clone(w.delays)
		slices.Sort(d)
		tl.report.QueueingDelay.P50 = d[(n-1)*50/100].String()
		tl.report.QueueingDelay.P99 = d[(n-1)*99/100].String()
	}
	return ctx.Err()
}

// closeStep fills in the running step's outcome.
func (w *World) closeStep() {
	tl := w.tl
	if len(tl.report.Steps) == 0 {
		return
	}
	r := &tl.report.Steps[len(tl.report.Steps)-1]
	r.Scheduled = w.Store.Bindings - tl.bindings
	r.Preempted = len(w.Store.Evicted) - tl.evictions
	r.Pending = w.pendingNow()
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// advance moves virtual time, sampling the timeline first.
func (w *World) advance(t time.Time) {
	if w.tl != nil {
		w.sample(false)
	}
	w.Clock.SetTime(t)
}

// pendingNow counts the pods this scheduler has yet to place.
func (w *World) pendingNow() int {
	n := 0
	for _, p := range w.Pending {
		if cur, ok := w.Store.GetPod(p.Namespace, p.Name); ok && cur.Spec.NodeName == "" {
			n++
		}
	}
	return n
}

// sample records the cluster's state now; unless forced, at most once
// per sampleEvery of virtual time.
func (w *World) sample(force bool) {
	tl := w.tl
	now := w.Clock.Now()
	if tl.sampled && !now.Equal(tl.lastSample) && !force && now.Sub(tl.lastSample) < sampleEvery {
		return
	}
	if tl.sampled && now.Equal(tl.lastSample) {
		// A later state at the same instant replaces the earlier one.
		tl.report.Samples = tl.report.Samples[:len(tl.report.Samples)-1]
	}
	tl.sampled, tl.lastSample = true, now
	s := Sample{T: formatTime(now)}
	requested := map[string]*framework.Resource{}
	var pendingCPU []int64
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName == "" {
			if w.listed[podKey(p)] && w.Scheduler.ResponsibleForPod(p) {
				s.Pending++
				pendingCPU = append(pendingCPU, framework.NewPodInfo(p).Requests.MilliCPU)
			}
			continue
		}
		s.Running++
		r := requested[p.Spec.NodeName]
		if r == nil {
			r = &framework.Resource{}
			requested[p.Spec.NodeName] = r
		}
		r.AddResource(&framework.NewPodInfo(p).Requests)
	}
	var median int64
	if len(pendingCPU) > 0 {
		slices.Sort(pendingCPU)
		median = pendingCPU[len(pendingCPU)/2]
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
			if f < median {
				stranded += f
			}
		}
	}
	s.CPU, s.Memory = percent(reqCPU, allocCPU), percent(reqMem, allocMem)
	s.Fragmentation = percent(stranded, free)
	tl.report.Samples = append(tl.report.Samples, s)
}

func percent(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return float64(int64(float64(a)*1000/float64(b)+0.5)) / 10
}

// apply carries out one step.
func (w *World) apply(st *Step, res *StepResult) error {
	c := w.cluster
	if c.expander == nil {
		c.newExpander()
	}
	c.expander.live = w.live
	pods, ordered, rs, others := len(c.Pods), len(c.Ordered), len(c.ReplicaSets), len(c.Others)
	deleted := w.deletions
	why := gone{status: StatusDeleted, message: "deleted by step " + st.Name}
	source := "step " + st.Name
	if c.Scenario != nil {
		source = fmt.Sprintf("%s (step %s)", c.Scenario.Source, st.Name)
	}
	for _, obj := range st.Create {
		if err := w.create(obj, source); err != nil {
			return err
		}
	}
	for _, r := range st.Delete {
		if err := w.deleteRef(r, why); err != nil {
			return err
		}
	}
	for _, r := range st.Scale {
		if err := w.scale(r, why); err != nil {
			return err
		}
	}
	for _, n := range st.Cordon {
		if err := w.updateNode(n, "cordon", func(n *v1.Node) { n.Spec.Unschedulable = true }); err != nil {
			return err
		}
	}
	for _, n := range st.Uncordon {
		if err := w.updateNode(n, "uncordon", func(n *v1.Node) { n.Spec.Unschedulable = false }); err != nil {
			return err
		}
	}
	for _, name := range st.Drain {
		if err := w.updateNode(name, "drain", func(n *v1.Node) { n.Spec.Unschedulable = true }); err != nil {
			return err
		}
		for _, p := range w.Store.Pods() {
			if p.Spec.NodeName == name && !ownedBy(p, "DaemonSet") {
				w.removePod(p, gone{status: StatusDeleted, message: "drained from " + name + " by step " + st.Name})
			}
		}
	}
	for _, name := range st.DeleteNodes {
		if err := w.deleteNode(name, st.Name); err != nil {
			return err
		}
	}
	for _, t := range st.Taint {
		taint := v1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
		if err := w.updateNode(t.Node, "taint", func(n *v1.Node) {
			n.Spec.Taints = slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(x v1.Taint) bool { return x.MatchTaint(&taint) })
			n.Spec.Taints = append(n.Spec.Taints, taint)
		}); err != nil {
			return err
		}
	}
	for _, t := range st.Untaint {
		taint := v1.Taint{Key: t.Key, Effect: t.Effect}
		if err := w.updateNode(t.Node, "untaint", func(n *v1.Node) {
			n.Spec.Taints = slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(x v1.Taint) bool { return x.MatchTaint(&taint) })
		}); err != nil {
			return err
		}
	}
	c.expander.reconcile()
	w.adopt(pods, ordered, rs, others)
	if w.stepErr != nil {
		return w.stepErr
	}
	res.Created = len(c.Pods) - pods
	for _, o := range c.Ordered[ordered:] {
		res.Created += len(o.Waiting)
	}
	res.Deleted = w.deletions - deleted
	return nil
}

func ownedBy(p *v1.Pod, kind string) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == kind
}

// create adds an object of a step to the world.
func (w *World) create(obj runtime.Object, source string) error {
	c := w.cluster
	switch o := obj.(type) {
	case *v1.Node:
		if o.Status.Allocatable == nil && o.Status.Capacity != nil {
			o.Status.Allocatable = o.Status.Capacity.DeepCopy()
		}
		if o.UID == "" {
			o.UID = types.UID("node-" + o.Name)
		}
		if err := w.Store.AddNode(o); err != nil {
			return fmt.Errorf("create Node %s: %w", o.Name, err)
		}
		c.Nodes = append(c.Nodes, o)
	case *v1.Pod:
		if o.Namespace == "" {
			o.Namespace = v1.NamespaceDefault
		}
		k := podKey(o)
		if _, err := podDuration(o); err != nil {
			return fmt.Errorf("create Pod %s: %w", k, err)
		}
		c.Sources[k] = source
		if err := c.defaultPods([]*v1.Pod{o}); err != nil {
			return err
		}
		c.expander.names.taken[k] = true
		c.expander.own(o)
		if err := w.addPending(o); err != nil {
			return fmt.Errorf("create Pod %s: %w", k, err)
		}
	case *schedulingv1.PriorityClass:
		c.PriorityClasses = append(c.PriorityClasses, o)
	case *resourceapi.ResourceClaim, *resourceapi.ResourceClaimTemplate, *resourceapi.ResourceSlice, *resourceapi.DeviceClass, *resourceapi.DeviceTaintRule:
		return w.createDRA(obj)
	default:
		c.add(source+"#0", obj)
		switch o.(type) {
		case *appsv1.ReplicaSet, *appsv1.StatefulSet, *v1.ReplicationController, *appsv1.Deployment, *appsv1.DaemonSet, *batchv1.Job:
			in := &c.workloads[len(c.workloads)-1]
			in.source = source
			defaultWorkload(in.obj)
		}
		w.addObject(obj)
	}
	return nil
}

// workloadIndex finds a workload input by kind, namespace and name.
func (w *World) workloadIndex(kind, ns, name string) int {
	if ns == "" {
		ns = v1.NamespaceDefault
	}
	for i, in := range w.cluster.workloads {
		m, ok := in.obj.(metav1.Object)
		if ok && !in.deleted && kindOf(in.obj) == kind && m.GetNamespace() == ns && m.GetName() == name {
			return i
		}
	}
	return -1
}

func kindOf(obj interface{}) string {
	switch obj.(type) {
	case *appsv1.Deployment:
		return "Deployment"
	case *appsv1.ReplicaSet:
		return "ReplicaSet"
	case *appsv1.StatefulSet:
		return "StatefulSet"
	case *appsv1.DaemonSet:
		return "DaemonSet"
	case *batchv1.Job:
		return "Job"
	case *v1.ReplicationController:
		return "ReplicationController"
	}
	return ""
}

// podsOf are a workload's pods in the world or waiting to be created,
// in creation order (a Deployment's through its ReplicaSets).
func (w *World) podsOf(kind, ns, name string) []*v1.Pod {
	e := w.cluster.expander
	keys := []string{ownerKey(kind, ns, name)}
	if kind == "Deployment" {
		keys = keys[:0]
		for _, rs := range w.replicaSetsOf(ns, name) {
			keys = append(keys, ownerKey("ReplicaSet", ns, rs.Name))
		}
	}
	var out []*v1.Pod
	for _, k := range keys {
		for _, p := range e.owned[k] {
			if cur := w.live(p); cur != nil {
				out = append(out, cur)
			}
		}
	}
	return out
}

// replicaSetsOf are the ReplicaSets Deployment ns/name controls.
func (w *World) replicaSetsOf(ns, name string) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range w.cluster.ReplicaSets {
		if ref := metav1.GetControllerOf(rs); ref != nil && ref.Kind == "Deployment" && ref.Name == name && rs.Namespace == ns {
			out = append(out, rs)
		}
	}
	return out
}

// dropWaiting removes a pod not created yet from its StatefulSet's queue.
func (w *World) dropWaiting(p *v1.Pod) bool {
	k := podKey(p)
	for _, o := range w.ordered {
		for i, q := range o.Waiting {
			if podKey(q) == k {
				o.Waiting = slices.Delete(slices.Clone(o.Waiting), i, i+1)
				return true
			}
		}
	}
	return false
}

func (w *World) removeOrWait(p *v1.Pod, why gone) {
	if _, inStore := w.Store.GetPod(p.Namespace, p.Name); inStore {
		w.removePod(p, why)
		return
	}
	w.dropWaiting(p)
}

func (w *World) deleteRef(r ObjectRef, why gone) error {
	ns := r.Namespace
	if ns == "" && r.Kind != "Node" {
		ns = v1.NamespaceDefault
	}
	switch r.Kind {
	case "Pod":
		p, ok := w.Store.GetPod(ns, r.Name)
		if !ok {
			return fmt.Errorf("delete: Pod %s/%s not found", ns, r.Name)
		}
		w.removePod(p, why)
	case "Node":
		return w.deleteNode(r.Name, strings.TrimPrefix(why.message, "deleted by step "))
	default:
		i := w.workloadIndex(r.Kind, ns, r.Name)
		if i < 0 {
			return fmt.Errorf("delete: %s %s/%s not found", r.Kind, ns, r.Name)
		}
		for _, p := range w.podsOf(r.Kind, ns, r.Name) {
			w.removeOrWait(p, why)
		}
		w.cluster.workloads[i].deleted = true
	}
	return nil
}

func (w *World) scale(r ScaleRef, why gone) error {
	ns := r.Namespace
	if ns == "" {
		ns = v1.NamespaceDefault
	}
	i := w.workloadIndex(r.Kind, ns, r.Name)
	if i < 0 {
		return fmt.Errorf("scale: %s %s/%s not found", r.Kind, ns, r.Name)
	}
	n := r.Replicas
	pods := w.podsOf(r.Kind, ns, r.Name)
	var excess []*v1.Pod
	switch o := w.cluster.workloads[i].obj.(type) {
	case *appsv1.Deployment, *appsv1.ReplicaSet, *v1.ReplicationController, *batchv1.Job:
		switch o := o.(type) {
		case *appsv1.Deployment:
			o.Spec.Replicas = &n
			for _, rs := range w.replicaSetsOf(ns, o.Name) {
				rs.Spec.Replicas = &n
			}
		case *appsv1.ReplicaSet:
			o.Spec.Replicas = &n
		case *v1.ReplicationController:
			o.Spec.Replicas = &n
		case *batchv1.Job:
			o.Spec.Parallelism = &n
		}
		excess = newestFirst(pods, int(n))
	case *appsv1.StatefulSet:
		o.Spec.Replicas = &n
		start := 0
		if o.Spec.Ordinals != nil {
			start = int(o.Spec.Ordinals.Start)
		}
		for _, p := range pods {
			var ord int
			if _, err := fmt.Sscanf(strings.TrimPrefix(p.Name, o.Name+"-"), "%d", &ord); err == nil && ord >= start+int(n) {
				excess = append(excess, p)
			}
		}
	}
	for _, p := range excess {
		w.removeOrWait(p, gone{status: StatusDeleted, message: "scaled down by step " + strings.TrimPrefix(why.message, "deleted by step ")})
	}
	return nil
}

// newestFirst picks the pods a ReplicaSet deletes to keep n: unscheduled
// ones first, then the most recently created.
func newestFirst(pods []*v1.Pod, n int) []*v1.Pod {
	if len(pods) <= n {
		return nil
	}
	order := make([]int, len(pods))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ua, ub := pods[order[a]].Spec.NodeName == "", pods[order[b]].Spec.NodeName == ""
		if ua != ub {
			return ua
		}
		return order[a] > order[b]
	})
	out := make([]*v1.Pod, 0, len(pods)-n)
	for _, i := range order[:len(pods)-n] {
		out = append(out, pods[i])
	}
	return out
}

func (w *World) updateNode(name, verb string, change func(*v1.Node)) error {
	var node *v1.Node
	for _, n := range w.Store.Nodes() {
		if n.Name == name {
			node = n
		}
	}
	if node == nil {
		return fmt.Errorf("%s: Node %s not found", verb, name)
	}
	n := node.DeepCopy()
	change(n)
	for i, cn := range w.cluster.Nodes {
		if cn.Name == name {
			w.cluster.Nodes[i] = n
		}
	}
	return w.Store.UpdateNode(n)
}

// deleteNode deletes a node, the pods bound to it (the pod garbage
// collector's work) and the DaemonSet pods pinned to it.
func (w *World) deleteNode(name, step string) error {
	if err := w.Store.DeleteNode(name); err != nil {
		return fmt.Errorf("delete: Node %s: %w", name, err)
	}
	w.cluster.Nodes = slices.DeleteFunc(w.cluster.Nodes, func(n *v1.Node) bool { return n.Name == name })
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName == name || (p.Spec.NodeName == "" && ownedBy(p, "DaemonSet") && daemonPodNode(p) == name) {
			w.removePod(p, gone{status: StatusDeleted, node: p.Spec.NodeName, message: "its node " + name + " was deleted by step " + step})
		}
	}
	return nil
}

// writeTable prints the steps, and the curves' extremes.
func (t *TimelineReport) writeTable(buf *bytes.Buffer) {
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "STEP (%s)\tAT\tCREATED\tDELETED\tTHEN SCHEDULED\tPREEMPTED\tPENDING\n", t.Scenario)
	for _, s := range t.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", s.Name, s.after, s.Created, s.Deleted, s.Scheduled, s.Preempted, s.Pending)
	}
	tw.Flush()
	var maxPending int
	var maxCPU, maxFrag float64
	for _, s := range t.Samples {
		maxPending = max(maxPending, s.Pending)
		maxCPU = max(maxCPU, s.CPU)
		maxFrag = max(maxFrag, s.Fragmentation)
	}
	fmt.Fprintf(buf, "over time: at most %d pending, cpu requested at most %.1f%%, fragmentation at most %.1f%%", maxPending, maxCPU, maxFrag)
	if t.QueueingDelay.P50 != "" {
		fmt.Fprintf(buf, "; queueing delay p50 %s, p99 %s", t.QueueingDelay.P50, t.QueueingDelay.P99)
	}
	buf.WriteString("\n")
}
