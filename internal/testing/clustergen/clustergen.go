// Package clustergen generates realistic clusters as Kubernetes objects,
// deterministically from a seed: zones, node pools of a few shapes, a
// tainted GPU pool, a spot pool, priority classes, and apps whose pods use
// requests, priorities, selectors, node affinity, tolerations and host ports.
// The bundled example and the large benchmarks come from here.
package clustergen

import (
	"fmt"
	"hash/fnv"
	"math/rand"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Options size the cluster.
type Options struct {
	Nodes int
	Pods  int
	// RunningFraction of the pods are already bound (spec.nodeName set).
	RunningFraction float64
	Seed            int64
	// Zones, default 3.
	Zones int
	// Workload is "" (a mix of apps), "anti-affinity" (20 deployments whose
	// pods repel each other per node with required anti-affinity) or
	// "spread" (20 deployments spread over zones with DoNotSchedule and
	// over nodes with ScheduleAnyway topology spread constraints) or
	// "service" (20 deployments behind Services, no constraints: the
	// system default spreading applies).
	Workload string
	// Owned gives every pod a controller, so that a drain may evict it:
	// one ReplicaSet per app and namespace (not in the output: it stands
	// for a controller the cluster runs), whose name the pods' names
	// start with.
	Owned bool
}

// Workloads are the values of Options.Workload.
var Workloads = []string{"", "anti-affinity", "spread", "service"}

// deploymentPod is a small stateless pod of deployment d, shaped by the
// workload.
func deploymentPod(workload string, d int, r *rand.Rand) *v1.Pod {
	app := fmt.Sprintf("svc-%02d", d)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	p := &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%s", app, suffix(r, 8), suffix(r, 5)), Namespace: "prod", Labels: map[string]string{"app": app}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: app, Image: "registry.example.com/" + app + ":1.0",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi")}}}}},
	}
	switch workload {
	case "anti-affinity":
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
			{LabelSelector: sel, TopologyKey: v1.LabelHostname}}}}
	case "spread":
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: sel},
			{MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: sel},
		}
	}
	return p
}

type shape struct {
	pool, instance string
	cpu, memory    string
	gpus           int
	taint          *v1.Taint
	weight         int
}

var shapes = []shape{
	{pool: "general", instance: "m6i.2xlarge", cpu: "8", memory: "32Gi", weight: 5},
	{pool: "compute", instance: "c6i.8xlarge", cpu: "32", memory: "64Gi", weight: 3},
	{pool: "memory", instance: "r6i.4xlarge", cpu: "16", memory: "128Gi", weight: 2},
	{pool: "spot", instance: "m6i.4xlarge", cpu: "16", memory: "64Gi", weight: 1, taint: &v1.Taint{Key: "lifecycle", Value: "spot", Effect: v1.TaintEffectPreferNoSchedule}},
	{pool: "gpu", instance: "g5.4xlarge", cpu: "16", memory: "64Gi", gpus: 4, weight: 1, taint: &v1.Taint{Key: "nvidia.com/gpu", Value: "present", Effect: v1.TaintEffectNoSchedule}},
}

type app struct {
	name, namespace, priorityClass string
	cpu, memory                    string
	gpus                           int
	weight                         int
	mutate                         func(p *v1.Pod, r *rand.Rand)
}

func required(key string, values ...string) *v1.NodeSelector {
	return &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}}}
}

func preferred(weight int32, key string, values ...string) []v1.PreferredSchedulingTerm {
	return []v1.PreferredSchedulingTerm{{Weight: weight, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}}}
}

