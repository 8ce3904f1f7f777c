package loading

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validate refuses what kube-apiserver v1.37.2 refuses on creation in the
// fields the simulator reads: a pod's containers, and the workloads'
// counts, selectors and pod templates (k8s.io/kubernetes
// pkg/apis/apps/validation, pkg/apis/batch/validation and
// pkg/apis/core/validation, with their field paths and messages). The
// object is as read, before defaulting: what defaulting would fill in (a
// nil replicas is 1, an empty restartPolicy is Always, an RC's selector
// is its template's labels, a Job's generated selector) is taken as
// filled.
func validate(obj runtime.Object) field.ErrorList {
	spec := field.NewPath("spec")
	switch o := obj.(type) {
	case *v1.Pod:
		return validatePodSpec(&o.Spec, spec)
	case *appsv1.Deployment:
		return validateReplicated("deployment", o.Spec.Replicas, o.Spec.Selector, &o.Spec.Template, "ReplicaSet", spec,
			nonnegative(spec.Child("minReadySeconds"), o.Spec.MinReadySeconds),
			nonnegative(spec.Child("revisionHistoryLimit"), o.Spec.RevisionHistoryLimit),
			progressDeadline(spec, o.Spec.ProgressDeadlineSeconds, o.Spec.MinReadySeconds))
	case *appsv1.ReplicaSet:
		// ValidateReplicaSetSpec says "deployment" too.
		return validateReplicated("deployment", o.Spec.Replicas, o.Spec.Selector, &o.Spec.Template, "ReplicaSet", spec,
			nonnegative(spec.Child("minReadySeconds"), o.Spec.MinReadySeconds))
	case *appsv1.StatefulSet:
		return validateStatefulSet(o, spec)
	case *appsv1.DaemonSet:
		return validateDaemonSet(o, spec)
	case *v1.ReplicationController:
		return validateReplicationController(o, spec)
	case *batchv1.Job:
		return validateJob(o, spec)
	}
	return nil
}

// validatePodSpec: a pod runs at least one container (core validation's
// validateContainers).
func validatePodSpec(s *v1.PodSpec, fldPath *field.Path) field.ErrorList {
	if len(s.Containers) == 0 {
		return field.ErrorList{field.Required(fldPath.Child("containers"), "")}
	}
	return nil
}

// nonnegative is ValidateNonnegativeField of an int32 or *int32 (nil: not
// set, nothing to check).
func nonnegative[T int32 | *int32 | int64 | *int64](fldPath *field.Path, v T) field.ErrorList {
	var n int64
	switch x := any(v).(type) {
	case int32:
		n = int64(x)
	case int64:
		n = x
	case *int32:
		if x == nil {
			return nil
		}
		n = int64(*x)
	case *int64:
		if x == nil {
			return nil
		}
		n = *x
	}
	return apivalidation.ValidateNonnegativeField(n, fldPath)
}

// progressDeadline: set, it is nonnegative and above minReadySeconds
// (apps/v1 defaults it to 600).
func progressDeadline(spec *field.Path, deadline *int32, minReady int32) field.ErrorList {
	if deadline == nil {
		return nil
	}
	errs := nonnegative(spec.Child("progressDeadlineSeconds"), deadline)
	if *deadline <= minReady {
		errs = append(errs, field.Invalid(spec.Child("progressDeadlineSeconds"), *deadline, "must be greater than minReadySeconds"))
	}
	return errs
}

// selectorErrors checks a required label selector: set, valid, not empty
// (kind names the workload in the message, as upstream does).
func selectorErrors(sel *metav1.LabelSelector, kind string, fldPath *field.Path) (labels.Selector, field.ErrorList) {
	var errs field.ErrorList
	if sel == nil {
		errs = append(errs, field.Required(fldPath, ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, fldPath)...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(fldPath, sel, "empty selector is invalid for "+kind))
		}
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		errs = append(errs, field.Invalid(fldPath, sel, "invalid label selector"))
		return nil, errs
	}
	return s, errs
}

