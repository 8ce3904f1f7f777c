package memory

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// newVolumeStore is a store playing the PV controller on objs, with nodes.
func newVolumeStore(t *testing.T, nodes []*v1.Node, objs ...interface{}) (*Store, framework.Listers) {
	t.Helper()
	listers, publish, err := framework.IndexedListers(objs...)
	if err != nil {
		t.Fatal(err)
	}
	s := NewStore(testingclock.NewFakeClock(time.Unix(0, 0)))
	s.SetVolumes(listers, publish)
	for _, n := range nodes {
		if err := s.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	return s, listers
}

func zonalNode(name, zone string) *v1.Node {
	return st.MakeNode().Name(name).Label(v1.LabelHostname, name).Label(v1.LabelTopologyZone, zone).Obj()
}

func defaultClass(sc *storagev1.StorageClass, created time.Time) *storagev1.StorageClass {
	sc.Annotations = map[string]string{IsDefaultClassAnnotation: "true"}
	sc.CreationTimestamp = metav1.NewTime(created)
	return sc
}

func TestThePVControllerBindsOrProvisionsTheClaimsNotBound(t *testing.T) {
	immediate, delayed := storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer
	static := st.StorageClass("static", immediate, "")
	gold := &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}
	block := v1.PersistentVolumeBlock
	tests := []struct {
		name string
		objs []interface{}
		// want is the volume the claim "data" is bound to, "" for none.
		want string
	}{
		{
			name: "an Immediate class's claim is provisioned at once and bound",
			objs: []interface{}{st.StorageClass("ebs", immediate, "ebs.csi.aws.com"), st.MakePVC("data", "5Gi").Class("ebs").Obj()},
			want: "pvc-uid-pvc-data",
		},
		{
			name: "a claim naming a static volume is bound to it",
			objs: []interface{}{st.MakePV("pv-a", "5Gi", "").Obj(), st.MakePV("pv-b", "5Gi", "").Obj(),
				st.MakePVC("data", "5Gi").Class("").PreboundTo("pv-b").Obj()},
			want: "pv-b",
		},
		{
			name: "a volume pre-bound to the claim (claimRef) is taken over a smaller free one",
			objs: []interface{}{static, st.MakePV("pv-big", "10Gi", "static").ClaimedBy("default", "data").Obj(),
				st.MakePV("pv-small", "5Gi", "static").Obj(), st.MakePVC("data", "5Gi").Class("static").Obj()},
			want: "pv-big",
		},
		{
			name: "the smallest volume of the claim's class that holds it is taken",
			objs: []interface{}{static, st.MakePV("pv-1g", "1Gi", "static").Obj(), st.MakePV("pv-5g", "5Gi", "static").Obj(),
				st.MakePV("pv-3g", "3Gi", "static").Obj(), st.MakePV("pv-other", "2Gi", "other").Obj(),
				st.MakePVC("data", "2Gi").Class("static").Obj()},
			want: "pv-3g",
		},
		{
			name: "a claim without a class, and no default class, takes only a volume without a class",
			objs: []interface{}{static, st.MakePV("pv-static", "5Gi", "static").Obj(), st.MakePV("pv-none", "10Gi", "").Obj(),
				st.MakePVC("data", "5Gi").Obj()},
			want: "pv-none",
		},
		{
			name: "a claim for ReadWriteMany is not given a volume that is only ReadWriteOnce",
			objs: []interface{}{static, st.MakePV("pv-rwo", "5Gi", "static").Obj(),
				func() *v1.PersistentVolume {
					pv := st.MakePV("pv-rwx", "10Gi", "static").Obj()
					pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadWriteMany}
					return pv
				}(),
				st.MakePVC("data", "5Gi").Class("static").AccessModes(v1.ReadWriteMany).Obj()},
			want: "pv-rwx",
		},
		{
			name: "the volumes of the fewest access modes are searched first, whatever their size",
			objs: []interface{}{static, st.MakePV("pv-rwo", "10Gi", "static").Obj(),
				func() *v1.PersistentVolume {
					pv := st.MakePV("pv-rwo-rox", "5Gi", "static").Obj()
					pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadOnlyMany}
					return pv
				}(),
				st.MakePVC("data", "5Gi").Class("static").Obj()},
			want: "pv-rwo",
		},
		{
			name: "the claim's selector limits the volumes",
			objs: []interface{}{static, st.MakePV("pv-plain", "5Gi", "static").Obj(), st.MakePV("pv-gold", "10Gi", "static").Label("tier", "gold").Obj(),
				func() *v1.PersistentVolumeClaim {
					pvc := st.MakePVC("data", "5Gi").Class("static").Obj()
					pvc.Spec.Selector = gold
					return pvc
				}()},
			want: "pv-gold",
		},
		{
			name: "the volume mode must be the claim's",
			objs: []interface{}{static, st.MakePV("pv-fs", "5Gi", "static").Obj(),
				func() *v1.PersistentVolume {
					pv := st.MakePV("pv-block", "10Gi", "static").Obj()
					pv.Spec.VolumeMode = &block
					return pv
				}(),
				func() *v1.PersistentVolumeClaim {
					pvc := st.MakePVC("data", "5Gi").Class("static").Obj()
					pvc.Spec.VolumeMode = &block
					return pvc
				}()},
			want: "pv-block",
		},
		{
			name: "node affinity is no criterion for an Immediate claim",
			objs: []interface{}{static, st.MakePV("pv-zonal", "5Gi", "static").NodeAffinityIn(v1.LabelTopologyZone, "nowhere").Obj(),
				st.MakePVC("data", "5Gi").Class("static").Obj()},
			want: "pv-zonal",
		},
		{
			name: "a volume without a phase is made Available, then matched",
			objs: []interface{}{static, func() *v1.PersistentVolume {
				pv := st.MakePV("pv-new", "5Gi", "static").Obj()
				pv.Status.Phase = ""
				return pv
			}(), st.MakePVC("data", "5Gi").Class("static").Obj()},
			want: "pv-new",
		},
		{
			name: "a WaitForFirstConsumer claim waits for the scheduler to choose its volume",
			objs: []interface{}{st.StorageClass("local", delayed, ""), st.MakePV("pv-local", "5Gi", "local").Obj(),
				st.MakePVC("data", "5Gi").Class("local").Obj()},
		},
		{
			name: "a WaitForFirstConsumer claim takes a volume pre-bound to it",
			objs: []interface{}{st.StorageClass("local", delayed, ""), st.MakePV("pv-local", "5Gi", "local").ClaimedBy("default", "data").Obj(),
				st.MakePVC("data", "5Gi").Class("local").Obj()},
			want: "pv-local",
		},
		{
			name: "a WaitForFirstConsumer claim given a selected node is provisioned",
			objs: []interface{}{st.StorageClass("ebs", delayed, "ebs.csi.aws.com"), st.MakePVC("data", "5Gi").Class("ebs").SelectedNode("n1").Obj()},
			want: "pvc-uid-pvc-data",
		},
		{
			name: "a claim of a class the world does not hold waits",
			objs: []interface{}{st.MakePVC("data", "5Gi").Class("gp3").Obj()},
		},
		{
			name: "a claim of a class without a provisioner waits for a static volume",
			objs: []interface{}{static, st.MakePV("pv-small", "1Gi", "static").Obj(), st.MakePVC("data", "5Gi").Class("static").Obj()},
		},
		{
			name: "a claim without a class that no volume matches is given the default class, and provisioned",
			objs: []interface{}{defaultClass(st.StorageClass("ebs", immediate, "ebs.csi.aws.com"), time.Unix(0, 0)),
				st.MakePVC("data", "5Gi").Obj()},
			want: "pvc-uid-pvc-data",
		},
		{
			name: "a claim naming a volume too small for it waits",
			objs: []interface{}{st.MakePV("pv-a", "1Gi", "").Obj(), st.MakePVC("data", "5Gi").Class("").PreboundTo("pv-a").Obj()},
		},
		{
			name: "a claim naming a volume of another class waits",
			objs: []interface{}{st.MakePV("pv-a", "5Gi", "other").Obj(), st.MakePVC("data", "5Gi").Class("").PreboundTo("pv-a").Obj()},
		},
		{
			name: "a claim naming a volume bound to another claim waits",
			objs: []interface{}{st.MakePV("pv-a", "5Gi", "").ClaimedBy("default", "other").Obj(),
				st.MakePVC("data", "5Gi").Class("").PreboundTo("pv-a").Obj()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, listers := newVolumeStore(t, []*v1.Node{zonalNode("n1", "zone-a")}, tt.objs...)
			changed := s.SyncVolumes()
			pvc, _ := listers.PersistentVolumeClaims.PersistentVolumeClaims("default").Get("data")
			if tt.want == "" {
				if pvc.Spec.VolumeName != "" && pvc.Annotations[annBindCompleted] == "yes" {
					t.Errorf("claim bound to %s, want it waiting", pvc.Spec.VolumeName)
				}
				return
			}
			if !changed {
				t.Error("SyncVolumes reports no change")
			}
			if pvc.Spec.VolumeName != tt.want || pvc.Annotations[annBindCompleted] != "yes" || pvc.Status.Phase != v1.ClaimBound {
				t.Fatalf("claim = %q %v %s, want bound to %s", pvc.Spec.VolumeName, pvc.Annotations, pvc.Status.Phase, tt.want)
			}
			pv, err := listers.PersistentVolumes.Get(tt.want)
			if err != nil || pv.Status.Phase != v1.VolumeBound || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.Name != "data" || pv.Spec.ClaimRef.UID != pvc.UID {
				t.Errorf("volume %s = %+v (%v), want bound to claim data", tt.want, pv, err)
			}
		})
	}
}

