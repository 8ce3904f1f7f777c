package nodevolumelimits

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestFilter(t *testing.T) {
	const driver = "ebs.csi.aws.com"
	exceeded := framework.Unschedulable.String() + ": " + ErrReasonMaxVolumeCountExceeded
	pv3 := "pv3"
	prevent := true
	objs := []interface{}{
		st.MakePVC("v1", "1Gi").BoundTo("pv1").Obj(), st.MakePV("pv1", "1Gi", "").CSI(driver, "h1").Obj(),
		st.MakePVC("v2", "1Gi").BoundTo("pv2").Obj(), st.MakePV("pv2", "1Gi", "").CSI(driver, "h2").Obj(),
		st.MakePV("pv3", "1Gi", "").CSI(driver, "h3").Obj(),
		st.MakePVC("lvm", "1Gi").BoundTo("pv-lvm").Obj(), st.MakePV("pv-lvm", "1Gi", "").CSI("topolvm.io", "l1").Obj(),
		st.CSINode("full", driver, 1), st.CSINode("roomy", driver, 2), st.CSINode("withva", driver, 2),
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "topolvm.io"}, Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: &prevent}},
		// A VolumeAttachment on withva holds a second volume of the driver.
		&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va"}, Spec: storagev1.VolumeAttachmentSpec{
			Attacher: driver, NodeName: "withva", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv3}}},
	}
	nodes := []*v1.Node{st.MakeNode().Name("full").Obj(), st.MakeNode().Name("roomy").Obj(), st.MakeNode().Name("nocsinode").Obj(), st.MakeNode().Name("withva").Obj()}
	existing := []*v1.Pod{
		st.MakePod().Name("e1").Node("full").Volume("v1").Obj(),
		st.MakePod().Name("e2").Node("roomy").Volume("v1").Obj(),
		st.MakePod().Name("e3").Node("nocsinode").Volume("v1").Obj(),
		st.MakePod().Name("e4").Node("withva").Volume("v1").Obj(),
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]string
	}{
		{
			name: "a new volume beyond the driver's count does not fit; a VolumeAttachment's volume counts; no CSINode, no limit",
			pod:  st.MakePod().Name("p").Volume("v2").Obj(),
			want: map[string]string{"full": exceeded, "roomy": "", "nocsinode": "", "withva": exceeded},
		},
		{
			name: "an inline in-tree EBS disk counts against the CSI driver it migrates to",
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Obj()
				p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "disk", VolumeSource: v1.VolumeSource{
					AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}}})
				return p
			}(),
			want: map[string]string{"full": exceeded, "roomy": "", "nocsinode": "", "withva": exceeded},
		},
		{
			name: "a driver that asks for it must be on the node's CSINode",
			pod:  st.MakePod().Name("p").Volume("lvm").Obj(),
			want: map[string]string{"full": framework.Unschedulable.String() + ": topolvm.io CSI driver is not installed on the node",
				"roomy":     framework.Unschedulable.String() + ": topolvm.io CSI driver is not installed on the node",
				"nocsinode": framework.Unschedulable.String() + ": topolvm.io CSI driver is not installed on the node",
				"withva":    framework.Unschedulable.String() + ": topolvm.io CSI driver is not installed on the node"},
		},
		{
			name: "a volume already attached on the node is not counted again",
			pod:  st.MakePod().Name("p").Volume("v1").Obj(),
			want: map[string]string{"full": "", "roomy": "", "nocsinode": "", "withva": ""},
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
