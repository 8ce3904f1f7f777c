package difffuzz

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	appsvalidation "k8s.io/kubernetes/pkg/apis/apps/validation"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install"
	schedulingvalidation "k8s.io/kubernetes/pkg/apis/scheduling/validation"
	"k8s.io/kubernetes/pkg/apis/storage"
	storagevalidation "k8s.io/kubernetes/pkg/apis/storage/validation"
)

// convert converts a versioned object to its internal type.
func convert[T any](in runtime.Object, out *T) field.ErrorList {
	if err := legacyscheme.Scheme.Convert(in, out, nil); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	return nil
}

// validateExtra runs upstream's handwritten create validation (the
// registry strategies' Validate) of the storage, DRA, scheduling and apps
// kinds the generator draws; handled is false for other kinds. A
// ResourceClaim's or PersistentVolumeClaim's status is validated as the
// status update that would set it.
func validateExtra(obj runtime.Object) (errs field.ErrorList, handled bool) {
	switch o := obj.(type) {
	case *storagev1.StorageClass:
		var x storage.StorageClass
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return storagevalidation.ValidateStorageClass(&x), true
	case *storagev1.CSIDriver:
		var x storage.CSIDriver
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return storagevalidation.ValidateCSIDriver(&x), true
	case *storagev1.CSINode:
		var x storage.CSINode
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return storagevalidation.ValidateCSINode(&x), true
	case *storagev1.CSIStorageCapacity:
		var x storage.CSIStorageCapacity
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return storagevalidation.ValidateCSIStorageCapacity(&x, storagevalidation.CSIStorageCapacityValidateOptions{}), true
	case *storagev1.VolumeAttachment:
		var x storage.VolumeAttachment
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return storagevalidation.ValidateVolumeAttachment(&x), true
	case *v1.PersistentVolume:
		var x core.PersistentVolume
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return corevalidation.ValidatePersistentVolume(&x, corevalidation.ValidationOptionsForPersistentVolume(&x, nil)), true
	case *v1.PersistentVolumeClaim:
		var x core.PersistentVolumeClaim
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		opts := corevalidation.ValidationOptionsForPersistentVolumeClaim(&x, nil)
		errs := corevalidation.ValidatePersistentVolumeClaim(&x, opts)
		x.ResourceVersion = "1" // an update's
		old := x.DeepCopy()
		old.Status = core.PersistentVolumeClaimStatus{}
		return append(errs, corevalidation.ValidatePersistentVolumeClaimStatusUpdate(&x, old, corevalidation.PersistentVolumeClaimSpecValidationOptions{})...), true
	case *resourceapi.DeviceClass:
		var x resource.DeviceClass
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return resourcevalidation.ValidateDeviceClass(&x), true
	case *resourceapi.ResourceSlice:
		var x resource.ResourceSlice
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return resourcevalidation.ValidateResourceSlice(&x), true
	case *resourceapi.ResourceClaim:
		var x resource.ResourceClaim
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		errs := resourcevalidation.ValidateResourceClaim(&x)
		x.ResourceVersion = "1" // an update's
		old := x.DeepCopy()
		old.Status = resource.ResourceClaimStatus{}
		return append(errs, resourcevalidation.ValidateResourceClaimStatusUpdate(&x, old)...), true
	case *resourceapi.ResourceClaimTemplate:
		var x resource.ResourceClaimTemplate
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return resourcevalidation.ValidateResourceClaimTemplate(&x), true
	case *schedulingv1.PriorityClass:
		var x scheduling.PriorityClass
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return schedulingvalidation.ValidatePriorityClass(&x), true
	case *appsv1.ReplicaSet:
		var x apps.ReplicaSet
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return appsvalidation.ValidateReplicaSet(&x, corevalidation.PodValidationOptions{}), true
	case *appsv1.StatefulSet:
		var x apps.StatefulSet
		if errs := convert(o, &x); errs != nil {
			return errs, true
		}
		return appsvalidation.ValidateStatefulSet(&x, appsvalidation.StatefulSetValidationOptions{}, corevalidation.PodValidationOptions{}), true
	}
	return nil, false
}
