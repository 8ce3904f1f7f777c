package cluster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The StatefulSet controller, as kube-controller-manager v1.37.2's
// (pkg/controller/statefulset, updateStatefulSet) runs it, each time
// anything its pods depend on changes:
//
//   - one pod per ordinal of [start, start+replicas), named
//     <set>-<ordinal>; a pod that is gone (its node deleted, drained,
//     finished) is created again under the same name, with the same
//     claims, once its deletion is seen;
//   - OrderedReady (the default): a missing ordinal is created only when
//     every ordinal below it is Running and Ready (in the simulation:
//     bound), one at a time; a pod not running blocks what comes after it,
//     scaling down included;
//   - Parallel: every missing ordinal at once;
//   - scaling down deletes the pods past the replicas, highest ordinal
//     first; OrderedReady waits for the pods it keeps to run, and deletes
//     a pod not running only when it is the first such pod.
//
// minReadySeconds is not waited for: a bound pod is Running, Ready and
// Available at once.

// OrderedSet is a StatefulSet with the OrderedReady policy whose
// controller waits for After (namespace/name), the first of its pods not
// running, before it creates Waiting (the pods of the ordinals it has not
// created yet, in order) or deletes the pods a scale down left. The
// controller sets it each time it runs; the world runs it again once
// After is bound.
type OrderedSet struct {
	Workload int
	Waiting  []*v1.Pod
	After    string // namespace/name

	set    *appsv1.StatefulSet
	source string
	// built are the pods of ordinals not created yet, each made once:
	// made again on each run, its claims and identity would be too.
	built map[int]*v1.Pod
}

// statefulSet runs the StatefulSet controller once.
func (e *controllers) statefulSet(s *appsv1.StatefulSet, source string) {
	wl := e.workload("StatefulSet", &s.ObjectMeta, source)
	k := e.assign("StatefulSet", &s.ObjectMeta, wl)
	start, want := ordinalRange(s)
	replicas := make([]*v1.Pod, want)
	var condemned []*v1.Pod
	for _, p := range e.owned[k] {
		if e.live != nil {
			if p = e.live(p); p == nil {
				continue
			}
		}
		ord, ok := statefulOrdinal(s.Name, p.Name)
		if !ok {
			continue
		}
		if terminal(p) && e.remove != nil {
			// Deleted, then made again once the deletion is seen: at once
			// here.
			e.remove(p, fmt.Sprintf("deleted by %s: its pod %s; created again", e.c.Workloads[wl], p.Status.Phase))
			continue
		}
		switch {
		case ord < start || ord >= start+want:
			condemned = append(condemned, p)
		case replicas[ord-start] == nil:
			replicas[ord-start] = p
		}
	}
	monotonic := s.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	// after is the pod the controller waits for, in order; the ordinals
	// after it that have no pod wait.
	var waiting []*v1.Pod
	after := ""
	for i, p := range replicas {
		ord := start + i
		switch {
		case after != "":
			if p == nil {
				waiting = append(waiting, e.waitingPod(e.ordered(k, s, wl, source), ord, wl, source))
			}
		case p == nil:
			p = e.createStateful(e.orderedSets[k], s, ord, wl, source)
			if monotonic {
				after = PodKey(p)
			}
		case monotonic && !runningAndReady(p):
			after = PodKey(p)
		}
	}
	if after == "" {
		after = e.condemn(s, wl, want, condemned, monotonic)
	} else if len(waiting) == 0 && (len(condemned) == 0 || e.remove == nil) {
		after = "" // nothing waits for it
	}
	if e.orderedSets[k] == nil && after == "" {
		return
	}
	o := e.ordered(k, s, wl, source)
	o.Waiting, o.After = waiting, after
}

// ordered is the StatefulSet's OrderedSet, made (and listed in
// c.Ordered) the first time.
func (e *controllers) ordered(k string, s *appsv1.StatefulSet, wl int, source string) *OrderedSet {
	if o := e.orderedSets[k]; o != nil {
		return o
	}
	o := &OrderedSet{Workload: wl, set: s, source: source, built: map[int]*v1.Pod{}}
	e.orderedSets[k] = o
	e.c.Ordered = append(e.c.Ordered, o)
	return o
}

// condemn deletes the pods past the replicas, highest ordinal first. In
// order (OrderedReady; the replicas all run here) a pod not running is
// deleted only when it is the first such pod: condemn returns the pod it
// then waits for, "" when it deleted them all.
func (e *controllers) condemn(s *appsv1.StatefulSet, wl, want int, condemned []*v1.Pod, monotonic bool) string {
	if len(condemned) == 0 || e.remove == nil {
		return ""
	}
	ord := func(p *v1.Pod) int { n, _ := statefulOrdinal(s.Name, p.Name); return n }
	slices.SortFunc(condemned, func(a, b *v1.Pod) int { return ord(b) - ord(a) })
	for len(condemned) > 0 {
		p := condemned[0]
		if monotonic && !runningAndReady(p) {
			// The first pod not running is the lowest such ordinal.
			var first *v1.Pod
			for _, q := range condemned {
				if !runningAndReady(q) {
					first = q
				}
			}
			if first != p {
				return PodKey(first)
			}
		}
		e.remove(p, fmt.Sprintf("deleted by %s: scaled down to %d", e.c.Workloads[wl], want))
		condemned = condemned[1:]
	}
	return ""
}

