package nodeaffinity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestFilter(t *testing.T) {
	zoneA := st.MakeNode().Name("a").Label("zone", "a").Obj()
	byName := v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}}
	tests := []struct {
		name string
		pod  *v1.Pod
		args *configv1.NodeAffinityArgs
		want *framework.Status
	}{
		{name: "a pod without selector or affinity fits any node", pod: st.MakePod().Name("p").Obj()},
		{name: "a matching nodeSelector fits", pod: st.MakePod().Name("p").NodeSelector("zone", "a").Obj()},
		{name: "a nodeSelector that does not match is rejected with upstream's reason", pod: st.MakePod().Name("p").NodeSelector("zone", "b").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)},
		{name: "required terms are ORed", pod: st.MakePod().Name("p").RequiredNodeAffinityIn("zone", "b").RequiredNodeAffinityIn("zone", "a").Obj()},
		{name: "a required term that does not match is rejected", pod: st.MakePod().Name("p").RequiredNodeAffinityIn("zone", "b", "c").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)},
		{name: "nodeSelector and affinity must both match", pod: st.MakePod().Name("p").NodeSelector("zone", "b").RequiredNodeAffinityIn("zone", "a").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod)},
		{name: "a metadata.name field selector matches the node's name", pod: st.MakePod().Name("p").RequiredNodeAffinityTerm(byName).Obj()},
		{name: "the scheduler-enforced addedAffinity rejects with its own reason", pod: st.MakePod().Name("p").Obj(),
			args: &configv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}}}}}},
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonEnforced)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := New(context.Background(), tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.RunFilter(pl, tt.pod, st.NodeInfo(zoneA)); !got.Equal(tt.want) {
				t.Errorf("status = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPreFilterRestrictsToNamedNodes(t *testing.T) {
	term := func(names ...string) v1.NodeSelectorTerm {
		return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: names}}}
	}
	tests := []struct {
		name      string
		pod       *v1.Pod
		wantNodes []string
		wantCode  framework.Code
	}{
		{name: "a pod without affinity is skipped", pod: st.MakePod().Name("p").Obj(), wantCode: framework.Skip},
		{name: "terms naming nodes restrict to their union", pod: st.MakePod().Name("p").RequiredNodeAffinityTerm(term("a", "b")).RequiredNodeAffinityTerm(term("c")).Obj(), wantNodes: []string{"a", "b", "c"}},
		{name: "one term without names allows every node", pod: st.MakePod().Name("p").RequiredNodeAffinityTerm(term("a")).RequiredNodeAffinityIn("zone", "x").Obj()},
		{name: "requirements within a term that name disjoint nodes conflict", wantCode: framework.UnschedulableAndUnresolvable,
			pod: st.MakePod().Name("p").RequiredNodeAffinityTerm(v1.NodeSelectorTerm{MatchFields: append(term("a").MatchFields, term("b").MatchFields...)}).Obj()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			r, status := pl.(framework.PreFilterPlugin).PreFilter(context.Background(), framework.NewCycleState(), tt.pod, nil)
			if status.Code() != tt.wantCode {
				t.Fatalf("code = %v, want %v (%v)", status.Code(), tt.wantCode, status)
			}
			var got []string
			if !r.AllNodes() {
				got = sortedNames(r)
			}
			if diff := cmp.Diff(tt.wantNodes, got); diff != "" {
				t.Errorf("nodes (-want,+got):\n%s", diff)
			}
		})
	}
}

func sortedNames(r *framework.PreFilterResult) []string {
	out := r.NodeNames.UnsortedList()
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestScore(t *testing.T) {
	nodes := []*framework.NodeInfo{
		st.NodeInfo(st.MakeNode().Name("ssd").Label("disk", "ssd").Obj()),
		st.NodeInfo(st.MakeNode().Name("ssd-fast").Label("disk", "ssd").Label("net", "fast").Obj()),
		st.NodeInfo(st.MakeNode().Name("hdd").Label("disk", "hdd").Obj()),
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		args     *configv1.NodeAffinityArgs
		want     map[string]int64
		wantSkip bool
	}{
		{name: "without preferred terms PreScore skips", pod: st.MakePod().Name("p").Obj(), wantSkip: true},
		{name: "matching weights add up and scale to the best node", pod: st.MakePod().Name("p").PreferredNodeAffinityIn(30, "disk", "ssd").PreferredNodeAffinityIn(10, "net", "fast").Obj(),
			want: map[string]int64{"ssd": 75, "ssd-fast": 100, "hdd": 0}},
		{name: "addedAffinity preferences count too", pod: st.MakePod().Name("p").Obj(),
			args: &configv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
				{Weight: 5, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"hdd"}}}}}}}},
			want: map[string]int64{"ssd": 0, "ssd-fast": 0, "hdd": 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := New(context.Background(), tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, status := st.RunScore(pl, tt.pod, nodes...)
			if tt.wantSkip != status.IsSkip() {
				t.Fatalf("status = %v, want skip %v", status, tt.wantSkip)
			}
			if diff := cmp.Diff(tt.want, got); !tt.wantSkip && diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}
