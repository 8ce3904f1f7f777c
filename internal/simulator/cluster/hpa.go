package cluster

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
)

// HPAReplicas says what the HorizontalPodAutoscalers make of their
// targets' replicas before the controllers create pods.
type HPAReplicas int

const (
	// HPABounds: what the HPA controller does before it reads a metric
	// (v1.37.2 pkg/controller/podautoscaler/horizontal.go): a target
	// above maxReplicas is scaled to it, one below minReplicas (default
	// 1) to that; a target at 0 replicas is left there (autoscaling
	// disabled). Between the bounds the metrics decide, which the
	// simulation does not have: the spec's replicas stand.
	HPABounds HPAReplicas = iota
	// HPAMax: every target at its HPA's maxReplicas (a target at 0 too):
	// the what-if of the HPAs all scaled out.
	HPAMax
)

// HPATarget is an HPA and the replicas it leaves its target with.
type HPATarget struct {
	// HPA is "namespace/name"; Target its scaleTargetRef ("Deployment
	// shop/web").
	HPA, Target string
	// Min and Max are the HPA's bounds; Spec the target's replicas as
	// read, Replicas as the HPA leaves them.
	Min, Max, Spec, Replicas int32
}

// ApplyHPAs sets the replicas of each HPA's target (a Deployment,
// ReplicaSet, StatefulSet or ReplicationController of the input, by
// scaleTargetRef's kind and name in the HPA's namespace) as mode says.
// Call it before RunControllers. An HPA whose target the input lacks is
// a warning, and changes nothing.
func (c *Cluster) ApplyHPAs(mode HPAReplicas) []HPATarget {
	var out []HPATarget
	for _, h := range c.HPAs {
		ns := h.Namespace
		if ns == "" {
			ns = v1.NamespaceDefault
		}
		ref := h.Spec.ScaleTargetRef
		replicas := c.scaleTarget(ref.Kind, ns, ref.Name)
		if replicas == nil {
			c.Warnings = append(c.Warnings, fmt.Sprintf("HorizontalPodAutoscaler %s/%s: spec.scaleTargetRef: %s %s/%s is not in the input (or not a Deployment, ReplicaSet, StatefulSet or ReplicationController): the HPA is ignored",
				ns, h.Name, ref.Kind, ns, ref.Name))
			continue
		}
		minReplicas := int32(1)
		if h.Spec.MinReplicas != nil {
			minReplicas = *h.Spec.MinReplicas
		}
		spec := int32(1)
		if *replicas != nil {
			spec = **replicas
		}
		want := spec
		switch {
		case mode == HPAMax:
			want = h.Spec.MaxReplicas
		case spec == 0:
		case spec > h.Spec.MaxReplicas:
			want = h.Spec.MaxReplicas
		case spec < minReplicas:
			want = minReplicas
		}
		if want != spec || *replicas == nil {
			v := want
			*replicas = &v
		}
		out = append(out, HPATarget{HPA: ns + "/" + h.Name, Target: ref.Kind + " " + ns + "/" + ref.Name,
			Min: minReplicas, Max: h.Spec.MaxReplicas, Spec: spec, Replicas: want})
	}
	return out
}

// scaleTarget is the replicas field of the workload kind namespace/name,
// nil when the input has none of that kind and name.
func (c *Cluster) scaleTarget(kind, ns, name string) **int32 {
	match := func(objNS, objName string) bool {
		if objNS == "" {
			objNS = v1.NamespaceDefault
		}
		return objNS == ns && objName == name
	}
	switch kind {
	case "Deployment":
		return findReplicas(c.Deployments, match, func(d *appsv1.Deployment) (string, string, **int32) { return d.Namespace, d.Name, &d.Spec.Replicas })
	case "ReplicaSet":
		return findReplicas(c.ReplicaSets, match, func(r *appsv1.ReplicaSet) (string, string, **int32) { return r.Namespace, r.Name, &r.Spec.Replicas })
	case "StatefulSet":
		return findReplicas(c.StatefulSets, match, func(s *appsv1.StatefulSet) (string, string, **int32) { return s.Namespace, s.Name, &s.Spec.Replicas })
	case "ReplicationController":
		return findReplicas(c.RCs, match, func(r *v1.ReplicationController) (string, string, **int32) {
			return r.Namespace, r.Name, &r.Spec.Replicas
		})
	}
	return nil
}

func findReplicas[T any](objs []T, match func(ns, name string) bool, field func(T) (string, string, **int32)) **int32 {
	for _, o := range objs {
		if ns, name, r := field(o); match(ns, name) {
			return r
		}
	}
	return nil
}

// HPAOf is the HorizontalPodAutoscaler whose target is the workload kind
// namespace/name, nil if none; replicas are the target's replicas as the
// HPAs left them (ApplyHPAs).
func (c *Cluster) HPAOf(kind, ns, name string) (hpa *autoscalingv2.HorizontalPodAutoscaler, replicas int32) {
	for _, h := range c.HPAs {
		hns := h.Namespace
		if hns == "" {
			hns = v1.NamespaceDefault
		}
		ref := h.Spec.ScaleTargetRef
		if ref.Kind != kind || ref.Name != name || hns != ns {
			continue
		}
		r := c.scaleTarget(kind, ns, name)
		if r == nil {
			return nil, 0
		}
		replicas = 1
		if *r != nil {
			replicas = **r
		}
		return h, replicas
	}
	return nil, 0
}
