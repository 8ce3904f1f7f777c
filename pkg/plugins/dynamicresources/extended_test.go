package dynamicresources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// The recorder's writes for the special claim and the pod's status.

func (r *recorder) CreateResourceClaim(_ context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	c = c.DeepCopy()
	c.Name = c.GenerateName + "abcde"
	c.UID = "created-uid"
	return r.write("create", c)
}

func (r *recorder) DeleteResourceClaim(_ context.Context, _, name string) error {
	if _, ok := r.claims[name]; !ok {
		return apierrors.NewNotFound(resourceapi.Resource("resourceclaims"), name)
	}
	delete(r.claims, name)
	r.calls = append(r.calls, "delete "+name)
	return nil
}

func (r *recorder) PatchPodExtendedResourceClaimStatus(_ context.Context, pod *v1.Pod, s *v1.PodExtendedResourceClaimStatus) error {
	r.podStatus = s.DeepCopy()
	r.calls = append(r.calls, "patchPodStatus "+pod.Name)
	return nil
}

const gpuResource v1.ResourceName = "example.com/gpu"

// gpuClass provides example.com/gpu.
func gpuClass() *resourceapi.DeviceClass {
	c := st.DeviceClass("gpu", driver)
	c.Spec.ExtendedResourceName = ptr.To(string(gpuResource))
	return c
}

// extendedClaim is a special claim a former attempt of pod p created.
func extendedClaim(allocatedOn string) *resourceapi.ResourceClaim {
	w := st.MakeClaim("p-extended-resources-xyz12").Request("container-0-request-0", "gpu", 1)
	if allocatedOn != "" {
		w = w.AllocatedOn(allocatedOn, driver, "gpu-0")
	}
	c := w.Obj()
	c.Annotations = map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"}
	c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "p", Controller: ptr.To(true)}}
	return c
}

