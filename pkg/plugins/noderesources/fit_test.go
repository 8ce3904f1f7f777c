package noderesources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

type rl = map[v1.ResourceName]string

const gpu v1.ResourceName = "example.com/gpu"

func TestFitFilter(t *testing.T) {
	node := st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", gpu: "2", v1.ResourceEphemeralStorage: "10Gi"}).Obj()
	full := st.MakePod().Name("existing").Node("n").Req(rl{v1.ResourceCPU: "3", v1.ResourceMemory: "6Gi"}).Obj()
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing []*v1.Pod
		args     *configv1.NodeResourcesFitArgs
		podsCap  string
		want     *framework.Status
	}{
		{name: "a pod that fits the free room passes", pod: st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).Obj(), existing: []*v1.Pod{full}},
		{name: "too much cpu is Insufficient cpu", pod: st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "2"}).Obj(), existing: []*v1.Pod{full},
			want: framework.NewStatus(framework.Unschedulable, "Insufficient cpu")},
		{name: "cpu and memory are both reported, cpu first", pod: st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "2", v1.ResourceMemory: "3Gi"}).Obj(), existing: []*v1.Pod{full},
			want: framework.NewStatus(framework.Unschedulable, "Insufficient cpu", "Insufficient memory")},
		{name: "a request larger than the whole node is unresolvable", pod: st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "5"}).Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "Insufficient cpu")},
		{name: "an init container larger than the containers sets the request", pod: st.MakePod().Name("p").InitReq(rl{v1.ResourceCPU: "2"}).Req(rl{v1.ResourceCPU: "500m"}).Obj(), existing: []*v1.Pod{full},
			want: framework.NewStatus(framework.Unschedulable, "Insufficient cpu")},
		{name: "a sidecar adds to the containers' requests", pod: st.MakePod().Name("p").SidecarReq(rl{v1.ResourceCPU: "600m"}).Req(rl{v1.ResourceCPU: "500m"}).Obj(), existing: []*v1.Pod{full},
			want: framework.NewStatus(framework.Unschedulable, "Insufficient cpu")},
		{name: "without the sidecar the same pod fits", pod: st.MakePod().Name("p").InitReq(rl{v1.ResourceCPU: "600m"}).Req(rl{v1.ResourceCPU: "500m"}).Obj(), existing: []*v1.Pod{full}},
		{name: "pod overhead counts", pod: st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "900m"}).Overhead(rl{v1.ResourceCPU: "200m"}).Obj(), existing: []*v1.Pod{full},
			want: framework.NewStatus(framework.Unschedulable, "Insufficient cpu")},
		{name: "an extended resource beyond the free count is reported by name", pod: st.MakePod().Name("p").Req(rl{gpu: "3"}).Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "Insufficient example.com/gpu")},
		{name: "an ignored extended resource is not checked", pod: st.MakePod().Name("p").Req(rl{gpu: "3"}).Obj(),
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{string(gpu)}}},
		{name: "an ignored resource group is not checked", pod: st.MakePod().Name("p").Req(rl{gpu: "3"}).Obj(),
			args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com"}}},
		{name: "ephemeral storage is checked", pod: st.MakePod().Name("p").Req(rl{v1.ResourceEphemeralStorage: "11Gi"}).Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "Insufficient ephemeral-storage")},
		{name: "a full pod count is Too many pods, even for a pod that requests nothing", pod: st.MakePod().Name("p").Obj(), existing: []*v1.Pod{full}, podsCap: "1",
			want: framework.NewStatus(framework.Unschedulable, "Too many pods")},
		{name: "a node that allows no pod at all is Too many pods, still resolvable (preemption may try it)", pod: st.MakePod().Name("p").Obj(), podsCap: "0",
			want: framework.NewStatus(framework.Unschedulable, "Too many pods")},
		{name: "a pod that requests nothing fits a node whose cpu is taken", pod: st.MakePod().Name("p").Container(nil).Obj(),
			existing: []*v1.Pod{st.MakePod().Name("big").Node("n").Req(rl{v1.ResourceCPU: "4"}).Obj()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := node.DeepCopy()
			if tt.podsCap != "" {
				n = st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: tt.podsCap}).Obj()
			}
			pl, err := NewFit(context.Background(), tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := st.RunFilter(pl, tt.pod, st.NodeInfo(n, tt.existing...))
			if !got.Equal(tt.want) {
				t.Errorf("status = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFitFilterDoesNotAllocate(t *testing.T) {
	pl, _ := NewFit(context.Background(), nil, nil)
	pod := st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1", gpu: "1"}).Obj()
	ni := st.NodeInfo(st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4", gpu: "2"}).Obj())
	state := framework.NewCycleState()
	pl.(framework.PreFilterPlugin).PreFilter(context.Background(), state, pod, nil)
	f := pl.(framework.FilterPlugin)
	if n := testing.AllocsPerRun(100, func() { f.Filter(context.Background(), state, pod, ni) }); n != 0 {
		t.Errorf("Filter allocates %v times per call on a fitting node, want 0", n)
	}
}

func TestFitScore(t *testing.T) {
	// Two 4-cpu/8Gi nodes; "busy" has 2 cpu/4Gi requested.
	nodes := func() []*framework.NodeInfo {
		return []*framework.NodeInfo{
			st.NodeInfo(st.MakeNode().Name("idle").Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj()),
			st.NodeInfo(st.MakeNode().Name("busy").Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj(),
				st.MakePod().Name("e").Node("busy").Req(rl{v1.ResourceCPU: "2", v1.ResourceMemory: "4Gi"}).Obj()),
		}
	}
	pod := st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).Obj()
	tests := []struct {
		name     string
		strategy *configv1.ScoringStrategy
		pod      *v1.Pod
		want     map[string]int64
	}{
		{name: "least allocated prefers free room: (cap-req)*100/cap averaged", strategy: nil, pod: pod,
			want: map[string]int64{"idle": 75, "busy": 25}},
		{name: "most allocated prefers packing", strategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated}, pod: pod,
			want: map[string]int64{"idle": 25, "busy": 75}},
		{name: "requested to capacity ratio follows the shape", pod: pod, strategy: &configv1.ScoringStrategy{
			Type:                     configv1.RequestedToCapacityRatio,
			RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}}},
			want: map[string]int64{"idle": 25, "busy": 75}},
		{name: "a pod without requests is scored with 100m cpu and 200Mi memory", pod: st.MakePod().Name("z").Container(nil).Obj(),
			want: map[string]int64{"idle": 97, "busy": 47}},
		{name: "pod-level requests are not scored, only the containers' (kube-scheduler's scorer has PodLevelResources off)",
			pod:  st.MakePod().Name("pl").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).PodRequests(rl{v1.ResourceCPU: "3", v1.ResourceMemory: "6Gi"}).Obj(),
			want: map[string]int64{"idle": 75, "busy": 25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := &configv1.NodeResourcesFitArgs{ScoringStrategy: tt.strategy}
			pl, err := NewFit(context.Background(), args, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, status := st.RunScore(pl, tt.pod, nodes()...)
			if !status.IsSuccess() {
				t.Fatal(status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestBalancedAllocationScore(t *testing.T) {
	node := func(name string, pods ...*v1.Pod) *framework.NodeInfo {
		return st.NodeInfo(st.MakeNode().Name(name).Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj(), pods...)
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		nodes    []*framework.NodeInfo
		want     map[string]int64
		wantSkip bool
	}{
		{name: "a pod that keeps the balance scores 75",
			pod: st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).Obj(), nodes: []*framework.NodeInfo{node("n")},
			want: map[string]int64{"n": 75}},
		{name: "a pod that unbalances an empty node scores below 75",
			pod: st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "2"}).Obj(), nodes: []*framework.NodeInfo{node("n")},
			want: map[string]int64{"n": 62}},
		{name: "a pod that restores the balance of a lopsided node scores above 75",
			pod:   st.MakePod().Name("p").Req(rl{v1.ResourceMemory: "4Gi"}).Obj(),
			nodes: []*framework.NodeInfo{node("n", st.MakePod().Name("e").Node("n").Req(rl{v1.ResourceCPU: "2"}).Obj())},
			want:  map[string]int64{"n": 87}},
		{name: "a best-effort pod is skipped", pod: st.MakePod().Name("p").Container(nil).Obj(), nodes: []*framework.NodeInfo{node("n")}, wantSkip: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := NewBalancedAllocation(context.Background(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, status := st.RunScore(pl, tt.pod, tt.nodes...)
			if tt.wantSkip {
				if !status.IsSkip() {
					t.Fatalf("status = %v, want Skip", status)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestScoreDoesNotAllocate(t *testing.T) {
	ni := st.NodeInfo(st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj())
	pod := st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "1", v1.ResourceMemory: "2Gi"}).Obj()
	fit, _ := NewFit(context.Background(), nil, nil)
	ba, _ := NewBalancedAllocation(context.Background(), nil, nil)
	for _, pl := range []framework.Plugin{fit, ba} {
		state := framework.NewCycleState()
		pl.(framework.PreScorePlugin).PreScore(context.Background(), state, pod, nil)
		sp := pl.(framework.ScorePlugin)
		if n := testing.AllocsPerRun(100, func() { sp.Score(context.Background(), state, pod, ni) }); n != 0 {
			t.Errorf("%s Score allocates %v times per call, want 0", pl.Name(), n)
		}
	}
}
