// Package perfgen generates the workloads of upstream's scheduler_perf
// (test/integration/scheduler_perf in k8s.io/kubernetes v1.37.2) as
// Kubernetes objects, under scheduler_perf's names and with its templates'
// fields (node-default: 4 CPU, 32Gi, 110 pods; pod-default: 100m, 500Mi,
// one container port...). The same definition feeds the in-memory benchmark
// (simulate's manifests) and the one against a real control plane.
//
// scheduler_perf creates its init pods through the scheduler; here they are
// created already bound, round-robin over the nodes (where upstream's
// scheduler would spread them too), so that a run measures only the
// measured pods. Node labels that scheduler_perf assigns with
// labelNodePrepareStrategy are given round-robin.
package perfgen

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Workload is one scheduler_perf test case at one size.
type Workload struct {
	// Name is scheduler_perf's test case name, Size its workload's name.
	Name, Size string
	Nodes      int
	InitPods   int
	// MeasurePods are the pods whose scheduling is timed.
	MeasurePods int
	// build returns the objects, init pods bound, measured pods pending.
	build func(w Workload) []runtime.Object
	// Churn, when set, is scheduler_perf's churn op in its recreate mode:
	// every Interval, each template's previous object is deleted and a new
	// one (a fresh name) created, while the measured pods are scheduled.
	// It needs wall time: only the real-cluster benchmark runs it.
	Churn *Churn
	// Controllers are kube-controller-manager's controllers the workload
	// needs on a real control plane (a --controllers list), e.g. the
	// resourceclaim controller that makes the claims of templates.
	Controllers string
}

// Churn is a recreate churn: templates and their period.
type Churn struct {
	Interval time.Duration
	// Templates are copied, with Name set to a new name each time.
	Templates []runtime.Object
}

// Objects returns the workload's cluster: nodes, namespaces, services,
// init pods (bound) and the measured pods (pending), in creation order.
func (w Workload) Objects() []runtime.Object { return w.build(w) }

// FullName is "SchedulingBasic/5000Nodes_10000Pods".
func (w Workload) FullName() string { return w.Name + "/" + w.Size }

// All is the suite, at scheduler_perf's "performance" sizes.
func All() []Workload {
	return []Workload{
		{Name: "SchedulingBasic", Size: "5000Nodes_10000Pods", Nodes: 5000, InitPods: 1000, MeasurePods: 10000, build: basic},
		{Name: "SchedulingPodAntiAffinity", Size: "5000Nodes_2000Pods", Nodes: 5000, InitPods: 1000, MeasurePods: 2000, build: podAntiAffinity},
		{Name: "SchedulingPodAffinity", Size: "5000Nodes_5000Pods", Nodes: 5000, InitPods: 5000, MeasurePods: 5000, build: podAffinity},
		{Name: "SchedulingNodeAffinity", Size: "5000Nodes_10000Pods", Nodes: 5000, InitPods: 5000, MeasurePods: 10000, build: nodeAffinity},
		{Name: "TopologySpreading", Size: "5000Nodes_5000Pods", Nodes: 5000, InitPods: 5000, MeasurePods: 5000, build: topologySpreading(v1.DoNotSchedule)},
		{Name: "PreferredTopologySpreading", Size: "5000Nodes_5000Pods", Nodes: 5000, InitPods: 5000, MeasurePods: 5000, build: topologySpreading(v1.ScheduleAnyway)},
		{Name: "DefaultTopologySpreading", Size: "5000Nodes_10000Pods", Nodes: 5000, InitPods: 5000, MeasurePods: 10000, build: defaultTopologySpreading},
		{Name: "PreemptionBasic", Size: "1000Nodes", Nodes: 1000, InitPods: 4000, MeasurePods: 1000, build: preemptionBasic},
		{Name: "Unschedulable", Size: "5kNodes/100Init/10kPods", Nodes: 5000, InitPods: 100, MeasurePods: 10000, build: unschedulable},
		{Name: "SchedulingWithMixedChurn", Size: "5000Nodes_10000Pods", Nodes: 5000, MeasurePods: 10000, build: basic, Churn: mixedChurn()},
	}
}

// Scaled returns w with its node and pod counts divided by div (at least
// one of each), for tests and quick runs.
func (w Workload) Scaled(div int) Workload {
	s := func(n int) int { return max(1, n/div) }
	w.Nodes, w.InitPods, w.MeasurePods = s(w.Nodes), s(w.InitPods), s(w.MeasurePods)
	w.Size = fmt.Sprintf("%dNodes_%dPods", w.Nodes, w.MeasurePods)
	return w
}

const zoneKey = "topology.kubernetes.io/zone"