var apps = []app{
	{name: "web", namespace: "prod", priorityClass: "high", cpu: "250m", memory: "256Mi", weight: 6, mutate: func(p *v1.Pod, _ *rand.Rand) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: preferred(50, "pool", "general")}}
	}},
	{name: "api", namespace: "prod", priorityClass: "high", cpu: "500m", memory: "1Gi", weight: 5, mutate: func(p *v1.Pod, _ *rand.Rand) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required("pool", "general", "compute")}}
	}},
	{name: "cache", namespace: "prod", priorityClass: "high", cpu: "500m", memory: "8Gi", weight: 2, mutate: func(p *v1.Pod, _ *rand.Rand) {
		p.Spec.NodeSelector = map[string]string{"pool": "memory"}
	}},
	{name: "ingress", namespace: "prod", priorityClass: "critical", cpu: "200m", memory: "128Mi", weight: 1, mutate: func(p *v1.Pod, _ *rand.Rand) {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 8443, HostPort: 8443, Protocol: v1.ProtocolTCP}}
	}},
	{name: "worker", namespace: "batch", priorityClass: "batch", cpu: "1", memory: "2Gi", weight: 4, mutate: func(p *v1.Pod, _ *rand.Rand) {
		p.Spec.Tolerations = []v1.Toleration{{Key: "lifecycle", Operator: v1.TolerationOpEqual, Value: "spot", Effect: v1.TaintEffectPreferNoSchedule}}
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: preferred(80, "pool", "spot", "compute")}}
	}},
	{name: "staging-web", namespace: "staging", priorityClass: "", cpu: "100m", memory: "128Mi", weight: 3, mutate: func(p *v1.Pod, r *rand.Rand) {
		if r.Intn(3) == 0 {
			p.Spec.Containers[0].Resources = v1.ResourceRequirements{} // best effort
		}
	}},
	{name: "trainer", namespace: "ml", priorityClass: "batch", cpu: "3", memory: "16Gi", gpus: 2, weight: 1, mutate: func(p *v1.Pod, _ *rand.Rand) {
		p.Spec.Tolerations = []v1.Toleration{{Key: "nvidia.com/gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	}},
	{name: "inference", namespace: "ml", priorityClass: "high", cpu: "2", memory: "8Gi", gpus: 1, weight: 1, mutate: func(p *v1.Pod, _ *rand.Rand) {
		p.Spec.Tolerations = []v1.Toleration{{Key: "nvidia.com/gpu", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required("pool", "gpu")}}
	}},
}

const alphabet = "bcdfghjklmnpqrstvwxz2456789"

func suffix(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.Intn(len(alphabet))]
	}
	return string(b)
}

func pick[T any](r *rand.Rand, items []T, weight func(T) int) T {
	total := 0
	for _, it := range items {
		total += weight(it)
	}
	n := r.Intn(total)
	for _, it := range items {
		if n < weight(it) {
			return it
		}
		n -= weight(it)
	}
	return items[len(items)-1]
}

// Generate returns the objects: PriorityClasses, Namespaces, Nodes, then Pods.
func Generate(o Options) []runtime.Object {
	if o.Zones == 0 {
		o.Zones = 3
	}
	r := rand.New(rand.NewSource(o.Seed))
	var objs []runtime.Object
	for _, pc := range []struct {
		name  string
		value int32
		def   bool
	}{{"critical", 1000000, false}, {"high", 10000, false}, {"default", 1000, true}, {"batch", 100, false}} {
		objs = append(objs, &schedulingv1.PriorityClass{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta: metav1.ObjectMeta{Name: pc.name}, Value: pc.value, GlobalDefault: pc.def})
	}
	for _, ns := range []string{"prod", "staging", "batch", "ml"} {
		objs = append(objs, &v1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kubernetes.io/metadata.name": ns, "team": ns}}})
	}
	var nodes []*v1.Node
	usedNames := map[string]bool{}
	for i := 0; i < o.Nodes; i++ {
		s := shapes[i%len(shapes)]
		if i >= len(shapes) {
			s = pick(r, shapes, func(s shape) int { return s.weight })
		}
		zone := fmt.Sprintf("eu-west-1%c", 'a'+rune(i%o.Zones))
		name := fmt.Sprintf("%s-%c-%s", s.pool, 'a'+rune(i%o.Zones), suffix(r, 5))
		for usedNames[name] { // a large cluster draws a suffix twice
			name = fmt.Sprintf("%s-%c-%s", s.pool, 'a'+rune(i%o.Zones), suffix(r, 5))
		}
		usedNames[name] = true
		capacity := v1.ResourceList{
			v1.ResourceCPU:              resource.MustParse(s.cpu),
			v1.ResourceMemory:           resource.MustParse(s.memory),
			v1.ResourcePods:             resource.MustParse("110"),
			v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
		}
		if s.gpus > 0 {
			capacity["nvidia.com/gpu"] = *resource.NewQuantity(int64(s.gpus), resource.DecimalSI)
		}
		alloc := capacity.DeepCopy()
		cpu := alloc[v1.ResourceCPU]
		cpu.Sub(resource.MustParse("110m"))
		alloc[v1.ResourceCPU] = cpu
		mem := alloc[v1.ResourceMemory]
		mem.Sub(resource.MustParse("1Gi"))
		alloc[v1.ResourceMemory] = mem
		n := &v1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				v1.LabelHostname: name, v1.LabelTopologyZone: zone, v1.LabelTopologyRegion: "eu-west-1",
				v1.LabelInstanceTypeStable: s.instance, "pool": s.pool, v1.LabelOSStable: "linux", v1.LabelArchStable: "amd64",
			}},
			Status: v1.NodeStatus{Capacity: capacity, Allocatable: alloc,
				Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}},
		}
		if s.taint != nil {
			n.Spec.Taints = []v1.Taint{*s.taint}
		}
		if i == 7 {
			n.Spec.Unschedulable = true // one cordoned node
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule})
		}
		nodes = append(nodes, n)
		objs = append(objs, n)
	}
	if o.Workload == "service" {
		for d := 0; d < 20; d++ {
			app := fmt.Sprintf("svc-%02d", d)
			objs = append(objs, &v1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: "prod"},
				Spec:       v1.ServiceSpec{Selector: map[string]string{"app": app}, Ports: []v1.ServicePort{{Port: 80}}}})
		}
	}
	running := int(float64(o.Pods) * o.RunningFraction)
	used := make([]v1.ResourceList, len(nodes))
	for i := 0; i < o.Pods; i++ {
		if o.Workload != "" {
			p := deploymentPod(o.Workload, i%20, r)
			if i < running {
				placeRunning(p, nodes, used, r)
			}
			objs = append(objs, p)
			continue
		}
		a := pick(r, apps, func(a app) int { return a.weight })
		name := fmt.Sprintf("%s-%s-%s", a.name, suffix(r, 8), suffix(r, 5))
		for usedNames[a.namespace+"/"+name] {
			name = fmt.Sprintf("%s-%s-%s", a.name, suffix(r, 8), suffix(r, 5))
		}
		usedNames[a.namespace+"/"+name] = true
		req := v1.ResourceList{v1.ResourceCPU: resource.MustParse(a.cpu), v1.ResourceMemory: resource.MustParse(a.memory)}
		lim := v1.ResourceList{v1.ResourceMemory: resource.MustParse(a.memory)}
		if a.gpus > 0 {
			q := *resource.NewQuantity(int64(a.gpus), resource.DecimalSI)
			req["nvidia.com/gpu"], lim["nvidia.com/gpu"] = q, q
		}
		p := &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: a.namespace, Labels: map[string]string{"app": a.name}},
			Spec: v1.PodSpec{PriorityClassName: a.priorityClass, Containers: []v1.Container{{
				Name: a.name, Image: "registry.example.com/" + a.name + ":1.0",
				Resources: v1.ResourceRequirements{Requests: req, Limits: lim}}}},
		}
		if a.mutate != nil {
			a.mutate(p, r)
		}
		if i < running {
			placeRunning(p, nodes, used, r)
		}
		objs = append(objs, p)
	}
	if o.Owned {
		own(objs)
	}
	return objs
}

