package testing

import (
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// InGroup makes the pod a member of the PodGroup named name
// (spec.schedulingGroup.podGroupName).
func (p *PodWrapper) InGroup(name string) *PodWrapper {
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
	return p
}

// PodGroupWrapper builds a PodGroup.
type PodGroupWrapper struct{ schedulingv1beta1.PodGroup }

// MakePodGroup starts a PodGroup with the basic policy in namespace default.
func MakePodGroup(name string) *PodGroupWrapper {
	return &PodGroupWrapper{schedulingv1beta1.PodGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{Namespace: v1.NamespaceDefault, Name: name, UID: types.UID("uid-pg-" + name), Generation: 1},
		Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
			Basic: &schedulingv1beta1.BasicSchedulingPolicy{},
		}},
	}}
}

// Obj returns the PodGroup.
func (g *PodGroupWrapper) Obj() *schedulingv1beta1.PodGroup { return &g.PodGroup }

// Gang sets the gang policy with minCount.
func (g *PodGroupWrapper) Gang(minCount int32) *PodGroupWrapper {
	g.Spec.SchedulingPolicy = schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}
	return g
}

// Priority sets spec.priority (admission sets it from the priority class).
func (g *PodGroupWrapper) Priority(p int32) *PodGroupWrapper { g.Spec.Priority = &p; return g }

// Namespace sets the namespace.
func (g *PodGroupWrapper) Namespace(ns string) *PodGroupWrapper {
	g.ObjectMeta.Namespace = ns
	return g
}

// Topology sets schedulingConstraints.topology to one key: the group is
// placed within one value of that node label (TopologyAwareWorkloadScheduling).
func (g *PodGroupWrapper) Topology(key string) *PodGroupWrapper {
	g.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{
		Topology: []schedulingv1beta1.TopologyConstraint{{Key: key}},
	}
	return g
}
