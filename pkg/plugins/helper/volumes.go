package helper

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// PVCName is the claim a volume uses: its persistentVolumeClaim, or the
// claim a generic ephemeral volume gets (pod name + "-" + volume name);
// "" for other volumes.
func PVCName(pod *v1.Pod, vol *v1.Volume) string {
	switch {
	case vol.PersistentVolumeClaim != nil:
		return vol.PersistentVolumeClaim.ClaimName
	case vol.Ephemeral != nil:
		return pod.Name + "-" + vol.Name
	}
	return ""
}

// HasPVCs is true when a pod has a volume backed by a claim.
func HasPVCs(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if PVCName(pod, &pod.Spec.Volumes[i]) != "" {
			return true
		}
	}
	return false
}

// StorageClassName is a claim's class, from the spec or the beta annotation.
func StorageClassName(pvc *v1.PersistentVolumeClaim) string {
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return pvc.Annotations[v1.BetaStorageClassAnnotation]
}

// StorageClass returns a claim's class, nil when it has none or it is unknown.
func StorageClass(l framework.Listers, pvc *v1.PersistentVolumeClaim) *storagev1.StorageClass {
	name := StorageClassName(pvc)
	if name == "" || l.StorageClasses == nil {
		return nil
	}
	sc, err := l.StorageClasses.Get(name)
	if err != nil {
		return nil
	}
	return sc
}

// IsDelayedBinding is true for an unbound claim whose class binds on
// first consumer (WaitForFirstConsumer).
func IsDelayedBinding(l framework.Listers, pvc *v1.PersistentVolumeClaim) bool {
	sc := StorageClass(l, pvc)
	return sc != nil && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}
