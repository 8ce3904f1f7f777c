package simulator

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Storage as a cluster's controllers make it, played by the store
// (memory's pvcontroller.go): the claims the world lists while it runs
// (a StatefulSet's, a step's) are admitted and synced at once, and a
// volume or a class that appears syncs the claims still waiting.

// playVolumeControllers has the store play the PV controller on the
// listers' volumes (SetVolumes) and returns the function the world lists
// the objects created on the way through: a claim gets the default class
// (the DefaultStorageClass admission plugin) before it is listed, then is
// bound or provisioned as the PV controller and a provisioner would; a
// PersistentVolume or a StorageClass is announced to the scheduler and
// syncs every claim not bound (one may now match, or have a default
// class). An object the listers already hold is not listed again: the
// API server refuses to create it twice (and a step's creations reach
// this function twice).
func (w *World) playVolumeControllers(listers framework.Listers, addListed func(interface{}) error) func(interface{}) error {
	store := w.Store
	store.SetVolumes(listers, addListed)
	return func(o interface{}) error {
		switch o := o.(type) {
		case *v1.PersistentVolumeClaim:
			if _, err := listers.PersistentVolumeClaims.PersistentVolumeClaims(o.Namespace).Get(o.Name); err == nil {
				return nil
			}
			store.AdmitClaim(o)
			if err := addListed(o); err != nil {
				return err
			}
			store.NotifyAdded(framework.PersistentVolumeClaim, o)
			store.SyncClaim(o.Namespace, o.Name)
			return nil
		case *v1.PersistentVolume:
			if _, err := listers.PersistentVolumes.Get(o.Name); err == nil {
				return nil
			}
			if err := addListed(o); err != nil {
				return err
			}
			store.NotifyAdded(framework.PersistentVolume, o)
			store.SyncVolumes()
			return nil
		case *storagev1.StorageClass:
			if _, err := listers.StorageClasses.Get(o.Name); err == nil {
				return nil
			}
			if err := addListed(o); err != nil {
				return err
			}
			store.NotifyAdded(framework.StorageClass, o)
			store.SyncVolumes()
			return nil
		}
		return addListed(o)
	}
}

// SyncVolumes is the PV controller's pass over the world's claims as a
// run starts (runLoop): the claims read from the files that an Immediate
// class's provisioner, a static volume or a pre-binding settles are bound
// before the scheduler sees their pods, as the controllers of a cluster
// would have bound them before the pods could run. The world as NewWorld
// builds it is the files as they are, what explain judges a pod against
// (kube-scheduler's answer now). Later passes, one per run, find nothing
// new unless the world changed outside the store's sight.
func (w *World) SyncVolumes() {
	if w.Store.SyncVolumes() {
		w.Store.Flush()
	}
}
