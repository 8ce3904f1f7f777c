package cluster

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

// Workload is a controller object whose pods the simulation creates as
// its controller would: Deployment, ReplicaSet, StatefulSet, Job,
// DaemonSet, ReplicationController, CronJob (its Jobs' pods).
type Workload struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Source is the file and document it was read from.
	Source string `json:"-"`
}

func (w Workload) String() string { return w.Kind + " " + w.Namespace + "/" + w.Name }

// workloadInput is a workload object in input order, with its source;
// deleted is set when a scenario step deletes it.
type workloadInput struct {
	obj     interface{}
	source  string
	deleted bool
}

// Labels and annotations the controllers set (k8s.io/api's constants
// where they exist).
const (
	jobTrackingFinalizer   = "batch.kubernetes.io/job-tracking"
	legacyJobNameLabel     = "job-name"
	legacyControllerUID    = "controller-uid"
	daemonSetTemplateLabel = "pod-template-generation"
	// daemonSetGenerationAnnotation holds a DaemonSet's template generation.
	daemonSetGenerationAnnotation = "deprecated.daemonset.template.generation"
)

// RunControllers creates the pods (and a Deployment's ReplicaSet, a
// StatefulSet's PersistentVolumeClaims) the workloads' controllers would
// create, DaemonSets first, then the others in input order. Pods that
// already exist and name a workload as their controller count toward its
// replicas.
func (c *Cluster) RunControllers() {
	c.WorkloadOf = map[string]int{}
	c.cronJobInputs()
	if len(c.workloads) == 0 {
		return
	}
	e := c.newControllers()
	// Defaults first: a Deployment's ReplicaSet in the input names it.
	for _, in := range c.workloads {
		defaultWorkload(in.obj)
	}
	e.reconcile()
}

// newControllers returns the cluster's controllers, with the names in use
// and the pods each controller already owns.
func (c *Cluster) newControllers() *controllers {
	if c.WorkloadOf == nil {
		c.WorkloadOf = map[string]int{}
	}
	taken := map[string]bool{}
	for _, p := range c.Pods {
		if p.Namespace == "" {
			p.Namespace = v1.NamespaceDefault
		}
		taken[PodKey(p)] = true
	}
	e := &controllers{c: c, names: &namer{taken: taken, next: map[string]int{}}, owned: map[string][]*v1.Pod{}, assigned: map[string]int{}, index: map[string]int{},
		done: map[string]map[string]bool{}, jobGroups: map[string]*schedulingv1beta1.PodGroup{}, seen: map[string]int{}, orderedSets: map[string]*OrderedSet{}}
	c.controllers = e
	for _, p := range c.Pods {
		e.own(p)
	}
	claims := map[string]bool{}
	for _, o := range c.Others {
		if pvc, ok := o.(*v1.PersistentVolumeClaim); ok {
			claims[pvc.Namespace+"/"+pvc.Name] = true
		}
	}
	e.claims = claims
	return e
}

// reconcile runs every workload's controller once: each creates the pods
// it is missing, DaemonSets first (the DaemonSet controller places its
// pods as soon as nodes exist), then CronJobs (their Jobs run in the same
// pass), then the others in input order.
func (e *controllers) reconcile() {
	for pass := 0; pass < 3; pass++ {
		for _, in := range e.c.workloads {
			if in.deleted || reconcilePass(in.obj) != pass {
				continue
			}
			e.runController(in)
		}
	}
}

func reconcilePass(obj interface{}) int {
	switch obj.(type) {
	case *appsv1.DaemonSet:
		return 0
	case *batchv1.CronJob:
		return 1
	}
	return 2
}

