package kube

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Informers are the scheduler's shared informers: all nodes, and the pods
// that are not terminal (as kube-scheduler's pod informer filters them).
type Informers struct {
	nodes informers.SharedInformerFactory
	pods  informers.SharedInformerFactory
	// handlers report when the initial list has been delivered to the
	// scheduler's handlers, not just stored: scheduling before that would
	// see only part of the cluster.
	handlers []cache.ResourceEventHandlerRegistration
	// podGroups: watch scheduling.k8s.io/v1beta1 PodGroups (the
	// GenericWorkload gate; the API group must be served).
	podGroups bool
}

// EnablePodGroups makes AddHandlers watch PodGroups, as kube-scheduler
// does with the GenericWorkload gate on.
func (i *Informers) EnablePodGroups() { i.podGroups = true }

// NewInformers builds the factories; resync 0, as kube-scheduler.
func NewInformers(client kubernetes.Interface) *Informers {
	notTerminal := fields.ParseSelectorOrDie("status.phase!=" + string(v1.PodSucceeded) + ",status.phase!=" + string(v1.PodFailed))
	return &Informers{
		nodes: informers.NewSharedInformerFactory(client, 0),
		pods: informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = notTerminal.String()
		}), informers.WithTransform(trimManagedFields)),
	}
}

// trimManagedFields drops metadata.managedFields from the pods the
// informer keeps, as kube-scheduler's pod informer does (newPodInformer in
// v1.37.2's pkg/scheduler/scheduler.go): nothing here reads them, and they
// are a large part of a pod that has been created, bound and patched.
func trimManagedFields(obj interface{}) (interface{}, error) {
	if p, ok := obj.(*v1.Pod); ok && p.ManagedFields != nil {
		p.ManagedFields = nil
	}
	return obj, nil
}

// AddHandlers routes informer events to the scheduler's handlers and gives
// the world the pod and node listers.
func (i *Informers) AddHandlers(h cluster.EventHandler, w *World) error {
	podInformer := i.pods.Core().V1().Pods()
	w.SetPodLister(podInformer.Lister())
	w.SetNodeLister(i.nodes.Core().V1().Nodes().Lister())
	reg, err := i.nodes.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if n, ok := obj.(*v1.Node); ok {
				h.OnNodeAdd(n)
			}
		},
		UpdateFunc: func(o, n interface{}) {
			on, ok1 := o.(*v1.Node)
			nn, ok2 := n.(*v1.Node)
			if ok1 && ok2 {
				h.OnNodeUpdate(on, nn)
			}
		},
		DeleteFunc: func(obj interface{}) {
			if n, ok := unwrap(obj).(*v1.Node); ok {
				h.OnNodeDelete(n)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("adding node handlers: %w", err)
	}
	i.handlers = append(i.handlers, reg)
	reg, err = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if p, ok := obj.(*v1.Pod); ok {
				h.OnPodAdd(p)
			}
		},
		UpdateFunc: func(o, n interface{}) {
			op, ok1 := o.(*v1.Pod)
			np, ok2 := n.(*v1.Pod)
			if ok1 && ok2 {
				h.OnPodUpdate(op, np)
			}
		},
		DeleteFunc: func(obj interface{}) {
			if p, ok := unwrap(obj).(*v1.Pod); ok {
				h.OnPodDelete(p)
			}
		},
	})
	if err != nil {
		return fmt.Errorf("adding pod handlers: %w", err)
	}
	i.handlers = append(i.handlers, reg)
	// The other objects plugins read: their changes can make a rejected
	// pod schedulable (a claim created, a class added, namespace labels).
	others := []struct {
		resource framework.EventResource
		informer cache.SharedIndexInformer
	}{
		{framework.PersistentVolumeClaim, i.nodes.Core().V1().PersistentVolumeClaims().Informer()},
		{framework.PersistentVolume, i.nodes.Core().V1().PersistentVolumes().Informer()},
		{framework.StorageClass, i.nodes.Storage().V1().StorageClasses().Informer()},
		{framework.CSINode, i.nodes.Storage().V1().CSINodes().Informer()},
		{framework.CSIDriver, i.nodes.Storage().V1().CSIDrivers().Informer()},
		{framework.VolumeAttachment, i.nodes.Storage().V1().VolumeAttachments().Informer()},
		{framework.CSIStorageCapacity, i.nodes.Storage().V1().CSIStorageCapacities().Informer()},
		{framework.Namespace, i.nodes.Core().V1().Namespaces().Informer()},
		{framework.ResourceClaim, i.nodes.Resource().V1().ResourceClaims().Informer()},
		{framework.ResourceSlice, i.nodes.Resource().V1().ResourceSlices().Informer()},
		{framework.DeviceClass, i.nodes.Resource().V1().DeviceClasses().Informer()},
		// A DeviceTaintRule changes the devices of the slices it selects:
		// kube-scheduler's slice tracker reports it as a ResourceSlice update.
		{framework.ResourceSlice, i.nodes.Resource().V1().DeviceTaintRules().Informer()},
	}
	if i.podGroups {
		others = append(others, struct {
			resource framework.EventResource
			informer cache.SharedIndexInformer
		}{framework.PodGroupEvent, i.nodes.Scheduling().V1beta1().PodGroups().Informer()})
	}
	for _, o := range others {
		res := o.resource
		reg, err := o.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj interface{}) {
				h.OnClusterEvent(framework.ClusterEvent{Resource: res, ActionType: framework.Add, Label: string(res) + "Add"}, nil, obj)
			},
			UpdateFunc: func(o, n interface{}) {
				h.OnClusterEvent(framework.ClusterEvent{Resource: res, ActionType: framework.Update, Label: string(res) + "Update"}, o, n)
			},
			DeleteFunc: func(obj interface{}) {
				h.OnClusterEvent(framework.ClusterEvent{Resource: res, ActionType: framework.Delete, Label: string(res) + "Delete"}, unwrap(obj), nil)
			},
		})
		if err != nil {
			return fmt.Errorf("adding %s handlers: %w", res, err)
		}
		i.handlers = append(i.handlers, reg)
	}
	return nil
}