func TestFilterExtendedResources(t *testing.T) {
	type rl = map[v1.ResourceName]string
	nodes := []*v1.Node{
		st.MakeNode().Name("a").Obj(),
		st.MakeNode().Name("b").Obj(),
		st.MakeNode().Name("plugin").Capacity(rl{gpuResource: "4"}).Obj(),
	}
	sliceA := st.MakeSlice("a", driver).Device("gpu-0").Obj()
	gpuPod := st.MakePod().Name("p").UID("p").Req(rl{gpuResource: "1"}).Obj()
	other := st.MakePod().Name("other").UID("other").Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		objs []interface{}
		want map[string]string
	}{
		{name: "a pod asking for an extended resource no class provides is left to NodeResourcesFit",
			objs: []interface{}{st.DeviceClass("gpu", driver), sliceA},
			want: map[string]string{"a": "", "b": "", "plugin": ""}},
		{name: "a pod asking for a resource a class provides gets a free device on a node without the resource",
			objs: []interface{}{gpuClass(), sliceA},
			want: map[string]string{"a": "", "b": unresolvable(ErrReasonCannotAllocate), "plugin": ""}},
		{name: "without a free device the node is rejected with upstream's reason",
			objs: []interface{}{gpuClass(), sliceA, st.MakeClaim("held").Request("gpu", "gpu", 1).AllocatedOn("a", driver, "gpu-0").ReservedFor(other).Obj()},
			want: map[string]string{"a": unresolvable(ErrReasonCannotAllocate), "b": unresolvable(ErrReasonCannotAllocate), "plugin": ""}},
		{name: "the implicit deviceclass.resource.kubernetes.io/<class> name works too",
			pod:  st.MakePod().Name("p").UID("p").Req(rl{"deviceclass.resource.kubernetes.io/gpu": "1"}).Obj(),
			objs: []interface{}{st.DeviceClass("gpu", driver), sliceA},
			want: map[string]string{"a": "", "b": unresolvable(ErrReasonCannotAllocate), "plugin": unresolvable(ErrReasonCannotAllocate)}},
		{name: "another extended resource that no class provides and the node lacks cannot fit",
			pod:  st.MakePod().Name("p").UID("p").Req(rl{gpuResource: "1", "example.com/fpga": "1"}).Obj(),
			objs: []interface{}{gpuClass(), sliceA},
			want: map[string]string{"a": unresolvable("cannot fit resource"), "b": unresolvable("cannot fit resource"), "plugin": unresolvable("cannot fit resource")}},
		{name: "the special claim of a former attempt rejects every node, to be deleted in PostFilter",
			objs: []interface{}{gpuClass(), sliceA, extendedClaim("")},
			want: map[string]string{"a": unresolvable("cannot schedule extended resource claim"), "b": unresolvable("cannot schedule extended resource claim"), "plugin": unresolvable("cannot schedule extended resource claim")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pod
			if p == nil {
				p = gpuPod
			}
			pl, _ := newPlugin(t, nil, tt.objs...)
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, p, st.NodeInfos(nodes, nil)...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestExtendedRequestsAndMappings(t *testing.T) {
	type rl = map[v1.ResourceName]string
	req := func(name string, count int64) resourceapi.DeviceRequest {
		return resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}}
	}
	mapping := func(container, request string) v1.ContainerExtendedResourceRequest {
		return v1.ContainerExtendedResourceRequest{ContainerName: container, ResourceName: string(gpuResource), RequestName: request}
	}
	tests := []struct {
		name         string
		pod          *v1.Pod
		wantRequests []resourceapi.DeviceRequest
		wantMappings []v1.ContainerExtendedResourceRequest
	}{
		{name: "one container gets one request named by its index and the resource's among its sorted requests",
			pod:          st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1", gpuResource: "2"}).Obj(),
			wantRequests: []resourceapi.DeviceRequest{req("container-0-request-1", 2)},
			wantMappings: []v1.ContainerExtendedResourceRequest{mapping("c0", "container-0-request-1")}},
		{name: "two containers get a request each",
			pod:          st.MakePod().Name("p").Req(rl{gpuResource: "1"}).Req(rl{gpuResource: "2"}).Obj(),
			wantRequests: []resourceapi.DeviceRequest{req("container-0-request-0", 1), req("container-1-request-0", 2)},
			wantMappings: []v1.ContainerExtendedResourceRequest{mapping("c0", "container-0-request-0"), mapping("c1", "container-1-request-0")}},
		{name: "an init container reuses the request of the container started after it",
			pod:          st.MakePod().Name("p").InitReq(rl{gpuResource: "1"}).Req(rl{gpuResource: "1"}).Obj(),
			wantRequests: []resourceapi.DeviceRequest{req("container-1-request-0", 1)},
			wantMappings: []v1.ContainerExtendedResourceRequest{mapping("c0", "container-1-request-0"), mapping("init-c0", "container-1-request-0")}},
		{name: "an init container that needs more asks for the rest",
			pod:          st.MakePod().Name("p").InitReq(rl{gpuResource: "3"}).Req(rl{gpuResource: "1"}).Obj(),
			wantRequests: []resourceapi.DeviceRequest{req("container-0-request-0", 2), req("container-1-request-0", 1)},
			wantMappings: []v1.ContainerExtendedResourceRequest{mapping("c0", "container-1-request-0"), mapping("init-c0", "container-1-request-0"), mapping("init-c0", "container-0-request-0")}},
		{name: "a sidecar keeps its own request beside the containers'",
			pod:          st.MakePod().Name("p").SidecarReq(rl{gpuResource: "1"}).Req(rl{gpuResource: "1"}).Obj(),
			wantRequests: []resourceapi.DeviceRequest{req("container-0-request-0", 1), req("container-1-request-0", 1)},
			wantMappings: []v1.ContainerExtendedResourceRequest{mapping("sidecar-c0", "container-0-request-0"), mapping("c0", "container-1-request-0")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := newPlugin(t, nil, gpuClass())
			reqs, mappings := pl.requestsAndMappings(tt.pod, map[v1.ResourceName]int64{gpuResource: 1})
			if diff := cmp.Diff(tt.wantRequests, reqs); diff != "" {
				t.Errorf("requests (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMappings, mappings); diff != "" {
				t.Errorf("mappings (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestExtendedClaimIsCreatedInPreBind follows the special claim from
// PreFilter to PreBind: created from its generateName, owned by the pod and
// annotated, allocated and reserved for the pod; the pod's status names it
// with the container's request; Unreserve deletes it again.
func TestExtendedClaimIsCreatedInPreBind(t *testing.T) {
	objs := []interface{}{gpuClass(), st.MakeSlice("a", driver).Device("gpu-0").Obj()}
	w := newRecorder(objs...)
	pl, m := newPlugin(t, w, objs...)
	pod := st.MakePod().Name("p").Namespace("default").UID("p").Req(map[v1.ResourceName]string{gpuResource: "1"}).Obj()
	state, verdicts := cycle(t, pl, pod, st.NodeInfos([]*v1.Node{st.MakeNode().Name("a").Obj()}, nil), "a")
	if verdicts["a"] != "" {
		t.Fatalf("Filter: %q", verdicts["a"])
	}
	if m.GetPendingAllocation(specialClaimName+"p") == nil {
		t.Errorf("Reserve did not hold the allocation in flight")
	}
	if s := pl.PreBind(context.Background(), state, pod, "a"); !s.IsSuccess() {
		t.Fatalf("PreBind: %v", s)
	}
	name := "p-extended-resources-abcde"
	if diff := cmp.Diff([]string{"create " + name, "update " + name, "updateStatus " + name, "patchPodStatus p"}, w.calls); diff != "" {
		t.Errorf("calls (-want,+got):\n%s", diff)
	}
	c := w.claims[name]
	if c.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" || len(c.OwnerReferences) != 1 || c.OwnerReferences[0].UID != "p" ||
		c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 1 || c.Status.Allocation.Devices.Results[0].Request != "container-0-request-0" ||
		len(c.Status.ReservedFor) != 1 || c.Status.ReservedFor[0].UID != "p" {
		t.Errorf("created claim: %+v", c)
	}
	want := &v1.PodExtendedResourceClaimStatus{ResourceClaimName: name,
		RequestMappings: []v1.ContainerExtendedResourceRequest{{ContainerName: "c0", ResourceName: string(gpuResource), RequestName: "container-0-request-0"}}}
	if diff := cmp.Diff(want, w.podStatus); diff != "" {
		t.Errorf("pod status (-want,+got):\n%s", diff)
	}
	if m.GetPendingAllocation(specialClaimName+"p") != nil {
		t.Errorf("the allocation is still in flight after PreBind")
	}
	pl.Unreserve(context.Background(), state, pod, "a")
	if _, ok := w.claims[name]; ok {
		t.Errorf("Unreserve did not delete the created claim")
	}
}

func TestPostFilterDeletesTheExtendedClaimOfAFormerAttempt(t *testing.T) {
	stale := extendedClaim("")
	objs := []interface{}{gpuClass(), st.MakeSlice("a", driver).Device("gpu-0").Obj(), stale}
	w := newRecorder(objs...)
	pl, _ := newPlugin(t, w, objs...)
	pod := st.MakePod().Name("p").Namespace("default").UID("p").Req(map[v1.ResourceName]string{gpuResource: "1"}).Obj()
	state, _ := cycle(t, pl, pod, st.NodeInfos([]*v1.Node{st.MakeNode().Name("a").Obj()}, nil), "")
	_, s := pl.PostFilter(context.Background(), state, pod, nil)
	if got := st.Verdict(s); got != framework.Unschedulable.String()+": deletion of ResourceClaim completed" {
		t.Errorf("PostFilter: %q", got)
	}
	if _, ok := w.claims[stale.Name]; ok {
		t.Errorf("the stale claim was not deleted: %v", w.calls)
	}
}

func TestSignatureOfAPodWithExtendedResources(t *testing.T) {
	pod := st.MakePod().Name("p").Req(map[v1.ResourceName]string{gpuResource: "1"}).Obj()
	withClass, _ := newPlugin(t, nil, gpuClass())
	if _, ok := withClass.AppendPodSignature(nil, framework.NewPodInfo(pod)); ok {
		t.Errorf("a pod asking for a resource a class provides is cached")
	}
	without, _ := newPlugin(t, nil, st.DeviceClass("gpu", driver))
	if _, ok := without.AppendPodSignature(nil, framework.NewPodInfo(pod)); !ok {
		t.Errorf("a pod asking for a device plugin's resource is not cached")
	}
}
