package integration

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// TestAWaitForFirstConsumerClaimIsBoundToTheStaticVolumeOfTheChosenNode:
// the pod goes where its claim's only matching local PV is, and kubesched
// writes that PV's claimRef, as kube-scheduler's VolumeBinding does (no PV
// controller runs here to complete the binding).
func TestAWaitForFirstConsumerClaimIsBoundToTheStaticVolumeOfTheChosenNode(t *testing.T) {
	cp := fw.StartControlPlane(t)
	c := cp.Client
	ctx := context.Background()
	fw.CreateNode(t, c, "left", "2", "4Gi", 110, nil)
	fw.CreateNode(t, c, "right", "2", "4Gi", 110, nil)
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"},
		Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().PersistentVolumes().Create(ctx, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "disk-right"},
		Spec: v1.PersistentVolumeSpec{Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: "local",
			PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk"}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
				{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"right"}}}}}}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	makeAvailable(t, c, "disk-right")
	class := "local"
	if _, err := c.CoreV1().PersistentVolumeClaims("default").Create(ctx, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: &class,
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// VolumeBinding's PreBind waits for the PV controller to complete the
	// binding it starts, as kube-scheduler's does.
	fw.StartControllerManager(t, cp, pvBinder)
	fw.StartScheduler(t, cp, fw.SchedulerConfig(t, sched, false))
	p := fw.PodSpec("default", "db", sched, "100m", "128Mi")
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	fw.CreatePod(t, c, p)
	fw.Eventually(t, 30*time.Second, "the pod bound to the node of its volume", func() (bool, error) {
		got, err := getPod(c, "default", "db")
		return err == nil && got.Spec.NodeName == "right", err
	})
	pv, err := c.CoreV1().PersistentVolumes().Get(ctx, "disk-right", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != "default" || ref.Name != "data" {
		t.Errorf("PV claimRef = %+v, want default/data", pv.Spec.ClaimRef)
	}
}

// TestAPodWaitingForItsClaimIsScheduledWhenTheClaimAppears: the claim
// arrives after the pod; its informer event (not the 5-minute flush) brings
// the pod back, and it is bound within seconds.
func TestAPodWaitingForItsClaimIsScheduledWhenTheClaimAppears(t *testing.T) {
	cp := fw.StartControlPlane(t)
	c := cp.Client
	ctx := context.Background()
	fw.CreateNode(t, c, "only", "2", "4Gi", 110, nil)
	fw.StartScheduler(t, cp, fw.SchedulerConfig(t, sched, false))
	p := fw.PodSpec("default", "app", sched, "100m", "128Mi")
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "late"}}}}
	fw.CreatePod(t, c, p)
	fw.Eventually(t, 30*time.Second, "the pod unschedulable for its missing claim", func() (bool, error) {
		got, err := getPod(c, "default", "app")
		if err != nil {
			return false, err
		}
		cond := podScheduledCondition(got)
		return cond != nil && cond.Status == v1.ConditionFalse, nil
	})
	if _, err := c.CoreV1().PersistentVolumes().Create(ctx, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-late"},
		Spec: v1.PersistentVolumeSpec{Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/tmp/late"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	makeAvailable(t, c, "pv-late")
	empty := ""
	// Bound as the PV controller leaves a claim (bind-completed), so the
	// scheduler takes it as bound.
	if _, err := c.CoreV1().PersistentVolumeClaims("default").Create(ctx, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "late",
		Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: &empty, VolumeName: "pv-late",
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Well under the 5-minute flush: only the claim's event can explain it.
	fw.Eventually(t, 30*time.Second, "the pod bound once its claim exists", func() (bool, error) {
		got, err := getPod(c, "default", "app")
		return err == nil && got.Spec.NodeName == "only", err
	})
}

// makeAvailable sets a PV's phase to Available, as the PV controller would
// (before it runs, or where it does not); kube-scheduler matches only Available PVs.
func makeAvailable(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	pv, err := c.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv.Status.Phase = v1.VolumeAvailable
	if _, err := c.CoreV1().PersistentVolumes().UpdateStatus(context.Background(), pv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
