// Package kube is the real world: client-go against a kube-apiserver.
// Writes are the ones kube-scheduler makes (the pods/binding subresource, a
// status patch of the PodScheduled condition and nominatedNodeName, events
// through events.k8s.io/v1); reads come from shared informers whose event
// handlers feed the scheduler.
package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"

	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/pkg/framework"
)

// World implements cluster.World with a clientset.
type World struct {
	client      kubernetes.Interface
	broadcaster events.EventBroadcaster
	pods        corelisters.PodLister
	nodes       corelisters.NodeLister

	mu        sync.Mutex
	recorders map[string]events.EventRecorder
}

var _ cluster.World = &World{}

// NewWorld returns a world writing through client. Events are recorded once
// StartEvents is called; pods are read from the lister set by SetPodLister.
func NewWorld(client kubernetes.Interface) *World {
	return &World{
		client:      client,
		broadcaster: events.NewBroadcaster(newEventSink(client)),
		recorders:   map[string]events.EventRecorder{},
	}
}

// StartEvents starts sending events until stop is closed.
func (w *World) StartEvents(stop <-chan struct{}) { w.broadcaster.StartRecordingToSink(stop) }

// ShutdownEvents flushes and stops the event broadcaster.
func (w *World) ShutdownEvents() { w.broadcaster.Shutdown() }

// SetPodLister sets the informer lister GetPod reads.
func (w *World) SetPodLister(l corelisters.PodLister) { w.pods = l }

// SetNodeLister sets the informer lister GetNode reads.
func (w *World) SetNodeLister(l corelisters.NodeLister) { w.nodes = l }

// EventRecorder implements cluster.World: one recorder per profile, whose
// name is the events' reportingController.
func (w *World) EventRecorder(schedulerName string) events.EventRecorder {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.recorders[schedulerName]
	if !ok {
		r = w.broadcaster.NewRecorder(scheme.Scheme, schedulerName)
		w.recorders[schedulerName] = r
	}
	return r
}

// GetPod implements cluster.PodGetter from the informer cache.
func (w *World) GetPod(namespace, name string) (*v1.Pod, bool) {
	if w.pods == nil {
		return nil, false
	}
	p, err := w.pods.Pods(namespace).Get(name)
	if err != nil {
		return nil, false
	}
	return p, true
}

// GetNode implements cluster.NodeGetter from the informer cache (safe
// from any goroutine).
func (w *World) GetNode(name string) (*v1.Node, bool) {
	if w.nodes == nil {
		return nil, false
	}
	n, err := w.nodes.Get(name)
	if err != nil {
		return nil, false
	}
	return n, true
}

// Bind implements framework.Binder through the pods/binding subresource.
func (w *World) Bind(ctx context.Context, b *v1.Binding) error {
	return bind(ctx, w.client, b)
}

// UpdatePodStatus implements cluster.StatusWriter. Like upstream it patches
// only when the condition or nomination changes, with a strategic merge
// patch of the status subresource (conditions merge by type).
func (w *World) UpdatePodStatus(ctx context.Context, pod *v1.Pod, cond *v1.PodCondition, nominated *string) error {
	status := map[string]interface{}{}
	if cond != nil && conditionChanged(pod, cond) {
		c := *cond
		// PodObservedGenerationTracking is GA (locked on) in v1.37.
		c.ObservedGeneration = pod.Generation
		now := metav1.Now()
		c.LastProbeTime = now
		c.LastTransitionTime = now
		if old := findCondition(pod, cond.Type); old != nil && old.Status == cond.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		status["conditions"] = []v1.PodCondition{c}
	}
	if nominated != nil && pod.Status.NominatedNodeName != *nominated {
		if *nominated == "" {
			status["nominatedNodeName"] = nil
		} else {
			status["nominatedNodeName"] = *nominated
		}
	}
	if len(status) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]interface{}{
		"metadata": map[string]interface{}{"uid": pod.UID},
		"status":   status,
	})
	if err != nil {
		return err
	}
	_, err = w.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patching status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

