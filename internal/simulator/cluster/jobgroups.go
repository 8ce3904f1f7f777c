package cluster

import (
	"context"
	"fmt"
	"hash/fnv"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/schedulingv1/workloadbuilder"
	"k8s.io/utils/dump"
)

// A Job's PodGroup, as kube-controller-manager v1.37.2's Job controller
// makes one with the WorkloadWithJob gate (alpha, off by default;
// job_scheduling_manager.go): a new Job that names no pod group in its
// template and has no controller of its own gets a Workload of one
// PodGroupTemplate, compiled from its spec.scheduling (basic when unset;
// a gang's minCount defaults to the parallelism) by component-helpers'
// workloadbuilder, and a PodGroup from that template; its pods join the
// PodGroup. So a planner writes one Job with
//
//	spec:
//	  parallelism: 64
//	  scheduling:
//	    schedulingPolicy: {gang: {}}
//	    schedulingConstraints: {topology: [{key: topology.kubernetes.io/rack}]}
//
// and gets a 64-pod gang held to one rack. The Workload itself is built
// (its name is the PodGroup's prefix) but not kept: the scheduler does not
// read Workloads. A Job a parent controller delegated (the podGroupTemplate
// annotation) gets none here.

// jobPodGroup returns the Job's PodGroup, making it (and adding it to the
// cluster, read at the Job's source) the first time for a Job the
// controller manages; nil when the
// Job's pods join no group the controller makes.
func (e *controllers) jobPodGroup(j *batchv1.Job, activePods []*v1.Pod, source string) (*schedulingv1beta1.PodGroup, error) {
	if !e.c.JobPodGroups || j.Spec.Template.Spec.SchedulingGroup != nil || metav1.GetControllerOf(j) != nil {
		return nil, nil
	}
	k := ownerKey("Job", j.Namespace, j.Name)
	if pg, ok := e.jobGroups[k]; ok {
		return pg, nil
	}
	if !newJob(j, activePods) {
		// Objects are made only for a Job that never started.
		return nil, nil
	}
	if errs := jobSchedulingErrors(j); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	item := jobWorkloadItem(j)
	owner := metav1.NewControllerRef(j, batchv1.SchemeGroupVersion.WithKind("Job"))
	b := workloadbuilder.NewBuilder(item, workloadbuilder.BuildOptions{Name: jobWorkloadName(j), Namespace: j.Namespace, Owner: owner})
	wl, err := b.BuildWorkload()
	if err != nil {
		return nil, fmt.Errorf("spec.scheduling: %w", err)
	}
	tmpl := wl.Spec.PodGroupTemplates[0].Name
	pg, err := workloadbuilder.NewBuilderFromExistingWorkload(wl, workloadbuilder.BuildOptions{Owner: owner}).NewPodGroup(jobPodGroupName(wl.Name, tmpl), tmpl)
	if err != nil {
		return nil, fmt.Errorf("spec.scheduling: %w", err)
	}
	pg.TypeMeta = metav1.TypeMeta{APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "PodGroup"}
	pg.UID = "podgroup-" + j.UID
	pg.Generation = 1
	// A root Job owns its Workload, so the PodGroup also names the
	// Workload (not as its controller).
	pg.OwnerReferences = append(pg.OwnerReferences, metav1.OwnerReference{
		APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "Workload", Name: wl.Name, UID: "workload-" + j.UID,
	})
	e.jobGroups[k] = pg
	e.c.Add(source, pg)
	return pg, nil
}

// joinGroup makes a pod of the Job a member of its PodGroup. (The Job
// controller also appends an owner reference to the PodGroup to its pod
// template, but the pods kube-controller-manager v1.37.2 creates carry
// only the Job's: its pod control sets the controller reference alone.)
func joinGroup(p *v1.Pod, pg *schedulingv1beta1.PodGroup) {
	name := pg.Name
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
}

// newJob: no pods, never started, nothing finished, never suspended (the
// Job controller's isNewJob).
func newJob(j *batchv1.Job, activePods []*v1.Pod) bool {
	if len(activePods) != 0 || j.Status.StartTime != nil || j.Status.Succeeded != 0 || j.Status.Failed != 0 {
		return false
	}
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobSuspended {
			return false
		}
	}
	return true
}

