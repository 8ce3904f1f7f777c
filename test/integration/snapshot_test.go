package integration

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// TestSnapshotOfALiveClusterSimulates snapshots a real API server (a
// Deployment's pods pending, as its ReplicaSet controller made them, a
// running pod, Secrets and ConfigMaps and an env value that must not leak)
// and simulates the file: the pending pods are the Deployment's and get
// placed, nothing is created twice, nothing leaks.
func TestSnapshotOfALiveClusterSimulates(t *testing.T) {
	cp := fw.StartControlPlane(t)
	fw.StartControllerManager(t, cp, "deployment,replicaset")
	c := cp.Client
	ctx := context.Background()
	fw.CreateNode(t, c, "a", "4", "8Gi", 110, nil)
	fw.CreateNode(t, c, "b", "4", "8Gi", 110, nil)
	running := fw.PodSpec("default", "running", "", "1", "")
	running.Spec.NodeName = "a"
	running.Spec.Containers[0].Env = []v1.EnvVar{{Name: "PASSWORD", Value: "hunter2"}}
	fw.CreatePod(t, c, running)
	if _, err := c.CoreV1().Secrets("default").Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().ConfigMaps("default").Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"k": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := st.MakeDeployment("web", 3, st.MakePod().Label("app", "web").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}))
	web.Spec.Template.Spec.Containers[0].Image = "nginx"
	web.Spec.Template.Spec.Containers[0].Env = []v1.EnvVar{{Name: "TOKEN", Value: "hunter2"}}
	if _, err := c.AppsV1().Deployments("default").Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fw.Eventually(t, 60*time.Second, "the Deployment's three pods created", func() (bool, error) {
		pods, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		return err == nil && len(pods.Items) == 3, err
	})
	bins, err := fw.Build()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cluster.yaml")
	if out, err := exec.Command(bins.Kubesched, "snapshot", "--kubeconfig", cp.Kubeconfig, "-o", file).CombinedOutput(); err != nil {
		t.Fatalf("snapshot: %v\n%s", err, out)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"hunter2", "managedFields", "kind: Secret", "kind: ConfigMap"} {
		if strings.Contains(string(data), leak) {
			t.Errorf("the snapshot holds %q", leak)
		}
	}
	for _, want := range []string{"kind: Deployment", "kind: ReplicaSet", "kind: Node", "kind: Namespace", "kind: PriorityClass"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the snapshot lacks %q", want)
		}
	}
	out, err := exec.Command(bins.Kubesched, "simulate", "-f", file, "-o", "json").Output()
	if err != nil {
		t.Fatalf("simulate: %v\n%s", err, out)
	}
	var rep struct {
		Pods []struct {
			Name, Node, Status string
		} `json:"pods"`
		Workloads []struct {
			Kind, Name      string
			Pods, Scheduled int
		} `json:"workloads"`
		Summary struct {
			Scheduled, Running int
		} `json:"summary"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if rep.Summary.Scheduled != 3 || rep.Summary.Running != 1 {
		t.Errorf("summary = %+v, want the 3 pending pods scheduled beside the 1 running", rep.Summary)
	}
	if len(rep.Workloads) != 1 || rep.Workloads[0].Kind != "Deployment" || rep.Workloads[0].Pods != 3 || rep.Workloads[0].Scheduled != 3 {
		t.Errorf("workloads = %+v, want Deployment web with its 3 pods (none created twice), all scheduled", rep.Workloads)
	}
}
