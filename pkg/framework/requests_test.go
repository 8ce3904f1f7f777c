package framework

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// referenceRequests is what PodRequests must equal: component-helpers'
// PodRequests, converted.
func referenceRequests(pod *v1.Pod) (Resource, int64, int64) {
	var r Resource
	r.Add(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}))
	nz := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{NonMissingContainerRequests: nonZeroDefaults})
	return r, nz.Cpu().MilliValue(), nz.Memory().Value()
}

type requestsResult struct {
	Req      Resource
	CPU, Mem int64
}

func podWith(init []v1.ResourceList, containers ...v1.ResourceList) *v1.Pod {
	pod := &v1.Pod{}
	for i, rl := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprint("c", i), Resources: v1.ResourceRequirements{Requests: rl}})
	}
	for i, rl := range init {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: fmt.Sprint("i", i), Resources: v1.ResourceRequirements{Requests: rl}})
	}
	return pod
}

func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

func TestPodRequestsEqualsComponentHelpers(t *testing.T) {
	cases := []struct {
		name string
		pod  *v1.Pod
	}{
		{"a pod without containers requests nothing but the scoring defaults", podWith(nil)},
		{"one container's whole requests are summed as they are", podWith(nil, rl("cpu", "100m", "memory", "500Mi"))},
		{"a container without cpu or memory counts the scoring defaults", podWith(nil, rl("cpu", "1"), rl("memory", "1Gi"), rl())},
		{"an explicit zero request is not replaced by a default", podWith(nil, rl("cpu", "0", "memory", "0"))},
		{"sub-millicore requests of two containers are summed before rounding up", podWith(nil, rl("cpu", "1.5m"), rl("cpu", "1.5m"))},
		{"fractional bytes of two containers are summed before rounding up", podWith(nil, rl("memory", "0.5"), rl("memory", "0.5"))},
		{"extended resources, hugepages and ephemeral storage are counted", podWith(nil, rl("example.com/gpu", "2", "hugepages-2Mi", "4Mi", "ephemeral-storage", "1Gi"), rl("example.com/gpu", "1"))},
		{"a name that is no resource the scheduler counts is dropped", podWith(nil, rl("nonstandard", "3", "cpu", "1"))},
		{"init containers take the larger of their requests and the containers'", podWith([]v1.ResourceList{rl("cpu", "2", "memory", "1Gi")}, rl("cpu", "1", "memory", "2Gi"))},
		{"requests at the edge of int64 do not overflow silently", podWith(nil, rl("memory", "9223372036854775807"), rl("memory", "1"))},
	}
	overhead := podWith(nil, rl("cpu", "100m"))
	overhead.Spec.Overhead = rl("cpu", "250m", "memory", "120Mi")
	cases = append(cases, struct {
		name string
		pod  *v1.Pod
	}{"pod overhead is added", overhead})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var want, got requestsResult
			want.Req, want.CPU, want.Mem = referenceRequests(tc.pod)
			got.Req, got.CPU, got.Mem = PodRequests(tc.pod)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("PodRequests differs from component-helpers' (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPodRequestsEqualsComponentHelpersOnRandomPods(t *testing.T) {
	quantities := []string{"0", "1", "100m", "0.5", "1.5m", "0.0001", "250m", "1Gi", "500Mi", "1.5Gi", "3", "1e3", "123456789", "9223372036854775807", "1k", "100n"}
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods, "example.com/gpu", "hugepages-2Mi", "nonstandard"}
	rng := rand.New(rand.NewSource(7))
	list := func() v1.ResourceList {
		out := v1.ResourceList{}
		for n := rng.Intn(4); n > 0; n-- {
			name := names[rng.Intn(len(names))]
			if rng.Intn(2) == 0 {
				name = names[rng.Intn(2)] // cpu and memory most often
			}
			out[name] = resource.MustParse(quantities[rng.Intn(len(quantities))])
		}
		return out
	}
	simple := 0
	for i := 0; i < 5000; i++ {
		var cs []v1.ResourceList
		for n := rng.Intn(4); n > 0; n-- {
			cs = append(cs, list())
		}
		pod := podWith(nil, cs...)
		switch rng.Intn(6) {
		case 0:
			pod = podWith([]v1.ResourceList{list()}, cs...)
		case 1:
			pod.Spec.Overhead = list()
		}
		if _, _, _, ok := simplePodRequests(pod); ok {
			simple++
		}
		var want, got requestsResult
		want.Req, want.CPU, want.Mem = referenceRequests(pod)
		got.Req, got.CPU, got.Mem = PodRequests(pod)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("pod %d (%+v): PodRequests differs from component-helpers' (-want,+got):\n%s", i, pod.Spec, diff)
		}
	}
	// Both paths must have been taken often for the comparison to mean something.
	if simple < 1000 || simple > 4000 {
		t.Errorf("the fast path served %d of 5000 pods; want a mix", simple)
	}
}
