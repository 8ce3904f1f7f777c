// Package cluster defines the world the scheduling core writes to, in small
// role interfaces. kube/ implements them with client-go against a real API
// server; memory/ implements them with an in-memory store for simulation.
// The core never imports a clientset.
package cluster

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"

	"github.com/kubesched/kubesched/pkg/framework"
)

// StatusWriter records a scheduling outcome on a pod: the PodScheduled
// condition and the nominated node (nil leaves it unchanged, "" clears it).
type StatusWriter interface {
	UpdatePodStatus(ctx context.Context, pod *v1.Pod, condition *v1.PodCondition, nominatedNodeName *string) error
}

// Evictor deletes a preemption victim; NotFound (apierrors) when it is
// already gone.
type Evictor interface {
	Evict(ctx context.Context, victim *v1.Pod, preemptor framework.Preemptor) error
}

// PodGetter reads the world's current version of a pod (an informer's
// lister in a cluster); ok is false when the pod is gone.
type PodGetter interface {
	GetPod(namespace, name string) (pod *v1.Pod, ok bool)
}

// NodeGetter reads the world's current version of a node (an informer's
// lister in a cluster), safe from any goroutine: the binding cycle reads
// nodes here, never from the scheduling cycle's snapshot.
type NodeGetter interface {
	GetNode(name string) (node *v1.Node, ok bool)
}

// World is everything the scheduler writes, and the pod and node reads it
// needs to decide whether a failed pod still exists and, in the binding
// cycle, what a node is now.
type World interface {
	framework.Binder
	PodGetter
	NodeGetter
	StatusWriter
	Evictor
	framework.VolumeWriter
	framework.ClaimWriter
	// EventRecorder records events as the named profile (the events'
	// reportingController, as upstream does per profile).
	EventRecorder(schedulerName string) events.EventRecorder
}

// EventHandler is how the world tells the scheduler what changed; informer
// callbacks in a cluster, the store's notifications in a simulation.
type EventHandler interface {
	OnNodeAdd(node *v1.Node)
	OnNodeUpdate(oldNode, newNode *v1.Node)
	OnNodeDelete(node *v1.Node)
	OnPodAdd(pod *v1.Pod)
	OnPodUpdate(oldPod, newPod *v1.Pod)
	OnPodDelete(pod *v1.Pod)
	// OnClusterEvent reports a change to another object plugins read
	// (a PersistentVolumeClaim, a StorageClass, a Namespace, ...); oldObj is
	// nil for an addition, newObj nil for a deletion.
	OnClusterEvent(event framework.ClusterEvent, oldObj, newObj interface{})
}
