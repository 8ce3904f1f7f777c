package timeline_test

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	st "github.com/kubesched/kubesched/internal/testing"
)

// Fragmentation counts the free CPU of the nodes that cannot take the
// median pending pod, whatever keeps it out: CPU, memory, or the pod
// slots ("Too many pods").
func TestFragmentationIsTheFreeCPUTheMedianPendingPodCannotUse(t *testing.T) {
	node := func(name, cpu, mem, pods string) *v1.Node {
		return st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: mem, v1.ResourcePods: pods}).Obj()
	}
	pods := func(n int, cpu, mem string) []runtime.Object {
		var out []runtime.Object
		for i := 0; i < n; i++ {
			out = append(out, st.MakePod().Name("p"+string(rune('a'+i))).Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: mem}).Obj())
		}
		return out
	}
	tests := []struct {
		name string
		objs []runtime.Object
		want float64
	}{
		{name: "pods left for want of pod slots strand all the free CPU", objs: append([]runtime.Object{node("n1", "8", "16Gi", "2")}, pods(5, "100m", "64Mi")...), want: 100},
		{name: "pods left for want of memory strand all the free CPU", objs: append([]runtime.Object{node("n1", "8", "2Gi", "110")}, pods(3, "100m", "1500Mi")...), want: 100},
		{name: "pods left for want of CPU strand the CPU left below their request", objs: append([]runtime.Object{node("n1", "2", "16Gi", "110")}, pods(3, "1500m", "64Mi")...), want: 100},
		{name: "nothing pending strands nothing", objs: append([]runtime.Object{node("n1", "8", "16Gi", "110")}, pods(3, "100m", "64Mi")...), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r, _ := replay(t, tt.objs, cluster.Step{At: time.Minute, Name: "end"})
			if r.Timeline == nil || len(r.Timeline.Samples) == 0 {
				t.Fatal("no samples")
			}
			got := r.Timeline.Samples[len(r.Timeline.Samples)-1].Fragmentation
			if got != tt.want {
				t.Errorf("fragmentation %.1f%%, want %.1f%%", got, tt.want)
			}
		})
	}
}
