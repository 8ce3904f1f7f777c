package questions_test

import (
	"context"
	"math"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// priced is a node type of cpu cores (and 4Gi of memory per core) at a
// price per hour, offered in zone.
func priced(name, cpu string, cores int, cost float64, zone string, limit int) questions.NodeType {
	mem := map[int]string{1: "4Gi", 4: "16Gi", 16: "64Gi"}[cores]
	n := st.MakeNode().Name(name).Label(v1.LabelTopologyZone, zone).
		Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: mem, v1.ResourcePods: "110"}).Obj()
	return questions.NodeType{Type: name, Zone: zone, Node: n, Cost: cost, Limit: limit}
}

// The answers of capacity --node-types that a search adding one type per
// round missed, each with its optimum worked out by hand.
func TestCheapestNodesMixesTypes(t *testing.T) {
	cpu := func(q string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: q} }
	cases := []struct {
		name  string
		objs  []runtime.Object
		types []questions.NodeType
		// want is the optimum's nodes per type; cost its price, bound the
		// fractional lower bound.
		want        map[string]int
		cost, bound float64
	}{
		{
			// 40 cores: 2×16 + 2×4 for 1.60; 3 large (1.80) or 10 small
			// (2.00) cost more. Fractionally, 40 cores at the large
			// type's 0.0375 a core: 1.50.
			name:  "forty one-core pods get two large and two small nodes, not three large",
			objs:  []runtime.Object{st.MakeDeployment("web", 40, st.MakePod().Label("app", "web").Req(cpu("1")))},
			types: []questions.NodeType{priced("small", "4", 4, 0.20, "z1", 100), priced("large", "16", 16, 0.60, "z1", 100)},
			want:  map[string]int{"small": 2, "large": 2},
			cost:  1.60, bound: 1.50,
		},
		{
			// 18 cores: one large (16) leaves 2 pods for a small node:
			// 0.80; two large cost 1.20, five small 1.00.
			name:  "eighteen one-core pods get one large node and one small",
			objs:  []runtime.Object{st.MakeDeployment("web", 18, st.MakePod().Label("app", "web").Req(cpu("1")))},
			types: []questions.NodeType{priced("small", "4", 4, 0.20, "z1", 100), priced("large", "16", 16, 0.60, "z1", 100)},
			want:  map[string]int{"small": 1, "large": 1},
			cost:  0.80, bound: 0.675,
		},
		{
			// One large node at most: it holds 16 pods, 6 small the
			// other 24 (1.80); the relaxation honours the limit too.
			name:  "a type's limit is kept and the bound honours it",
			objs:  []runtime.Object{st.MakeDeployment("web", 40, st.MakePod().Label("app", "web").Req(cpu("1")))},
			types: []questions.NodeType{priced("small", "4", 4, 0.20, "z1", 100), priced("large", "16", 16, 0.60, "z1", 1)},
			want:  map[string]int{"small": 6, "large": 1},
			cost:  1.80, bound: 1.80,
		},
		{
			// Each node's 1-core agent leaves 3 cores of a small node
			// and 15 of a large: of the 1.5-core pods, 2 and 10, in
			// whatever order the agents and the pods are placed. 14 pods
			// take 1 large and 2 small (1.00); 2 large cost 1.20, 7 small
			// 1.40. Fractionally, 21 cores at 0.04 a core: 0.84.
			name: "room for the new nodes' agents is bought with them",
			objs: []runtime.Object{
				st.MakeDaemonSet("agent", st.MakePod().Label("app", "agent").Req(cpu("1"))),
				st.MakeDeployment("web", 14, st.MakePod().Label("app", "web").Req(cpu("1500m"))),
			},
			types: []questions.NodeType{priced("small", "4", 4, 0.20, "z1", 100), priced("large", "16", 16, 0.60, "z1", 100)},
			want:  map[string]int{"small": 2, "large": 1},
			cost:  1.00, bound: 0.84,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			load := func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, tc.objs), nil }
			res, err := questions.CheapestNodes(context.Background(), load, worldMaker(t), tc.types, questions.NodeTypesOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, a := range res.Add {
				got[a.Type] += a.Count
			}
			if len(res.Pending) != 0 || math.Abs(res.HourlyCost-tc.cost) > 1e-9 || !sameCounts(got, tc.want) {
				t.Errorf("answer %v for %g with %d pending, want %v for %g", got, res.HourlyCost, len(res.Pending), tc.want, tc.cost)
			}
			if math.Abs(res.LowerBound-tc.bound) > 1e-4 {
				t.Errorf("lower bound %g, want %g", res.LowerBound, tc.bound)
			}
		})
	}
}

func sameCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	for k, v := range b {
		if a[k] != v {
			return false
		}
	}
	return true
}