// createStateful creates the pod of ordinal ord: the one made while it
// waited, if any.
func (e *controllers) createStateful(o *OrderedSet, s *appsv1.StatefulSet, ord, wl int, source string) *v1.Pod {
	if o != nil {
		if p, ok := o.built[ord]; ok {
			delete(o.built, ord)
			e.file(p, wl, source)
			return p
		}
	}
	p := e.statefulPod(s, ord)
	e.add(p, wl, source)
	return p
}

// waitingPod is the pod of ordinal ord not created yet, made the first
// time and counted under the workload (the report lists it as not
// created).
func (e *controllers) waitingPod(o *OrderedSet, ord, wl int, source string) *v1.Pod {
	if p, ok := o.built[ord]; ok {
		return p
	}
	p := e.statefulPod(o.set, ord)
	mergeAffinityLabelKeys(p)
	k := PodKey(p)
	e.c.Sources[k] = sourceOf(source, e.c.Workloads[wl])
	e.c.WorkloadOf[k] = wl
	o.built[ord] = p
	return p
}

// statefulPod makes the pod of ordinal ord (newStatefulSetPod): the
// template's, named <set>-<ordinal>, with its identity (hostname,
// subdomain, the pod-name and pod-index labels) and a claim per
// volumeClaimTemplate (<template>-<set>-<ordinal>), created if missing.
// A name used before gets a UID of its own: the pod is another one.
func (e *controllers) statefulPod(s *appsv1.StatefulSet, ord int) *v1.Pod {
	p := podFromTemplate(&s.Spec.Template, &s.ObjectMeta, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))
	name := fmt.Sprintf("%s-%d", s.Name, ord)
	// GetPodFromTemplate's generateName stays; the name is set.
	p.GenerateName, p.Name = s.Name+"-", name
	p.Labels[appsv1.StatefulSetPodNameLabel] = name
	p.Labels[appsv1.PodIndexLabel] = strconv.Itoa(ord)
	p.Labels[appsv1.ControllerRevisionHashLabelKey] = s.Name + "-" + computeHash(&s.Spec.Template, s.Status.CollisionCount)
	p.Spec.Hostname = name
	p.Spec.Subdomain = s.Spec.ServiceName
	e.claimVolumes(s, p, ord)
	k := PodKey(p)
	if n := e.seen[k]; n > 0 {
		p.UID = types.UID(fmt.Sprintf("pod-%s-%s-%d", p.Namespace, p.Name, n+1))
	}
	e.names.taken[k] = true
	return p
}

// claimVolumes points the pod's volumes named after the claim templates
// at its claims (in template order, then its other volumes, as the
// StatefulSet controller does), creating the claims that do not exist.
func (e *controllers) claimVolumes(s *appsv1.StatefulSet, p *v1.Pod, ord int) {
	if len(s.Spec.VolumeClaimTemplates) == 0 {
		return
	}
	templates := map[string]bool{}
	var vols []v1.Volume
	for i := range s.Spec.VolumeClaimTemplates {
		t := &s.Spec.VolumeClaimTemplates[i]
		templates[t.Name] = true
		claim := t.DeepCopy()
		claim.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
		claim.Name = fmt.Sprintf("%s-%s-%d", t.Name, s.Name, ord)
		claim.Namespace = s.Namespace
		claim.UID = types.UID("pvc-" + claim.Namespace + "-" + claim.Name)
		if s.Spec.Selector != nil {
			claim.Labels = withLabels(claim.Labels, s.Spec.Selector.MatchLabels)
		}
		if k := claim.Namespace + "/" + claim.Name; !e.claims[k] {
			e.claims[k] = true
			e.c.Others = append(e.c.Others, claim)
		}
		vols = append(vols, v1.Volume{Name: t.Name, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name}}})
	}
	for _, v := range p.Spec.Volumes {
		if !templates[v.Name] {
			vols = append(vols, v)
		}
	}
	p.Spec.Volumes = vols
}

// ordinalRange is the StatefulSet's first ordinal and replicas.
func ordinalRange(s *appsv1.StatefulSet) (start, replicas int) {
	replicas = 1
	if s.Spec.Replicas != nil {
		replicas = int(*s.Spec.Replicas)
	}
	if s.Spec.Ordinals != nil {
		start = int(s.Spec.Ordinals.Start)
	}
	return start, replicas
}

// statefulOrdinal is the ordinal of pod name in StatefulSet set
// (getParentNameAndOrdinal: <set>-<digits>).
func statefulOrdinal(set, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, set+"-")
	if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}

func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// runningAndReady: in the simulation, a pod bound, not being deleted, not
// finished.
func runningAndReady(p *v1.Pod) bool {
	return p.Spec.NodeName != "" && p.DeletionTimestamp == nil && !terminal(p)
}

// forgetOrdered drops what a deleted StatefulSet was still to create.
func (e *controllers) forgetOrdered(k string) {
	if o := e.orderedSets[k]; o != nil {
		o.Waiting, o.After = nil, ""
	}
}

// ReconcileOrdered runs the controllers of the StatefulSets that wait for
// a pod (StartControllers first); ready says whether it runs now.
func (c *Cluster) ReconcileOrdered(ready func(key string) bool) {
	e := c.controllers
	for _, o := range c.Ordered {
		if o.After != "" && ready(o.After) {
			e.statefulSet(o.set, o.source)
		}
	}
}
