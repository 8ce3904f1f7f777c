package framework

import (
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodRequests returns what a pod requests, as a Resource (init and
// sidecar containers, overhead and pod-level resources included, as
// component-helpers' PodRequests computes it), and its cpu and memory
// requests with the scoring defaults for containers that request neither.
//
// Most pods have only containers, with whole millicores and whole bytes:
// for them the sums are taken here, without PodRequests' intermediate
// ResourceLists (a PodInfo is computed for every pod added, bound and
// reported). The result is the same: a sum of exact quantities converts
// exactly. Any other pod goes through PodRequests.
func PodRequests(pod *v1.Pod) (req Resource, nonZeroCPU, nonZeroMem int64) {
	resized := StatusResourcesMatter(pod)
	if !resized {
		if r, cpu, mem, ok := simplePodRequests(pod); ok {
			return r, cpu, mem
		}
	}
	return podRequests(pod, resized)
}

// PodSpecRequests is PodRequests from the spec alone, the status's
// resources ignored: what NodeResourcesFit's Filter and Score ask of a
// pod to be placed (kube-scheduler's computePodResourceRequest; its
// scorer has no InPlacePodVerticalScaling either).
func PodSpecRequests(pod *v1.Pod) (req Resource, nonZeroCPU, nonZeroMem int64) {
	if !StatusResourcesMatter(pod) {
		return PodRequests(pod)
	}
	return podRequests(pod, false)
}

// podRequests is PodRequests through component-helpers. With useStatus,
// as kube-scheduler's PodInfo.CalculateResource (InPlacePodVerticalScaling
// GA, InPlacePodLevelResourcesVerticalScaling beta and on): a resized
// pod counts the most of its spec, allocated and actuated resources.
func podRequests(pod *v1.Pod, useStatus bool) (req Resource, nonZeroCPU, nonZeroMem int64) {
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: useStatus, InPlacePodLevelResourcesVerticalScalingEnabled: useStatus}
	all := resourcehelper.PodRequests(pod, opts)
	req.Add(all)
	nz := all
	if missing := nonMissingRequests(pod, all); len(missing) > 0 {
		opts.NonMissingContainerRequests = missing
		nz = resourcehelper.PodRequests(pod, opts)
	}
	return req, nz.Cpu().MilliValue(), nz.Memory().Value()
}

// StatusResourcesMatter is true when the pod's status can change what it
// counts for (an in-place resize: allocated or actuated resources, or a
// pending resize found infeasible); false for almost every pod, whose
// requests are its spec's.
func StatusResourcesMatter(pod *v1.Pod) bool {
	st := &pod.Status
	if st.Resources != nil || st.AllocatedResources != nil {
		return true
	}
	for _, list := range [][]v1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		for i := range list {
			if list[i].AllocatedResources != nil || list[i].Resources != nil {
				return true
			}
		}
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.PodResizePending {
			return true
		}
	}
	return false
}

// nonMissingRequests is the scoring default for each container that
// requests no cpu or memory. A pod with pod-level requests gets a default
// only for a resource that neither its containers nor the pod level
// request (kube-scheduler's getNonMissingContainerRequests): the API
// server copies container requests to the pod level when the pod level
// lacks one, so a default there would count what nobody asked for.
func nonMissingRequests(pod *v1.Pod, requests v1.ResourceList) v1.ResourceList {
	if !resourcehelper.IsPodLevelRequestsSet(pod) {
		return nonZeroDefaults
	}
	out := v1.ResourceList{}
	for name, q := range nonZeroDefaults {
		if _, ok := requests[name]; !ok {
			out[name] = q
		}
	}
	return out
}

// simplePodRequests is PodRequests for a pod with containers only, every
// quantity exact in its unit (ok is false for any other pod).
func simplePodRequests(pod *v1.Pod) (r Resource, nonZeroCPU, nonZeroMem int64, ok bool) {
	if len(pod.Spec.InitContainers) > 0 || pod.Spec.Overhead != nil || pod.Spec.Resources != nil {
		return r, 0, 0, false
	}
	for i := range pod.Spec.Containers {
		hasCPU, hasMem := false, false
		for name, q := range pod.Spec.Containers[i].Resources.Requests {
			var v int64
			if name == v1.ResourceCPU {
				c := q
				if !c.RoundUp(resource.Milli) {
					return r, 0, 0, false
				}
				v = q.MilliValue()
			} else if v, ok = q.AsInt64(); !ok {
				return r, 0, 0, false
			}
			var sum *int64
			switch name {
			case v1.ResourceCPU:
				hasCPU = true
				if nonZeroCPU, ok = addExact(nonZeroCPU, v); !ok {
					return r, 0, 0, false
				}
				sum = &r.MilliCPU
			case v1.ResourceMemory:
				hasMem = true
				if nonZeroMem, ok = addExact(nonZeroMem, v); !ok {
					return r, 0, 0, false
				}
				sum = &r.Memory
			case v1.ResourceEphemeralStorage:
				sum = &r.EphemeralStorage
			case v1.ResourcePods:
				sum = &r.AllowedPodNumber
			default:
				if !IsScalarResourceName(name) {
					continue // Resource.Add drops it too
				}
				s, ok := addExact(r.Scalar[name], v)
				if !ok {
					return r, 0, 0, false
				}
				r.SetScalar(name, s)
				continue
			}
			if *sum, ok = addExact(*sum, v); !ok {
				return r, 0, 0, false
			}
		}
		if !hasCPU {
			nonZeroCPU += DefaultMilliCPURequest
		}
		if !hasMem {
			nonZeroMem += DefaultMemoryRequest
		}
	}
	return r, nonZeroCPU, nonZeroMem, true
}

// addExact is a+b, false when it overflows.
func addExact(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}
