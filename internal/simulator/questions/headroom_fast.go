package questions

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/cluster/memory"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	"github.com/kubesched/kubesched/pkg/framework"
)

// The headroom of most workloads needs no replica placed one at a time.
//
// When nothing but the node a replica lands on decides where the next
// one fits (its requests, its pod slot, its host ports, its required
// anti-affinity to itself per hostname, claims any node provisions; the
// rest of the cluster stays as it is), each node takes a number of
// replicas of its own, k, whatever the order the scheduler places them
// in: a replica fits on a node while fewer than k are there, so
// one-at-a-time placement stops after exactly the sum of the k, with
// every node holding its k. That sum is the answer, and the next
// replica's reason is its FitError in that one state. The k are counted
// from the scheduler's own view of each node (its NodeInfo: allocatable,
// requested, pods, by NodeResourcesFit's arithmetic), on the nodes where
// the scheduler finds a replica feasible now (Scheduler.Explain: taints,
// affinity, ports, every filter). A sum past the limit is the answer as
// it stands; under it, each node is given its k replicas at once and the
// scheduler attempts one more, whose FitError is the reason (were it
// placed, the count would be wrong: the workload is then counted one
// replica at a time), and the world is left as it was.
//
// That holds only in a world the per-workload simulation would have
// reached too (settled): every pod placed at its first attempt, no
// preemption, no virtual time gone by (no pod finished, no backoff), the
// queue empty. capacity's change to each workload (its pods never
// preempt; a Job's completions cleared) changes nothing there: no
// PostFilter ran, and a Job whose completions bound its parallelism, or
// that has finished pods, is counted one replica at a time.

// fastFilters are the Filter plugins whose verdict for a replica on a
// node depends only on that node and on pods that stay where they are,
// for the pods fastPod admits.
var fastFilters = map[string]bool{
	"NodeUnschedulable": true, "NodeName": true, "TaintToleration": true, "NodeAffinity": true, "NodePorts": true,
	"NodeResourcesFit": true, "VolumeRestrictions": true, "NodeVolumeLimits": true, "VolumeBinding": true,
	"VolumeZone": true, "PodTopologySpread": true, "InterPodAffinity": true, "DynamicResources": true,
	"NodeDeclaredFeatures": true, "GangScheduling": true, "PodGroupPodsCount": true,
}

// shapes is what the manifests and the configuration say, before any
// simulation, of whether a workload's replicas may be counted from the
// settled world.
type shapes struct {
	c *cluster.Cluster
	// why is why no workload may be ("": they may).
	why string
	// uniqueHosts: every node has a hostname label of its own.
	uniqueHosts bool
	// hardDefaults: a profile's default topology spread constraints
	// include one that does not schedule.
	hardDefaults bool
}

// newShapes looks at the loaded cluster c and the scheduler's
// configuration cfg (nil: unknown, nothing is counted from the settled
// world).
func newShapes(c *cluster.Cluster, cfg *configv1.KubeSchedulerConfiguration) *shapes {
	s := &shapes{c: c, uniqueHosts: true}
	switch {
	case cfg == nil:
		s.why = "no configuration"
	case len(cfg.Extenders) > 0:
		s.why = "extenders"
	case len(c.PodGroups) > 0:
		s.why = "pod groups"
	}
	if s.why != "" {
		return s
	}
	for _, p := range cfg.Profiles {
		for _, pc := range p.PluginConfig {
			switch a := pc.Args.Object.(type) {
			case *configv1.PodTopologySpreadArgs:
				for _, c := range a.DefaultConstraints {
					if c.WhenUnsatisfiable == v1.DoNotSchedule {
						s.hardDefaults = true
					}
				}
			case *configv1.NodeResourcesFitArgs:
				if len(a.IgnoredResources) > 0 || len(a.IgnoredResourceGroups) > 0 {
					s.why = "ignored resources"
				}
			}
		}
	}
	hosts := map[string]bool{}
	for _, n := range c.Nodes {
		h := n.Labels[v1.LabelHostname]
		if h == "" || hosts[h] {
			s.uniqueHosts = false
		}
		hosts[h] = true
	}
	return s
}

// alone: workload wl is counted one replica at a time whatever the
// settled world holds (its kind, its pod template, its claims' classes).
func (s *shapes) alone(wl cluster.Workload) bool {
	if s.why != "" {
		return true
	}
	i := s.c.WorkloadIndex(wl.Kind, wl.Namespace, wl.Name)
	claimed, ok := s.kind(i)
	if !ok {
		return true
	}
	var t *v1.PodTemplateSpec
	switch o := s.c.WorkloadObject(i).(type) {
	case *appsv1.Deployment:
		t = &o.Spec.Template
	case *appsv1.ReplicaSet:
		t = &o.Spec.Template
	case *appsv1.StatefulSet:
		t = &o.Spec.Template
	case *batchv1.Job:
		t = &o.Spec.Template
	case *v1.ReplicationController:
		t = o.Spec.Template
	}
	if t == nil {
		return true
	}
	_, ok = s.spec(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: wl.Namespace, Labels: t.Labels}, Spec: t.Spec}, claimed)
	return !ok
}