func TestAProvisionedClaimIsAnnotatedAndItsVolumeCountedAsTheDrivers(t *testing.T) {
	sc := st.StorageClass("ebs", storagev1.VolumeBindingImmediate, "ebs.csi.aws.com")
	sc.ReclaimPolicy = ptr.To(v1.PersistentVolumeReclaimRetain)
	s, listers := newVolumeStore(t, []*v1.Node{zonalNode("n1", "zone-a")}, sc, st.MakePVC("data", "5Gi").Class("ebs").Obj())
	s.SyncVolumes()
	pvc, _ := listers.PersistentVolumeClaims.PersistentVolumeClaims("default").Get("data")
	if pvc.Annotations[annStorageProvisioner] != "ebs.csi.aws.com" || pvc.Annotations[annBoundByController] != "yes" {
		t.Errorf("claim annotations %v, want the provisioner's and bound-by-controller", pvc.Annotations)
	}
	pv, _ := listers.PersistentVolumes.Get(pvc.Spec.VolumeName)
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != "ebs.csi.aws.com" || pv.Annotations[annProvisionedBy] != "ebs.csi.aws.com" ||
		pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimRetain {
		t.Errorf("volume %+v, want a CSI volume of ebs.csi.aws.com, provisioned by it, reclaimed as its class says", pv.Spec)
	}
}

