package nodedeclaredfeatures

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestFilter(t *testing.T) {
	unmet := framework.UnschedulableAndUnresolvable.String() + ": " + ErrReasonUnsatisfiedRequirements
	declaring := st.MakeNode().Name("new").Obj()
	declaring.Status.DeclaredFeatures = []string{"UserNamespacesHostNetworkSupport"}
	nodes := []*v1.Node{declaring, st.MakeNode().Name("old").Obj()}
	no := false
	userNSHostNetwork := st.MakePod().Name("p").Obj()
	userNSHostNetwork.Spec.HostNetwork, userNSHostNetwork.Spec.HostUsers = true, &no
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]string
	}{
		{
			name: "a pod that needs no node feature fits every node",
			pod:  st.MakePod().Name("p").Obj(),
			want: map[string]string{"new": "", "old": ""},
		},
		{
			name: "a pod in a user namespace on the host network fits only nodes that declare support for it",
			pod:  userNSHostNetwork,
			want: map[string]string{"new": "", "old": unmet},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, tt.pod, st.NodeInfos(nodes, nil)...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
		})
	}
}
