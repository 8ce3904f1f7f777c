package helper

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestSelectorKey(t *testing.T) {
	mustSelector := func(ls *metav1.LabelSelector) labels.Selector {
		s, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	selectors := []struct {
		name string
		sel  labels.Selector
	}{
		{"a missing labelSelector (matches nothing)", mustSelector(nil)},
		{"an empty labelSelector (matches everything)", mustSelector(&metav1.LabelSelector{})},
		{"a selector on app=web", mustSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})},
		{"a selector on app in (web)", mustSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "db"}}}})},
	}
	seen := map[string]string{}
	for _, s := range selectors {
		k := SelectorKey(s.sel)
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share the key %q", s.name, other, k)
		}
		seen[k] = s.name
	}
}
