package volumerestrictions

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func gcePod(name, node, disk string, readOnly bool) *v1.Pod {
	p := st.MakePod().Name(name).Node(node).Obj()
	p.Spec.Volumes = []v1.Volume{{Name: "d", VolumeSource: v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: disk, ReadOnly: readOnly}}}}
	return p
}

func TestFilter(t *testing.T) {
	conflict := framework.Unschedulable.String() + ": " + ErrReasonDiskConflict
	rwop := framework.Unschedulable.String() + ": " + ErrReasonReadWriteOncePodConflict
	nodes := []*v1.Node{st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()}
	rwopClaim := st.MakePVC("solo", "1Gi").AccessModes(v1.ReadWriteOncePod).Obj()
	tests := []struct {
		name string
		pods []*v1.Pod
		objs []interface{}
		pod  *v1.Pod
		want map[string]string
	}{
		{
			name: "a GCE disk mounted read-write on a node conflicts there only",
			pods: []*v1.Pod{gcePod("e", "n1", "disk-1", false)},
			pod:  gcePod("p", "", "disk-1", false),
			want: map[string]string{"n1": conflict, "n2": ""},
		},
		{
			name: "a GCE disk mounted read-only by both pods does not conflict",
			pods: []*v1.Pod{gcePod("e", "n1", "disk-1", true)},
			pod:  gcePod("p", "", "disk-1", true),
			want: map[string]string{"n1": "", "n2": ""},
		},
		{
			name: "a ReadWriteOncePod claim in use by another pod blocks every node",
			pods: []*v1.Pod{st.MakePod().Name("holder").Node("n1").Volume("solo").Obj()},
			objs: []interface{}{rwopClaim},
			pod:  st.MakePod().Name("p").Volume("solo").Obj(),
			want: map[string]string{"n1": rwop, "n2": rwop},
		},
		{
			name: "a ReadWriteOncePod claim nobody uses is free",
			objs: []interface{}{rwopClaim},
			pod:  st.MakePod().Name("p").Volume("solo").Obj(),
			want: map[string]string{"n1": "", "n2": ""},
		},
		{
			name: "a claim that does not exist makes the pod unresolvable",
			pod:  st.MakePod().Name("p").Volume("nope").Obj(),
			want: map[string]string{"n1": framework.UnschedulableAndUnresolvable.String() + `: persistentvolumeclaim "nope" not found`,
				"n2": framework.UnschedulableAndUnresolvable.String() + `: persistentvolumeclaim "nope" not found`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes, tt.pods)
			pl, _ := New(context.Background(), nil, st.FakeHandle{Lister: cache.NewSnapshot(nis...), Objects: tt.objs})
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, tt.pod, nis...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestRemovingTheHolderOfAReadWriteOncePodClaimLiftsTheConflict(t *testing.T) {
	holder := st.MakePod().Name("holder").Node("n1").Volume("solo").Obj()
	nis := st.NodeInfos([]*v1.Node{st.MakeNode().Name("n1").Obj()}, []*v1.Pod{holder})
	pl, _ := New(context.Background(), nil, st.FakeHandle{Lister: cache.NewSnapshot(nis...),
		Objects: []interface{}{st.MakePVC("solo", "1Gi").AccessModes(v1.ReadWriteOncePod).Obj()}})
	vr := pl.(*VolumeRestrictions)
	ctx := context.Background()
	pod := st.MakePod().Name("p").Volume("solo").Obj()
	state := framework.NewCycleState()
	vr.PreFilter(ctx, state, pod, nis)
	if st := vr.Filter(ctx, state, pod, nis[0]); st.IsSuccess() {
		t.Fatal("the claim in use should conflict")
	}
	vr.RemovePod(ctx, state, pod, nis[0].Pods()[0], nis[0])
	if st := vr.Filter(ctx, state, pod, nis[0]); !st.IsSuccess() {
		t.Errorf("after removing the holder (preemption): %v", st)
	}
}
