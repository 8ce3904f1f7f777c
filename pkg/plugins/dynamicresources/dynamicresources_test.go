package dynamicresources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestInertWithoutClaimsAndExplicitWithThem(t *testing.T) {
	withClaim := st.MakePod().Name("p").Obj()
	withClaim.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu"}}
	nis := st.NodeInfos([]*v1.Node{st.MakeNode().Name("n").Obj()}, nil)
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]string
	}{
		{name: "a pod without ResourceClaims is not filtered", pod: st.MakePod().Name("p").Obj(), want: map[string]string{"n": ""}},
		{name: "a pod with ResourceClaims is refused with a clear reason", pod: withClaim,
			want: map[string]string{"n": framework.UnschedulableAndUnresolvable.String() + ": " + ErrReasonNotSupported}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, tt.pod, nis...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
			if s, _ := pl.(framework.ScorePlugin).Score(context.Background(), framework.NewCycleState(), tt.pod, nis[0]); s != 0 {
				t.Errorf("score %d, want 0", s)
			}
		})
	}
}
