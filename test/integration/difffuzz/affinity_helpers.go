package difffuzz

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metav1LabelSelector names metav1.LabelSelector for swapSelector.
type metav1LabelSelector = metav1.LabelSelector

// The term lists of an affinity, nil when absent.
func podAffinityReq(a *v1.Affinity) []v1.PodAffinityTerm {
	if a.PodAffinity == nil {
		return nil
	}
	return a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityReq(a *v1.Affinity) []v1.PodAffinityTerm {
	if a.PodAntiAffinity == nil {
		return nil
	}
	return a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAffinityPref(a *v1.Affinity) []v1.WeightedPodAffinityTerm {
	if a.PodAffinity == nil {
		return nil
	}
	return a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinityPref(a *v1.Affinity) []v1.WeightedPodAffinityTerm {
	if a.PodAntiAffinity == nil {
		return nil
	}
	return a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
}
