package clustergen

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

func TestOwnedPodsBelongToOneReplicaSetPerApp(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"the mixed apps of a cluster with pods enough to draw a name suffix twice", Options{Nodes: 200, Pods: 40000, RunningFraction: 0.3, Seed: 7}},
		{"the deployments of the spread workload", Options{Nodes: 30, Pods: 300, Seed: 9, Workload: "spread"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := Generate(tc.opts)
			tc.opts.Owned = true
			owned := Generate(tc.opts)
			if len(plain) != len(owned) {
				t.Fatalf("%d objects owned, %d without", len(owned), len(plain))
			}
			rsOf := map[string]string{} // namespace/app -> ReplicaSet
			names := map[string]bool{}
			for i, o := range owned {
				p, ok := o.(*v1.Pod)
				if !ok {
					if !equality.Semantic.DeepEqual(o, plain[i]) {
						t.Errorf("object %d differs from the output without -owned", i)
					}
					continue
				}
				refs := p.OwnerReferences
				if len(refs) != 1 || refs[0].Kind != "ReplicaSet" || refs[0].Controller == nil || !*refs[0].Controller {
					t.Fatalf("pod %s/%s: owner references %+v, want one controlling ReplicaSet", p.Namespace, p.Name, refs)
				}
				key := p.Namespace + "/" + p.Labels["app"]
				if rs, seen := rsOf[key]; seen && rs != refs[0].Name {
					t.Errorf("app %s has ReplicaSets %s and %s", key, rs, refs[0].Name)
				}
				rsOf[key] = refs[0].Name
				if !strings.HasPrefix(p.Name, refs[0].Name+"-") || len(p.Name) != len(refs[0].Name)+6 {
					t.Errorf("pod %s is not named after its ReplicaSet %s and 5 characters", p.Name, refs[0].Name)
				}
				if names[p.Namespace+"/"+p.Name] {
					t.Errorf("pod %s/%s is named twice", p.Namespace, p.Name)
				}
				names[p.Namespace+"/"+p.Name] = true
				q := plain[i].(*v1.Pod).DeepCopy()
				q.Name, q.OwnerReferences = p.Name, p.OwnerReferences
				q.Labels["pod-template-hash"] = p.Labels["pod-template-hash"]
				if !equality.Semantic.DeepEqual(p, q) {
					t.Errorf("pod %s differs from the output without -owned beyond its name, owner and pod-template-hash", p.Name)
				}
			}
			if len(rsOf) == 0 || len(rsOf) > 20 {
				t.Errorf("%d ReplicaSets, want one per app", len(rsOf))
			}
		})
	}
}
