package perfgen

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// DevicesPerNode is how many devices each node of the DRA workload
// publishes.
const DevicesPerNode = 8

// DRA returns the dynamic resource allocation workload, in the shape of
// scheduler_perf's SchedulingWithResourceClaimTemplateStructured: every
// node publishes a ResourceSlice of 8 devices of one driver, a DeviceClass
// selects them by CEL, and each measured pod has a claim from a template
// asking for one device. On a real control plane the template's claims are
// made by kube-controller-manager's resourceclaim controller.
func DRA() []Workload {
	return []Workload{
		{Name: "SchedulingWithResourceClaimTemplate", Size: "1000Nodes_5000Pods", Nodes: 1000, MeasurePods: 5000, build: claimTemplate,
			Controllers: "resourceclaim-controller"},
	}
}

const draDriver = "test-driver.cdi.k8s.io"

func claimTemplate(w Workload) []runtime.Object {
	out := nodes(w.Nodes)
	for i := range w.Nodes {
		name := fmt.Sprintf("scheduler-perf-%05d", i)
		s := &resourceapi.ResourceSlice{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
			ObjectMeta: metav1.ObjectMeta{Name: name + "-" + draDriver},
			Spec: resourceapi.ResourceSliceSpec{Driver: draDriver, NodeName: ptr.To(name),
				Pool: resourceapi.ResourcePool{Name: name, ResourceSliceCount: 1}},
		}
		for d := range DevicesPerNode {
			s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("device-%d", d),
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: ptr.To("gpu-1")}}})
		}
		out = append(out, s)
	}
	out = append(out,
		&resourceapi.DeviceClass{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
			ObjectMeta: metav1.ObjectMeta{Name: "test-class"},
			Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
				Expression: `device.driver == "` + draDriver + `"`}}}}},
		&resourceapi.ResourceClaimTemplate{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
			ObjectMeta: metav1.ObjectMeta{Name: "test-claim-template", Namespace: "default"},
			Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
				Requests: []resourceapi.DeviceRequest{{Name: "req-0", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "test-class",
					AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}}}}}})
	return append(out, pods(w.MeasurePods, 0, w.Nodes, "pod", func(n string) *v1.Pod {
		p := defaultPod(n, "default")
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "resource", ResourceClaimTemplateName: ptr.To("test-claim-template")}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "resource"}}
		return p
	})...)
}
