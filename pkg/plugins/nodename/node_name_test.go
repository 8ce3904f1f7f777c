package nodename

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
		pod  *v1.Pod
		want *framework.Status
	}{
		{name: "a pod without spec.nodeName fits any node", pod: st.MakePod().Name("p").Obj()},
		{name: "a pod naming this node fits", pod: st.MakePod().Name("p").Node("a").Obj()},
		{name: "a pod naming another node is rejected with upstream's reason", pod: st.MakePod().Name("p").Node("b").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			ni := st.NodeInfo(st.MakeNode().Name("a").Obj())
			if got := pl.(framework.FilterPlugin).Filter(context.Background(), framework.NewCycleState(), tt.pod, ni); !got.Equal(tt.want) {
				t.Errorf("status = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPreFilterRestrictsToTheNamedNode(t *testing.T) {
	pl, _ := New(context.Background(), nil, nil)
	r, status := pl.(framework.PreFilterPlugin).PreFilter(context.Background(), framework.NewCycleState(), st.MakePod().Name("p").Node("b").Obj(), nil)
	if !status.IsSuccess() || r.AllNodes() || !r.NodeNames.Has("b") || r.NodeNames.Len() != 1 {
		t.Errorf("PreFilter = %v, %v; want exactly node b", r, status)
	}
	if _, status := pl.(framework.PreFilterPlugin).PreFilter(context.Background(), framework.NewCycleState(), st.MakePod().Name("p").Obj(), nil); !status.IsSkip() {
		t.Errorf("PreFilter without nodeName = %v, want Skip", status)
	}
}
