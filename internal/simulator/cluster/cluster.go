package cluster

import (
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
	switch o := obj.(type) {
	case *v1.Node:
		c.Nodes = append(c.Nodes, o)
		if c.NodeSources == nil {
			c.NodeSources = map[string]string{}
		}
		c.NodeSources[o.Name] = source
	case *v1.Pod:
		c.Pods = append(c.Pods, o)
		c.Sources[PodKey(o)] = source
	case *v1.Namespace:
		c.Namespaces = append(c.Namespaces, o)
	case *schedulingv1.PriorityClass:
		c.PriorityClasses = append(c.PriorityClasses, o)
	case *v1.Service:
		c.Services = append(c.Services, o)
	case *appsv1.ReplicaSet:
		c.ReplicaSets = append(c.ReplicaSets, o)
	case *appsv1.StatefulSet:
		c.StatefulSets = append(c.StatefulSets, o)
	case *v1.ReplicationController:
		c.RCs = append(c.RCs, o)
	case *appsv1.Deployment:
		c.Deployments = append(c.Deployments, o)
	case *appsv1.DaemonSet:
		c.DaemonSets = append(c.DaemonSets, o)
	case *batchv1.Job:
		c.Jobs = append(c.Jobs, o)
	case *autoscalingv2.HorizontalPodAutoscaler:
		c.HPAs = append(c.HPAs, o)
	case *autoscalingv1.HorizontalPodAutoscaler:
		c.HPAs = append(c.HPAs, HPAFromV1(o))
	case *batchv1.CronJob:
		c.CronJobs = append(c.CronJobs, o)
	case *schedulingv1beta1.PodGroup:
		c.PodGroups = append(c.PodGroups, o)
		if c.PodGroupSources == nil {
			c.PodGroupSources = map[string]string{}
		}
		c.PodGroupSources[o.Namespace+"/"+o.Name] = source
	case *policyv1.PodDisruptionBudget, *v1.PersistentVolumeClaim, *v1.PersistentVolume, *storagev1.StorageClass, *storagev1.CSINode,
		*storagev1.CSIDriver, *storagev1.VolumeAttachment, *storagev1.CSIStorageCapacity,
		*resourceapi.DeviceClass, *resourceapi.ResourceSlice, *resourceapi.ResourceClaim, *resourceapi.ResourceClaimTemplate, *resourceapi.DeviceTaintRule:
		c.Others = append(c.Others, o)
	default:
		c.Skipped[obj.GetObjectKind().GroupVersionKind().Kind]++
	}
	switch obj.(type) {
	case *appsv1.ReplicaSet, *appsv1.StatefulSet, *v1.ReplicationController, *appsv1.Deployment, *appsv1.DaemonSet, *batchv1.Job:
		c.workloads = append(c.workloads, workloadInput{obj: obj, source: source})
	}
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