func findCondition(pod *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func conditionChanged(pod *v1.Pod, c *v1.PodCondition) bool {
	old := findCondition(pod, c.Type)
	return old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message
}

// UpdatePersistentVolume implements framework.VolumeWriter.
func (w *World) UpdatePersistentVolume(ctx context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	return w.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
}

// UpdatePersistentVolumeClaim implements framework.VolumeWriter.
func (w *World) UpdatePersistentVolumeClaim(ctx context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	return w.client.CoreV1().PersistentVolumeClaims(pvc.Namespace).Update(ctx, pvc, metav1.UpdateOptions{})
}

// Evict implements cluster.Evictor as kube-scheduler's preemption does:
// the victim gets a DisruptionTarget condition (reason
// PreemptionByScheduler) so Job podFailurePolicy rules and the "victim
// still terminating" guard see it, then it is deleted with its UID as a
// precondition (a recreated pod of the same name is spared). A victim
// already gone gives the API's NotFound (at the patch or the delete, which
// stops there), which preemption takes as evicted, with no event, as
// upstream's PreemptPod.
func (w *World) Evict(ctx context.Context, victim *v1.Pod, preemptor framework.Preemptor) error {
	cond := &v1.PodCondition{
		Type:    v1.DisruptionTarget,
		Status:  v1.ConditionTrue,
		Reason:  v1.PodReasonPreemptionByScheduler,
		Message: fmt.Sprintf("%s: preempting to accommodate a higher priority %s", preemptor.SchedulerName, preemptor.Kind),
	}
	if err := w.UpdatePodStatus(ctx, victim, cond, nil); err != nil {
		return err
	}
	uid := victim.UID
	return w.client.CoreV1().Pods(victim.Namespace).Delete(ctx, victim.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
}

// ListCluster reads what explain needs from the API: all nodes, the
// non-terminal pods, namespaces, and the objects that define default
// topology spreading (Services, ReplicaSets, StatefulSets, RCs).
func ListCluster(ctx context.Context, client kubernetes.Interface) (*ClusterObjects, error) {
	out := &ClusterObjects{}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	for i := range nodes.Items {
		out.Nodes = append(out.Nodes, &nodes.Items[i])
	}
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	for i := range pods.Items {
		out.Pods = append(out.Pods, &pods.Items[i])
	}
	nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	for i := range nss.Items {
		out.Namespaces = append(out.Namespaces, &nss.Items[i])
	}
	svcs, err := client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing services: %w", err)
	}
	for i := range svcs.Items {
		out.Services = append(out.Services, &svcs.Items[i])
	}
	// Controllers, budgets and storage objects: explain shows what the
	// scheduler would decide, and its plugins read these.
	lists := []struct {
		what string
		list func() ([]interface{}, error)
	}{
		{"replicasets", func() ([]interface{}, error) {
			return items(client.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{}))
		}},
		{"statefulsets", func() ([]interface{}, error) {
			return items(client.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{}))
		}},
		{"replicationcontrollers", func() ([]interface{}, error) {
			return items(client.CoreV1().ReplicationControllers("").List(ctx, metav1.ListOptions{}))
		}},
		{"poddisruptionbudgets", func() ([]interface{}, error) {
			return items(client.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{}))
		}},
		{"persistentvolumeclaims", func() ([]interface{}, error) {
			return items(client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{}))
		}},
		{"persistentvolumes", func() ([]interface{}, error) {
			return items(client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}))
		}},
		{"storageclasses", func() ([]interface{}, error) {
			return items(client.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{}))
		}},
		{"csinodes", func() ([]interface{}, error) {
			return items(client.StorageV1().CSINodes().List(ctx, metav1.ListOptions{}))
		}},
		{"csidrivers", func() ([]interface{}, error) {
			return items(client.StorageV1().CSIDrivers().List(ctx, metav1.ListOptions{}))
		}},
		{"volumeattachments", func() ([]interface{}, error) {
			return items(client.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{}))
		}},
		{"csistoragecapacities", func() ([]interface{}, error) {
			return items(client.StorageV1().CSIStorageCapacities("").List(ctx, metav1.ListOptions{}))
		}},
	}
	for _, l := range lists {
		objs, err := l.list()
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", l.what, err)
		}
		out.Others = append(out.Others, objs...)
	}
	return out, nil
}

