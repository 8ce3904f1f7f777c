package nodeunschedulable

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name string
		node *v1.Node
		pod  *v1.Pod
		want *framework.Status
	}{
		{name: "a schedulable node fits", node: st.MakeNode().Name("n").Obj(), pod: st.MakePod().Name("p").Obj()},
		{name: "a cordoned node is rejected with upstream's reason", node: st.MakeNode().Name("n").Unschedulable().Obj(), pod: st.MakePod().Name("p").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable)},
		{name: "a pod tolerating the unschedulable taint fits a cordoned node", node: st.MakeNode().Name("n").Unschedulable().Obj(),
			pod: st.MakePod().Name("p").Toleration(v1.TaintNodeUnschedulable, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).Obj()},
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
