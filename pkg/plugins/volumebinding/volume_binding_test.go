package volumebinding

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

const zone = v1.LabelTopologyZone

var (
	wffc      = storagev1.VolumeBindingWaitForFirstConsumer
	immediate = storagev1.VolumeBindingImmediate
	unres     = framework.UnschedulableAndUnresolvable.String() + ": "
)

func nodes() []*v1.Node {
	return []*v1.Node{st.MakeNode().Name("a1").Label(zone, "a").Obj(), st.MakeNode().Name("b1").Label(zone, "b").Obj()}
}

// capacityIn is a CSIStorageCapacity of a class for the nodes labelled key=value.
func capacityIn(name, class, key, value, size string) *storagev1.CSIStorageCapacity {
	q := resource.MustParse(size)
	return &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"}, StorageClassName: class,
		NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}, Capacity: &q}
}

func TestFilter(t *testing.T) {
	pod := st.MakePod().Name("p").Volume("data").Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		objs []interface{}
		want map[string]string
	}{
		{
			name: "a pod without claims is not checked",
			pod:  st.MakePod().Name("p").Obj(),
			want: map[string]string{"a1": "", "b1": ""},
		},
		{
			name: "a missing claim makes the pod unresolvable",
			pod:  pod,
			want: map[string]string{"a1": unres + `persistentvolumeclaim "data" not found`, "b1": unres + `persistentvolumeclaim "data" not found`},
		},
		{
			name: "a bound claim limits the pod to its PV's node affinity",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "1Gi").BoundTo("pv-a").Obj(), st.MakePV("pv-a", "1Gi", "").NodeAffinityIn(zone, "a").Obj()},
			want: map[string]string{"a1": "", "b1": unres + ErrReasonNodeConflict},
		},
		{
			name: "a claim bound to a PV that does not exist fits nowhere",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "1Gi").BoundTo("gone").Obj()},
			want: map[string]string{"a1": unres + ErrReasonPVNotExist, "b1": unres + ErrReasonPVNotExist},
		},
		{
			name: "an unbound claim of an Immediate class waits for the PV controller",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "1Gi").Class("fast").Obj(), st.StorageClass("fast", immediate, "csi.example.com")},
			want: map[string]string{"a1": unres + errUnboundImmediate, "b1": unres + errUnboundImmediate},
		},
		{
			name: "a WaitForFirstConsumer claim fits where a matching static PV can be used",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "1Gi").Class("local").Obj(), st.StorageClass("local", wffc, ""),
				st.MakePV("pv-b", "2Gi", "local").NodeAffinityIn(zone, "b").Obj()},
			want: map[string]string{"a1": unres + ErrReasonBindConflict, "b1": ""},
		},
		{
			name: "a static PV too small, of another class or claimed by another claim does not match",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "5Gi").Class("local").Obj(), st.StorageClass("local", wffc, ""),
				st.MakePV("small", "1Gi", "local").Obj(), st.MakePV("other", "10Gi", "slow").Obj(),
				st.MakePV("taken", "10Gi", "local").ClaimedBy("default", "someone-else").Obj()},
			want: map[string]string{"a1": unres + ErrReasonBindConflict, "b1": unres + ErrReasonBindConflict},
		},
		{
			name: "dynamic provisioning fits the nodes the class's allowedTopologies admit",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "1Gi").Class("zonal").Obj(), func() *storagev1.StorageClass {
				sc := st.StorageClass("zonal", wffc, "csi.example.com")
				sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: zone, Values: []string{"a"}}}}}
				return sc
			}()},
			want: map[string]string{"a1": "", "b1": unres + ErrReasonBindConflict},
		},
		{
			name: "a claim prebound to a volume (no bind-completed) of an Immediate class is not bound yet",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "1Gi").Class("fast").PreboundTo("pv-a").Obj(), st.StorageClass("fast", immediate, "csi.example.com"),
				st.MakePV("pv-a", "1Gi", "fast").Obj()},
			want: map[string]string{"a1": unres + errUnboundImmediate, "b1": unres + errUnboundImmediate},
		},
		{
			// v1.37.2's GetPodVolumeClaims: "Prebound PVCs are treated as
			// unbound immediate binding", whatever the class's mode.
			name: "a claim prebound to a volume of a WaitForFirstConsumer class is unbound immediate too",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "1Gi").Class("local").PreboundTo("pv-a").Obj(), st.StorageClass("local", wffc, ""),
				st.MakePV("pv-a", "1Gi", "local").Obj()},
			want: map[string]string{"a1": unres + errUnboundImmediate, "b1": unres + errUnboundImmediate},
		},
		{
			name: "a PV the PV controller has not made Available yet does not match",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "1Gi").Class("local").Obj(), st.StorageClass("local", wffc, ""),
				st.MakePV("pv-b", "2Gi", "local").NodeAffinityIn(zone, "b").Pending().Obj()},
			want: map[string]string{"a1": unres + ErrReasonBindConflict, "b1": unres + ErrReasonBindConflict},
		},
		{
			name: "a claim whose selected node is another node does not fit there",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "1Gi").Class("zonal").SelectedNode("b1").Obj(), st.StorageClass("zonal", wffc, "csi.example.com")},
			want: map[string]string{"a1": unres + ErrReasonBindConflict, "b1": ""},
		},
		{
			name: "a provisioner that tracks capacity needs a CSIStorageCapacity large enough that reaches the node",
			pod:  pod,
			objs: []interface{}{st.MakePVC("data", "5Gi").Class("lvm").Obj(), st.StorageClass("lvm", wffc, "lvm.csi.example.com"),
				&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "lvm.csi.example.com"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}},
				capacityIn("cap-a", "lvm", zone, "a", "10Gi"), capacityIn("cap-b", "lvm", zone, "b", "1Gi")},
			want: map[string]string{"a1": "", "b1": unres + ErrReasonNotEnoughSpace},
		},
		{
			// Found by the differential fuzzer: upstream matches and then
			// provisions the claims smallest first (byPVCSize), so the 1Gi
			// claim no PV or provisioner can serve is reported, not the
			// 5Gi claim's lack of capacity that comes first in the pod.
			name: "claims are checked smallest first: the smaller claim's failure is the one reported",
			pod:  st.MakePod().Name("p").Volume("big").Volume("small").Obj(),
			objs: []interface{}{st.MakePVC("big", "5Gi").Class("lvm").Obj(), st.StorageClass("lvm", wffc, "lvm.csi.example.com"),
				&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "lvm.csi.example.com"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: ptr.To(true)}},
				st.MakePVC("small", "1Gi").Class("local").Obj(), st.StorageClass("local", wffc, noProvisioner)},
			want: map[string]string{"a1": unres + ErrReasonBindConflict, "b1": unres + ErrReasonBindConflict},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes(), nil)
			pl, _ := New(context.Background(), nil, st.FakeHandle{Lister: cache.NewSnapshot(nis...), Objects: tt.objs})
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, tt.pod, nis...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestReservedStaticVolumeIsNotGivenTwice(t *testing.T) {
	objs := []interface{}{st.MakePVC("one", "1Gi").Class("local").Obj(), st.MakePVC("two", "1Gi").Class("local").Obj(),
		st.StorageClass("local", wffc, ""), st.MakePV("only", "1Gi", "local").Obj()}
	nis := st.NodeInfos(nodes(), nil)
	pl, _ := New(context.Background(), nil, st.FakeHandle{Lister: cache.NewSnapshot(nis...), Objects: objs})
	vb := pl.(*VolumeBinding)
	ctx := context.Background()
	first := st.MakePod().Name("first").Volume("one").Obj()
	state := framework.NewCycleState()
	vb.PreFilter(ctx, state, first, nis)
	if st := vb.Filter(ctx, state, first, nis[0]); !st.IsSuccess() {
		t.Fatalf("first pod: %v", st)
	}
	if st := vb.Reserve(ctx, state, first, "a1"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	second := st.MakePod().Name("second").Volume("two").Obj()
	if got := st.RunFilterAll(pl, second, nis...); got["a1"] == "" {
		t.Errorf("the second claim got the PV held for the first: %v", got)
	}
	vb.Unreserve(ctx, state, first, "a1")
	if got := st.RunFilterAll(pl, second, nis...); got["a1"] != "" {
		t.Errorf("after Unreserve the PV is still held: %v", got)
	}
}

// recorder is a VolumeWriter that keeps what it is given.
type recorder struct {
	pvs  []*v1.PersistentVolume
	pvcs []*v1.PersistentVolumeClaim
}

func (r *recorder) UpdatePersistentVolume(_ context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	r.pvs = append(r.pvs, pv)
	return pv, nil
}

func (r *recorder) UpdatePersistentVolumeClaim(_ context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	r.pvcs = append(r.pvcs, pvc)
	return pvc, nil
}

func TestPreBindWritesTheChosenBindings(t *testing.T) {
	tests := []struct {
		name      string
		objs      []interface{}
		wantPV    string // PV given the claim in spec.claimRef
		wantClaim string // claim given the selected-node annotation
	}{
		{
			name: "a static PV chosen for a WaitForFirstConsumer claim gets the claim",
			objs: []interface{}{st.MakePVC("data", "1Gi").Class("local").Obj(), st.StorageClass("local", wffc, ""),
				st.MakePV("pv-a", "1Gi", "local").NodeAffinityIn(zone, "a").Obj()},
			wantPV: "pv-a",
		},
		{
			name:      "a claim left to its provisioner gets the selected node",
			objs:      []interface{}{st.MakePVC("data", "1Gi").Class("csi").Obj(), st.StorageClass("csi", wffc, "csi.example.com")},
			wantClaim: "data",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes(), nil)
			w := &recorder{}
			pl, _ := New(context.Background(), nil, st.FakeHandle{Lister: cache.NewSnapshot(nis...), Objects: tt.objs, Writer: w})
			vb := pl.(*VolumeBinding)
			ctx := context.Background()
			pod := st.MakePod().Name("p").Volume("data").Obj()
			state := framework.NewCycleState()
			vb.PreFilter(ctx, state, pod, nis)
			if s := vb.Filter(ctx, state, pod, nis[0]); !s.IsSuccess() {
				t.Fatal(s)
			}
			if s := vb.Reserve(ctx, state, pod, "a1"); !s.IsSuccess() {
				t.Fatal(s)
			}
			// Nobody completes the binding: the wait is cut short, the
			// writes are what this test looks at.
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			vb.PreBind(cancelled, state, pod, "a1")
			switch {
			case tt.wantPV != "":
				if len(w.pvs) != 1 || w.pvs[0].Name != tt.wantPV || w.pvs[0].Spec.ClaimRef == nil || w.pvs[0].Spec.ClaimRef.Name != "data" ||
					w.pvs[0].Annotations[annBoundByController] != "yes" {
					t.Errorf("PV writes %+v, want %s bound to claim data", w.pvs, tt.wantPV)
				}
			case tt.wantClaim != "":
				if len(w.pvcs) != 1 || w.pvcs[0].Name != tt.wantClaim || w.pvcs[0].Annotations[annSelectedNode] != "a1" {
					t.Errorf("claim writes %+v, want %s with selected node a1", w.pvcs, tt.wantClaim)
				}
			}
		})
	}
}

