package helper

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// As converts a queueing hint's old and new objects to T; either may be
// nil (an addition has no old object, a deletion no new one).
func As[T any](oldObj, newObj interface{}) (T, T, error) {
	var oldT, newT T
	var ok bool
	if newObj != nil {
		if newT, ok = newObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, got %T", newT, newObj)
		}
	}
	if oldObj != nil {
		if oldT, ok = oldObj.(T); !ok {
			return oldT, newT, fmt.Errorf("expected %T, got %T", oldT, oldObj)
		}
	}
	return oldT, newT, nil
}

// AfterClaimChange is the queueing hint for claim events of the volume
// plugins: only a claim the pod uses (same namespace, one of its claim
// names) can change their verdict.
func AfterClaimChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := As[*v1.PersistentVolumeClaim](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	c := cur
	if c == nil {
		c = old
	}
	if c == nil || c.Namespace != pod.Namespace {
		return framework.QueueSkip, nil
	}
	for i := range pod.Spec.Volumes {
		if PVCName(pod, &pod.Spec.Volumes[i]) == c.Name {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}
