package loading_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

func TestLoadLetsTheLastOfTwoSameObjectsStandAsKubectlApplyDoes(t *testing.T) {
	web := func(replicas int32) *appsv1.Deployment {
		return st.MakeDeployment("dup", replicas, st.MakePod().Label("app", "dup").Image("x"))
	}
	big := st.MakeNode().Name("n1").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "64", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj()
	pod := func(label string) *v1.Pod { return st.MakePod().Name("p").Label("v", label).Image("x").Obj() }
	note := " (kubectl apply -f of the files in order leaves the last one)"
	tests := []struct {
		name  string
		files [][]runtime.Object
		check func(t *testing.T, c *cluster.Cluster)
		// warning, after the folder, "" for none.
		warning string
	}{
		{name: "a Deployment in two files: the second's replicas are created, the first's none",
			files: [][]runtime.Object{{simtest.Node("n1"), web(1)}, {web(3)}},
			check: func(t *testing.T, c *cluster.Cluster) {
				if len(c.Deployments) != 1 || len(c.Workloads) != 1 || len(c.Pods) != 3 || *c.Deployments[0].Spec.Replicas != 3 {
					t.Errorf("%d Deployments, %d workloads, %d pods; want the second Deployment alone, its 3 pods", len(c.Deployments), len(c.Workloads), len(c.Pods))
				}
				for _, p := range c.Pods {
					if src := c.Sources[cluster.PodKey(p)]; !strings.Contains(src, "b.yaml: document 1, Deployment default/dup") {
						t.Errorf("pod %s's source %q, want the second file's Deployment", p.Name, src)
					}
				}
			},
			warning: "b.yaml: document 1 (Deployment default/dup): replaces the one read at <dir>a.yaml: document 2" + note},
		{name: "a Node in two files: the second's capacity stands",
			files: [][]runtime.Object{{simtest.Node("n1"), pod("a")}, {big}},
			check: func(t *testing.T, c *cluster.Cluster) {
				if len(c.Nodes) != 1 || c.Nodes[0].Status.Allocatable.Cpu().Value() != 64 || !strings.HasSuffix(c.NodeSources["n1"], "b.yaml: document 1") {
					t.Errorf("nodes %d (source %q), want the second one alone", len(c.Nodes), c.NodeSources["n1"])
				}
			},
			warning: "b.yaml: document 1 (Node n1): replaces the one read at <dir>a.yaml: document 1" + note},
		{name: "a Pod twice in one file: the second stands, in the first's place",
			files: [][]runtime.Object{{simtest.Node("n1"), pod("first"), st.MakePod().Name("q").Image("x").Obj(), pod("second")}},
			check: func(t *testing.T, c *cluster.Cluster) {
				if len(c.Pods) != 2 || c.Pods[0].Labels["v"] != "second" || !strings.HasSuffix(c.Sources["default/p"], "a.yaml: document 4") {
					t.Errorf("pods %d, the first labelled %v (source %q); want the second pod p in the first's place", len(c.Pods), c.Pods[0].Labels, c.Sources["default/p"])
				}
			},
			warning: "a.yaml: document 4 (Pod default/p): replaces the one read at <dir>a.yaml: document 2" + note},
		{name: "a PVC twice in one List: the second stands, the note names the items",
			files: [][]runtime.Object{{simtest.Node("n1"), pod("a"), listOf(t, st.MakePVC("data", "1Gi").Obj(), st.MakePVC("data", "5Gi").Obj())}},
			check: func(t *testing.T, c *cluster.Cluster) {
				if len(c.Others) != 1 || c.Others[0].(*v1.PersistentVolumeClaim).Spec.Resources.Requests.Storage().String() != "5Gi" {
					t.Errorf("others %v, want the second claim alone", c.Others)
				}
			},
			warning: "a.yaml: document 3, item 2 (PersistentVolumeClaim default/data): replaces the one read at <dir>a.yaml: document 3, item 1" + note},
		{name: "the same name in two namespaces or of two kinds is no duplicate",
			files: [][]runtime.Object{{simtest.Node("n1"), pod("a"), in("other", pod("b")), st.MakePVC("p", "1Gi").Obj()}},
			check: func(t *testing.T, c *cluster.Cluster) {
				if len(c.Pods) != 2 || len(c.Others) != 1 {
					t.Errorf("%d pods, %d others; want 2 and 1", len(c.Pods), len(c.Others))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, dir, err := loadFiles(t, loading.Options{}, tt.files...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
			var want []string
			if tt.warning != "" {
				want = []string{dir + strings.ReplaceAll(tt.warning, "<dir>", dir)}
			}
			if strings.Join(c.Warnings, "\n") != strings.Join(want, "\n") {
				t.Errorf("warnings %q, want %q", c.Warnings, want)
			}
		})
	}
}