type controllers struct {
	c     *Cluster
	names *namer
	owned map[string][]*v1.Pod // kind/namespace/name of the controller -> its pods
	// assigned counts, per controller, the first pods of owned already
	// counted under its workload (owned only grows).
	assigned map[string]int
	claims   map[string]bool
	// index maps kind/namespace/name to the workload's index, so running
	// a controller again counts under the same workload.
	index map[string]int
	// done holds the completion indexes an Indexed Job's finished pods
	// took, by kind/namespace/name.
	done map[string]map[string]bool
	// jobGroups are the PodGroups made for Jobs (jobgroups.go), by
	// kind/namespace/name.
	jobGroups map[string]*schedulingv1beta1.PodGroup
	// live, when set (a timeline), gives a pod's current state in the
	// world, nil once it is gone (deleted, finished, evicted); a pod not
	// created yet is itself. removals counts the pods gone so far
	// (StartControllers).
	live     func(*v1.Pod) *v1.Pod
	removals func() uint64
	// counted caches counts' answer per controller.
	counted map[string]*ownerCount
	// remove, when set (a running world), deletes a pod, saying why (a
	// StatefulSet scaled down); now is the world's clock.
	remove func(p *v1.Pod, why string)
	now    func() time.Time
	// seen counts the pods of each namespace/name the controllers own or
	// owned: a StatefulSet's pod made again under a name gets a UID of
	// its own.
	seen map[string]int
	// orderedSets are the StatefulSets' OrderedSets, by
	// kind/namespace/name (statefulsets.go).
	orderedSets map[string]*OrderedSet
	// crons are the CronJobs' controllers, by kind/namespace/name
	// (cronjobs.go).
	crons cronJobs
	// daemons is what each DaemonSet's controller last saw, by
	// kind/namespace/name (daemonSettled).
	daemons map[string]daemonMark
}

// daemonMark is what a DaemonSet's controller saw when it last ran: the
// DaemonSet, the nodes, the pods removed from the world so far, and the
// pods it owned, once it had created those it was missing.
type daemonMark struct {
	ds       *appsv1.DaemonSet
	nodes    []*v1.Node
	removals uint64
	owned    int
}

// ownerCount is what counts found of a controller's first mark pods while
// removals was at removals: live of them alive, active of those active.
type ownerCount struct {
	removals           uint64
	mark, live, active int
}

// activePod: the pod counts toward its controller's replicas.
func activePod(p *v1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed
}

// counts is how many of the pods the controller k owns are alive (live
// does not return nil: PodsOf's) and how many of them active (active's).
// With live and removals set, the pods counted before are not looked at
// again while no pod went since: a pod alive stays alive, and its phase
// and deletion timestamp do not change, until it goes. capacity
// --workload adds thousands of replicas one at a time; looking at them
// all for each made it quadratic.
func (e *controllers) counts(k string) (live, active int) {
	owned := e.owned[k]
	if e.live == nil || e.removals == nil {
		for _, p := range owned {
			if e.live != nil {
				if p = e.live(p); p == nil {
					continue
				}
			}
			live++
			if activePod(p) {
				active++
			}
		}
		return live, active
	}
	if e.counted == nil {
		e.counted = map[string]*ownerCount{}
	}
	r := e.removals()
	c := e.counted[k]
	if c == nil || c.removals != r {
		c = &ownerCount{removals: r}
		e.counted[k] = c
	}
	for _, p := range owned[c.mark:] {
		if p = e.live(p); p == nil {
			continue
		}
		c.live++
		if activePod(p) {
			c.active++
		}
	}
	c.mark = len(owned)
	return c.live, c.active
}