// node is templates/node-default.yaml, with labels.
func node(i int, labels map[string]string) *v1.Node {
	name := fmt.Sprintf("scheduler-perf-%05d", i)
	l := map[string]string{v1.LabelHostname: name}
	for k, v := range labels {
		l[k] = v
	}
	capacity := v1.ResourceList{
		v1.ResourcePods:   resource.MustParse("110"),
		v1.ResourceCPU:    resource.MustParse("4"),
		v1.ResourceMemory: resource.MustParse("32Gi"),
	}
	return &v1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Status: v1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
			Phase:      v1.NodeRunning,
		},
	}
}

// nodes returns n nodes, labelled round-robin with zones if any are given.
func nodes(n int, zones ...string) []runtime.Object {
	out := make([]runtime.Object, 0, n)
	for i := range n {
		var l map[string]string
		if len(zones) > 0 {
			l = map[string]string{zoneKey: zones[i%len(zones)]}
		}
		out = append(out, node(i, l))
	}
	return out
}

// pod is a pause pod with the given requests (and equal limits when
// limits is set) and, as pod-default.yaml, containerPort 80.
func pod(name, namespace, cpu, memory string, limits bool) *v1.Pod {
	req := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(memory)}
	c := v1.Container{Name: "pause", Image: "registry.k8s.io/pause:3.10.2",
		Ports:     []v1.ContainerPort{{ContainerPort: 80}},
		Resources: v1.ResourceRequirements{Requests: req}}
	if limits {
		c.Resources.Limits = req.DeepCopy()
	}
	return &v1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       v1.PodSpec{Containers: []v1.Container{c}},
	}
}

// defaultPod is templates/pod-default.yaml.
func defaultPod(name, namespace string) *v1.Pod { return pod(name, namespace, "100m", "500Mi", true) }

func namespace(name string) *v1.Namespace {
	return &v1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// pods returns count pods from mk, named prefix-i; the first bound
// ones get spec.nodeName round-robin over the nodes.
func pods(count, bound, nodes int, prefix string, mk func(name string) *v1.Pod) []runtime.Object {
	out := make([]runtime.Object, 0, count)
	for i := range count {
		p := mk(fmt.Sprintf("%s-%d", prefix, i))
		if i < bound {
			p.Spec.NodeName = fmt.Sprintf("scheduler-perf-%05d", i%nodes)
			p.Status.Phase = v1.PodRunning
		}
		out = append(out, p)
	}
	return out
}

func basic(w Workload) []runtime.Object {
	out := nodes(w.Nodes)
	out = append(out, pods(w.InitPods, w.InitPods, w.Nodes, "init-pod", func(n string) *v1.Pod { return defaultPod(n, "default") })...)
	return append(out, pods(w.MeasurePods, 0, w.Nodes, "pod", func(n string) *v1.Pod { return defaultPod(n, "default") })...)
}

// podAffinityTerm is the term of the (anti-)affinity templates.
func podAffinityTerm(color, topologyKey string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": color}},
		TopologyKey:   topologyKey, Namespaces: []string{"sched-1", "sched-0"},
	}
}

// withAffinity is pod-with-pod-anti-affinity.yaml / pod-with-pod-affinity.yaml.
func withAffinity(anti bool) func(string, string) *v1.Pod {
	return func(name, ns string) *v1.Pod {
		p := defaultPod(name, ns)
		if anti {
			p.Labels = map[string]string{"color": "green"}
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{podAffinityTerm("green", v1.LabelHostname)}}}
		} else {
			p.Labels = map[string]string{"color": "blue"}
			p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{podAffinityTerm("blue", zoneKey)}}}
		}
		return p
	}
}

func twoNamespaces(w Workload, out []runtime.Object, mk func(string, string) *v1.Pod) []runtime.Object {
	out = append(out, namespace("sched-0"), namespace("sched-1"))
	out = append(out, pods(w.InitPods, w.InitPods, w.Nodes, "init-pod", func(n string) *v1.Pod { return mk(n, "sched-0") })...)
	return append(out, pods(w.MeasurePods, 0, w.Nodes, "pod", func(n string) *v1.Pod { return mk(n, "sched-1") })...)
}

func podAntiAffinity(w Workload) []runtime.Object {
	return twoNamespaces(w, nodes(w.Nodes), withAffinity(true))
}

func podAffinity(w Workload) []runtime.Object {
	return twoNamespaces(w, nodes(w.Nodes, "zone1"), withAffinity(false))
}

// nodeAffinity: pod-with-node-affinity.yaml (zone1 or zone2) on nodes all
// in zone1, init pods of the same template.
func nodeAffinity(w Workload) []runtime.Object {
	mk := func(name string) *v1.Pod {
		p := defaultPod(name, "default")
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: zoneKey, Operator: v1.NodeSelectorOpIn, Values: []string{"zone1", "zone2"}}}}}}}}
		return p
	}
	out := nodes(w.Nodes, "zone1")
	out = append(out, pods(w.InitPods, w.InitPods, w.Nodes, "init-pod", mk)...)
	return append(out, pods(w.MeasurePods, 0, w.Nodes, "pod", mk)...)
}

