package realgen

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// room is what is left of a node for the running pods the generator
// places.
type room struct {
	node        *v1.Node
	cpu, memory int64 // millicores, bytes
	pods        int64
	// alone are the workloads with required hostname anti-affinity
	// against themselves that have a pod here.
	alone map[string]bool
}

// run writes the pods already running: a pod of every DaemonSet on each
// node, then, workload by workload, Options.Running of each Deployment's
// replicas (owned by a ReplicaSet of the Deployment, written too) and of
// each StatefulSet's without claims (its first ordinals), each bound to a
// random node it fits on (requests, pod count, node selector and
// affinity, required hostname anti-affinity against its own pods), as a
// cluster that has run for a while is filled. A pod that fits on no node
// is left to be created pending. It counts the pods the cluster will
// have.
func (g *generator) run(objs []runtime.Object) []runtime.Object {
	rooms := make([]*room, len(g.nodes))
	for i, n := range g.nodes {
		a := n.Status.Allocatable
		rooms[i] = &room{node: n, cpu: a.Cpu().MilliValue(), memory: a.Memory().Value(), pods: a.Pods().Value(), alone: map[string]bool{}}
	}
	var out []runtime.Object
	for _, obj := range objs {
		ds, ok := obj.(*appsv1.DaemonSet)
		if !ok {
			continue
		}
		hash := templateHash(&ds.Spec.Template)
		for _, rm := range rooms {
			p := g.pod(ds.Namespace, ds.Name+"-", &ds.Spec.Template, ds, "DaemonSet")
			p.Labels[appsv1.ControllerRevisionHashLabelKey] = hash
			p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = "1"
			p.Spec.Affinity = pinned(p.Spec.Affinity, rm.node.Name)
			if !g.fits(p, rm, "") {
				continue
			}
			out = append(out, p)
			g.pods++
			g.daemonPods++
		}
	}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *appsv1.Deployment:
			rs := replicaSet(o)
			out = append(out, rs)
			want := deref(o.Spec.Replicas)
			g.pods += int(want)
			for range g.runningOf(want) {
				p := g.pod(rs.Namespace, rs.Name+"-", &rs.Spec.Template, rs, "ReplicaSet")
				if g.place(p, rooms, alone(o.Namespace+"/"+o.Name, &o.Spec.Template)) {
					out = append(out, p)
				}
			}
		case *appsv1.StatefulSet:
			want := deref(o.Spec.Replicas)
			g.pods += int(want)
			if len(o.Spec.VolumeClaimTemplates) > 0 {
				continue // their claims are provisioned as they are created
			}
			for i := range g.runningOf(want) {
				p := g.pod(o.Namespace, "", &o.Spec.Template, o, "StatefulSet")
				p.Name = fmt.Sprintf("%s-%d", o.Name, i)
				p.UID = uid("Pod", p)
				p.Labels[appsv1.StatefulSetPodNameLabel] = p.Name
				p.Labels[appsv1.PodIndexLabel] = fmt.Sprint(i)
				p.Labels[appsv1.ControllerRevisionHashLabelKey] = o.Name + "-" + templateHash(&o.Spec.Template)
				p.Spec.Hostname, p.Spec.Subdomain = p.Name, o.Spec.ServiceName
				if !g.place(p, rooms, alone(o.Namespace+"/"+o.Name, &o.Spec.Template)) {
					break // an ordered StatefulSet waits for the pod before
				}
				out = append(out, p)
			}
		case *batchv1.Job:
			g.pods += int(deref(o.Spec.Parallelism))
		}
	}
	return out
}

// runningOf is how many of want replicas run.
func (g *generator) runningOf(want int32) int {
	return int(math.Round(float64(want) * g.o.Running))
}

// alone is the workload key when its pods repel each other per node
// (required anti-affinity on the hostname that selects its own pods),
// "" otherwise.
func alone(key string, t *v1.PodTemplateSpec) string {
	a := t.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return ""
	}
	for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err == nil && term.TopologyKey == v1.LabelHostname && sel.Matches(labels.Set(t.Labels)) {
			return key
		}
	}
	return ""
}

