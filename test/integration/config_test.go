package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// TestAKubeSchedulerConfigStartsKubeschedUnchanged runs kubesched with a
// configuration as kube-scheduler takes it: the kubeconfig, rate limits and
// leader election in the file, two profiles, and no --kubeconfig flag.
func TestAKubeSchedulerConfigStartsKubeschedUnchanged(t *testing.T) {
	cp := fw.StartControlPlane(t)
	c := cp.Client
	fw.CreateNode(t, c, "busy", "4", "8Gi", 110, nil)
	fw.CreateNode(t, c, "idle", "4", "8Gi", 110, nil)
	filler := fw.PodSpec("default", "filler", "", "2", "")
	filler.Spec.NodeName = "busy"
	fw.CreatePod(t, c, filler)
	cfg := filepath.Join(t.TempDir(), "kube-scheduler.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
  qps: 30
  burst: 60
  contentType: application/vnd.kubernetes.protobuf
leaderElection:
  leaderElect: true
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
  resourceNamespace: default
  resourceName: kubesched-config-test
profiles:
- schedulerName: kubesched
- schedulerName: kubesched-packer
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
`, cp.Kubeconfig)), 0o644); err != nil {
		t.Fatal(err)
	}
	fw.StartSchedulerArgs(t, cp, "--config", cfg)
	fw.CreatePod(t, c, fw.PodSpec("default", "spread", "kubesched", "500m", ""))
	fw.CreatePod(t, c, fw.PodSpec("default", "packed", "kubesched-packer", "500m", ""))
	fw.Eventually(t, 60*time.Second, "both pods bound", func() (bool, error) {
		a, err1 := getPod(c, "default", "spread")
		b, err2 := getPod(c, "default", "packed")
		if err1 != nil || err2 != nil {
			return false, fmt.Errorf("%v %v", err1, err2)
		}
		return a.Spec.NodeName != "" && b.Spec.NodeName != "", nil
	})
	a, _ := getPod(c, "default", "spread")
	b, _ := getPod(c, "default", "packed")
	if a.Spec.NodeName != "idle" || b.Spec.NodeName != "busy" {
		t.Errorf("LeastAllocated profile chose %s (want idle), MostAllocated profile chose %s (want busy)", a.Spec.NodeName, b.Spec.NodeName)
	}
}

// TestExplainALivePod answers "why is my pod pending?" from the API.
func TestExplainALivePod(t *testing.T) {
	cp := fw.StartControlPlane(t)
	c := cp.Client
	fw.CreateNode(t, c, "small", "1", "2Gi", 110, nil)
	fw.CreateNode(t, c, "gpu", "8", "16Gi", 110, map[string]string{"pool": "gpu"})
	p := fw.PodSpec("default", "pending", "kubesched", "2", "")
	p.Spec.NodeSelector = map[string]string{"pool": "general"}
	fw.CreatePod(t, c, p)
	cfg := fw.SchedulerConfig(t, "kubesched", false)
	bins, err := fw.Build()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bins.Kubesched, "explain", "--kubeconfig", cp.Kubeconfig, "--config", cfg, "pod", "default/pending", "-o", "json").Output()
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, out)
	}
	var rep struct {
		Pod   string `json:"pod"`
		Nodes []struct {
			Name     string `json:"name"`
			Feasible bool   `json:"feasible"`
			Plugin   string `json:"plugin"`
		} `json:"nodes"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]string{}
	for _, n := range rep.Nodes {
		got[n.Name] = n.Plugin
	}
	if rep.Pod != "default/pending" || got["small"] != "NodeAffinity" || got["gpu"] != "NodeAffinity" {
		t.Errorf("explain = %+v, want both nodes rejected by NodeAffinity", rep)
	}
	if !strings.Contains(rep.Message, "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.") {
		t.Errorf("message = %q", rep.Message)
	}
}