func unwrap(obj interface{}) interface{} {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj
	}
	return obj
}

// Listers returns the listers plugins read (and registers their
// informers, so call it before Start): namespaces, Services and
// controllers, PodDisruptionBudgets, storage objects, and the objects of
// dynamic resource allocation.
func (i *Informers) Listers() framework.Listers {
	f := i.nodes
	return framework.Listers{
		Namespaces:             f.Core().V1().Namespaces().Lister(),
		Services:               f.Core().V1().Services().Lister(),
		ReplicationControllers: f.Core().V1().ReplicationControllers().Lister(),
		ReplicaSets:            f.Apps().V1().ReplicaSets().Lister(),
		StatefulSets:           f.Apps().V1().StatefulSets().Lister(),
		PodDisruptionBudgets:   f.Policy().V1().PodDisruptionBudgets().Lister(),
		PersistentVolumeClaims: f.Core().V1().PersistentVolumeClaims().Lister(),
		PersistentVolumes:      f.Core().V1().PersistentVolumes().Lister(),
		StorageClasses:         f.Storage().V1().StorageClasses().Lister(),
		CSINodes:               f.Storage().V1().CSINodes().Lister(),
		CSIDrivers:             f.Storage().V1().CSIDrivers().Lister(),
		VolumeAttachments:      f.Storage().V1().VolumeAttachments().Lister(),
		CSIStorageCapacities:   f.Storage().V1().CSIStorageCapacities().Lister(),
		ResourceClaims:         f.Resource().V1().ResourceClaims().Lister(),
		ResourceSlices:         f.Resource().V1().ResourceSlices().Lister(),
		DeviceClasses:          f.Resource().V1().DeviceClasses().Lister(),
		DeviceTaintRules:       f.Resource().V1().DeviceTaintRules().Lister(),
	}
}

// Start starts the informers until ctx ends.
func (i *Informers) Start(ctx context.Context) {
	i.nodes.Start(ctx.Done())
	i.pods.Start(ctx.Done())
}

// WaitForSync blocks until the caches are filled and their initial
// contents delivered to the handlers, or ctx ends (false).
func (i *Informers) WaitForSync(ctx context.Context) bool {
	ok := true
	for _, res := range i.nodes.WaitForCacheSync(ctx.Done()) {
		ok = ok && res
	}
	for _, res := range i.pods.WaitForCacheSync(ctx.Done()) {
		ok = ok && res
	}
	synced := make([]cache.InformerSynced, 0, len(i.handlers))
	for _, h := range i.handlers {
		synced = append(synced, h.HasSynced)
	}
	return ok && cache.WaitForCacheSync(ctx.Done(), synced...)
}

// Shutdown waits for the informers' goroutines after ctx ended.
func (i *Informers) Shutdown() {
	i.nodes.Shutdown()
	i.pods.Shutdown()
}
