package helper

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Memo keys (MemoSet) are signatures built with the equivalence cache's
// length-prefixed encoders (framework.AppendSig*) and these: every field
// is prefixed by its length or count, or by a marker byte, so that two
// different inputs never encode alike.

// AppendBool appends a bool.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendSelector appends what decides a selector's matches: its
// requirements (key, operator, sorted values), or a marker for
// labels.Nothing(). labels.Nothing() (a term without labelSelector) and
// labels.Everything() (`labelSelector: {}`) both print "", yet one
// matches no pod and the other every pod.
func AppendSelector(b []byte, sel labels.Selector) []byte {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return append(b, 0)
	}
	b = append(b, 1)
	b = framework.AppendSigInt(b, int64(len(reqs)))
	for i := range reqs {
		r := &reqs[i]
		b = framework.AppendSigString(b, r.Key())
		b = framework.AppendSigString(b, string(r.Operator()))
		b = AppendStrings(b, slices.Sorted(slices.Values(r.ValuesUnsorted())))
	}
	return b
}

// AppendStrings appends a list of strings, in order.
func AppendStrings(b []byte, ss []string) []byte {
	b = framework.AppendSigInt(b, int64(len(ss)))
	for _, s := range ss {
		b = framework.AppendSigString(b, s)
	}
	return b
}

// AppendStringSet appends a set of strings, sorted.
func AppendStringSet(b []byte, s sets.Set[string]) []byte {
	return AppendStrings(b, sets.List(s))
}

// AppendLabels appends a label map, by sorted key.
func AppendLabels(b []byte, ls map[string]string) []byte {
	b = framework.AppendSigInt(b, int64(len(ls)))
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		b = framework.AppendSigString(b, k)
		b = framework.AppendSigString(b, ls[k])
	}
	return b
}

// AppendAffinityTerm appends what decides an inter-pod affinity term's
// matches and domains: its namespaces, namespace selector, selector and
// topology key.
func AppendAffinityTerm(b []byte, t *framework.AffinityTerm) []byte {
	b = AppendStringSet(b, t.Namespaces)
	b = AppendSelector(b, t.NamespaceSelector)
	b = AppendSelector(b, t.Selector)
	return framework.AppendSigString(b, t.TopologyKey)
}
