package cluster

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// IsDaemonSetPod: a DaemonSet controls the pod (a drain leaves it, it goes
// with its node).
func IsDaemonSetPod(p *v1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet"
}

// PodDisruptionBudgets returns the cluster's PodDisruptionBudgets.
func (c *Cluster) PodDisruptionBudgets() []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, o := range c.Others {
		if pdb, ok := o.(*policyv1.PodDisruptionBudget); ok {
			out = append(out, pdb)
		}
	}
	return out
}

// EvictionRefused returns the first of the evicted pods whose eviction a
// PodDisruptionBudget does not allow, and why (nil when every eviction is
// allowed), as the eviction API refuses it. The budget is counted as
// the disruption controller counts it: healthy pods are the running
// (bound) pods the PDB selects; minAvailable or maxUnavailable (of the
// pods it selects, percentages rounded up) says how many must stay.
func EvictionRefused(evicted, running []*v1.Pod, pdbs []*policyv1.PodDisruptionBudget) (*v1.Pod, string) {
	for _, pdb := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() {
			continue // a PDB with an empty or invalid selector selects nothing
		}
		selects := func(p *v1.Pod) bool {
			return p.Namespace == pdb.Namespace && sel.Matches(labels.Set(p.Labels))
		}
		var hit []*v1.Pod
		for _, p := range evicted {
			if selects(p) {
				hit = append(hit, p)
			}
		}
		if len(hit) == 0 {
			continue
		}
		expected, healthy := 0, 0
		for _, p := range running {
			if selects(p) {
				expected++
				if p.Spec.NodeName != "" {
					healthy++
				}
			}
		}
		desired := 0
		switch {
		case pdb.Spec.MinAvailable != nil:
			desired, _ = intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MinAvailable, expected, true)
		case pdb.Spec.MaxUnavailable != nil:
			unavailable, _ := intstr.GetScaledValueFromIntOrPercent(pdb.Spec.MaxUnavailable, expected, true)
			desired = expected - unavailable
		}
		allowed := max(healthy-desired, 0)
		if len(hit) > allowed {
			return hit[0], fmt.Sprintf("evicting the node's %d pod(s) of PodDisruptionBudget %s/%s exceeds the %d disruption(s) it allows (%d healthy, %d desired)",
				len(hit), pdb.Namespace, pdb.Name, allowed, healthy, desired)
		}
	}
	return nil, ""
}
