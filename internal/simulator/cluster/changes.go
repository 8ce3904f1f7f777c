package cluster

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// What a running world (a timeline's steps, capacity's scaling) asks of
// the cluster's controllers, once the cluster is loaded.

// Hooks are what a running world gives the controllers.
type Hooks struct {
	// Live is a pod's current state: nil once the pod is gone (deleted,
	// finished, evicted); a pod not created yet is itself.
	Live func(*v1.Pod) *v1.Pod
	// Removals counts the pods gone so far: while it stays the same, a pod
	// Live found alive is still alive, with the same phase (the
	// controllers then count a workload's pods without looking at each
	// again).
	Removals func() uint64
	// Remove deletes a pod a controller deletes (a StatefulSet scaled
	// down, a CronJob's Job replaced), saying why.
	Remove func(p *v1.Pod, why string)
	// Now is the world's clock (a CronJob's schedule).
	Now func() time.Time
	// CronJobs says how the CronJobs run (cronjobs.go).
	CronJobs CronJobRun
}

// CronJobRun is how the CronJobs run in a world.
type CronJobRun struct {
	// Started: the world runs; before, the CronJobs create no Job.
	Started bool
	// Until, when set (a timeline), has each create its Jobs at its
	// schedule's times up to it; otherwise each creates one, its peak.
	Until time.Time
}

// StartControllers makes the workloads' controllers ready to run again,
// in the world h gives.
func (c *Cluster) StartControllers(h Hooks) {
	if c.controllers == nil {
		c.newControllers()
	}
	e := c.controllers
	e.live, e.removals, e.remove, e.now = h.Live, h.Removals, h.Remove, h.Now
	switch r := h.CronJobs; {
	case !r.Started:
		e.crons.mode = cronIdle
	case r.Until.IsZero():
		e.crons.mode = cronPeak
	default:
		e.crons.mode, e.crons.until = cronScheduled, r.Until
	}
}

// Reconcile runs every workload's controller once (StartControllers
// first): each creates the pods it is missing into c.Pods (c.Ordered for
// a StatefulSet's pods that wait their turn).
func (c *Cluster) Reconcile() { c.controllers.reconcile() }

// Created files a pod a step created (StartControllers first): its name
// is taken and its controller, if any, owns it.
func (c *Cluster) Created(p *v1.Pod) {
	c.controllers.names.taken[PodKey(p)] = true
	c.controllers.own(p)
}

// AddCreated files an object a step created from source; a workload gets
// the defaults its controller reads.
func (c *Cluster) AddCreated(source string, obj runtime.Object) {
	c.Add(source+"#0", obj)
	switch obj.(type) {
	case *appsv1.ReplicaSet, *appsv1.StatefulSet, *v1.ReplicationController, *appsv1.Deployment, *appsv1.DaemonSet, *batchv1.Job:
		in := &c.workloads[len(c.workloads)-1]
		in.source = source
		defaultWorkload(in.obj)
	case *batchv1.CronJob:
		// Its controller takes it as created on its first run: now.
		if n := len(c.workloads); n == 0 || c.workloads[n-1].obj != obj {
			c.workloads = append(c.workloads, workloadInput{obj: obj})
		}
		c.workloads[len(c.workloads)-1].source = source
		defaultWorkload(obj)
	}
}

// JobSucceeded counts a finished pod toward its Job's completions.
func (c *Cluster) JobSucceeded(p *v1.Pod) {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "Job" || c.controllers == nil {
		return
	}
	for _, in := range c.workloads {
		if job, ok := in.obj.(*batchv1.Job); ok && job.Name == ref.Name && job.Namespace == p.Namespace {
			job.Status.Succeeded++
			if ix, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
				k := ownerKey("Job", job.Namespace, job.Name)
				if c.controllers.done[k] == nil {
					c.controllers.done[k] = map[string]bool{}
				}
				c.controllers.done[k][ix] = true
			}
			return
		}
	}
}

// WorkloadIndex finds a workload not deleted by kind, namespace and name
// (the default namespace when ns is empty); -1 when there is none. The
// index is WorkloadObject's and DeleteWorkload's.
func (c *Cluster) WorkloadIndex(kind, ns, name string) int {
	if ns == "" {
		ns = v1.NamespaceDefault
	}
	for i, in := range c.workloads {
		m, ok := in.obj.(metav1.Object)
		if ok && !in.deleted && kindOf(in.obj) == kind && m.GetNamespace() == ns && m.GetName() == name {
			return i
		}
	}
	return -1
}

// WorkloadObject is workload i's object (a *appsv1.Deployment, ...),
// which its controller reads on its next run.
func (c *Cluster) WorkloadObject(i int) interface{} { return c.workloads[i].obj }