// templateErrors checks a pod template against its workload's selector:
// the selector matches the template's labels, the pod has containers, its
// restartPolicy is Always (the default) and it has no
// activeDeadlineSeconds (ValidatePodTemplateSpecForReplicaSet and its
// StatefulSet, DaemonSet and RC twins). kind is the workload's for the
// Forbidden message.
func templateErrors(t *v1.PodTemplateSpec, sel labels.Selector, kind string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sel != nil && !sel.Empty() && !sel.Matches(labels.Set(t.Labels)) {
		errs = append(errs, field.Invalid(fldPath.Child("metadata", "labels"), t.Labels, "`selector` does not match template `labels`"))
	}
	errs = append(errs, validatePodSpec(&t.Spec, fldPath.Child("spec"))...)
	if p := t.Spec.RestartPolicy; p != "" && p != v1.RestartPolicyAlways {
		errs = append(errs, field.NotSupported(fldPath.Child("spec", "restartPolicy"), p, []v1.RestartPolicy{v1.RestartPolicyAlways}))
	}
	if t.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+kind+" is not Supported"))
	}
	return errs
}

// validateReplicated is ValidateDeploymentSpec's and
// ValidateReplicaSetSpec's part the simulator reads.
func validateReplicated(selKind string, replicas *int32, sel *metav1.LabelSelector, t *v1.PodTemplateSpec, tmplKind string, spec *field.Path, more ...field.ErrorList) field.ErrorList {
	errs := nonnegative(spec.Child("replicas"), replicas)
	for _, m := range more {
		errs = append(errs, m...)
	}
	s, selErrs := selectorErrors(sel, selKind, spec.Child("selector"))
	errs = append(errs, selErrs...)
	if s != nil {
		errs = append(errs, templateErrors(t, s, tmplKind, spec.Child("template"))...)
	}
	return errs
}

func validateStatefulSet(o *appsv1.StatefulSet, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch p := o.Spec.PodManagementPolicy; p {
	case "", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(spec.Child("podManagementPolicy"), p,
			fmt.Sprintf("must be '%s' or '%s'", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement)))
	}
	errs = append(errs, nonnegative(spec.Child("replicas"), o.Spec.Replicas)...)
	errs = append(errs, nonnegative(spec.Child("minReadySeconds"), o.Spec.MinReadySeconds)...)
	if o.Spec.Ordinals != nil {
		errs = append(errs, nonnegative(spec.Child("ordinals.start"), o.Spec.Ordinals.Start)...)
	}
	s, selErrs := selectorErrors(o.Spec.Selector, "statefulset", spec.Child("selector"))
	errs = append(errs, selErrs...)
	if s == nil {
		// Upstream's message for a selector it cannot convert is empty.
		return errs
	}
	// The StatefulSet checks its template's restartPolicy and
	// activeDeadlineSeconds under spec.template.spec, as the others do.
	return append(errs, templateErrors(&o.Spec.Template, s, "StatefulSet", spec.Child("template"))...)
}

func validateDaemonSet(o *appsv1.DaemonSet, spec *field.Path) field.ErrorList {
	// ValidateDaemonSetSpec: a nil selector is not reported by itself
	// (apps/v1 has no default for it): it selects nothing, so it does not
	// match the template's labels.
	errs := metav1validation.ValidateLabelSelector(o.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))
	s, err := metav1.LabelSelectorAsSelector(o.Spec.Selector)
	if err == nil && !s.Matches(labels.Set(o.Spec.Template.Labels)) {
		errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), o.Spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	if o.Spec.Selector != nil && len(o.Spec.Selector.MatchLabels)+len(o.Spec.Selector.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(spec.Child("selector"), o.Spec.Selector, "empty selector is invalid for daemonset"))
	}
	errs = append(errs, templateErrors(&o.Spec.Template, nil, "DaemonSet", spec.Child("template"))...)
	errs = append(errs, nonnegative(spec.Child("minReadySeconds"), o.Spec.MinReadySeconds)...)
	return append(errs, nonnegative(spec.Child("revisionHistoryLimit"), o.Spec.RevisionHistoryLimit)...)
}

// validateReplicationController: the selector defaults to the template's
// labels, replicas to 1 (core/v1 defaulting); ValidateReplicationControllerSpec.
func validateReplicationController(o *v1.ReplicationController, spec *field.Path) field.ErrorList {
	errs := nonnegative(spec.Child("minReadySeconds"), o.Spec.MinReadySeconds)
	selector := o.Spec.Selector
	if len(selector) == 0 && o.Spec.Template != nil {
		selector = o.Spec.Template.Labels
	}
	if len(selector) == 0 {
		errs = append(errs, field.Required(spec.Child("selector"), ""))
	}
	errs = append(errs, nonnegative(spec.Child("replicas"), o.Spec.Replicas)...)
	if o.Spec.Template == nil {
		return append(errs, field.Required(spec.Child("template"), ""))
	}
	return append(errs, templateErrors(o.Spec.Template, labels.Set(selector).AsSelector(), "ReplicationController", spec.Child("template"))...)
}

