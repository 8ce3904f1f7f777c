package podtopologyspread

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// TestConstraintsShareACountOnlyWithTheSameSelector: a node's matching
// pods are counted once per distinct selector. Each constraint's count is
// its own selector's, whether it shares it or not.
func TestConstraintsShareACountOnlyWithTheSameSelector(t *testing.T) {
	service := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	withKeys := func(p *st.PodWrapper, keys ...string) *st.PodWrapper {
		p.LastSpreadConstraint().MatchLabelKeys = keys
		return p
	}
	ni := framework.NewNodeInfo(
		st.MakePod().Name("w1").Label("app", "web").Label("version", "1").Node("n").Obj(),
		st.MakePod().Name("w2").Label("app", "web").Label("version", "2").Node("n").Obj(),
		st.MakePod().Name("a1").Label("app", "api").Node("n").Obj(),
	)
	ni.SetNode(st.MakeNode().Name("n").Label(zone, "a").Obj())
	for _, tc := range []struct {
		name   string
		pod    *v1.Pod
		action v1.UnsatisfiableConstraintAction
		shares []int
		counts []int
	}{
		{
			name:   "the system defaults' hostname and zone constraints share the Service's selector",
			pod:    st.MakePod().Name("p").Label("app", "web").Obj(),
			action: v1.ScheduleAnyway,
			shares: []int{-1, 0}, counts: []int{2, 2},
		},
		{
			name: "two constraints with the same labelSelector share one count",
			pod: st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").
				SpreadConstraint(1, v1.LabelHostname, v1.DoNotSchedule, "web").Obj(),
			action: v1.DoNotSchedule,
			shares: []int{-1, 0}, counts: []int{2, 2},
		},
		{
			name: "constraints over different apps count apart",
			pod: st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").
				SpreadConstraint(1, v1.LabelHostname, v1.DoNotSchedule, "api").Obj(),
			action: v1.DoNotSchedule,
			shares: []int{-1, -1}, counts: []int{2, 1},
		},
		{
			name: "matchLabelKeys that narrow one of two equal selectors make it count apart",
			pod: withKeys(st.MakePod().Name("p").Label("app", "web").Label("version", "2").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").
				SpreadConstraint(1, v1.LabelHostname, v1.DoNotSchedule, "web"), "version").Obj(),
			action: v1.DoNotSchedule,
			shares: []int{-1, -1}, counts: []int{2, 1},
		},
		{
			name: "a third constraint shares the count of the first with its selector",
			pod: st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").
				SpreadConstraint(1, v1.LabelHostname, v1.DoNotSchedule, "api").
				SpreadConstraint(2, "rack", v1.DoNotSchedule, "web").Obj(),
			action: v1.DoNotSchedule,
			shares: []int{-1, -1, 0}, counts: []int{2, 1, 2},
		},
		{
			name: "only constraints of the asked action are parsed, and share among themselves",
			pod: st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.ScheduleAnyway, "web").
				SpreadConstraint(1, v1.LabelHostname, v1.DoNotSchedule, "web").
				SpreadConstraint(2, "rack", v1.DoNotSchedule, "web").Obj(),
			action: v1.DoNotSchedule,
			shares: []int{-1, 0}, counts: []int{2, 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlugin(t, nil, nil, service)
			cs, err := pl.constraintsFor(tc.pod, tc.action)
			if err != nil {
				t.Fatal(err)
			}
			shares, counts := make([]int, len(cs)), make([]int, len(cs))
			var nc nodeCounts
			// Asked last to first: a sharing constraint may be asked
			// before the one it shares with.
			for i := len(cs) - 1; i >= 0; i-- {
				shares[i], counts[i] = cs[i].sameSelectorAs, nc.of(ni, cs, i, tc.pod.Namespace)
			}
			if diff := cmp.Diff(tc.shares, shares); diff != "" {
				t.Errorf("shared selectors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.counts, counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s", diff)
			}
		})
	}
}
