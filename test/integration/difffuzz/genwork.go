package difffuzz

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// priorityClass is a PriorityClass drawn, for the pods that name it.
type priorityClass struct {
	name   string
	value  int32
	policy *v1.PreemptionPolicy
}

// workload is a ReplicaSet or StatefulSet drawn, for the pods it owns.
type workload struct {
	kind, namespace, name string
	labels                map[string]string
}

// drawWorkloads draws PriorityClasses (one sometimes globalDefault,
// PreemptLowerPriority or Never) and ReplicaSets and StatefulSets whose
// selectors pick pods (system default spreading through controllers).
// Their replicas are 0: the pods they own are drawn as pods (kubesched's
// loader would create the replicas missing; upstream's scheduler only
// reads the selectors).
func (g *Generator) drawWorkloads() []runtime.Object {
	g.classes, g.workloads = nil, nil
	var out []runtime.Object
	if g.chance(0.3) {
		for i := range 1 + g.intn(3) {
			pc := priorityClass{name: fmt.Sprintf("prio%d", i), value: pick(g, int32(-10), 0, 100, 1000, 1000000)}
			if g.chance(0.3) {
				pc.policy = ptr.To(pick(g, v1.PreemptLowerPriority, v1.PreemptNever))
			}
			// No globalDefault: the oracle runs no admission, so a pod
			// without a class would not get the default's value there.
			if o := g.admit(func() runtime.Object {
				return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: pc.name}, Value: pc.value, PreemptionPolicy: pc.policy}
			}); o != nil {
				out = append(out, o)
				g.classes = append(g.classes, pc)
			}
		}
	}
	if g.chance(0.3) {
		for i := range 1 + g.intn(2) {
			w := workload{kind: pick(g, "ReplicaSet", "StatefulSet"), namespace: pick(g, g.namespaces...), name: fmt.Sprintf("wl%d", i),
				labels: map[string]string{"app": pick(g, podValues...)}}
			if g.chance(0.3) {
				w.labels["tier"] = pick(g, podValues...)
			}
			o := g.admit(func() runtime.Object {
				meta := metav1.ObjectMeta{Name: w.name, Namespace: w.namespace}
				sel := &metav1.LabelSelector{MatchLabels: w.labels}
				tmpl := v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: w.labels},
					Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c0", Image: "nginx"}}}}
				if w.kind == "ReplicaSet" {
					return &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(0)), Selector: sel, Template: tmpl}}
				}
				return &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(0)), Selector: sel, Template: tmpl, ServiceName: "svc"}}
			})
			if o != nil {
				out = append(out, o)
				g.workloads = append(g.workloads, w)
			}
		}
	}
	return out
}

// podWorkload makes some pods of a workload's namespace its pods: its
// labels, a controller reference; and names a PriorityClass with the
// priority (and preemption policy) the Priority admission plugin sets.
func (g *Generator) podWorkload(p *v1.Pod) {
	if len(g.classes) > 0 && g.chance(0.5) {
		pc := pick(g, g.classes...)
		p.Spec.PriorityClassName, p.Spec.Priority = pc.name, ptr.To(pc.value)
		p.Spec.PreemptionPolicy = pc.policy
	}
	for _, w := range g.workloads {
		if w.namespace != p.Namespace || !g.chance(0.5) {
			continue
		}
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		for k, v := range w.labels {
			p.Labels[k] = v
		}
		gv := "apps/v1"
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: gv, Kind: w.kind, Name: w.name,
			UID: types.UID(w.kind + "-" + w.namespace + "-" + w.name), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
		return
	}
}