func TestTwoClaimsContendingForOneVolumeGetItInNameOrder(t *testing.T) {
	static := st.StorageClass("static", storagev1.VolumeBindingImmediate, "")
	s, listers := newVolumeStore(t, nil, static, st.MakePV("pv-a", "5Gi", "static").Obj(),
		st.MakePVC("b", "5Gi").Class("static").Obj(), st.MakePVC("a", "5Gi").Class("static").Obj())
	s.SyncVolumes()
	a, _ := listers.PersistentVolumeClaims.PersistentVolumeClaims("default").Get("a")
	b, _ := listers.PersistentVolumeClaims.PersistentVolumeClaims("default").Get("b")
	if a.Spec.VolumeName != "pv-a" || b.Spec.VolumeName != "" {
		t.Errorf("a bound to %q, b to %q; want a to pv-a and b waiting", a.Spec.VolumeName, b.Spec.VolumeName)
	}
}

func TestAdmissionGivesAClaimWithoutAClassTheDefaultClass(t *testing.T) {
	immediate := storagev1.VolumeBindingImmediate
	older, newer := time.Unix(100, 0), time.Unix(200, 0)
	tests := []struct {
		name    string
		classes []interface{}
		claim   *v1.PersistentVolumeClaim
		want    *string
	}{
		{name: "the one default class",
			classes: []interface{}{defaultClass(st.StorageClass("gp3", immediate, "ebs.csi.aws.com"), older), st.StorageClass("io2", immediate, "ebs.csi.aws.com")},
			claim:   st.MakePVC("data", "1Gi").Obj(), want: ptr.To("gp3")},
		{name: "of two default classes, the newest",
			classes: []interface{}{defaultClass(st.StorageClass("a-old", immediate, "x"), older), defaultClass(st.StorageClass("b-new", immediate, "x"), newer)},
			claim:   st.MakePVC("data", "1Gi").Obj(), want: ptr.To("b-new")},
		{name: "of two default classes made at once, the first by name",
			classes: []interface{}{defaultClass(st.StorageClass("b", immediate, "x"), older), defaultClass(st.StorageClass("a", immediate, "x"), older)},
			claim:   st.MakePVC("data", "1Gi").Obj(), want: ptr.To("a")},
		{name: "a class marked default by the beta annotation",
			classes: []interface{}{func() *storagev1.StorageClass {
				sc := st.StorageClass("beta", immediate, "x")
				sc.Annotations = map[string]string{betaIsDefaultClassAnnotation: "true"}
				return sc
			}()},
			claim: st.MakePVC("data", "1Gi").Obj(), want: ptr.To("beta")},
		{name: "none without a default class",
			classes: []interface{}{st.StorageClass("gp3", immediate, "ebs.csi.aws.com")},
			claim:   st.MakePVC("data", "1Gi").Obj()},
		{name: "a claim asking for no class (\"\") keeps it",
			classes: []interface{}{defaultClass(st.StorageClass("gp3", immediate, "ebs.csi.aws.com"), older)},
			claim:   st.MakePVC("data", "1Gi").Class("").Obj(), want: ptr.To("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newVolumeStore(t, nil, tt.classes...)
			s.AdmitClaim(tt.claim)
			if got := tt.claim.Spec.StorageClassName; (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
				t.Errorf("class %v, want %v", ptr.Deref(got, "<nil>"), ptr.Deref(tt.want, "<nil>"))
			}
		})
	}
}

func TestAVolumeProvisionedForASelectedNodeIsPinnedToItsZone(t *testing.T) {
	sc := st.StorageClass("ebs", storagev1.VolumeBindingWaitForFirstConsumer, "ebs.csi.aws.com")
	s, listers := newVolumeStore(t, []*v1.Node{zonalNode("n1", "zone-a"), zonalNode("n2", "zone-b")}, sc,
		st.MakePVC("data", "5Gi").Class("ebs").Obj())
	pvc := st.MakePVC("data", "5Gi").Class("ebs").SelectedNode("n2").Obj()
	if _, err := s.UpdatePersistentVolumeClaim(context.Background(), pvc); err != nil {
		t.Fatal(err)
	}
	pv, err := listers.PersistentVolumes.Get("pvc-uid-pvc-data")
	if err != nil {
		t.Fatal(err)
	}
	if got := affinityOf(pv); got != "topology.kubernetes.io/zone=zone-b" {
		t.Errorf("node affinity %q, want the selected node's zone", got)
	}
}