// place binds p to a random node it fits on: a few random draws, then
// every node from a random one.
func (g *generator) place(p *v1.Pod, rooms []*room, alone string) bool {
	for try := 0; try < 20; try++ {
		if g.fits(p, rooms[g.r.Intn(len(rooms))], alone) {
			return true
		}
	}
	start := g.r.Intn(len(rooms))
	for i := range rooms {
		if g.fits(p, rooms[(start+i)%len(rooms)], alone) {
			return true
		}
	}
	delete(g.taken, p.Namespace+"/"+p.Name)
	return false
}

// fits binds p to rm's node if it fits there, taking the room.
func (g *generator) fits(p *v1.Pod, rm *room, alone string) bool {
	req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	cpu, mem := req.Cpu().MilliValue(), req.Memory().Value()
	if rm.pods < 1 || rm.cpu < cpu || rm.memory < mem || (alone != "" && rm.alone[alone]) {
		return false
	}
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(p).Match(rm.node); !ok {
		return false
	}
	rm.pods--
	rm.cpu -= cpu
	rm.memory -= mem
	if alone != "" {
		rm.alone[alone] = true
	}
	p.Spec.NodeName = rm.node.Name
	p.Status.Phase = v1.PodRunning
	g.running++
	return true
}

// pod is a pod of template t owned by owner (kind), named prefix and
// five random characters (the API server's generateName) unless the
// caller names it.
func (g *generator) pod(ns, prefix string, t *v1.PodTemplateSpec, owner metav1.Object, kind string) *v1.Pod {
	p := &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
	p.Namespace = ns
	p.Labels = map[string]string{}
	for k, v := range t.Labels {
		p.Labels[k] = v
	}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(),
		UID: uid(kind, owner), Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
	if prefix != "" {
		for {
			p.Name = prefix + suffix(g.r, 5)
			if !g.taken[ns+"/"+p.Name] {
				break
			}
		}
		g.taken[ns+"/"+p.Name] = true
	}
	p.UID = uid("Pod", p)
	return p
}

const alphabet = "bcdfghjklmnpqrstvwxz2456789"

func suffix(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.Intn(len(alphabet))]
	}
	return string(b)
}

// templateHash is a pod template's hash as the controllers name it.
func templateHash(t *v1.PodTemplateSpec) string {
	h := fnv.New32a()
	b, _ := json.Marshal(t)
	h.Write(b)
	return utilrand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// replicaSet is Deployment d's current ReplicaSet, as the Deployment
// controller makes it.
func replicaSet(d *appsv1.Deployment) *appsv1.ReplicaSet {
	if d.UID == "" {
		d.UID = uid("Deployment", d)
	}
	hash := templateHash(&d.Spec.Template)
	with := func(m map[string]string) map[string]string {
		out := map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	rs := &appsv1.ReplicaSet{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: d.Name + "-" + hash, Namespace: d.Namespace, Labels: with(d.Spec.Template.Labels),
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "1"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID,
				Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: d.Spec.Replicas, MinReadySeconds: d.Spec.MinReadySeconds, Template: *d.Spec.Template.DeepCopy()},
	}
	rs.UID = uid("ReplicaSet", rs)
	rs.Spec.Template.Labels = with(d.Spec.Template.Labels)
	if d.Spec.Selector != nil {
		rs.Spec.Selector = d.Spec.Selector.DeepCopy()
		rs.Spec.Selector.MatchLabels = with(d.Spec.Selector.MatchLabels)
	}
	return rs
}

// pinned is a DaemonSet pod's affinity: the template's, with its node
// required by name, as the DaemonSet controller pins it.
func pinned(a *v1.Affinity, node string) *v1.Affinity {
	if a == nil {
		a = &v1.Affinity{}
	}
	a = a.DeepCopy()
	term := v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}
	a.NodeAffinity = &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{term}}}
	return a
}
