package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// pvBinder is kube-controller-manager's PV controller: it completes the
// bindings VolumeBinding's PreBind starts and waits for.
const pvBinder = "persistentvolume-binder-controller"

// volumeBindingScenarios run the PV controller beside each scheduler: the
// pod is bound only once the controller has bound its claim (PreBind's
// wait), on both sides.
func volumeBindingScenarios() []scenario {
	return []scenario{
		{
			name:        "a WaitForFirstConsumer claim on a static local PV is bound by the PV controller before the pod",
			controllers: pvBinder,
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-a", "4", "8Gi", 110, nil)
				fw.CreateNode(t, c, "node-b", "4", "8Gi", 110, nil)
				createClass(t, c, "local", storagev1.VolumeBindingWaitForFirstConsumer, "kubernetes.io/no-provisioner")
				for _, n := range []string{"node-a", "node-b"} {
					size := map[string]string{"node-a": "3Gi", "node-b": "10Gi"}[n]
					createPV(t, c, "local-"+n, "local", size, func(pv *v1.PersistentVolume) {
						pv.Spec.Local = &v1.LocalVolumeSource{Path: "/mnt/disk"}
						pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
							MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{n}}}}}}}
					})
				}
				createPVC(t, c, "data", "local", "5Gi", nil)
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				created := time.Now()
				fw.CreatePod(t, c, podWithClaim("app", "data"))
				node, boundAt := waitBound(t, c, "app", 60*time.Second)
				o.exact["node"] = node
				o.exact["claim when the pod is bound"] = claimState(t, c, "data")
				o.exact["volumes"] = volumeStates(t, c, "local-node-a", "local-node-b")
				o.exact["Scheduled events"] = eventSummary(t, c, "app", "Scheduled")
				o.exact["FailedScheduling events"] = eventSummaryNow(t, c, "app", "FailedScheduling")
				o.latency["time to bind"] = boundAt.Sub(created)
			},
		},
		{
			name:        "a claim to provision is bound once the provisioner's volume is, the pod after it",
			controllers: pvBinder,
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-a", "4", "8Gi", 110, nil)
				fw.CreateNode(t, c, "node-b", "1", "8Gi", 110, nil)
				createClass(t, c, "fast", storagev1.VolumeBindingWaitForFirstConsumer, "fake.csi.example.com")
				createPVC(t, c, "data", "fast", "5Gi", nil)
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				ctx := context.Background()
				created := time.Now()
				fw.CreatePod(t, c, podWithClaim("app", "data"))
				// The test is the external provisioner: it waits for the
				// selected node, then creates the volume for the claim.
				var pvc *v1.PersistentVolumeClaim
				fw.Eventually(t, 30*time.Second, "the claim's selected node", func() (bool, error) {
					var err error
					pvc, err = c.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
					return err == nil && pvc.Annotations["volume.kubernetes.io/selected-node"] != "", err
				})
				selected := pvc.Annotations["volume.kubernetes.io/selected-node"]
				o.exact["selected node"] = selected
				if p, err := getPod(c, "default", "app"); err != nil || p.Spec.NodeName != "" {
					t.Fatalf("the pod was bound before its claim (%v)", err)
				}
				provisioned := time.Now()
				createProvisionedPV(t, c, pvc, selected)
				node, boundAt := waitBound(t, c, "app", 60*time.Second)
				o.exact["node"] = node
				o.exact["claim when the pod is bound"] = claimState(t, c, "data")
				o.exact["Scheduled events"] = eventSummary(t, c, "app", "Scheduled")
				o.latency["time to bind after the volume is provisioned"] = boundAt.Sub(provisioned)
				o.latency["time to bind"] = boundAt.Sub(created)
			},
		},
		{
			name:        "a provisioner that gives up (removes the selected node) sends the pod back to scheduling",
			controllers: pvBinder,
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-a", "4", "8Gi", 110, nil)
				createClass(t, c, "fast", storagev1.VolumeBindingWaitForFirstConsumer, "fake.csi.example.com")
				createPVC(t, c, "data", "fast", "5Gi", nil)
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				ctx := context.Background()
				fw.CreatePod(t, c, podWithClaim("app", "data"))
				// The PV controller annotates the claim too (the provisioner
				// it waits for). Its annotation is waited for: with it the
				// claim keeps annotations once the selected node goes, and
				// the scheduler says "provisioning failed"; without it (a
				// PV controller slower than the test, as on a loaded
				// machine) none are left and it says "selectedNode
				// annotation reset": kubesched's run and kube-scheduler's
				// would differ by the controller's timing, not by theirs.
				fw.Eventually(t, 30*time.Second, "the claim's selected node and provisioner", func() (bool, error) {
					pvc, err := c.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
					return err == nil && pvc.Annotations["volume.kubernetes.io/selected-node"] != "" &&
						pvc.Annotations["volume.kubernetes.io/storage-provisioner"] != "", err
				})
				// An update may conflict with the PV controller's, as a real
				// provisioner's would, and is retried on the claim as it is.
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					pvc, err := c.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
					if err != nil {
						return err
					}
					delete(pvc.Annotations, "volume.kubernetes.io/selected-node")
					_, err = c.CoreV1().PersistentVolumeClaims("default").Update(ctx, pvc, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				o.exact["FailedScheduling event"] = eventSummary(t, c, "app", "FailedScheduling")
			},
		},
	}
}

// createProvisionedPV plays an external provisioner: a volume for the
// claim on the selected node, with the claim in its claimRef.
func createProvisionedPV(t *testing.T, c kubernetes.Interface, pvc *v1.PersistentVolumeClaim, node string) {
	t.Helper()
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(pvc.UID), Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "fake.csi.example.com"}},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName: *pvc.Spec.StorageClassName,
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse("5Gi")},
			AccessModes:      pvc.Spec.AccessModes,
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name,
				UID: pvc.UID},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "fake.csi.example.com", VolumeHandle: "vol-1"}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}},
		},
	}
	if _, err := c.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// claimState is what the comparison needs of a claim: phase, volume (a
// provisioned one's UID blanked) and the binding annotations.
func claimState(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	pvc, err := c.CoreV1().PersistentVolumeClaims("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	volume := pvc.Spec.VolumeName
	if strings.HasPrefix(volume, "pvc-") {
		volume = "pvc-<uid>"
	}
	var anns []string
	for _, k := range []string{"pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller", "volume.kubernetes.io/selected-node"} {
		if v, ok := pvc.Annotations[k]; ok {
			anns = append(anns, k+"="+v)
		}
	}
	return fmt.Sprintf("%s %s %v", pvc.Status.Phase, volume, anns)
}

// volumeStates lists each volume's phase and claim.
func volumeStates(t *testing.T, c kubernetes.Interface, names ...string) string {
	t.Helper()
	var out []string
	for _, n := range names {
		pv, err := c.CoreV1().PersistentVolumes().Get(context.Background(), n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		claim := ""
		if pv.Spec.ClaimRef != nil {
			claim = pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name
		}
		out = append(out, fmt.Sprintf("%s: %s %s", n, pv.Status.Phase, claim))
	}
	return strings.Join(out, "; ")
}