func ownerKey(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

func (e *controllers) workload(kind string, m *metav1.ObjectMeta, source string) int {
	k := ownerKey(kind, m.Namespace, m.Name)
	if i, ok := e.index[k]; ok {
		return i
	}
	e.c.Workloads = append(e.c.Workloads, Workload{Kind: kind, Namespace: m.Namespace, Name: m.Name, Source: source})
	e.index[k] = len(e.c.Workloads) - 1
	return len(e.c.Workloads) - 1
}

// active are the existing pods a controller owns that still count:
// not finished, not being deleted.
func (e *controllers) active(kind string, m *metav1.ObjectMeta, wl int) []*v1.Pod {
	var out []*v1.Pod
	k := e.assign(kind, m, wl)
	for _, p := range e.owned[k] {
		if e.live != nil {
			if p = e.live(p); p == nil {
				continue
			}
		}
		if activePod(p) {
			out = append(out, p)
		}
	}
	return out
}

// assign counts the controller's pods under workload wl (unless -1), each
// once, not on every reconcile: capacity --workload reconciles once per
// replica it adds. It returns the controller's key in owned.
func (e *controllers) assign(kind string, m *metav1.ObjectMeta, wl int) string {
	k := ownerKey(kind, m.Namespace, m.Name)
	if wl >= 0 {
		owned := e.owned[k]
		for _, p := range owned[e.assigned[k]:] {
			e.c.WorkloadOf[PodKey(p)] = wl
		}
		e.assigned[k] = len(owned)
	}
	return k
}

func (e *controllers) runController(in workloadInput) {
	switch o := in.obj.(type) {
	case *appsv1.Deployment:
		e.deployment(o, in.source)
	case *appsv1.ReplicaSet:
		if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "Deployment" {
			return // expanded with its Deployment, under its name
		}
		e.replicas("ReplicaSet", appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), &o.ObjectMeta, o.Spec.Replicas, &o.Spec.Template, in.source, -1)
	case *v1.ReplicationController:
		e.replicas("ReplicationController", v1.SchemeGroupVersion.WithKind("ReplicationController"), &o.ObjectMeta, o.Spec.Replicas, o.Spec.Template, in.source, -1)
	case *appsv1.StatefulSet:
		e.statefulSet(o, in.source)
	case *batchv1.Job:
		e.job(o, in.source)
	case *appsv1.DaemonSet:
		e.daemonSet(o, in.source)
	case *batchv1.CronJob:
		e.cronJob(o, in.source)
	}
}

// replicas creates the pods a ReplicaSet or ReplicationController is
// missing: replicas (default 1) minus its active pods. wl is the workload
// to count them under (a Deployment's), or -1 for the object itself.
func (e *controllers) replicas(kind string, gvk schema.GroupVersionKind, m *metav1.ObjectMeta, replicas *int32, tmpl *v1.PodTemplateSpec, source string, wl int) {
	if wl < 0 {
		wl = e.workload(kind, m, source)
	}
	want := int32(1)
	if replicas != nil {
		want = *replicas
	}
	_, active := e.counts(e.assign(kind, m, wl))
	have := int32(active)
	if tmpl == nil {
		return
	}
	for i := have; i < want; i++ {
		p := podFromTemplate(tmpl, m, gvk)
		e.names.name(p, m.Name+"-")
		e.add(p, wl, source)
	}
}

// add creates a pod of workload wl: what the API server does to it
// first, then file.
func (e *controllers) add(p *v1.Pod, wl int, source string) {
	mergeAffinityLabelKeys(p)
	e.file(p, wl, source)
}

// file lists a pod created under workload wl.
func (e *controllers) file(p *v1.Pod, wl int, source string) {
	k := PodKey(p)
	e.own(p)
	e.c.Pods = append(e.c.Pods, p)
	e.c.Sources[k] = sourceOf(source, e.c.Workloads[wl])
	e.c.WorkloadOf[k] = wl
}

// sourceOf is where a workload's pod comes from: the workload's source,
// then the workload.
func sourceOf(source string, wl Workload) string {
	if source == "" {
		return wl.String()
	}
	return source + ", " + wl.String()
}

// own files the pod under its controller.
func (e *controllers) own(p *v1.Pod) {
	e.seen[PodKey(p)]++
	if ref := metav1.GetControllerOf(p); ref != nil {
		k := ownerKey(ref.Kind, p.Namespace, ref.Name)
		e.owned[k] = append(e.owned[k], p)
	}
}

// deployment creates the Deployment's ReplicaSet, named after the hash of
// its pod template (label pod-template-hash, as the Deployment controller
// does), unless a ReplicaSet it controls is in the input; the
// ReplicaSets' pods count under the Deployment.
func (e *controllers) deployment(d *appsv1.Deployment, source string) {
	wl := e.workload("Deployment", &d.ObjectMeta, source)
	owned := e.c.ReplicaSetsOf(d.Namespace, d.Name)
	if len(owned) == 0 {
		hash := computeHash(&d.Spec.Template, d.Status.CollisionCount)
		rs := &appsv1.ReplicaSet{
			TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
			ObjectMeta: metav1.ObjectMeta{
				Name:            d.Name + "-" + hash,
				Namespace:       d.Namespace,
				Labels:          withLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash),
				Annotations:     map[string]string{"deployment.kubernetes.io/revision": "1"},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))},
			},
			Spec: appsv1.ReplicaSetSpec{Replicas: d.Spec.Replicas, MinReadySeconds: d.Spec.MinReadySeconds, Template: *d.Spec.Template.DeepCopy()},
		}
		rs.UID = types.UID("replicaset-" + rs.Namespace + "-" + rs.Name)
		rs.Spec.Template.Labels = withLabel(d.Spec.Template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
		if d.Spec.Selector != nil {
			rs.Spec.Selector = d.Spec.Selector.DeepCopy()
			rs.Spec.Selector.MatchLabels = withLabel(d.Spec.Selector.MatchLabels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
		}
		e.c.ReplicaSets = append(e.c.ReplicaSets, rs)
		owned = append(owned, rs)
	}
	for _, rs := range owned {
		e.replicas("ReplicaSet", appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), &rs.ObjectMeta, rs.Spec.Replicas, &rs.Spec.Template, source, wl)
	}
}

