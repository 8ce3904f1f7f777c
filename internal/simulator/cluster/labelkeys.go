package cluster

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mergeAffinityLabelKeys does what kube-apiserver does to a pod it creates
// (MatchLabelKeysInPodAffinity, GA): each pod (anti-)affinity term with a
// labelSelector gets `key In (value)` for its matchLabelKeys and
// `key NotIn (value)` for its mismatchLabelKeys, with the pod's own label
// values (keys the pod lacks are skipped). The scheduler reads only the
// selector, so the simulator does it for the pods its controllers create;
// Pod objects in the input are taken as the API server stored them.
func mergeAffinityLabelKeys(p *v1.Pod) {
	a := p.Spec.Affinity
	if a == nil {
		return
	}
	merge := func(t *v1.PodAffinityTerm) {
		if t.LabelSelector == nil || (len(t.MatchLabelKeys) == 0 && len(t.MismatchLabelKeys) == 0) {
			return
		}
		add := func(keys []string, op metav1.LabelSelectorOperator) {
			for _, k := range keys {
				if v, ok := p.Labels[k]; ok {
					t.LabelSelector.MatchExpressions = append(t.LabelSelector.MatchExpressions,
						metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
				}
			}
		}
		add(t.MatchLabelKeys, metav1.LabelSelectorOpIn)
		add(t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
	}
	terms := func(required []v1.PodAffinityTerm, preferred []v1.WeightedPodAffinityTerm) {
		for i := range preferred {
			merge(&preferred[i].PodAffinityTerm)
		}
		for i := range required {
			merge(&required[i])
		}
	}
	if pa := a.PodAffinity; pa != nil {
		terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}
