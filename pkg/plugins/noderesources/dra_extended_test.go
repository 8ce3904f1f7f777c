package noderesources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/dynamicresources"
)

const gpuDriver = "gpu.example.com"

// gpuClass provides example.com/gpu by DRA.
func gpuClass() *resourceapi.DeviceClass {
	c := st.DeviceClass("gpu", gpuDriver)
	c.Spec.ExtendedResourceName = ptr.To(string(gpu))
	return c
}

// draHandle is a handle whose DRA manager serves objs.
func draHandle(t *testing.T, objs ...interface{}) framework.Handle {
	t.Helper()
	l, err := framework.StaticListers(objs...)
	if err != nil {
		t.Fatal(err)
	}
	return st.FakeHandle{Objects: objs, DRA: dynamicresources.NewManager(l)}
}

func TestFitLeavesDRABackedExtendedResourcesToDynamicResources(t *testing.T) {
	withoutGPU := st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4"}).Obj()
	withGPU := st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4", gpu: "1"}).Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		objs []interface{}
		want *framework.Status
	}{
		{name: "a resource a DeviceClass provides is not checked on a node without it",
			pod: st.MakePod().Name("p").Req(rl{gpu: "1"}).Obj(), node: withoutGPU, objs: []interface{}{gpuClass()}},
		{name: "the implicit deviceclass.resource.kubernetes.io/<class> name is left to DRA too",
			pod: st.MakePod().Name("p").Req(rl{"deviceclass.resource.kubernetes.io/gpu": "1"}).Obj(), node: withoutGPU, objs: []interface{}{st.DeviceClass("gpu", gpuDriver)}},
		{name: "without a class that provides it the resource is insufficient as before",
			pod: st.MakePod().Name("p").Req(rl{gpu: "1"}).Obj(), node: withoutGPU, objs: []interface{}{st.DeviceClass("gpu", gpuDriver)},
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "Insufficient example.com/gpu")},
		{name: "a node with the resource in its allocatable is checked by Fit (a device plugin's)",
			pod: st.MakePod().Name("p").Req(rl{gpu: "2"}).Obj(), node: withGPU, objs: []interface{}{gpuClass()},
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "Insufficient example.com/gpu")},
		{name: "other resources are still checked beside a DRA-backed one",
			pod: st.MakePod().Name("p").Req(rl{gpu: "1", v1.ResourceCPU: "5"}).Obj(), node: withoutGPU, objs: []interface{}{gpuClass()},
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "Insufficient cpu")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := NewFit(context.Background(), nil, draHandle(t, tt.objs...))
			if err != nil {
				t.Fatal(err)
			}
			if got := st.RunFilter(pl, tt.pod, st.NodeInfo(tt.node)); !got.Equal(tt.want) {
				t.Errorf("status = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScoreCountsTheDevicesOfDRABackedExtendedResources(t *testing.T) {
	// A 4-cpu/8Gi node with 4 GPUs of the class in a ResourceSlice, one of
	// them allocated; the pod asks for 1 cpu, 2Gi and 1 GPU.
	node := st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj()
	slice := st.MakeSlice("n", gpuDriver).Device("gpu-0").Device("gpu-1").Device("gpu-2").Device("gpu-3").Obj()
	held := st.MakeClaim("held").Request("gpu", "gpu", 1).AllocatedOn("n", gpuDriver, "gpu-0").Obj()
	pod := st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi", gpu: "1"}).Obj()
	resources := []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: string(gpu), Weight: 1}}
	tests := []struct {
		name     string
		strategy configv1.ScoringStrategyType
		objs     []interface{}
		want     int64
	}{
		// cpu (4000-1000)*100/4000 = 75, memory 75, gpu: 4 devices, 1
		// allocated + 1 requested: (4-2)*100/4 = 50; (75+75+50)/3 = 66.
		{name: "least allocated counts the class's devices as the gpu's capacity", strategy: configv1.LeastAllocated,
			objs: []interface{}{gpuClass(), slice, held}, want: 66},
		// cpu 25, memory 25, gpu 2*100/4 = 50; (25+25+50)/3 = 33.
		{name: "most allocated counts the allocated devices as requested", strategy: configv1.MostAllocated,
			objs: []interface{}{gpuClass(), slice, held}, want: 33},
		// No class provides example.com/gpu: the node has none of it, so
		// it is not scored; (75+75)/2 = 75.
		{name: "without a class the resource the node lacks is not scored", strategy: configv1.LeastAllocated,
			objs: []interface{}{st.DeviceClass("gpu", gpuDriver), slice, held}, want: 75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: tt.strategy, Resources: resources}}
			pl, err := NewFit(context.Background(), args, draHandle(t, tt.objs...))
			if err != nil {
				t.Fatal(err)
			}
			got, status := st.RunScore(pl, pod, st.NodeInfo(node))
			if !status.IsSuccess() {
				t.Fatal(status)
			}
			if diff := cmp.Diff(map[string]int64{"n": tt.want}, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestBalancedAllocationCountsTheDevicesOfDRABackedExtendedResources(t *testing.T) {
	node := st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj()
	slice := st.MakeSlice("n", gpuDriver).Device("gpu-0").Device("gpu-1").Obj()
	// The pod asks for 1 cpu (1/4), 2Gi (2/8) and 1 of the 2 GPUs (1/2).
	// Before: fractions 0, 0, 0 (std 0, score 100); after: 0.25, 0.25,
	// 0.5, mean 1/3, std sqrt((2*(1/12)^2+(1/6)^2)/3) = 0.1179, score
	// int64(88.2) = 88; (150 + 88 - 100)/2 = 69.
	pod := st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi", gpu: "1"}).Obj()
	args := &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: string(gpu), Weight: 1}}}
	pl, err := NewBalancedAllocation(context.Background(), args, draHandle(t, gpuClass(), slice))
	if err != nil {
		t.Fatal(err)
	}
	got, status := st.RunScore(pl, pod, st.NodeInfo(node))
	if !status.IsSuccess() {
		t.Fatal(status)
	}
	if diff := cmp.Diff(map[string]int64{"n": 69}, got); diff != "" {
		t.Errorf("scores (-want,+got):\n%s", diff)
	}
}