// job creates the pods a Job runs at once: parallelism (default 1), at
// most the completions not yet succeeded, minus its active pods; an
// Indexed Job's pods get the lowest indexes not running (name
// <job>-<index>-xxxxx, hostname <job>-<index>, the completion-index
// annotation and label). A suspended Job runs none.
func (e *controllers) job(j *batchv1.Job, source string) {
	wl := e.cronJobWorkload(j)
	if wl < 0 {
		wl = e.workload("Job", &j.ObjectMeta, source)
	}
	activePods := e.active("Job", &j.ObjectMeta, wl)
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return
	}
	parallelism := int32(1)
	if j.Spec.Parallelism != nil {
		parallelism = *j.Spec.Parallelism
	}
	want := parallelism
	switch {
	case j.Spec.Completions != nil:
		want = min(parallelism, *j.Spec.Completions-j.Status.Succeeded)
	case j.Status.Succeeded > 0:
		// Without completions the Job is done once a pod succeeded: the
		// pods running finish, no new one starts.
		want = 0
	}
	n := int(want) - len(activePods)
	indexed := j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
	running := map[string]bool{}
	for _, p := range activePods {
		running[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = true
	}
	for ix := range e.done[ownerKey("Job", j.Namespace, j.Name)] {
		running[ix] = true
	}
	pg, err := e.jobPodGroup(j, activePods, source)
	if err != nil {
		// Where the input was read: loading.SourceError's format.
		e.c.ControllerErrors = append(e.c.ControllerErrors, fmt.Errorf("%s (Job %s/%s): %w", source, j.Namespace, j.Name, err))
		return
	}
	for i, index := 0, 0; i < n; i++ {
		p := podFromTemplate(&j.Spec.Template, &j.ObjectMeta, batchv1.SchemeGroupVersion.WithKind("Job"))
		p.Finalizers = append(p.Finalizers, jobTrackingFinalizer)
		if pg != nil {
			joinGroup(p, pg)
		}
		prefix := j.Name + "-"
		if indexed {
			for running[strconv.Itoa(index)] {
				index++
			}
			if j.Spec.Completions != nil && int32(index) >= *j.Spec.Completions {
				break
			}
			ix := strconv.Itoa(index)
			running[ix] = true
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations[batchv1.JobCompletionIndexAnnotation] = ix
			p.Labels[batchv1.JobCompletionIndexAnnotation] = ix
			p.Spec.Hostname = j.Name + "-" + ix
			// The Job controller's podGenerateNameWithIndex: a long name
			// is cut, not the index.
			prefix = j.Name + "-" + ix + "-"
			if len(prefix) > maxGeneratedNameLength {
				prefix = j.Name[:maxGeneratedNameLength-len(ix)-2] + "-" + ix + "-"
			}
		}
		e.names.name(p, prefix)
		e.add(p, wl, source)
	}
}

