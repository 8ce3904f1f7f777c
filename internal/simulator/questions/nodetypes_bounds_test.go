package questions

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	st "github.com/kubesched/kubesched/internal/testing"
)

func TestUsableTypesLeaveOutOnlyTypesNoPodCanRunOn(t *testing.T) {
	res := func(kv ...string) map[v1.ResourceName]string {
		out := map[v1.ResourceName]string{}
		for i := 0; i < len(kv); i += 2 {
			out[v1.ResourceName(kv[i])] = kv[i+1]
		}
		return out
	}
	general := st.MakeNode().Name("m6i.xlarge").Label("pool", "general").Capacity(res("cpu", "4", "memory", "16Gi")).Obj()
	gpu := st.MakeNode().Name("g5.xlarge").Label("pool", "gpu").Capacity(res("cpu", "4", "memory", "16Gi", "nvidia.com/gpu", "1")).
		Taint("nvidia.com/gpu", "present", v1.TaintEffectNoSchedule).Obj()
	gpuPod := func() *st.PodWrapper {
		return st.MakePod().Name("trainer").Req(res("cpu", "1", "nvidia.com/gpu", "1")).Toleration("nvidia.com/gpu", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)
	}
	tests := []struct {
		name     string
		pods     []*v1.Pod
		others   []interface{}
		ignored  bool
		wantUsed [2]bool // general, gpu
	}{
		{name: "a pod without a GPU or its toleration can use only the untainted type",
			pods: []*v1.Pod{st.MakePod().Name("web").Req(res("cpu", "1")).Obj()}, wantUsed: [2]bool{true, false}},
		{name: "a GPU pod cannot use a type without GPUs",
			pods: []*v1.Pod{gpuPod().Obj()}, wantUsed: [2]bool{false, true}},
		{name: "a GPU pod may use a type without GPUs when a DeviceClass could give it one",
			pods: []*v1.Pod{gpuPod().Obj()}, others: []interface{}{&resourceapi.DeviceClass{}}, wantUsed: [2]bool{true, true}},
		{name: "a GPU pod may use a type without GPUs when the configuration ignores some resources",
			pods: []*v1.Pod{gpuPod().Obj()}, ignored: true, wantUsed: [2]bool{true, true}},
		{name: "a pod whose node selector no type matches can use none",
			pods: []*v1.Pod{st.MakePod().Name("cache").NodeSelector("pool", "memory").Obj()}, wantUsed: [2]bool{false, false}},
		{name: "a pod whose required node affinity names the GPU pool can use only it",
			pods: []*v1.Pod{gpuPod().RequiredNodeAffinityIn("pool", "gpu").Obj()}, others: []interface{}{&resourceapi.DeviceClass{}}, wantUsed: [2]bool{false, true}},
		{name: "a pod asking more CPU than a type has cannot use it",
			pods: []*v1.Pod{st.MakePod().Name("big").Req(res("cpu", "5")).Toleration("", v1.TolerationOpExists, "", "").Obj()}, wantUsed: [2]bool{false, false}},
		{name: "a pod-level request smaller than its containers' is the one that counts",
			pods: []*v1.Pod{st.MakePod().Name("pl").Req(res("cpu", "5")).PodRequests(res("cpu", "3")).Obj()}, wantUsed: [2]bool{true, false}},
		{name: "a pod-level request for a resource its containers do not request does not count",
			pods: []*v1.Pod{st.MakePod().Name("pl").Req(res("memory", "1Gi")).PodRequests(res("cpu", "5", "memory", "1Gi")).Obj()}, wantUsed: [2]bool{true, false}},
		{name: "a pod with resource claims could use any type",
			pods: []*v1.Pod{st.MakePod().Name("dra").Claim("gpu", "gpu-claim").NodeSelector("pool", "memory").Obj()}, wantUsed: [2]bool{true, true}},
		{name: "a bound pod is not scheduled, so it uses no type",
			pods: []*v1.Pod{st.MakePod().Name("running").Node("n1").Req(res("cpu", "1")).Obj()}, wantUsed: [2]bool{false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &cluster.Cluster{Pods: tt.pods, Others: tt.others}
			types := []NodeType{{Type: "m6i.xlarge", Node: general}, {Type: "g5.xlarge", Node: gpu}}
			got := usableTypes(c, types, tt.ignored)
			if got[0] != tt.wantUsed[0] || got[1] != tt.wantUsed[1] {
				t.Errorf("usable (general, gpu) = %v, want %v", got, tt.wantUsed)
			}
		})
	}
}