// kind: the workload of index i (WorkloadIndex) is of a kind whose
// replicas may be counted from the settled world, and the volumes that
// are its claims (a StatefulSet's templates', fastClaims).
func (s *shapes) kind(i int) (claimed map[string]bool, ok bool) {
	claimed = map[string]bool{}
	switch o := s.c.WorkloadObject(i).(type) {
	case *appsv1.Deployment:
		return claimed, len(s.c.ReplicaSetsOf(o.Namespace, o.Name)) == 1
	case *appsv1.ReplicaSet, *v1.ReplicationController:
		return claimed, true
	case *appsv1.StatefulSet:
		claimed = fastClaims(s.c, o)
		return claimed, claimed != nil
	case *batchv1.Job:
		// The Job's want: its parallelism, with or without its
		// completions; no finished pod, no index, no CronJob.
		return claimed, o.Status.Succeeded == 0 && o.Status.Failed == 0 && (o.Spec.Suspend == nil || !*o.Spec.Suspend) &&
			(o.Spec.CompletionMode == nil || *o.Spec.CompletionMode != batchv1.IndexedCompletion) &&
			(o.Spec.Completions == nil || *o.Spec.Completions >= deref32(o.Spec.Parallelism)) && metav1.GetControllerOf(o) == nil
	}
	return nil, false
}

// spec: replicas of pod may be counted from the settled world (see
// above), and whether they repel each other per node (required
// anti-affinity to themselves by hostname).
func (s *shapes) spec(pod *v1.Pod, claimed map[string]bool) (alone, ok bool) {
	spec := &pod.Spec
	if len(spec.SchedulingGates) > 0 || len(spec.ResourceClaims) > 0 || framework.PodGroupName(pod) != "" || spec.NodeName != "" {
		return false, false
	}
	for _, v := range spec.Volumes {
		vs := v.VolumeSource
		if !claimed[v.Name] && vs.EmptyDir == nil && vs.ConfigMap == nil && vs.Secret == nil && vs.DownwardAPI == nil && vs.Projected == nil && vs.HostPath == nil {
			return false, false
		}
	}
	if req, _, _ := framework.PodSpecRequests(pod); len(req.Scalar) > 0 {
		return false, false
	}
	for _, c := range spec.TopologySpreadConstraints {
		if c.WhenUnsatisfiable == v1.DoNotSchedule {
			return false, false
		}
	}
	if len(spec.TopologySpreadConstraints) == 0 && s.hardDefaults {
		return false, false
	}
	a := spec.Affinity
	if a == nil {
		return false, true
	}
	if a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
		return false, false
	}
	if a.PodAntiAffinity == nil {
		return false, true
	}
	for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if t.TopologyKey != v1.LabelHostname || t.NamespaceSelector != nil || !s.uniqueHosts {
			return false, false
		}
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil {
			return false, false
		}
		inNamespace := len(t.Namespaces) == 0 || slices.Contains(t.Namespaces, pod.Namespace)
		if inNamespace && sel.Matches(labels.Set(pod.Labels)) {
			alone = true
		}
	}
	return alone, true
}

// settled is the world simulated once for every workload's headroom.
type settled struct {
	shapes
	w *simulator.World
}

// newSettled looks at the world w, run to its end: whether the
// per-workload simulations would have reached it too, and whether its
// profiles' filters are those this reckoning knows.
func newSettled(w *simulator.World, sh *shapes) *settled {
	s := &settled{shapes: *sh, w: w}
	if s.why != "" {
		return s
	}
	total, bound, _ := w.Progress()
	active, backoff, unschedulable := w.Scheduler.Queue.Counts()
	switch {
	case w.Stopped() != nil:
		s.why = "stopped"
	case w.Attempts() != bound || total != bound:
		s.why = "some pod was not placed at its first attempt"
	case !w.Clock.Now().Equal(simulator.Epoch):
		s.why = "virtual time went by"
	case active+backoff+unschedulable > 0 || len(w.Store.Evicted) > 0:
		s.why = "pods wait or were evicted"
	}
	for name, fwk := range w.Scheduler.Profiles {
		for _, f := range fwk.ListPlugins()["Filter"] {
			if !fastFilters[f] {
				s.why = fmt.Sprintf("profile %s's Filter plugin %s", name, f)
			}
		}
	}
	return s
}

