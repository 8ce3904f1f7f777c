package schedulinggates

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestPreEnqueue(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		want *framework.Status
	}{
		{name: "an ungated pod enters the queue", pod: st.MakePod().Name("p").Obj()},
		{name: "a gated pod waits with upstream's message", pod: st.MakePod().Name("p").SchedulingGates("a", "b").Obj(),
			want: framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting for scheduling gates: [a b]")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			if got := pl.(framework.PreEnqueuePlugin).PreEnqueue(context.Background(), tt.pod); !got.Equal(tt.want) {
				t.Errorf("status = %v, want %v", got, tt.want)
			}
		})
	}
}
