package nodevolumelimits

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestFilter(t *testing.T) {
	const driver = "ebs.csi.aws.com"
	exceeded := framework.Unschedulable.String() + ": " + ErrReasonMaxVolumeCountExceeded
	objs := []interface{}{
		st.MakePVC("v1", "1Gi").BoundTo("pv1").Obj(), st.MakePV("pv1", "1Gi", "").CSI(driver, "h1").Obj(),
		st.MakePVC("v2", "1Gi").BoundTo("pv2").Obj(), st.MakePV("pv2", "1Gi", "").CSI(driver, "h2").Obj(),
		st.CSINode("full", driver, 1), st.CSINode("roomy", driver, 2),
	}
	nodes := []*v1.Node{st.MakeNode().Name("full").Obj(), st.MakeNode().Name("roomy").Obj(), st.MakeNode().Name("nocsinode").Obj()}
	existing := []*v1.Pod{
		st.MakePod().Name("e1").Node("full").Volume("v1").Obj(),
		st.MakePod().Name("e2").Node("roomy").Volume("v1").Obj(),
		st.MakePod().Name("e3").Node("nocsinode").Volume("v1").Obj(),
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]string
	}{
		{
			name: "a new volume beyond the driver's count on the node does not fit, a node without CSINode has no limit",
			pod:  st.MakePod().Name("p").Volume("v2").Obj(),
			want: map[string]string{"full": exceeded, "roomy": "", "nocsinode": ""},
		},
		{
			name: "a volume already attached on the node is not counted again",
			pod:  st.MakePod().Name("p").Volume("v1").Obj(),
			want: map[string]string{"full": "", "roomy": "", "nocsinode": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes, existing)
			pl, _ := New(context.Background(), nil, st.FakeHandle{Lister: cache.NewSnapshot(nis...), Objects: objs})
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, tt.pod, nis...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
		})
	}
}
