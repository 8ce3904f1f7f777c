package loading_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
)

// TestKeptDocumentsLoadAsTheFilesDo: a load from the documents kept by
// the first load (YAML, JSON and a List, a Deployment whose pods the
// controller makes) gives the cluster a fresh read gives, without reading
// the files again.
func TestKeptDocumentsLoadAsTheFilesDo(t *testing.T) {
	files := map[string]string{
		"nodes.yaml": `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
  status:
    capacity: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: apps}
spec:
  containers:
  - {name: c, image: x, resources: {requests: {cpu: 500m}}}
`,
		"web.json": `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
 "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
  "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}`,
	}
	var paths []string
	for name, body := range files {
		paths = append(paths, simtest.WriteFile(t, name, body))
	}
	tests := []struct {
		name string
		// change is done to the files after the first load.
		change func(t *testing.T)
	}{
		{name: "the second load gives the first load's cluster", change: func(*testing.T) {}},
		{name: "the second load does not read the files again", change: func(t *testing.T) {
			for _, p := range paths {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := loading.Load(paths)
			if err != nil {
				t.Fatal(err)
			}
			opts := loading.Options{Documents: loading.NewDocuments()}
			if _, err := loading.LoadWith(paths, nil, opts); err != nil {
				t.Fatal(err)
			}
			tt.change(t)
			got, err := loading.LoadWith(paths, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Nodes) != 1 || len(got.Pods) != 3 {
				t.Fatalf("loaded %d nodes and %d pods, want 1 and 3 (a Deployment's two)", len(got.Nodes), len(got.Pods))
			}
			if !equality.Semantic.DeepEqual(got.Nodes, want.Nodes) || !equality.Semantic.DeepEqual(got.Pods, want.Pods) || !equality.Semantic.DeepEqual(got.Sources, want.Sources) {
				t.Errorf("the kept documents' cluster differs from the files':\nnodes %v\npods %v\nwant %v\n%v", got.Nodes, got.Pods, want.Nodes, want.Pods)
			}
		})
	}
}
