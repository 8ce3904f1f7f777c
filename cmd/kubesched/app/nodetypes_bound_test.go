package app

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	st "github.com/kubesched/kubesched/internal/testing"
)

// The table says how far the answer is from the relaxation's bound, which
// limit stopped the search, and --balance-zones spreads a type over its
// zones.
func TestNodeTypesTableSaysTheBoundAndTheLimits(t *testing.T) {
	cores := func(q string) map[v1.ResourceName]string {
		return map[v1.ResourceName]string{v1.ResourceCPU: q, v1.ResourceMemory: "1Gi"}
	}
	nodeType := func(name, cpu, cost, zones, limit string) *v1.Node {
		n := st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: "64Gi", v1.ResourcePods: "110"}).Obj()
		n.Annotations = map[string]string{"simulation.kubesched.io/hourly-cost": cost, "simulation.kubesched.io/zones": zones}
		if limit != "" {
			n.Annotations["simulation.kubesched.io/max-per-zone"] = limit
		}
		return n
	}
	pods := func(n int, cpu string) []runtime.Object {
		var out []runtime.Object
		for i := range n {
			out = append(out, st.MakePod().Name(fmt.Sprintf("web-%d", i)).Req(cores(cpu)).Obj())
		}
		return out
	}
	pinned := func(n int, cpu, zone string) []runtime.Object {
		var out []runtime.Object
		for i := range n {
			out = append(out, st.MakePod().Name(fmt.Sprintf("pinned-%d", i)).Req(cores(cpu)).NodeSelector(v1.LabelTopologyZone, zone).Obj())
		}
		return out
	}
	tests := []struct {
		name  string
		types []runtime.Object
		pods  []runtime.Object
		flags []string
		want  []string
	}{
		{
			// 40 cores: 2×16 + 2×4 cost 1.60, the bound 40 × 0.0375.
			name:  "the answer is 6.7% above the bound of fractional large nodes",
			types: []runtime.Object{nodeType("small", "4", "0.20", "a", ""), nodeType("large", "16", "0.60", "a", "")},
			pods:  pods(40, "1"),
			want:  []string{"Add 4 nodes (1.6 per hour)", "No answer costs less than 1.5 per hour", "this one is 6.7% above that bound"},
		},
		{
			name:  "a pod past every type's limit is left pending, and the limit is named",
			types: []runtime.Object{nodeType("small", "4", "0.20", "a", "1")},
			pods:  pods(5, "1"),
			want:  []string{"Add 1 node (0.2 per hour)", "The search stopped at the limit of: small in a", "1 pod no node type can run"},
		},
		{
			name:  "without --balance-zones a type's nodes may crowd into one zone",
			types: []runtime.Object{nodeType("small", "4", "0.20", "a,b", "")},
			pods:  append(pinned(5, "1500m", "a"), pods(3, "1500m")...),
			want:  []string{"Add 4 nodes (0.8 per hour)", "small  a     3", "small  b     1"},
		},
		{
			// The even split (2 and 2) leaves a pinned pod pending: zone
			// a gets the node it needs on top, zone b keeps its 2.
			name:  "--balance-zones spreads a type's nodes over its zones where the pods allow",
			types: []runtime.Object{nodeType("small", "4", "0.20", "a,b", "")},
			pods:  append(pinned(5, "1500m", "a"), pods(3, "1500m")...),
			flags: []string{"--balance-zones"},
			want:  []string{"Add 5 nodes (1 per hour)", "small  a     3", "small  b     2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"capacity", "-f", writeObjects(t, "cluster.yaml", tt.pods...), "--node-types", writeObjects(t, "types.yaml", tt.types...)}, tt.flags...)
			code, out, errOut := run(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
		})
	}
}