// items returns pointers to a typed list's items.
func items(list runtime.Object, err error) ([]interface{}, error) {
	if err != nil {
		return nil, err
	}
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]interface{}, len(objs))
	for i, o := range objs {
		out[i] = o
	}
	return out, nil
}

// ClusterObjects is a listing of the cluster.
type ClusterObjects struct {
	Nodes      []*v1.Node
	Pods       []*v1.Pod
	Namespaces []*v1.Namespace
	Services   []*v1.Service
	// Others are controllers, budgets and storage objects.
	Others []interface{}
}

// GetResourceClaim implements framework.ClaimWriter.
func (w *World) GetResourceClaim(ctx context.Context, namespace, name string) (*resourceapi.ResourceClaim, error) {
	return w.client.ResourceV1().ResourceClaims(namespace).Get(ctx, name, metav1.GetOptions{})
}

// UpdateResourceClaim implements framework.ClaimWriter.
func (w *World) UpdateResourceClaim(ctx context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return w.client.ResourceV1().ResourceClaims(c.Namespace).Update(ctx, c, metav1.UpdateOptions{})
}

// UpdateResourceClaimStatus implements framework.ClaimWriter.
func (w *World) UpdateResourceClaimStatus(ctx context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return w.client.ResourceV1().ResourceClaims(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{})
}

// RemoveClaimReservation implements framework.ClaimWriter with
// kube-scheduler's strategic merge patch, which removes one entry of
// reservedFor without needing the latest claim (the UID guards against a
// recreated claim).
func (w *World) RemoveClaimReservation(ctx context.Context, c *resourceapi.ResourceClaim, podUID types.UID) error {
	patch := fmt.Sprintf(`{"metadata": {"uid": %q}, "status": { "reservedFor": [ {"$patch": "delete", "uid": %q} ] }}`, c.UID, podUID)
	_, err := w.client.ResourceV1().ResourceClaims(c.Namespace).Patch(ctx, c.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	return err
}

// UpdatePodGroupStatus patches a PodGroup's status subresource with the
// strategic merge patch from its old status to status, retried on
// conflicts and server timeouts, as kube-scheduler's PatchPodGroupStatus
// (v1.37.2 pkg/scheduler/util/utils.go). It is the scheduler's
// PodGroupStatusWriter.
func (w *World) UpdatePodGroupStatus(ctx context.Context, pg *schedulingv1beta1.PodGroup, status *schedulingv1beta1.PodGroupStatus) error {
	oldData, err := json.Marshal(schedulingv1beta1.PodGroup{Status: pg.Status})
	if err != nil {
		return err
	}
	newData, err := json.Marshal(schedulingv1beta1.PodGroup{Status: *status})
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &schedulingv1beta1.PodGroup{})
	if err != nil {
		return fmt.Errorf("failed to create merge patch for podgroup %q/%q: %w", pg.Namespace, pg.Name, err)
	}
	if string(patch) == "{}" {
		return nil
	}
	return retry.OnError(retry.DefaultBackoff, retriableWithConflict, func() error {
		_, err := w.client.SchedulingV1beta1().PodGroups(pg.Namespace).Patch(ctx, pg.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	})
}

// retriableWithConflict: the errors kube-scheduler retries a status patch
// on (v1.37.2 pkg/scheduler/util: Retriable or a conflict).
func retriableWithConflict(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || utilnet.IsConnectionRefused(err)
}
