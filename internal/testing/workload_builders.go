package testing

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1alpha3 "k8s.io/api/scheduling/v1alpha3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// template turns a pod built with MakePod into a pod template: its labels,
// annotations and spec.
func template(p *PodWrapper) v1.PodTemplateSpec {
	return v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: p.Labels, Annotations: p.Annotations},
		Spec:       *p.Spec.DeepCopy(),
	}
}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: v1.NamespaceDefault}
}

// selectorOf selects the template's labels.
func selectorOf(p *PodWrapper) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: p.Labels}
}

// MakeDeployment builds a Deployment of replicas copies of the pod.
func MakeDeployment(name string, replicas int32, pod *PodWrapper) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(name),
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas, Selector: selectorOf(pod), Template: template(pod)},
	}
}

// MakeReplicaSet builds a ReplicaSet of replicas copies of the pod.
func MakeReplicaSet(name string, replicas int32, pod *PodWrapper) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: meta(name),
		Spec:       appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: selectorOf(pod), Template: template(pod)},
	}
}

// MakeReplicationController builds a ReplicationController of replicas
// copies of the pod, its selector left to defaulting.
func MakeReplicationController(name string, replicas int32, pod *PodWrapper) *v1.ReplicationController {
	t := template(pod)
	return &v1.ReplicationController{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"},
		ObjectMeta: meta(name),
		Spec:       v1.ReplicationControllerSpec{Replicas: &replicas, Template: &t},
	}
}

// StatefulSetWrapper builds a StatefulSet.
type StatefulSetWrapper struct{ appsv1.StatefulSet }

// MakeStatefulSet builds a StatefulSet of replicas copies of the pod
// (OrderedReady, the default policy).
func MakeStatefulSet(name string, replicas int32, pod *PodWrapper) *StatefulSetWrapper {
	return &StatefulSetWrapper{appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: meta(name),
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, ServiceName: name, Selector: selectorOf(pod), Template: template(pod),
			PodManagementPolicy: appsv1.OrderedReadyPodManagement},
	}}
}

// Obj returns the StatefulSet.
func (s *StatefulSetWrapper) Obj() *appsv1.StatefulSet { return &s.StatefulSet }

// Parallel creates the pods all at once.
func (s *StatefulSetWrapper) Parallel() *StatefulSetWrapper {
	s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	return s
}

// StartOrdinal numbers the pods from start.
func (s *StatefulSetWrapper) StartOrdinal(start int32) *StatefulSetWrapper {
	s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: start}
	return s
}

// ClaimTemplate adds a volumeClaimTemplate of that size and storage class.
func (s *StatefulSetWrapper) ClaimTemplate(name, size, class string) *StatefulSetWrapper {
	pvc := v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
	}
	if class != "" {
		pvc.Spec.StorageClassName = &class
	}
	s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, pvc)
	return s
}

// JobWrapper builds a Job.
type JobWrapper struct{ batchv1.Job }

// MakeJob builds a Job of the pod (restartPolicy Never).
func MakeJob(name string, parallelism int32, completions *int32, pod *PodWrapper) *JobWrapper {
	t := template(pod)
	t.Spec.RestartPolicy = v1.RestartPolicyNever
	return &JobWrapper{batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(name),
		Spec:       batchv1.JobSpec{Parallelism: &parallelism, Completions: completions, Template: t},
	}}
}

// Obj returns the Job.
func (j *JobWrapper) Obj() *batchv1.Job { return &j.Job }

// Indexed sets completionMode Indexed.
func (j *JobWrapper) Indexed() *JobWrapper {
	m := batchv1.IndexedCompletion
	j.Spec.CompletionMode = &m
	return j
}

// Suspended suspends the Job.
func (j *JobWrapper) Suspended() *JobWrapper {
	t := true
	j.Spec.Suspend = &t
	return j
}

// MakeDaemonSet builds a DaemonSet of the pod.
func MakeDaemonSet(name string, pod *PodWrapper) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: meta(name),
		Spec:       appsv1.DaemonSetSpec{Selector: selectorOf(pod), Template: template(pod)},
	}
}

// Owned makes the pod controlled by a kind/name of the given API version.
func (p *PodWrapper) Owned(apiVersion, kind, name string) *PodWrapper {
	t := true
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, Controller: &t})
	return p
}

// GangIn sets spec.scheduling (the WorkloadWithJob gate): a gang whose
// minCount is left to the Job controller (the parallelism), held within
// one value of topologyKey when it is not "".
func (j *JobWrapper) GangIn(topologyKey string) *JobWrapper {
	j.Spec.Scheduling = &batchv1.JobSchedulingConfiguration{
		SchedulingPolicy: &schedulingv1alpha3.WorkloadPodGroupSchedulingPolicy{Gang: &schedulingv1alpha3.WorkloadPodGroupGangSchedulingPolicy{}},
	}
	if topologyKey != "" {
		j.Spec.Scheduling.SchedulingConstraints = &schedulingv1alpha3.WorkloadPodGroupSchedulingConstraints{
			Topology: []schedulingv1alpha3.TopologyConstraint{{Key: topologyKey}},
		}
	}
	return j
}
