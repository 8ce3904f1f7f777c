package tainttoleration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestFilter(t *testing.T) {
	gpu := st.MakeNode().Name("gpu").Taint("nvidia.com/gpu", "true", v1.TaintEffectNoSchedule).Obj()
	tests := []struct {
		name string
		node *v1.Node
		pod  *v1.Pod
		want *framework.Status
	}{
		{name: "an untainted node fits", node: st.MakeNode().Name("n").Obj(), pod: st.MakePod().Name("p").Obj()},
		{name: "an untolerated NoSchedule taint rejects with upstream's reason", node: gpu, pod: st.MakePod().Name("p").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotMatch)},
		{name: "an Equal toleration of key and value passes", node: gpu, pod: st.MakePod().Name("p").Toleration("nvidia.com/gpu", v1.TolerationOpEqual, "true", v1.TaintEffectNoSchedule).Obj()},
		{name: "an Exists toleration without effect passes", node: gpu, pod: st.MakePod().Name("p").Toleration("nvidia.com/gpu", v1.TolerationOpExists, "", "").Obj()},
		{name: "a toleration for another value does not help", node: gpu, pod: st.MakePod().Name("p").Toleration("nvidia.com/gpu", v1.TolerationOpEqual, "false", v1.TaintEffectNoSchedule).Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotMatch)},
		{name: "an untolerated NoExecute taint rejects too", node: st.MakeNode().Name("n").Taint("k", "", v1.TaintEffectNoExecute).Obj(), pod: st.MakePod().Name("p").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotMatch)},
		{name: "a PreferNoSchedule taint never filters", node: st.MakeNode().Name("n").Taint("k", "", v1.TaintEffectPreferNoSchedule).Obj(), pod: st.MakePod().Name("p").Obj()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			if got := st.RunFilter(pl, tt.pod, st.NodeInfo(tt.node)); !got.Equal(tt.want) {
				t.Errorf("status = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScore(t *testing.T) {
	nodes := []*framework.NodeInfo{
		st.NodeInfo(st.MakeNode().Name("clean").Obj()),
		st.NodeInfo(st.MakeNode().Name("one").Taint("a", "", v1.TaintEffectPreferNoSchedule).Obj()),
		st.NodeInfo(st.MakeNode().Name("two").Taint("a", "", v1.TaintEffectPreferNoSchedule).Taint("b", "", v1.TaintEffectPreferNoSchedule).Obj()),
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]int64
	}{
		{name: "fewer untolerated PreferNoSchedule taints score higher", pod: st.MakePod().Name("p").Obj(),
			want: map[string]int64{"clean": 100, "one": 50, "two": 0}},
		{name: "tolerated taints do not count", pod: st.MakePod().Name("p").Toleration("a", v1.TolerationOpExists, "", v1.TaintEffectPreferNoSchedule).Obj(),
			want: map[string]int64{"clean": 100, "one": 100, "two": 0}},
		{name: "a NoSchedule toleration does not tolerate PreferNoSchedule for scoring", pod: st.MakePod().Name("p").Toleration("a", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj(),
			want: map[string]int64{"clean": 100, "one": 50, "two": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			got, status := st.RunScore(pl, tt.pod, nodes...)
			if !status.IsSuccess() {
				t.Fatal(status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

// Gt and Lt tolerations (TaintTolerationComparisonOperators, alpha in
// v1.37 and off by default) compare a taint's value as an integer only
// with the gate on; off, they tolerate nothing, in Filter and in Score.
func TestComparisonOperatorsFollowTheirGate(t *testing.T) {
	tier := func(effect v1.TaintEffect) *v1.Node {
		return st.MakeNode().Name("n").Taint("tier", "5", effect).Obj()
	}
	gt3 := st.MakePod().Name("p").Toleration("tier", v1.TolerationOpGt, "3", "").Obj()
	tests := []struct {
		name      string
		gate      bool
		wantFit   *framework.Status
		wantScore int64
	}{
		{name: "with the gate off (the default) a Gt toleration tolerates nothing", gate: false,
			wantFit: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNotMatch), wantScore: 1},
		{name: "with the gate on a Gt toleration tolerates a larger value", gate: true, wantFit: nil, wantScore: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, st.FakeHandle{Gates: framework.Features{TaintTolerationComparisonOperators: tt.gate}})
			if got := st.RunFilter(pl, gt3, st.NodeInfo(tier(v1.TaintEffectNoSchedule))); !got.Equal(tt.wantFit) {
				t.Errorf("Filter = %v, want %v", got, tt.wantFit)
			}
			state := framework.NewCycleState()
			sp := pl.(*TaintToleration)
			ni := st.NodeInfo(tier(v1.TaintEffectPreferNoSchedule))
			if st := sp.PreScore(context.Background(), state, gt3, nil); !st.IsSuccess() {
				t.Fatal(st)
			}
			if got, _ := sp.Score(context.Background(), state, gt3, ni); got != tt.wantScore {
				t.Errorf("untolerated PreferNoSchedule taints = %d, want %d", got, tt.wantScore)
			}
		})
	}
}