// validateJob is ValidateJobCreate's part the simulator reads, after the
// Job strategy's selector generation (unless manualSelector): the
// controller-uid and job-name labels the template gets, and a selector
// that must select them.
func validateJob(o *batchv1.Job, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	s := &o.Spec
	errs = append(errs, nonnegative(spec.Child("parallelism"), s.Parallelism)...)
	errs = append(errs, nonnegative(spec.Child("completions"), s.Completions)...)
	errs = append(errs, nonnegative(spec.Child("activeDeadlineSeconds"), s.ActiveDeadlineSeconds)...)
	errs = append(errs, nonnegative(spec.Child("backoffLimit"), s.BackoffLimit)...)
	errs = append(errs, nonnegative(spec.Child("ttlSecondsAfterFinished"), s.TTLSecondsAfterFinished)...)
	errs = append(errs, nonnegative(spec.Child("backoffLimitPerIndex"), s.BackoffLimitPerIndex)...)
	errs = append(errs, nonnegative(spec.Child("maxFailedIndexes"), s.MaxFailedIndexes)...)
	if s.CompletionMode != nil {
		switch *s.CompletionMode {
		case batchv1.NonIndexedCompletion:
		case batchv1.IndexedCompletion:
			if s.Completions == nil {
				errs = append(errs, field.Required(spec.Child("completions"), fmt.Sprintf("when completion mode is %s", batchv1.IndexedCompletion)))
			}
		default:
			errs = append(errs, field.NotSupported(spec.Child("completionMode"), *s.CompletionMode, []batchv1.CompletionMode{batchv1.NonIndexedCompletion, batchv1.IndexedCompletion}))
		}
	}
	errs = append(errs, validatePodSpec(&s.Template.Spec, spec.Child("template", "spec"))...)
	switch p := s.Template.Spec.RestartPolicy; p {
	case v1.RestartPolicyOnFailure, v1.RestartPolicyNever:
	case "", v1.RestartPolicyAlways:
		errs = append(errs, field.Required(spec.Child("template", "spec", "restartPolicy"),
			fmt.Sprintf("valid values: %q, %q", v1.RestartPolicyOnFailure, v1.RestartPolicyNever)))
	default:
		errs = append(errs, field.NotSupported(spec.Child("template", "spec", "restartPolicy"), p, []v1.RestartPolicy{v1.RestartPolicyOnFailure, v1.RestartPolicyNever}))
	}
	manual := s.ManualSelector != nil && *s.ManualSelector
	tmplLabels := labels.Set(s.Template.Labels)
	sel := s.Selector
	if !manual {
		// generateSelector: the template gets the labels it lacks, the
		// selector the controller-uid one; the UID is the one the
		// loader gives (a placeholder: the labels' values are the Job's).
		uid, name := jobUID(o), o.Name
		// job-name and controller-uid: the legacy labels, still set.
		generated := map[string]string{
			"job-name": name, batchv1.JobNameLabel: name,
			"controller-uid": uid, batchv1.ControllerUidLabel: uid,
		}
		tmplLabels = labels.Merge(generated, tmplLabels)
		if sel == nil {
			sel = &metav1.LabelSelector{}
		} else {
			sel = sel.DeepCopy()
		}
		if _, ok := sel.MatchLabels[batchv1.ControllerUidLabel]; !ok {
			sel.MatchLabels = labels.Merge(sel.MatchLabels, map[string]string{batchv1.ControllerUidLabel: uid})
		}
		// validateGeneratedSelector: the selector selects what the
		// strategy generated, and nothing the user chose instead.
		if ls, err := metav1.LabelSelectorAsSelector(sel); err == nil && !ls.Matches(labels.Set(generated)) {
			errs = append(errs, field.Invalid(spec.Child("selector"), sel, "`selector` not auto-generated"))
		}
	}
	if sel == nil {
		errs = append(errs, field.Required(spec.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
	}
	if ls, err := metav1.LabelSelectorAsSelector(sel); err == nil && !ls.Matches(tmplLabels) {
		errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
	}
	return errs
}

// jobUID is the UID the Job has or will get from the loader's defaults
// (cluster.defaultWorkload), so the generated labels' values agree.
func jobUID(o *batchv1.Job) string {
	if o.UID != "" {
		return string(o.UID)
	}
	ns := o.Namespace
	if ns == "" {
		ns = v1.NamespaceDefault
	}
	return "job-" + ns + "-" + o.Name
}
