package helper

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubesched/kubesched/pkg/framework"
)

// TestAffinityTermKeysTellApartTermsThatMatchDifferently: terms that select
// different pods or count them in different domains never share a memo key,
// however alike they print.
func TestAffinityTermKeysTellApartTermsThatMatchDifferently(t *testing.T) {
	web := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	owner := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}}
	terms := []struct {
		name string
		term v1.PodAffinityTerm
	}{
		{"a term without labelSelector (matches no pod)", v1.PodAffinityTerm{TopologyKey: "zone"}},
		{"a term with labelSelector {} (matches every pod)", v1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: &metav1.LabelSelector{}}},
		{"a term on app=web", v1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: web}},
		{"a term on app=web by hostname", v1.PodAffinityTerm{TopologyKey: "hostname", LabelSelector: web}},
		{"a term on app in (web, db)", v1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "db"}}}}}},
		{"a term on app=web in namespace other", v1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: web, Namespaces: []string{"other"}}},
		{"a term on app=web with namespaceSelector {} (every namespace)", v1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: web,
			NamespaceSelector: &metav1.LabelSelector{}}},
		{"a term on app=web with namespaceSelector {} and namespace other", v1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: web,
			NamespaceSelector: &metav1.LabelSelector{}, Namespaces: []string{"other"}}},
		{"a term on app=web with a namespaceSelector on team=a", v1.PodAffinityTerm{TopologyKey: "zone", LabelSelector: web,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}}},
	}
	seen := map[string]string{}
	for _, tc := range terms {
		term, err := framework.NewAffinityTerm(owner, &tc.term)
		if err != nil {
			t.Fatal(err)
		}
		k := string(AppendAffinityTerm(nil, &term))
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share the key %q", tc.name, other, k)
		}
		seen[k] = tc.name
	}
}

// TestKeysTellApartInputsThatPrintAlike: the encoders length-prefix every
// field, so inputs whose String() is the same stay apart.
func TestKeysTellApartInputsThatPrintAlike(t *testing.T) {
	selector := func(key string, values ...string) labels.Selector {
		r, err := labels.NewRequirement(key, selection.In, values)
		if err != nil {
			t.Fatal(err)
		}
		return labels.NewSelector().Add(*r)
	}
	tests := []struct {
		name string
		a, b []byte
	}{
		{"labels.Nothing() and labels.Everything()",
			AppendSelector(nil, labels.Nothing()), AppendSelector(nil, labels.Everything())},
		{"label a=\"b,c=d\" and labels a=b, c=d",
			AppendLabels(nil, map[string]string{"a": "b,c=d"}), AppendLabels(nil, map[string]string{"a": "b", "c": "d"})},
		{"strings [ab c] and [a bc]",
			AppendStrings(nil, []string{"ab", "c"}), AppendStrings(nil, []string{"a", "bc"})},
		{"no labels and one empty label",
			AppendLabels(nil, nil), AppendLabels(nil, map[string]string{"": ""})},
		{"app in (web) and app in (web, db)",
			AppendSelector(nil, selector("app", "web")), AppendSelector(nil, selector("app", "web", "db"))},
	}
	for _, tc := range tests {
		if string(tc.a) == string(tc.b) {
			t.Errorf("%s share the key %q", tc.name, tc.a)
		}
	}
}