func TestAHoldEndsWithItsClaim(t *testing.T) {
	one := st.MakePVC("one", "1Gi").Class("local").Obj()
	h := &st.FakeHandle{Objects: []interface{}{one, st.MakePVC("two", "1Gi").Class("local").Obj(),
		st.StorageClass("local", wffc, ""), st.MakePV("only", "1Gi", "local").Obj()}}
	nis := st.NodeInfos(nodes(), nil)
	h.Lister = cache.NewSnapshot(nis...)
	pl, _ := New(context.Background(), nil, h)
	vb := pl.(*VolumeBinding)
	ctx := context.Background()
	first := st.MakePod().Name("first").Volume("one").Obj()
	state := framework.NewCycleState()
	vb.PreFilter(ctx, state, first, nis)
	if s := vb.Filter(ctx, state, first, nis[0]); !s.IsSuccess() {
		t.Fatalf("first pod: %v", s)
	}
	if s := vb.Reserve(ctx, state, first, "a1"); !s.IsSuccess() {
		t.Fatalf("Reserve: %v", s)
	}
	second := st.MakePod().Name("second").Volume("two").Obj()
	if got := st.RunFilterAll(pl, second, nis...); got["a1"] == "" {
		t.Fatalf("the second claim got the PV held for the first: %v", got)
	}
	// The first claim is deleted: its hold goes with it.
	h.Objects = h.Objects[1:]
	if got := st.RunFilterAll(pl, second, nis...); got["a1"] != "" {
		t.Errorf("the PV is still held for a claim that no longer exists: %v", got)
	}
}