// placeRunning binds a pod to a random node with room, as if it had been
// scheduled earlier (ignoring affinity, like a cluster that changed since).
func placeRunning(p *v1.Pod, nodes []*v1.Node, used []v1.ResourceList, r *rand.Rand) {
	req := p.Spec.Containers[0].Resources.Requests
	for try := 0; try < 20; try++ {
		i := r.Intn(len(nodes))
		n := nodes[i]
		if len(n.Spec.Taints) > 0 && p.Spec.Tolerations == nil {
			continue
		}
		if _, ok := req["nvidia.com/gpu"]; ok && n.Labels["pool"] != "gpu" {
			continue
		}
		if used[i] == nil {
			used[i] = v1.ResourceList{}
		}
		fits := true
		for k, q := range req {
			u := used[i][k].DeepCopy()
			u.Add(q)
			if a, ok := n.Status.Allocatable[k]; !ok || u.Cmp(a) > 0 {
				fits = false
			}
		}
		if !fits {
			continue
		}
		for k, q := range req {
			u := used[i][k].DeepCopy()
			u.Add(q)
			used[i][k] = u
		}
		p.Spec.NodeName = n.Name
		p.Status.Phase = v1.PodRunning
		return
	}
}

// own gives each pod of objs a ReplicaSet controller, one per app and
// namespace as a Deployment's current ReplicaSet would be: named after the
// app and a hash of it (its pod-template-hash), each pod named after its
// ReplicaSet and the last part of its drawn name, as the ReplicaSet
// controller names them. It runs after the random draws, so that the rest
// of the output is as without it.
func own(objs []runtime.Object) {
	yes := true
	taken := map[string]bool{}
	for _, o := range objs {
		p, ok := o.(*v1.Pod)
		if !ok {
			continue
		}
		app := p.Labels["app"]
		hash := hashed(p.Namespace+"/"+app, 10)
		rs := app + "-" + hash
		last := p.Name
		if i := strings.LastIndex(last, "-"); i >= 0 {
			last = last[i+1:]
		}
		name := rs + "-" + last
		for try := 0; taken[p.Namespace+"/"+name]; try++ { // 5 drawn characters repeat at 150,000 pods
			name = rs + "-" + hashed(fmt.Sprintf("%s/%d", p.Name, try), 5)
		}
		taken[p.Namespace+"/"+name] = true
		p.Name = name
		p.Labels["pod-template-hash"] = hash
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
			UID: types.UID("replicaset-" + p.Namespace + "-" + rs), Controller: &yes}}
	}
}

// hashed is n characters of the alphabet derived from s.
func hashed(s string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	x := h.Sum64()
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[x%uint64(len(alphabet))]
		x /= uint64(len(alphabet))
		if x == 0 {
			h.Write([]byte{byte(i)})
			x = h.Sum64()
		}
	}
	return string(b)
}
