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
// The options are kube-scheduler v1.37.2's PodInfo.CalculateResource's with
// its default gates (InPlacePodVerticalScaling, PodLevelResources and
// InPlacePodLevelResourcesVerticalScaling on); with pod-level requests,
// a default only where neither level requests cpu or memory.
func referenceRequests(pod *v1.Pod) (Resource, int64, int64) {
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: true, InPlacePodLevelResourcesVerticalScalingEnabled: true}
	var r Resource
	reqs := resourcehelper.PodRequests(pod, opts)
	r.Add(reqs)
	opts.NonMissingContainerRequests = nonZeroDefaults
	if resourcehelper.IsPodLevelRequestsSet(pod) {
		opts.NonMissingContainerRequests = v1.ResourceList{}
		for name, q := range nonZeroDefaults {
			if _, ok := reqs[name]; !ok {
				opts.NonMissingContainerRequests[name] = q
			}
		}
	}
	nz := reqs
	if len(opts.NonMissingContainerRequests) > 0 {
		nz = resourcehelper.PodRequests(pod, opts)
	}
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
	podLevel := func(containers []v1.ResourceList, pod v1.ResourceList) *v1.Pod {
		p := podWith(nil, containers...)
		p.Spec.Resources = &v1.ResourceRequirements{Requests: pod}
		return p
	}
	resized := func(spec, allocated v1.ResourceList, infeasible bool) *v1.Pod {
		p := podWith(nil, spec)
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", AllocatedResources: allocated}}
		if infeasible {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible}}
		}
		return p
	}
	more := []struct {
		name string
		pod  *v1.Pod
	}{
		{"pod-level requests replace the containers' cpu and memory", podLevel([]v1.ResourceList{rl("cpu", "100m", "memory", "1Gi")}, rl("cpu", "3", "memory", "6Gi"))},
		{"with pod-level cpu only, a container without memory gets no default when another requests memory", podLevel([]v1.ResourceList{rl("memory", "1Gi"), rl()}, rl("cpu", "2"))},
		{"with pod-level cpu only and no memory anywhere, each container gets the memory default", podLevel([]v1.ResourceList{rl(), rl()}, rl("cpu", "2"))},
		{"a pod resized up counts its allocated resources when they exceed the spec", resized(rl("cpu", "1"), rl("cpu", "3"), false)},
		{"a pod resized down counts its larger spec until it is actuated", resized(rl("cpu", "3"), rl("cpu", "1"), false)},
		{"an infeasible resize counts what is allocated, not the spec", resized(rl("cpu", "3"), rl("cpu", "1"), true)},
	}
	cases = append(cases, more...)
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