// headroom counts workload wl's headroom from the settled world, up to
// limit: ok false when it cannot be counted so (the workload is counted
// one replica at a time in a world of its own).
func (s *settled) headroom(ctx context.Context, wl cluster.Workload, limit int) (more int, reason string, ok bool, err error) {
	if s.why != "" {
		return 0, "", false, nil
	}
	w := s.w
	i := w.Cluster.WorkloadIndex(wl.Kind, wl.Namespace, wl.Name)
	sample, alone, claimed := s.fastPod(i, wl)
	if sample == nil {
		return 0, "", false, nil
	}
	// The replica to come as the scheduler sees it, its claims left out:
	// they are made for it, unbound, and any node provisions them
	// (fastClaims).
	replica := sample.DeepCopy()
	replica.Name += "-headroom"
	replica.UID = types.UID(string(sample.UID) + "-headroom")
	replica.Spec.NodeName = ""
	never := v1.PreemptNever
	replica.Spec.PreemptionPolicy = &never
	replica.Status = v1.PodStatus{}
	replica.Spec.Volumes = slices.DeleteFunc(replica.Spec.Volumes, func(v v1.Volume) bool { return claimed[v.Name] })
	ex, err := w.Scheduler.Explain(ctx, replica)
	if err != nil {
		return 0, "", false, err
	}
	req, _, _ := framework.PodSpecRequests(replica)
	ports := hasHostPorts(replica)
	infos := w.Scheduler.Cache.Dump()
	room := map[string]int{}
	total := 0
	for _, v := range ex.Nodes {
		if !v.Feasible {
			continue
		}
		ni := infos[v.Name]
		if ni == nil {
			return 0, "", false, nil
		}
		k := nodeRoom(ni, &req)
		if (ports || alone) && k > 1 {
			k = 1
		}
		if k < 1 {
			return 0, "", false, nil // feasible, yet no room by the count: not this reckoning's case
		}
		room[v.Name] = k
		total += k
	}
	if total >= limit {
		return limit, fmt.Sprintf("stopped at --max %d; more may fit", limit), true, nil
	}
	msg, ok, err := s.nextReplica(ctx, i, wl, replica, room)
	return total, msg, ok, err
}

// nodeRoom is how many pods requesting req the node still takes, by
// NodeResourcesFit's arithmetic: its pod slots, and each resource the
// pod requests.
func nodeRoom(ni *framework.NodeInfo, req *framework.Resource) int {
	a, r := ni.Allocatable(), ni.Requested()
	k := a.AllowedPodNumber - int64(len(ni.Pods()))
	for _, c := range [][3]int64{{req.MilliCPU, a.MilliCPU, r.MilliCPU}, {req.Memory, a.Memory, r.Memory}, {req.EphemeralStorage, a.EphemeralStorage, r.EphemeralStorage}} {
		if c[0] > 0 {
			k = min(k, (c[1]-c[2])/c[0])
		}
	}
	return int(max(k, 0))
}

// fastPod is a bound pod of workload wl (of index i) whose replicas
// each node takes independently (see above), whether they repel each
// other per node, and the volumes that are its claims; nil when the
// workload is not such.
func (s *settled) fastPod(i int, wl cluster.Workload) (*v1.Pod, bool, map[string]bool) {
	w := s.w
	claimed, ok := s.kind(i)
	if !ok {
		return nil, false, nil
	}
	if j, isJob := w.Cluster.WorkloadObject(i).(*batchv1.Job); isJob && gangMembers(w, j) > 0 {
		return nil, false, nil
	}
	if len(claimed) > 0 {
		// A volume no claim holds could be bound instead of one made.
		pvs, _ := w.Store.Volumes()
		for _, pv := range pvs {
			if pv.Spec.ClaimRef == nil {
				return nil, false, nil
			}
		}
	}
	var sample *v1.Pod
	for _, p := range w.Cluster.PodsOf(wl.Kind, wl.Namespace, wl.Name, w.Live) {
		if cur, ok := w.Store.GetPod(p.Namespace, p.Name); ok && cur.UID == p.UID && cur.Spec.NodeName != "" {
			sample = cur
			break
		}
	}
	if sample == nil || !w.Scheduler.ResponsibleForPod(sample) {
		return nil, false, nil
	}
	probe := sample.DeepCopy()
	probe.Spec.NodeName = ""
	alone, ok := s.spec(probe, claimed)
	if !ok {
		return nil, false, nil
	}
	return sample, alone, claimed
}

