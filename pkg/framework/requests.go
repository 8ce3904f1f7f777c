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
// ResourceLists (two PodRequests calls were ~7 µs, a tenth of a warm
// scheduling cycle, and a PodInfo is computed for every pod added, bound
// and reported). The result is the same: a sum of exact quantities
// converts exactly. Any other pod goes through PodRequests.
func PodRequests(pod *v1.Pod) (req Resource, nonZeroCPU, nonZeroMem int64) {
	if r, cpu, mem, ok := simplePodRequests(pod); ok {
		return r, cpu, mem
	}
	req.Add(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
	nz := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{NonMissingContainerRequests: nonZeroDefaults})
	return req, nz.Cpu().MilliValue(), nz.Memory().Value()
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