// DeleteWorkload stops workload i's controller; a StatefulSet creates
// no more pods, a CronJob's Jobs go with it (the garbage collector's
// work: their pods are PodsOf's, for the caller to delete).
func (c *Cluster) DeleteWorkload(i int) {
	in := &c.workloads[i]
	in.deleted = true
	m, ok := in.obj.(metav1.Object)
	if !ok || c.controllers == nil {
		return
	}
	k := ownerKey(kindOf(in.obj), m.GetNamespace(), m.GetName())
	switch in.obj.(type) {
	case *appsv1.StatefulSet:
		c.controllers.forgetOrdered(k)
	case *batchv1.CronJob:
		if st := c.controllers.crons.byKey[k]; st != nil {
			st.deleted = true
		}
		for _, j := range c.jobsOf(m.GetNamespace(), m.GetName()) {
			c.workloads[j].deleted = true
		}
	}
}

// WorkloadByName is the object of the workload kind ns/name that was
// listed last, deleted or not (the report's Job completions); nil when
// there is none.
func (c *Cluster) WorkloadByName(kind, ns, name string) interface{} {
	for i := len(c.workloads) - 1; i >= 0; i-- {
		in := c.workloads[i]
		if m, ok := in.obj.(metav1.Object); ok && kindOf(in.obj) == kind && m.GetNamespace() == ns && m.GetName() == name {
			return in.obj
		}
	}
	return nil
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
	case *batchv1.CronJob:
		return "CronJob"
	}
	return ""
}

// PodsOf are a workload's pods as live sees them (those it returns nil
// for left out), in creation order, a Deployment's through its
// ReplicaSets, a CronJob's through its Jobs. A StatefulSet's pods not
// created yet are not (c.Ordered holds them).
func (c *Cluster) PodsOf(kind, ns, name string, live func(*v1.Pod) *v1.Pod) []*v1.Pod {
	return c.PodsOfSince(kind, ns, name, live, nil)
}

// PodsOfSince is PodsOf for the pods filed under the workload since marks
// (per owner, how many of its pods were seen), which it advances; nil
// marks: all of them.
func (c *Cluster) PodsOfSince(kind, ns, name string, live func(*v1.Pod) *v1.Pod, marks map[string]int) []*v1.Pod {
	e := c.controllers
	keys := []string{ownerKey(kind, ns, name)}
	switch kind {
	case "Deployment":
		keys = keys[:0]
		for _, rs := range c.ReplicaSetsOf(ns, name) {
			keys = append(keys, ownerKey("ReplicaSet", ns, rs.Name))
		}
	case "CronJob":
		keys = keys[:0]
		for _, i := range c.jobsOf(ns, name) {
			keys = append(keys, ownerKey("Job", ns, c.workloads[i].obj.(*batchv1.Job).Name))
		}
	}
	var out []*v1.Pod
	for _, k := range keys {
		owned := e.owned[k]
		from := 0
		if marks != nil {
			from = marks[k]
			marks[k] = len(owned)
		}
		for _, p := range owned[from:] {
			if cur := live(p); cur != nil {
				out = append(out, cur)
			}
		}
	}
	return out
}

// LiveCount is len(PodsOf(kind, ns, name, live)) with the live and
// removals StartControllers was given, without looking again at the pods
// counted before when no pod went since.
func (c *Cluster) LiveCount(kind, ns, name string) int {
	e := c.controllers
	if kind != "Deployment" {
		n, _ := e.counts(ownerKey(kind, ns, name))
		return n
	}
	total := 0
	for _, rs := range c.ReplicaSetsOf(ns, name) {
		n, _ := e.counts(ownerKey("ReplicaSet", ns, rs.Name))
		total += n
	}
	return total
}

// ReplicaSetsOf are the ReplicaSets Deployment ns/name controls, in the
// order of c.ReplicaSets.
func (c *Cluster) ReplicaSetsOf(ns, name string) []*appsv1.ReplicaSet {
	x := &c.rsIndex
	if !slices.Equal(x.of, c.ReplicaSets) {
		// Built again when a ReplicaSet is added or replaced: the
		// controllers reconcile every Deployment once per replica
		// capacity --workload adds, and looking at every ReplicaSet's
		// owner for each cost more than the scheduling cycle.
		x.of = slices.Clone(c.ReplicaSets)
		x.by = map[string][]*appsv1.ReplicaSet{}
		for _, rs := range c.ReplicaSets {
			if ref := metav1.GetControllerOf(rs); ref != nil && ref.Kind == "Deployment" {
				k := rs.Namespace + "/" + ref.Name
				x.by[k] = append(x.by[k], rs)
			}
		}
	}
	return slices.Clone(x.by[ns+"/"+name])
}

// replicaSetIndex is the ReplicaSets of each Deployment (namespace/name),
// as c.ReplicaSets held them (of) when it was built.
type replicaSetIndex struct {
	of []*appsv1.ReplicaSet
	by map[string][]*appsv1.ReplicaSet
}