func TestSignatureOfAPodWithDRABackedExtendedResources(t *testing.T) {
	pod := st.MakePod().Name("p").Req(rl{gpu: "1"}).Obj()
	for _, tt := range []struct {
		name   string
		objs   []interface{}
		wantOK bool
	}{
		{name: "a pod asking for a resource a class provides is not cached", objs: []interface{}{gpuClass()}},
		{name: "a pod asking for a device plugin's resource is cached", objs: []interface{}{st.DeviceClass("gpu", gpuDriver)}, wantOK: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := draHandle(t, tt.objs...)
			fit, _ := NewFit(context.Background(), nil, h)
			ba, _ := NewBalancedAllocation(context.Background(), nil, h)
			for _, pl := range []framework.Plugin{fit, ba} {
				if _, ok := pl.(framework.EquivalencePlugin).AppendPodSignature(nil, framework.NewPodInfo(pod)); ok != tt.wantOK {
					t.Errorf("%s: ok = %v, want %v", pl.Name(), ok, tt.wantOK)
				}
			}
		})
	}
}

func TestFitQueuesAPodWhenADeviceClassProvidesItsResource(t *testing.T) {
	pod := st.MakePod().Name("p").Req(rl{gpu: "1"}).Obj()
	pl, _ := NewFit(context.Background(), nil, nil)
	f := pl.(*Fit)
	other := st.DeviceClass("other", gpuDriver)
	tests := []struct {
		name     string
		old, cur *resourceapi.DeviceClass
		want     framework.QueueingHint
	}{
		{name: "a class added with the pod's resource as its extendedResourceName queues", cur: gpuClass(), want: framework.Queue},
		{name: "a class added for another resource does not", cur: other, want: framework.QueueSkip},
		{name: "a class that starts to provide the resource queues", old: st.DeviceClass("gpu", gpuDriver), cur: gpuClass(), want: framework.Queue},
		{name: "an update that keeps the extendedResourceName does not", old: gpuClass(), cur: gpuClass(), want: framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old interface{}
			if tt.old != nil {
				old = tt.old
			}
			got, err := f.afterDeviceClassEvent(klog.Background(), pod, old, tt.cur)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