// Upstream matches claims to static PVs smallest request first: with PVs
// of 5Gi and 10Gi, a 1Gi claim listed after a 5Gi one still gets the 5Gi
// PV, and the 5Gi claim the 10Gi one.
func TestStaticVolumesGoToTheSmallestClaimsFirst(t *testing.T) {
	objs := []interface{}{st.MakePVC("large", "5Gi").Class("local").Obj(), st.MakePVC("tiny", "1Gi").Class("local").Obj(),
		st.StorageClass("local", wffc, noProvisioner), st.MakePV("pv-5", "5Gi", "local").Obj(), st.MakePV("pv-10", "10Gi", "local").Obj()}
	nis := st.NodeInfos(nodes(), nil)
	pl, _ := New(context.Background(), nil, st.FakeHandle{Lister: cache.NewSnapshot(nis...), Objects: objs})
	vb := pl.(*VolumeBinding)
	pod := st.MakePod().Name("p").Volume("large").Volume("tiny").Obj()
	state := framework.NewCycleState()
	vb.PreFilter(context.Background(), state, pod, nis)
	if st := vb.Filter(context.Background(), state, pod, nis[0]); !st.IsSuccess() {
		t.Fatal(st)
	}
	got := map[string]string{}
	for pv, pvc := range chosenOn(state, nis[0].NodeName()).static {
		got[pvc.Name] = pv
	}
	if diff := cmp.Diff(map[string]string{"tiny": "pv-5", "large": "pv-10"}, got); diff != "" {
		t.Errorf("claim -> PV (-want,+got):\n%s", diff)
	}
}