// daemonSet creates one pod per node that should run it and has none:
// the node matches the template's nodeName, nodeSelector and required
// node affinity, and has no NoSchedule or NoExecute taint the pod does not
// tolerate, counting the tolerations the DaemonSet controller adds. Each
// pod is pinned to its node by required node affinity on metadata.name.
func (e *controllers) daemonSet(ds *appsv1.DaemonSet, source string) {
	k := ownerKey("DaemonSet", ds.Namespace, ds.Name)
	if e.daemonSettled(k, ds) {
		return
	}
	defer e.markDaemon(k, ds)
	wl := e.workload("DaemonSet", &ds.ObjectMeta, source)
	has := map[string]bool{}
	for _, p := range e.active("DaemonSet", &ds.ObjectMeta, wl) {
		has[DaemonPodNode(p)] = true
	}
	tmpl, required := daemonTemplate(ds)
	for _, n := range e.c.Nodes {
		if has[n.Name] || !daemonRunsOn(tmpl, required, n) {
			continue
		}
		p := podFromTemplate(tmpl, &ds.ObjectMeta, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))
		p.Spec.Affinity = pinToNode(p.Spec.Affinity, n.Name)
		e.names.name(p, ds.Name+"-")
		e.add(p, wl, source)
	}
}

// daemonSettled: the DaemonSet's controller has nothing to do, having
// run since with the same DaemonSet and nodes (a node changed is another
// object), no pod removed from the world, no pod filed under it since.
// Every node it should run on then has its active pod: capacity
// --workload reconciles every controller once per replica, and looking
// at every node and DaemonSet pod each time cost more than the
// scheduling cycle.
func (e *controllers) daemonSettled(k string, ds *appsv1.DaemonSet) bool {
	m, ok := e.daemons[k]
	if !ok || e.removals == nil || e.live == nil || m.ds != ds || m.removals != e.removals() || m.owned != len(e.owned[k]) {
		return false
	}
	return slices.Equal(m.nodes, e.c.Nodes)
}

// markDaemon notes what the DaemonSet's controller saw, once it ran in a
// world (a load's run has no removals to compare).
func (e *controllers) markDaemon(k string, ds *appsv1.DaemonSet) {
	if e.removals == nil || e.live == nil {
		return
	}
	if e.daemons == nil {
		e.daemons = map[string]daemonMark{}
	}
	e.daemons[k] = daemonMark{ds: ds, nodes: slices.Clone(e.c.Nodes), removals: e.removals(), owned: len(e.owned[k])}
}

// daemonPodNode is the node a daemon pod runs on or is pinned to.
func DaemonPodNode(p *v1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range t.MatchFields {
				if f.Key == metav1.ObjectNameField && f.Operator == v1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

// pinToNode replaces the required node affinity's terms with one matching
// the node's name, keeping the rest of the affinity (the DaemonSet
// controller's ReplaceDaemonSetPodNodeNameNodeAffinity).
func pinToNode(a *v1.Affinity, node string) *v1.Affinity {
	sel := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
		{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}
	if a == nil {
		return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: sel}}
	}
	if a.NodeAffinity == nil {
		a.NodeAffinity = &v1.NodeAffinity{}
	}
	a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = sel
	return a
}

// addDaemonTolerations adds the tolerations every daemon pod gets
// (AddOrUpdateDaemonPodTolerations): not-ready and unreachable NoExecute;
// disk-, memory-, pid-pressure and unschedulable NoSchedule; and
// network-unavailable with host networking.
func addDaemonTolerations(spec *v1.PodSpec) {
	add := func(key string, effect v1.TaintEffect) {
		t := v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: effect}
		for i := range spec.Tolerations {
			if spec.Tolerations[i].MatchToleration(&t) {
				spec.Tolerations[i] = t
				return
			}
		}
		spec.Tolerations = append(spec.Tolerations, t)
	}
	add(v1.TaintNodeNotReady, v1.TaintEffectNoExecute)
	add(v1.TaintNodeUnreachable, v1.TaintEffectNoExecute)
	add(v1.TaintNodeDiskPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodeMemoryPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodePIDPressure, v1.TaintEffectNoSchedule)
	add(v1.TaintNodeUnschedulable, v1.TaintEffectNoSchedule)
	if spec.HostNetwork {
		add(v1.TaintNodeNetworkUnavailable, v1.TaintEffectNoSchedule)
	}
}

