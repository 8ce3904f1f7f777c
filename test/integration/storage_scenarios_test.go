package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ptrs "k8s.io/utils/ptr"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// Storage scenarios (issue 9), run against both schedulers like the
// others. These run without a PV controller: both schedulers wait in
// PreBind for it (up to bindTimeoutSeconds), so a scenario that needs a
// volume binding compares the decision written on the volume objects; the
// scenarios with the PV controller are volumeBindingScenarios.
func storageScenarios() []scenario {
	return append(storageDecisionScenarios(), volumeBindingScenarios()...)
}

func storageDecisionScenarios() []scenario {
	ctx := context.Background()
	must := func(t *testing.T, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	return []scenario{
		{
			name: "a WaitForFirstConsumer claim gets the local PV of the node that can use it",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-a", "4", "8Gi", 110, nil)
				fw.CreateNode(t, c, "node-b", "4", "8Gi", 110, nil)
				createClass(t, c, "local", storagev1.VolumeBindingWaitForFirstConsumer, "kubernetes.io/no-provisioner")
				createPV(t, c, "local-b", "local", "10Gi", func(pv *v1.PersistentVolume) {
					pv.Spec.Local = &v1.LocalVolumeSource{Path: "/mnt/disk"}
					pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
						MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"node-b"}}}}}}}
				})
				createPVC(t, c, "data", "local", "5Gi", nil)
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, podWithClaim("app", "data"))
				var ref string
				fw.Eventually(t, 30*time.Second, "the PV's claimRef", func() (bool, error) {
					pv, err := c.CoreV1().PersistentVolumes().Get(ctx, "local-b", metav1.GetOptions{})
					if err == nil && pv.Spec.ClaimRef != nil {
						ref = pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name
					}
					return ref != "", err
				})
				o.exact["local-b claimRef"] = ref
			},
		},
		{
			name: "a claim prebound to a volume but not bound yet keeps the pod pending",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-a", "4", "8Gi", 110, nil)
				fw.CreateNode(t, c, "node-b", "4", "8Gi", 110, nil)
				createClass(t, c, "fast", storagev1.VolumeBindingImmediate, "csi.example.com")
				createPV(t, c, "pv-1", "fast", "10Gi", func(pv *v1.PersistentVolume) {
					pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: "csi.example.com", VolumeHandle: "h1"}
				})
				createPVC(t, c, "data", "fast", "5Gi", func(pvc *v1.PersistentVolumeClaim) { pvc.Spec.VolumeName = "pv-1" })
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, podWithClaim("app", "data"))
				// kube-scheduler ends this message with " not found" where
				// kubesched gives preemption's "not helpful" (a difference
				// listed in the README): the Filter part is compared.
				cond := waitCondition(t, c, "app")
				if i := strings.Index(cond, "PersistentVolumeClaims."); i >= 0 {
					cond = cond[:i+len("PersistentVolumeClaims.")]
				}
				o.exact["condition up to PostFilter's part"] = cond
			},
		},
		{
			name: "a claim larger than the node's CSIStorageCapacity does not fit there",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-a", "4", "8Gi", 110, map[string]string{v1.LabelTopologyZone: "a"})
				fw.CreateNode(t, c, "node-b", "4", "8Gi", 110, map[string]string{v1.LabelTopologyZone: "b"})
				_, err := c.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "lvm.csi.example.com"},
					Spec: storagev1.CSIDriverSpec{StorageCapacity: ptrs.To(true)}}, metav1.CreateOptions{})
				must(t, err)
				createClass(t, c, "lvm", storagev1.VolumeBindingWaitForFirstConsumer, "lvm.csi.example.com")
				for zone, size := range map[string]string{"a": "1Gi", "b": "2Gi"} {
					q := resource.MustParse(size)
					_, err := c.StorageV1().CSIStorageCapacities("default").Create(ctx, &storagev1.CSIStorageCapacity{
						ObjectMeta: metav1.ObjectMeta{Name: "cap-" + zone}, StorageClassName: "lvm", Capacity: &q,
						NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: zone}}}, metav1.CreateOptions{})
					must(t, err)
				}
				createPVC(t, c, "data", "lvm", "5Gi", nil)
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, podWithClaim("app", "data"))
				o.exact["condition"] = waitCondition(t, c, "app")
			},
		},
		{
			name: "a node at its CSI volume limit takes no new volume",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-a", "4", "8Gi", 110, nil)
				fw.CreateNode(t, c, "node-b", "4", "8Gi", 110, nil)
				for _, n := range []string{"node-a", "node-b"} {
					_, err := c.StorageV1().CSINodes().Create(ctx, &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: n},
						Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "ebs.csi.aws.com", NodeID: n,
							Allocatable: &storagev1.VolumeNodeResources{Count: ptrs.To[int32](1)}}}}}, metav1.CreateOptions{})
					must(t, err)
				}
				createClass(t, c, "ebs", storagev1.VolumeBindingImmediate, "ebs.csi.aws.com")
				for _, name := range []string{"one", "two"} {
					createPV(t, c, "pv-"+name, "ebs", "10Gi", func(pv *v1.PersistentVolume) {
						pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-" + name}
					})
					createPVC(t, c, name, "ebs", "5Gi", func(pvc *v1.PersistentVolumeClaim) {
						pvc.Spec.VolumeName = "pv-" + name
						pvc.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
					})
				}
				p := podWithClaim("first", "one")
				createBound(t, c, p, "node-a")
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, podWithClaim("second", "two"))
				node, _ := waitBound(t, c, "second", 30*time.Second)
				o.exact["second"] = node
			},
		},
	}
}

func podWithClaim(name, claim string) *v1.Pod {
	p := pod(name, "100m")
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	return p
}

func createClass(t *testing.T, c kubernetes.Interface, name string, mode storagev1.VolumeBindingMode, provisioner string) {
	t.Helper()
	if _, err := c.StorageV1().StorageClasses().Create(context.Background(), &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Provisioner: provisioner, VolumeBindingMode: &mode}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createPV(t *testing.T, c kubernetes.Interface, name, class, size string, edit func(*v1.PersistentVolume)) {
	t.Helper()
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PersistentVolumeSpec{
		StorageClassName: class, Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
		AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}}}
	edit(pv)
	if _, err := c.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	makeAvailable(t, c, name)
}

func createPVC(t *testing.T, c kubernetes.Interface, name, class, size string, edit func(*v1.PersistentVolumeClaim)) {
	t.Helper()
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PersistentVolumeClaimSpec{
		StorageClassName: &class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}}}}
	if edit != nil {
		edit(pvc)
	}
	if _, err := c.CoreV1().PersistentVolumeClaims("default").Create(context.Background(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
