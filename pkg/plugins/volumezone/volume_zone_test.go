package volumezone

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestFilter(t *testing.T) {
	const zone = v1.LabelTopologyZone
	conflict := framework.UnschedulableAndUnresolvable.String() + ": " + ErrReasonConflict
	nodes := []*v1.Node{st.MakeNode().Name("a1").Label(zone, "a").Obj(), st.MakeNode().Name("b1").Label(zone, "b").Obj(),
		st.MakeNode().Name("plain").Obj()}
	pod := st.MakePod().Name("p").Volume("data").Obj()
	tests := []struct {
		name string
		objs []interface{}
		want map[string]string
	}{
		{
			name: "a bound volume in zone a admits nodes in zone a and nodes without any zone label",
			objs: []interface{}{st.MakePVC("data", "1Gi").BoundTo("pv").Obj(), st.MakePV("pv", "1Gi", "").Label(zone, "a").Obj()},
			want: map[string]string{"a1": "", "b1": conflict, "plain": ""},
		},
		{
			name: "a volume labeled with several zones admits each of them",
			objs: []interface{}{st.MakePVC("data", "1Gi").BoundTo("pv").Obj(), st.MakePV("pv", "1Gi", "").Label(zone, "a__b").Obj()},
			want: map[string]string{"a1": "", "b1": "", "plain": ""},
		},
		{
			name: "the beta zone label on a volume matches the GA label on nodes",
			objs: []interface{}{st.MakePVC("data", "1Gi").BoundTo("pv").Obj(), st.MakePV("pv", "1Gi", "").Label(v1.LabelFailureDomainBetaZone, "b").Obj()},
			want: map[string]string{"a1": conflict, "b1": "", "plain": ""},
		},
		{
			name: "an unbound WaitForFirstConsumer claim is left to VolumeBinding",
			objs: []interface{}{st.MakePVC("data", "1Gi").Class("local").Obj(), st.StorageClass("local", storagev1.VolumeBindingWaitForFirstConsumer, "")},
			want: map[string]string{"a1": "", "b1": "", "plain": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes, nil)
			pl, _ := New(context.Background(), nil, st.FakeHandle{Lister: cache.NewSnapshot(nis...), Objects: tt.objs})
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, pod, nis...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
		})
	}
}
