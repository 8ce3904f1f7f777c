package framework

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// AffinityTerm is a pod (anti-)affinity term with its selectors parsed.
type AffinityTerm struct {
	// Namespaces the term selects by name; the owner's namespace when the
	// term names none and has no namespaceSelector.
	Namespaces sets.Set[string]
	Selector   labels.Selector
	// NamespaceSelector matches namespace labels; labels.Nothing() when unset.
	NamespaceSelector labels.Selector
	// HasNamespaceSelector is true when the term sets one.
	HasNamespaceSelector bool
	TopologyKey          string
}

// Matches is true when pod (whose namespace has nsLabels) is selected by
// the term: in one of its namespaces, and its labels match.
func (t *AffinityTerm) Matches(pod *v1.Pod, nsLabels labels.Set) bool {
	if t.Namespaces.Has(pod.Namespace) || t.NamespaceSelector.Matches(nsLabels) {
		return t.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// WeightedAffinityTerm is a preferred term with its weight.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// AffinityTerms are a pod's inter-pod affinity, parsed.
type AffinityTerms struct {
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// AffinityParseError is set when a term's selector does not parse; the
	// pod's own cycle fails with it, and as an existing pod its broken term
	// selects nothing.
	AffinityParseError error
}

// HasAffinity is true for pods with any pod affinity or anti-affinity.
func HasAffinity(pod *v1.Pod) bool {
	a := pod.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// HasRequiredAntiAffinity is true for pods with required anti-affinity terms.
func (pi *PodInfo) HasRequiredAntiAffinity() bool { return len(pi.RequiredAntiAffinityTerms) > 0 }

// ParseAffinity parses a pod's inter-pod affinity without the rest of a
// PodInfo (what InterPodAffinity needs of the pod being scheduled).
func ParseAffinity(pod *v1.Pod) AffinityTerms {
	var pi PodInfo
	pi.Pod = pod
	pi.parseAffinity()
	return pi.AffinityTerms
}

func (pi *PodInfo) parseAffinity() {
	a := pi.Pod.Spec.Affinity
	if !HasAffinity(pi.Pod) {
		return
	}
	var errs []error
	required := func(terms []v1.PodAffinityTerm, field string) []AffinityTerm {
		out := make([]AffinityTerm, 0, len(terms))
		for i := range terms {
			t, err := NewAffinityTerm(pi.Pod, &terms[i])
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
			}
			out = append(out, t)
		}
		return out
	}
	preferred := func(terms []v1.WeightedPodAffinityTerm, field string) []WeightedAffinityTerm {
		out := make([]WeightedAffinityTerm, 0, len(terms))
		for i := range terms {
			t, err := NewAffinityTerm(pi.Pod, &terms[i].PodAffinityTerm)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s[%d].podAffinityTerm: %w", field, i, err))
			}
			out = append(out, WeightedAffinityTerm{AffinityTerm: t, Weight: terms[i].Weight})
		}
		return out
	}
	if pa := a.PodAffinity; pa != nil {
		pi.RequiredAffinityTerms = required(pa.RequiredDuringSchedulingIgnoredDuringExecution, "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution")
		pi.PreferredAffinityTerms = preferred(pa.PreferredDuringSchedulingIgnoredDuringExecution, "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution")
	}
	if pa := a.PodAntiAffinity; pa != nil {
		pi.RequiredAntiAffinityTerms = required(pa.RequiredDuringSchedulingIgnoredDuringExecution, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution")
		pi.PreferredAntiAffinityTerms = preferred(pa.PreferredDuringSchedulingIgnoredDuringExecution, "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution")
	}
	if len(errs) > 0 {
		pi.AffinityParseError = errs[0]
	}
}

// NewAffinityTerm parses a term of owner's. matchLabelKeys and
// mismatchLabelKeys are not read: kube-apiserver merges them into the
// selector when it admits the pod, and kube-scheduler reads the selector
// alone (merging them again would pin a label value the pod may have
// changed since). A selector that does not parse selects nothing, and the
// error is returned.
func NewAffinityTerm(owner *v1.Pod, term *v1.PodAffinityTerm) (AffinityTerm, error) {
	t := AffinityTerm{TopologyKey: term.TopologyKey, Selector: labels.Nothing(), NamespaceSelector: labels.Nothing()}
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		t.Namespaces = sets.New(owner.Namespace)
	} else {
		t.Namespaces = sets.New(term.Namespaces...)
	}
	sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return t, fmt.Errorf("labelSelector: %w", err)
	}
	nsSel, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return t, fmt.Errorf("namespaceSelector: %w", err)
	}
	t.Selector, t.NamespaceSelector, t.HasNamespaceSelector = sel, nsSel, term.NamespaceSelector != nil
	return t, nil
}