var moons = []string{"moon-1", "moon-2", "moon-3"}

// topologySpreading: pod-with-(preferred-)topology-spreading.yaml, maxSkew
// 5 over zones, after default init pods.
func topologySpreading(when v1.UnsatisfiableConstraintAction) func(Workload) []runtime.Object {
	return func(w Workload) []runtime.Object {
		out := nodes(w.Nodes, moons...)
		out = append(out, pods(w.InitPods, w.InitPods, w.Nodes, "init-pod", func(n string) *v1.Pod { return defaultPod(n, "default") })...)
		return append(out, pods(w.MeasurePods, 0, w.Nodes, "pod", func(n string) *v1.Pod {
			p := defaultPod(n, "default")
			p.Labels = map[string]string{"color": "blue"}
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 5, TopologyKey: zoneKey, WhenUnsatisfiable: when,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"color": "blue"}}}}
			return p
		})...)
	}
}

// defaultTopologySpreading: a Service selecting app=scheduler-perf and
// pod-with-label.yaml pods (no requests) behind it, in service-ns.
func defaultTopologySpreading(w Workload) []runtime.Object {
	out := nodes(w.Nodes, moons...)
	out = append(out, namespace("service-ns"), &v1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "service-0", Namespace: "service-ns"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "scheduler-perf"},
			Ports: []v1.ServicePort{{Protocol: v1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8000)}}},
	})
	out = append(out, pods(w.InitPods, w.InitPods, w.Nodes, "init-pod", func(n string) *v1.Pod { return defaultPod(n, "default") })...)
	return append(out, pods(w.MeasurePods, 0, w.Nodes, "pod", func(n string) *v1.Pod {
		return &v1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "service-ns", Labels: map[string]string{"app": "scheduler-perf"}},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10.1"}}}}
	})...)
}

// preemptionBasic: four 900m low-priority pods on each node, then 3-CPU
// pods of priority 10 that each preempt.
func preemptionBasic(w Workload) []runtime.Object {
	out := nodes(w.Nodes)
	out = append(out, pods(w.InitPods, w.InitPods, w.Nodes, "low", func(n string) *v1.Pod {
		p := pod(n, "default", "900m", "500Mi", true)
		p.Spec.TerminationGracePeriodSeconds = new(int64)
		return p
	})...)
	return append(out, pods(w.MeasurePods, 0, w.Nodes, "high", func(n string) *v1.Pod {
		p := pod(n, "default", "3000m", "500Mi", true)
		p.Spec.Priority = new(int32)
		*p.Spec.Priority = 10
		return p
	})...)
}

// mixedChurn is SchedulingWithMixedChurn's churn: templates/churn/node-default.yaml
// (a Ready node with room for no pod), pod-high-priority-large-cpu.yaml (9
// CPUs at priority 10: fits nowhere) and churn/service-default.yaml, each
// recreated every second.
func mixedChurn() *Churn {
	n := &v1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		Status: v1.NodeStatus{Capacity: v1.ResourceList{v1.ResourcePods: resource.MustParse("0")},
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}, Phase: v1.NodeRunning}}
	p := pod("", "default", "9", "500Mi", false)
	p.Spec.Containers[0].Image = "registry.k8s.io/pause:3.10.1"
	p.Spec.Priority = new(int32)
	*p.Spec.Priority = 10
	s := &v1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Namespace: "default"},
		Spec: v1.ServiceSpec{Selector: map[string]string{"app": "foo"},
			Ports: []v1.ServicePort{{Protocol: v1.ProtocolTCP, Port: 8080, TargetPort: intstr.FromInt32(8080)}}}}
	return &Churn{Interval: time.Second, Templates: []runtime.Object{n, p, s}}
}

// unschedulable: default init pods, then (as the churn of
// pod-high-priority-large-cpu.yaml, one every 200 ms, gives over the
// measured run) 50 high-priority pods asking for 9 CPUs that fit nowhere,
// then the measured default pods.
func unschedulable(w Workload) []runtime.Object {
	out := nodes(w.Nodes)
	out = append(out, pods(w.InitPods, w.InitPods, w.Nodes, "init-pod", func(n string) *v1.Pod { return defaultPod(n, "default") })...)
	out = append(out, pods(50, 0, w.Nodes, "large", func(n string) *v1.Pod {
		p := pod(n, "default", "9", "500Mi", false)
		p.Spec.Containers[0].Image = "registry.k8s.io/pause:3.10.1"
		p.Spec.Priority = new(int32)
		*p.Spec.Priority = 10
		return p
	})...)
	return append(out, pods(w.MeasurePods, 0, w.Nodes, "pod", func(n string) *v1.Pod { return defaultPod(n, "default") })...)
}
