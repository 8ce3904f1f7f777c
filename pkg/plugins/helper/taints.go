package helper

import (
	v1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// ToleratesDoNotScheduleTaints is true when the tolerations tolerate every
// NoSchedule and NoExecute taint: what TaintToleration filters on and what
// nodeTaintsPolicy Honor counts. Unlike component-helpers'
// FindMatchingUntoleratedTaint it does not copy the taints, so Filter stays
// allocation-free. comparison is the TaintTolerationComparisonOperators
// gate (Gt and Lt tolerations).
func ToleratesDoNotScheduleTaints(logger klog.Logger, tolerations []v1.Toleration, taints []v1.Taint, comparison bool) bool {
	for i := range taints {
		t := &taints[i]
		if (t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute) &&
			!v1helper.TolerationsTolerateTaint(logger, tolerations, t, comparison) {
			return false
		}
	}
	return true
}
