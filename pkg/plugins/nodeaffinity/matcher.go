package nodeaffinity

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// requiredMatcher is a pod's nodeSelector and required node affinity,
// compiled once per cycle into label selectors so that Filter matches a
// node without allocating. component-helpers' RequiredNodeAffinity builds a
// fields.Set map for every node it matches; this matcher gives the same
// answers (the tests check it against component-helpers) without that.
type requiredMatcher struct {
	nodeSelector labels.Selector
	// hasAffinity: required terms were given; with no usable term, nothing matches.
	hasAffinity bool
	terms       []compiledTerm
}

type compiledTerm struct {
	labels labels.Selector
	// fields are ANDed requirements on the node's fields, of which only
	// metadata.name has a value; any other key reads as "".
	fields []fieldRequirement
}

type fieldRequirement struct {
	key, value string
	equal      bool
}

func compileRequired(pod *v1.Pod) requiredMatcher {
	var m requiredMatcher
	if len(pod.Spec.NodeSelector) > 0 {
		m.nodeSelector = labels.SelectorFromSet(pod.Spec.NodeSelector)
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return m
	}
	m.hasAffinity = true
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			continue // an empty term matches no node
		}
		ct, ok := compileTerm(t)
		if !ok {
			continue // a term that does not parse matches no node
		}
		m.terms = append(m.terms, ct)
	}
	return m
}

var operators = map[v1.NodeSelectorOperator]selection.Operator{
	v1.NodeSelectorOpIn:           selection.In,
	v1.NodeSelectorOpNotIn:        selection.NotIn,
	v1.NodeSelectorOpExists:       selection.Exists,
	v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	v1.NodeSelectorOpGt:           selection.GreaterThan,
	v1.NodeSelectorOpLt:           selection.LessThan,
}

func compileTerm(t v1.NodeSelectorTerm) (compiledTerm, bool) {
	var ct compiledTerm
	if len(t.MatchExpressions) > 0 {
		sel := labels.NewSelector()
		for _, r := range t.MatchExpressions {
			op, ok := operators[r.Operator]
			if !ok {
				return ct, false
			}
			req, err := labels.NewRequirement(r.Key, op, r.Values)
			if err != nil {
				return ct, false
			}
			sel = sel.Add(*req)
		}
		ct.labels = sel
	}
	for _, r := range t.MatchFields {
		if len(r.Values) != 1 {
			return ct, false
		}
		switch r.Operator {
		case v1.NodeSelectorOpIn:
			ct.fields = append(ct.fields, fieldRequirement{key: r.Key, value: r.Values[0], equal: true})
		case v1.NodeSelectorOpNotIn:
			ct.fields = append(ct.fields, fieldRequirement{key: r.Key, value: r.Values[0]})
		default:
			return ct, false
		}
	}
	return ct, true
}

// Match reports whether the node satisfies the selector and the terms.
func (m *requiredMatcher) Match(node *v1.Node) bool {
	set := labels.Set(node.Labels)
	if m.nodeSelector != nil && !m.nodeSelector.Matches(set) {
		return false
	}
	if !m.hasAffinity {
		return true
	}
	for i := range m.terms {
		if m.terms[i].match(node, set) {
			return true
		}
	}
	return false
}

func (t *compiledTerm) match(node *v1.Node, set labels.Set) bool {
	if t.labels != nil && !t.labels.Matches(set) {
		return false
	}
	if node.Name == "" {
		return true // a node without fields is not held to field requirements
	}
	for _, f := range t.fields {
		actual := ""
		if f.key == metav1.ObjectNameField {
			actual = node.Name
		}
		if (actual == f.value) != f.equal {
			return false
		}
	}
	return true
}

// RequiredMatcher is a pod's nodeSelector and required node affinity,
// compiled for allocation-free matching (PodTopologySpread's node
// inclusion, preemption).
type RequiredMatcher = requiredMatcher

// CompileRequired compiles pod's nodeSelector and required node affinity;
// it answers as component-helpers' GetRequiredNodeAffinity(pod).Match.
func CompileRequired(pod *v1.Pod) RequiredMatcher { return compileRequired(pod) }
