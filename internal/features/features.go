// Package features holds kubesched's feature gates, set with
// --feature-gates as kube-scheduler's are.
package features

import (
	"k8s.io/component-base/featuregate"
)

const (
	// EquivalenceCache keeps the Filter verdicts and raw scores of the
	// plugins that read only the pod and one node, per class of equal pods
	// and per node generation (internal/framework/runtime/equivalence.go).
	// Decisions are identical with it on or off.
	EquivalenceCache featuregate.Feature = "EquivalenceCache"

	// SchedulerAsyncPreemption is kube-scheduler's gate of the same name
	// (Beta, on by default since 1.33): preemption's API calls run in a
	// goroutine and the preemptor waits outside activeQ until they are
	// done. The simulator runs them in the cycle either way.
	SchedulerAsyncPreemption featuregate.Feature = "SchedulerAsyncPreemption"
)

var defaults = map[featuregate.Feature]featuregate.FeatureSpec{
	EquivalenceCache:         {Default: true, PreRelease: featuregate.Beta},
	SchedulerAsyncPreemption: {Default: true, PreRelease: featuregate.Beta},
}

// New returns a fresh gate with kubesched's features at their defaults.
func New() featuregate.MutableFeatureGate {
	g := featuregate.NewFeatureGate()
	if err := g.Add(defaults); err != nil {
		panic(err) // a programming error in the table above
	}
	return g
}