// jobWorkloadItem is the Job's one-template workload tree: basic by
// default, the user's spec.scheduling over it, a gang's unset minCount
// taken from the parallelism (at least 1).
func jobWorkloadItem(j *batchv1.Job) *workloadbuilder.WorkloadItem {
	var in workloadbuilder.WorkloadInput
	if s := j.Spec.Scheduling; s != nil {
		in = workloadbuilder.WorkloadInput{
			Policy:         workloadbuilder.PolicyInput{PodGroupData: s.SchedulingPolicy, PathElements: []string{"schedulingPolicy"}},
			Constraints:    workloadbuilder.ConstraintsInput{PodGroupData: s.SchedulingConstraints, PathElements: []string{"schedulingConstraints"}},
			DisruptionMode: workloadbuilder.DisruptionModeInput{PodGroupData: s.DisruptionMode, PathElements: []string{"disruptionMode"}},
			ResourceClaims: workloadbuilder.ResourceClaimsInput{PodGroupData: s.ResourceClaims, PathElements: []string{"resourceClaims"}},
		}
	}
	parallelism := int32(1)
	if j.Spec.Parallelism != nil {
		parallelism = *j.Spec.Parallelism
	}
	return &workloadbuilder.WorkloadItem{
		Name: fmt.Sprintf("%s-pgt-%d", j.Name, 0),
		DefaultConfig: &workloadbuilder.SchedulingConfig{
			Policy:            &workloadbuilder.SchedulingPolicy{Basic: &workloadbuilder.BasicSchedulingPolicy{}},
			PriorityClassName: j.Spec.Template.Spec.PriorityClassName,
		},
		Input: in,
		Callbacks: []workloadbuilder.SchedulingConfigFunc{func(cfg *workloadbuilder.SchedulingConfig) {
			if cfg != nil && cfg.Policy != nil && cfg.Policy.Gang != nil && cfg.Policy.Gang.MinCount == nil {
				n := max(1, parallelism)
				cfg.Policy.Gang.MinCount = &n
			}
		}},
	}
}

// jobWorkloadName is <job name, cut to fit>-<hash of the Job's UID>.
func jobWorkloadName(j *batchv1.Job) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(j.UID))
	hash := rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
	prefix := j.Name
	if limit := validation.DNS1123SubdomainMaxLength - len(hash) - 1; len(prefix) > limit {
		prefix = prefix[:limit]
	}
	return prefix + "-" + hash
}

// jobPodGroupName is <workload>-<template>-<hash of both>, the two names
// cut to share what the hash and separators leave (each up to half, the
// shorter one giving the other its rest).
func jobPodGroupName(workload, template string) string {
	h := fnv.New32a()
	h.Write([]byte(workload))
	h.Write([]byte(template))
	hash := rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
	room := validation.DNS1123SubdomainMaxLength - len(hash) - 2
	if len(workload)+len(template) > room {
		half := room / 2
		switch {
		case len(workload) <= half:
			template = template[:room-len(workload)]
		case len(template) <= half:
			workload = workload[:room-len(template)]
		default:
			workload, template = workload[:room-half], template[:half]
		}
	}
	return workload + "-" + template + "-" + hash
}

// jobSchedulingErrors is the API server's validation of spec.scheduling
// (the Job's validateGangMinCount and validateJobScheduling, with the
// declarative validation of the building blocks the simulator's loader
// does not otherwise run).
func jobSchedulingErrors(j *batchv1.Job) field.ErrorList {
	s := j.Spec.Scheduling
	if s == nil {
		return nil
	}
	path := field.NewPath("spec", "scheduling")
	var errs field.ErrorList
	parallelism := int32(1)
	if j.Spec.Parallelism != nil {
		parallelism = *j.Spec.Parallelism
	}
	if p := s.SchedulingPolicy; p != nil && p.Gang != nil && p.Gang.MinCount != nil && *p.Gang.MinCount > parallelism {
		errs = append(errs, field.Invalid(path.Child("schedulingPolicy", "gang", "minCount"), *p.Gang.MinCount, fmt.Sprintf("must not be greater than parallelism (%d)", parallelism)))
	}
	item := jobWorkloadItem(j)
	item.Name = "job"
	item.Path = path
	return append(errs, workloadbuilder.NewBuilder(item, workloadbuilder.BuildOptions{
		AllowedPolicies:        []workloadbuilder.SchedulingPolicyOption{workloadbuilder.BasicPolicy, workloadbuilder.GangPolicy},
		AllowedDisruptionModes: []workloadbuilder.DisruptionModeOption{workloadbuilder.SingleMode, workloadbuilder.AllMode},
	}).Validate(context.Background(), workloadbuilder.ValidationInput{})...)
}
