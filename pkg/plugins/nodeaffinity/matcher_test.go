package nodeaffinity

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	st "github.com/kubesched/kubesched/internal/testing"
)

// TestMatcherAgreesWithComponentHelpers checks the allocation-free matcher
// against component-helpers' RequiredNodeAffinity (the field's reference)
// on random selectors, terms and nodes, including the odd cases: empty
// terms, bad operators and values, field selectors on other keys.
func TestMatcherAgreesWithComponentHelpers(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	keys := []string{"zone", "pool", "gen", "missing"}
	vals := []string{"a", "b", "1", "7", ""}
	ops := []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt, "Bogus"}
	pickVals := func() []string {
		n := r.Intn(3)
		out := make([]string, n)
		for i := range out {
			out[i] = vals[r.Intn(len(vals))]
		}
		return out
	}
	for i := 0; i < 20000; i++ {
		node := st.MakeNode().Name(fmt.Sprintf("n%d", r.Intn(3))).Obj()
		if r.Intn(10) == 0 {
			node.Name = ""
		}
		for _, k := range keys[:3] {
			if r.Intn(3) > 0 {
				node.Labels[k] = vals[r.Intn(len(vals))]
			}
		}
		pod := st.MakePod().Name("p").Obj()
		if r.Intn(3) == 0 {
			pod.Spec.NodeSelector = map[string]string{keys[r.Intn(len(keys))]: vals[r.Intn(len(vals))]}
		}
		if r.Intn(4) > 0 {
			ns := &v1.NodeSelector{}
			for j := r.Intn(3); j >= 0; j-- {
				var term v1.NodeSelectorTerm
				for k := r.Intn(3); k > 0; k-- {
					term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{Key: keys[r.Intn(len(keys))], Operator: ops[r.Intn(len(ops))], Values: pickVals()})
				}
				for k := r.Intn(2); k > 0; k-- {
					key := metav1.ObjectNameField
					if r.Intn(4) == 0 {
						key = "spec.other"
					}
					term.MatchFields = append(term.MatchFields, v1.NodeSelectorRequirement{Key: key, Operator: ops[r.Intn(3)], Values: []string{fmt.Sprintf("n%d", r.Intn(3)), "n1"}[:r.Intn(3)]})
				}
				ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, term)
			}
			pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: ns}}
		}
		want, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
		m := compileRequired(pod)
		if got := m.Match(node); got != want {
			t.Fatalf("case %d: matcher says %v, component-helpers %v\nnode %s labels %v\nselector %v\naffinity %+v", i, got, want, node.Name, node.Labels, pod.Spec.NodeSelector, pod.Spec.Affinity)
		}
	}
}
