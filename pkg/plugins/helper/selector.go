package helper

import "k8s.io/apimachinery/pkg/labels"

// nothingKey stands for labels.Nothing() in SelectorKey; no selector
// prints it (a requirement's key cannot start with '!').
const nothingKey = "!nothing"

// SelectorKey identifies a selector's matching behaviour for memo keys.
// labels.Nothing() (a term without labelSelector) and labels.Everything()
// (`labelSelector: {}`) both print "", yet one matches no pod and the
// other every pod: keyed by String alone, two terms that differ only
// there would share a memo.
func SelectorKey(sel labels.Selector) string {
	if _, selectable := sel.Requirements(); !selectable {
		return nothingKey
	}
	return sel.String()
}
