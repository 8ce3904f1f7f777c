package cluster

import (
	"reflect"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Cluster is what a set of manifests describes.
type Cluster struct {
	Nodes           []*v1.Node
	Pods            []*v1.Pod
	Namespaces      []*v1.Namespace
	PriorityClasses []*schedulingv1.PriorityClass
	Services        []*v1.Service
	ReplicaSets     []*appsv1.ReplicaSet
	StatefulSets    []*appsv1.StatefulSet
	RCs             []*v1.ReplicationController
	// Others are the other objects plugins read: PodDisruptionBudgets,
	// PersistentVolumeClaims, PersistentVolumes, StorageClasses, CSINodes,
	// CSIDrivers, VolumeAttachments, CSIStorageCapacities.
	Others []interface{}
	// Skipped counts objects of kinds the simulator does not use, by kind.
	Skipped map[string]int
	// Warnings are about input taken as it is that the user probably did
	// not mean (a Node without capacity, a pod bound to a node that does
	// not exist), one line each, naming the file, the document and the
	// object; the commands print them with the skipped kinds.
	Warnings []string
	// Sources says where each pod came from (namespace/name -> "file:
	// document N", then ", <workload>" for the pods of workloads), the
	// start of an error about it.
	Sources map[string]string
	// NodeSources says where each Node came from (name -> "file:
	// document N").
	NodeSources map[string]string

	// Deployments, DaemonSets and Jobs are workloads read only to create
	// their pods (ReplicaSets, StatefulSets and ReplicationControllers
	// above are workloads too).
	Deployments []*appsv1.Deployment
	DaemonSets  []*appsv1.DaemonSet
	Jobs        []*batchv1.Job
	// Workloads are the workloads, DaemonSets first; WorkloadOf maps a pod
	// (namespace/name) to its workload's index, for the pods they created
	// and the existing pods they control.
	Workloads  []Workload
	WorkloadOf map[string]int
	// Ordered are the StatefulSet pods created one at a time during the
	// simulation.
	Ordered []*OrderedSet

	workloads []workloadInput
	// controllers run the workloads' controllers (again, in a timeline).
	controllers *controllers
	// rsIndex is ReplicaSetsOf's index.
	rsIndex replicaSetIndex
	// Scenario is the timeline read from the files, if any.
	Scenario *Scenario
	// PodGroups are scheduling.k8s.io/v1beta1 PodGroups (the
	// GenericWorkload gate schedules each as one).
	PodGroups []*schedulingv1beta1.PodGroup
	// JobPodGroups: the Job controller gives each new Job a PodGroup (the
	// WorkloadWithJob gate; jobgroups.go). Set before RunControllers.
	JobPodGroups bool
	// PodGroupSources says where each PodGroup came from (namespace/name
	// -> "file: document N", or its Job's source).
	PodGroupSources map[string]string
	// HPAs are the HorizontalPodAutoscalers (autoscaling/v1 ones as v2),
	// read for their bounds: the questions ask what their targets need at
	// maxReplicas.
	HPAs []*autoscalingv2.HorizontalPodAutoscaler
	// CronJobs are read for the Jobs their schedules create.
	CronJobs []*batchv1.CronJob
	// ControllerErrors are input the controllers refused (a Job's invalid
	// spec.scheduling), each naming where it was read.
	ControllerErrors []error
}

// New returns an empty cluster, ready to Add to.
func New() *Cluster {
	return &Cluster{Skipped: map[string]int{}, Sources: map[string]string{}, NodeSources: map[string]string{}}
}

// Add files a decoded object under its kind; source is where it was read
// ("file: document N").
func (c *Cluster) Add(source string, obj runtime.Object) {
	if _, filed := c.put(source, obj, -1); !filed {
		c.Skipped[obj.GetObjectKind().GroupVersionKind().Kind]++
	}
	if isWorkload(obj) {
		c.workloads = append(c.workloads, workloadInput{obj: obj, source: source})
	}
}

// put files obj in its kind's list at index at, or at the end when at is
// negative, with its source; it returns the index, and false for a kind
// the cluster does not file.
func (c *Cluster) put(source string, obj runtime.Object, at int) (int, bool) {
	switch o := obj.(type) {
	case *v1.Node:
		if c.NodeSources == nil {
			c.NodeSources = map[string]string{}
		}
		c.NodeSources[o.Name] = source
		return place(&c.Nodes, o, at), true
	case *v1.Pod:
		c.Sources[PodKey(o)] = source
		return place(&c.Pods, o, at), true
	case *v1.Namespace:
		return place(&c.Namespaces, o, at), true
	case *schedulingv1.PriorityClass:
		return place(&c.PriorityClasses, o, at), true
	case *v1.Service:
		return place(&c.Services, o, at), true
	case *appsv1.ReplicaSet:
		return place(&c.ReplicaSets, o, at), true
	case *appsv1.StatefulSet:
		return place(&c.StatefulSets, o, at), true
	case *v1.ReplicationController:
		return place(&c.RCs, o, at), true
	case *appsv1.Deployment:
		return place(&c.Deployments, o, at), true
	case *appsv1.DaemonSet:
		return place(&c.DaemonSets, o, at), true
	case *batchv1.Job:
		return place(&c.Jobs, o, at), true
	case *autoscalingv2.HorizontalPodAutoscaler:
		return place(&c.HPAs, o, at), true
	case *autoscalingv1.HorizontalPodAutoscaler:
		return place(&c.HPAs, HPAFromV1(o), at), true
	case *batchv1.CronJob:
		return place(&c.CronJobs, o, at), true
	case *schedulingv1beta1.PodGroup:
		if c.PodGroupSources == nil {
			c.PodGroupSources = map[string]string{}
		}
		c.PodGroupSources[o.Namespace+"/"+o.Name] = source
		return place(&c.PodGroups, o, at), true
	case *policyv1.PodDisruptionBudget, *v1.PersistentVolumeClaim, *v1.PersistentVolume, *storagev1.StorageClass, *storagev1.CSINode,
		*storagev1.CSIDriver, *storagev1.VolumeAttachment, *storagev1.CSIStorageCapacity,
		*resourceapi.DeviceClass, *resourceapi.ResourceSlice, *resourceapi.ResourceClaim, *resourceapi.ResourceClaimTemplate, *resourceapi.DeviceTaintRule:
		return place(&c.Others, interface{}(o), at), true
	}
	return 0, false
}

// place sets (*list)[at] to o, or appends o when at is negative, and
// returns o's index.
func place[T any](list *[]T, o T, at int) int {
	if at < 0 {
		*list = append(*list, o)
		return len(*list) - 1
	}
	(*list)[at] = o
	return at
}

func isWorkload(obj runtime.Object) bool {
	switch obj.(type) {
	case *appsv1.ReplicaSet, *appsv1.StatefulSet, *v1.ReplicationController, *appsv1.Deployment, *appsv1.DaemonSet, *batchv1.Job,
		*batchv1.CronJob:
		return true
	}
	return false
}

// An Applier files objects into a cluster as kubectl apply -f of the
// files in order leaves them: a later object of the same kind, namespace
// and name as one filed before takes its place (in its kind's list, its
// workload's, the sources), so the earlier one is gone everywhere. The
// objects' namespaces must be set (the loader sets them before). Objects
// filed by Add are not seen.
type Applier struct {
	c     *Cluster
	slots map[objectKey]appliedSlot
}

// Place is where an object was read: Source ("file: document N", the
// Sources' values) and its 1-based index in a List, 0 if none.
type Place struct {
	Source string
	Item   int
}

func (p Place) String() string {
	if p.Item > 0 {
		return p.Source + ", item " + strconv.Itoa(p.Item)
	}
	return p.Source
}

// objectKey is an object's kind (its Go type's name, which is its kind's:
// an autoscaling/v1 HorizontalPodAutoscaler is the v2 one), namespace and
// name.
type objectKey struct{ kind, namespace, name string }

// appliedSlot is where an applied object was filed: its index in its
// kind's list and in c.workloads (-1 if it is no workload), and where it
// was read.
type appliedSlot struct {
	at, workload int
	place        Place
}

// NewApplier returns an Applier filing into c.
func (c *Cluster) NewApplier() *Applier {
	return &Applier{c: c, slots: map[objectKey]appliedSlot{}}
}

// Apply files obj read at place. When an object of the same kind,
// namespace and name was applied before, obj replaces it and Apply
// returns where that one was read, and true.
func (a *Applier) Apply(place Place, obj runtime.Object) (replaced Place, ok bool) {
	m, isMeta := obj.(metav1.Object)
	if !isMeta {
		a.c.Add(place.Source, obj)
		return Place{}, false
	}
	k := objectKey{kind: reflect.TypeOf(obj).Elem().Name(), namespace: m.GetNamespace(), name: m.GetName()}
	prev, dup := a.slots[k]
	if !dup {
		at, filed := a.c.put(place.Source, obj, -1)
		if !filed {
			a.c.Skipped[obj.GetObjectKind().GroupVersionKind().Kind]++
			return Place{}, false
		}
		wl := -1
		if isWorkload(obj) {
			a.c.workloads = append(a.c.workloads, workloadInput{obj: obj, source: place.Source})
			wl = len(a.c.workloads) - 1
		}
		a.slots[k] = appliedSlot{at: at, workload: wl, place: place}
		return Place{}, false
	}
	a.c.put(place.Source, obj, prev.at)
	if prev.workload >= 0 {
		a.c.workloads[prev.workload] = workloadInput{obj: obj, source: place.Source}
	}
	a.slots[k] = appliedSlot{at: prev.at, workload: prev.workload, place: place}
	return prev.place, true
}

// Objects lists the objects plugins read through listers.
func (c *Cluster) Objects() []interface{} {
	var out []interface{}
	for _, o := range c.Namespaces {
		out = append(out, o)
	}
	for _, o := range c.Services {
		out = append(out, o)
	}
	for _, o := range c.ReplicaSets {
		out = append(out, o)
	}
	for _, o := range c.StatefulSets {
		out = append(out, o)
	}
	for _, o := range c.RCs {
		out = append(out, o)
	}
	return append(out, c.Others...)
}

// PodKey is a pod's namespace/name, the default namespace when it has
// none.
func PodKey(p *v1.Pod) string {
	ns := p.Namespace
	if ns == "" {
		ns = v1.NamespaceDefault
	}
	return ns + "/" + p.Name
}

// HPAFromV1 is an autoscaling/v1 HorizontalPodAutoscaler as the API
// server serves it in autoscaling/v2: the same target and bounds, its
// targetCPUUtilizationPercentage a cpu Resource metric.
func HPAFromV1(h *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   h.TypeMeta,
		ObjectMeta: h.ObjectMeta,
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: h.Spec.ScaleTargetRef.Kind,
				Name: h.Spec.ScaleTargetRef.Name, APIVersion: h.Spec.ScaleTargetRef.APIVersion},
			MinReplicas: h.Spec.MinReplicas,
			MaxReplicas: h.Spec.MaxReplicas,
		},
	}
	out.APIVersion = autoscalingv2.SchemeGroupVersion.String()
	if p := h.Spec.TargetCPUUtilizationPercentage; p != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{Name: v1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: p}}}}
	}
	return out
}