// fastClaims are the names of StatefulSet o's claim templates when each
// replica's claims are provisioned on whichever node it lands, whatever
// the others hold: each template's class (named, else the default)
// binds when the pod is scheduled (WaitForFirstConsumer) and provisions
// anywhere (no allowed topologies), and neither a CSINode (volume
// limits), a CSIDriver nor a CSIStorageCapacity (capacity) make where a
// replica lands matter (nor, in the settled world, a volume no claim
// holds: fastPod). nil otherwise; empty for a StatefulSet without
// templates.
func fastClaims(c *cluster.Cluster, o *appsv1.StatefulSet) map[string]bool {
	claimed := map[string]bool{}
	if len(o.Spec.VolumeClaimTemplates) == 0 {
		return claimed
	}
	var classes []*storagev1.StorageClass
	for _, obj := range c.Objects() {
		switch obj := obj.(type) {
		case *storagev1.StorageClass:
			classes = append(classes, obj)
		case *storagev1.CSINode, *storagev1.CSIDriver, *storagev1.CSIStorageCapacity:
			return nil
		}
	}
	def := memory.DefaultStorageClass(classes)
	for _, t := range o.Spec.VolumeClaimTemplates {
		sc := def
		if t.Spec.StorageClassName != nil {
			sc = nil
			for _, c := range classes {
				if c.Name == *t.Spec.StorageClassName {
					sc = c
				}
			}
		}
		if sc == nil || sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer ||
			len(sc.AllowedTopologies) > 0 || sc.Provisioner == "kubernetes.io/no-provisioner" ||
			t.Spec.Selector != nil || t.Spec.DataSource != nil || t.Spec.DataSourceRef != nil || t.Spec.VolumeName != "" {
			return nil
		}
		claimed[t.Name] = true
	}
	return claimed
}

func hasHostPorts(p *v1.Pod) bool {
	for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range cs {
			for _, port := range c.Ports {
				if port.HostPort > 0 {
					return true
				}
			}
		}
	}
	return false
}

// nextReplica is the reason the replica after the room counted does not
// fit. Each node is given the replicas its room counts (pods as the
// replica, bound there at once, no scheduling cycle: the state
// one-at-a-time placement ends in, whatever its order), then the workload
// is scaled up by one and the scheduler attempts that replica: its
// FitError is the reason (ok), unless it is placed (the count was wrong:
// not ok). The world is then left as it was.
func (s *settled) nextReplica(ctx context.Context, i int, wl cluster.Workload, replica *v1.Pod, room map[string]int) (reason string, ok bool, err error) {
	w := s.w
	var held []*v1.Pod
	defer func() {
		for _, p := range held {
			if derr := w.Store.DeletePod(p.Namespace, p.Name); derr != nil && err == nil {
				err = derr
			}
		}
		w.Store.Flush()
	}()
	nodes := make([]string, 0, len(room))
	for n := range room {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	for _, n := range nodes {
		for range room[n] {
			p := replica.DeepCopy()
			p.Name = fmt.Sprintf("%s-%d", replica.Name, len(held))
			p.UID = types.UID(fmt.Sprintf("%s-%d", replica.UID, len(held)))
			p.Spec.NodeName = n
			p.Status.Phase = v1.PodRunning
			if err := w.Store.AddPod(p); err != nil {
				return "", false, err
			}
			held = append(held, p)
		}
	}
	replicas, undo, err := neverPreempt(w, i, wl)
	if err != nil {
		return "", false, err
	}
	defer undo()
	was := replicas()
	before := w.Cluster.LiveCount(wl.Kind, wl.Namespace, wl.Name)
	marks := map[string]int{}
	w.Cluster.PodsOfSince(wl.Kind, wl.Namespace, wl.Name, w.Live, marks)
	scaleTo := func(n int32) error {
		step := &cluster.Step{Name: "capacity", Scale: []cluster.ScaleRef{{Kind: wl.Kind, Namespace: wl.Namespace, Name: wl.Name, Replicas: n}}}
		if err := timeline.Apply(w, step, &report.StepResult{}); err != nil {
			return err
		}
		w.Store.Flush()
		return w.ScheduleNow(ctx)
	}
	if err := scaleTo(was + 1); err != nil {
		return "", false, err
	}
	added := w.Cluster.PodsOfSince(wl.Kind, wl.Namespace, wl.Name, w.Live, marks)
	if len(added) == 1 && added[0].Spec.NodeName == "" {
		if _, created := w.Store.GetPod(added[0].Namespace, added[0].Name); created {
			reason, ok = replicaMessage(added[0]), true
		}
	}
	if err := scaleTo(was); err != nil {
		return "", false, err
	}
	if now := w.Cluster.LiveCount(wl.Kind, wl.Namespace, wl.Name); now != before {
		return "", false, fmt.Errorf("%s: %d pods once scaled back, %d before", wl, now, before)
	}
	return reason, ok, nil
}
