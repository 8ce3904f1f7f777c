package framework

import (
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	policylisters "k8s.io/client-go/listers/policy/v1"
	resourcelisters "k8s.io/client-go/listers/resource/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
)

// Listers are the read-only views of cluster objects other than nodes and
// pods that plugins consult: namespace labels (pod affinity's
// namespaceSelector), the selectors of Services and controllers (system
// default topology spreading), PodDisruptionBudgets (preemption) and
// storage objects (volume plugins). In a cluster they are informers'
// listers; in a simulation they are indexers filled from the manifests.
type Listers struct {
	Namespaces             corelisters.NamespaceLister
	Services               corelisters.ServiceLister
	ReplicationControllers corelisters.ReplicationControllerLister
	ReplicaSets            appslisters.ReplicaSetLister
	StatefulSets           appslisters.StatefulSetLister
	PodDisruptionBudgets   policylisters.PodDisruptionBudgetLister
	PersistentVolumeClaims corelisters.PersistentVolumeClaimLister
	PersistentVolumes      corelisters.PersistentVolumeLister
	StorageClasses         storagelisters.StorageClassLister
	CSINodes               storagelisters.CSINodeLister
	CSIDrivers             storagelisters.CSIDriverLister
	VolumeAttachments      storagelisters.VolumeAttachmentLister
	CSIStorageCapacities   storagelisters.CSIStorageCapacityLister
	// Dynamic resource allocation (DynamicResources).
	ResourceClaims resourcelisters.ResourceClaimLister
	ResourceSlices resourcelisters.ResourceSliceLister
	DeviceClasses  resourcelisters.DeviceClassLister
	// DeviceTaintRules taint the devices they select (DRADeviceTaintRules).
	DeviceTaintRules resourcelisters.DeviceTaintRuleLister
}

// StaticListers returns listers over a fixed set of objects (a simulation,
// a test). Objects of other types are ignored; nil yields empty listers.
func StaticListers(objs ...interface{}) (Listers, error) {
	l, _, err := IndexedListers(objs...)
	return l, err
}

// IndexedListers is StaticListers with a function that adds an object
// later (a simulation's timeline creating Services or controllers), or
// removes one given as a DeletedObject; objects of other types are
// ignored.
func IndexedListers(objs ...interface{}) (Listers, func(obj interface{}) error, error) {
	namespaced := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	idx := map[string]cache.Indexer{}
	for _, k := range []string{"ns", "svc", "rc", "rs", "sts", "pdb", "pvc", "pv", "sc", "csinode", "csidriver", "va", "csc", "claim", "slice", "dc", "dtr"} {
		idx[k] = namespaced()
	}
	add := func(o interface{}) error {
		deleted := false
		if d, ok := o.(DeletedObject); ok {
			o, deleted = d.Obj, true
		}
		var k string
		switch o.(type) {
		case *v1.Namespace:
			k = "ns"
		case *v1.Service:
			k = "svc"
		case *v1.ReplicationController:
			k = "rc"
		case *appsv1.ReplicaSet:
			k = "rs"
		case *appsv1.StatefulSet:
			k = "sts"
		case *policyv1.PodDisruptionBudget:
			k = "pdb"
		case *v1.PersistentVolumeClaim:
			k = "pvc"
		case *v1.PersistentVolume:
			k = "pv"
		case *storagev1.StorageClass:
			k = "sc"
		case *storagev1.CSINode:
			k = "csinode"
		case *storagev1.CSIDriver:
			k = "csidriver"
		case *storagev1.VolumeAttachment:
			k = "va"
		case *storagev1.CSIStorageCapacity:
			k = "csc"
		case *resourceapi.ResourceClaim:
			k = "claim"
		case *resourceapi.ResourceSlice:
			k = "slice"
		case *resourceapi.DeviceClass:
			k = "dc"
		case *resourceapi.DeviceTaintRule:
			k = "dtr"
		default:
			return nil
		}
		if deleted {
			return idx[k].Delete(o)
		}
		return idx[k].Add(o)
	}
	for _, o := range objs {
		if err := add(o); err != nil {
			return Listers{}, nil, err
		}
	}
	return Listers{
		Namespaces:             corelisters.NewNamespaceLister(idx["ns"]),
		Services:               corelisters.NewServiceLister(idx["svc"]),
		ReplicationControllers: corelisters.NewReplicationControllerLister(idx["rc"]),
		ReplicaSets:            appslisters.NewReplicaSetLister(idx["rs"]),
		StatefulSets:           appslisters.NewStatefulSetLister(idx["sts"]),
		PodDisruptionBudgets:   policylisters.NewPodDisruptionBudgetLister(idx["pdb"]),
		PersistentVolumeClaims: corelisters.NewPersistentVolumeClaimLister(idx["pvc"]),
		PersistentVolumes:      corelisters.NewPersistentVolumeLister(idx["pv"]),
		StorageClasses:         storagelisters.NewStorageClassLister(idx["sc"]),
		CSINodes:               storagelisters.NewCSINodeLister(idx["csinode"]),
		CSIDrivers:             storagelisters.NewCSIDriverLister(idx["csidriver"]),
		VolumeAttachments:      storagelisters.NewVolumeAttachmentLister(idx["va"]),
		CSIStorageCapacities:   storagelisters.NewCSIStorageCapacityLister(idx["csc"]),
		ResourceClaims:         resourcelisters.NewResourceClaimLister(idx["claim"]),
		ResourceSlices:         resourcelisters.NewResourceSliceLister(idx["slice"]),
		DeviceClasses:          resourcelisters.NewDeviceClassLister(idx["dc"]),
		DeviceTaintRules:       resourcelisters.NewDeviceTaintRuleLister(idx["dtr"]),
	}, add, nil
}

// DeletedObject given to IndexedListers' add function removes the object
// from its lister (a simulation deleting a ResourceClaim).
type DeletedObject struct{ Obj interface{} }

// EmptyListers returns listers that hold nothing.
func EmptyListers() Listers {
	l, _ := StaticListers()
	return l
}

// NamespaceLabels returns the labels of a namespace, empty when it is not
// known (as upstream's GetNamespaceLabelsSnapshot).
func (l Listers) NamespaceLabels(ns string) map[string]string {
	if l.Namespaces == nil {
		return nil
	}
	n, err := l.Namespaces.Get(ns)
	if err != nil {
		return nil
	}
	return n.Labels
}
