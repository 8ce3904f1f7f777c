package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// TestPreBindsWaitingForVolumesWhileNodesComeAndGo: pods whose
// WaitForFirstConsumer claims are provisioned late wait in VolumeBinding's
// PreBind, on their binding cycles' goroutines, looking at their node
// every second; meanwhile nodes are added and removed and other pods are
// scheduled, so the scheduling goroutine rewrites its snapshot again and
// again. kubesched runs with the race detector: a read of that snapshot
// from PreBind is reported (and in production is Go's fatal "concurrent
// map read and map write"). Then the volumes are provisioned and every
// pod is bound to the node its claim was provisioned for.
func TestPreBindsWaitingForVolumesWhileNodesComeAndGo(t *testing.T) {
	const claims, churn = 12, 12 * time.Second
	ctx := context.Background()
	cp := fw.StartControlPlane(t)
	c := cp.Client
	fw.StartControllerManager(t, cp, pvBinder)
	for i := 0; i < 4; i++ {
		fw.CreateNode(t, c, fmt.Sprintf("node-%d", i), "16", "32Gi", 110, nil)
	}
	createClass(t, c, "late", storagev1.VolumeBindingWaitForFirstConsumer, "fake.csi.example.com")
	for i := 0; i < claims; i++ {
		createPVC(t, c, fmt.Sprintf("data-%d", i), "late", "1Gi", nil)
		fw.CreatePod(t, c, podWithClaim(fmt.Sprintf("vol-%d", i), fmt.Sprintf("data-%d", i)))
	}
	s := fw.StartScheduler(t, cp, fw.SchedulerConfig(t, "default-scheduler", false))

	// Every claim gets its selected node: each pod now waits in PreBind.
	selected := map[string]string{}
	fw.Eventually(t, 60*time.Second, "every claim's selected node", func() (bool, error) {
		list, err := c.CoreV1().PersistentVolumeClaims("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, pvc := range list.Items {
			if n := pvc.Annotations["volume.kubernetes.io/selected-node"]; n != "" {
				selected[pvc.Name] = n
			}
		}
		return len(selected) == claims, fmt.Errorf("%d of %d claims have a selected node", len(selected), claims)
	})

	// Node churn and more scheduling while the PreBinds poll.
	start, round, plain := time.Now(), 0, 0
	for ; time.Since(start) < churn; round++ {
		name := fmt.Sprintf("churn-%d", round)
		fw.CreateNode(t, c, name, "4", "8Gi", 110, nil)
		for j := 0; j < 3; j++ {
			fw.CreatePod(t, c, pod(fmt.Sprintf("plain-%d", plain), "10m"))
			plain++
		}
		if round > 0 {
			if err := c.CoreV1().Nodes().Delete(ctx, fmt.Sprintf("churn-%d", round-1), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d nodes added and removed, %d other pods created in %s while %d pods waited in PreBind", round, plain, churn, claims)
	for i := 0; i < claims; i++ {
		if p, err := getPod(c, "default", fmt.Sprintf("vol-%d", i)); err != nil || p.Spec.NodeName != "" {
			t.Fatalf("pod vol-%d bound before its volume was provisioned (%v)", i, err)
		}
	}

	// The provisioner comes: every pod is bound to its claim's node.
	for i := 0; i < claims; i++ {
		pvc, err := c.CoreV1().PersistentVolumeClaims("default").Get(ctx, fmt.Sprintf("data-%d", i), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		createProvisionedPV(t, c, pvc, selected[pvc.Name])
	}
	for i := 0; i < claims; i++ {
		name := fmt.Sprintf("vol-%d", i)
		node, _ := waitBound(t, c, name, 60*time.Second)
		if want := selected[fmt.Sprintf("data-%d", i)]; node != want {
			t.Errorf("pod %s bound to %s, want %s (its claim's selected node)", name, node, want)
		}
	}
	if s.Exited() {
		t.Fatalf("kubesched exited:\n%s", readFile(s.LogPath))
	}
	if log := readFile(s.LogPath); strings.Contains(log, "WARNING: DATA RACE") || strings.Contains(log, "concurrent map") {
		t.Errorf("kubesched reported a data race while PreBinds waited; log %s", s.LogPath)
	}
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