// podFromTemplate is the controllers' GetPodFromTemplate: the template's
// labels, annotations, finalizers and spec, owned by the controller.
func podFromTemplate(t *v1.PodTemplateSpec, owner *metav1.ObjectMeta, gvk schema.GroupVersionKind) *v1.Pod {
	p := &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   owner.Namespace,
			Labels:      withLabels(nil, t.Labels),
			Annotations: maps.Clone(t.Annotations),
			Finalizers:  append([]string(nil), t.Finalizers...),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.Name, UID: owner.UID,
				Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true),
			}},
		},
		Spec: *t.Spec.DeepCopy(),
	}
	return p
}

func ptrTo[T any](v T) *T { return &v }

// withLabels returns a new map of a's entries overwritten by b's.
func withLabels(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func withLabel(a map[string]string, k, v string) map[string]string {
	return withLabels(a, map[string]string{k: v})
}

// computeHash is the controllers' ComputeHash: fnv32a of the template's
// dump.ForHash, then the collision count, safely encoded. The template
// here has only the defaults the simulator applies, so the value can
// differ from the one a real cluster shows for the same manifest.
func computeHash(t *v1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*t))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// defaultWorkload applies what the API server's defaulting and the
// workload's registry strategy set and the expansion reads: the default
// namespace, a UID, and a Job's generated selector labels.
func defaultWorkload(obj interface{}) {
	var m *metav1.ObjectMeta
	var kind string
	switch o := obj.(type) {
	case *appsv1.Deployment:
		m, kind = &o.ObjectMeta, "deployment"
	case *appsv1.ReplicaSet:
		m, kind = &o.ObjectMeta, "replicaset"
	case *appsv1.StatefulSet:
		m, kind = &o.ObjectMeta, "statefulset"
	case *appsv1.DaemonSet:
		m, kind = &o.ObjectMeta, "daemonset"
	case *v1.ReplicationController:
		m, kind = &o.ObjectMeta, "replicationcontroller"
		// An RC's selector and template labels default to each other.
		if o.Spec.Template != nil && len(o.Spec.Selector) == 0 {
			o.Spec.Selector = withLabels(nil, o.Spec.Template.Labels)
		}
	case *batchv1.Job:
		m, kind = &o.ObjectMeta, "job"
	case *batchv1.CronJob:
		m, kind = &o.ObjectMeta, "cronjob"
	default:
		return
	}
	if m.Namespace == "" {
		m.Namespace = v1.NamespaceDefault
	}
	if m.UID == "" {
		m.UID = types.UID(kind + "-" + m.Namespace + "-" + m.Name)
	}
	if j, ok := obj.(*batchv1.Job); ok && (j.Spec.ManualSelector == nil || !*j.Spec.ManualSelector) {
		// The Job strategy's generated selector: the controller-uid and
		// job-name labels, and their legacy names.
		l := map[string]string{
			batchv1.ControllerUidLabel: string(j.UID), legacyControllerUID: string(j.UID),
			batchv1.JobNameLabel: j.Name, legacyJobNameLabel: j.Name,
		}
		j.Spec.Template.Labels = withLabels(j.Spec.Template.Labels, l)
		if j.Spec.Selector == nil {
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: string(j.UID)}}
		}
	}
}

// namer gives generated names: prefix plus five characters, as the API
// server's generateName does, but drawn from a hash of the prefix and a
// counter so the same input gives the same names; a name in use is
// skipped.
type namer struct {
	taken map[string]bool // namespace/name
	next  map[string]int  // namespace/prefix -> counter
}

const maxGeneratedNameLength = 63 - 5

// name sets the pod's generateName and name.
func (n *namer) name(p *v1.Pod, prefix string) {
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength]
	}
	p.GenerateName = prefix
	p.Name = n.generate(p.Namespace, prefix)
}

func (n *namer) generate(ns, prefix string) string {
	const alphanums = "bcdfghjklmnpqrstvwxz2456789"
	for {
		i := n.next[ns+"/"+prefix]
		n.next[ns+"/"+prefix] = i + 1
		h := fnv.New64a()
		h.Write([]byte(ns + "/" + prefix))
		binary.Write(h, binary.LittleEndian, int64(i))
		x := h.Sum64()
		b := make([]byte, 5)
		for j := range b {
			b[j] = alphanums[x%uint64(len(alphanums))]
			x /= uint64(len(alphanums))
		}
		name := prefix + string(b)
		if !n.taken[ns+"/"+name] {
			n.taken[ns+"/"+name] = true
			return name
		}
	}
}
