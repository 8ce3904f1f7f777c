package questions_test

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// TestConsolidateReplacesNodesByACheaperOne: two 4-CPU nodes at 1/h,
// each holding 3 CPU of pods and a 500m agent of a DaemonSet: neither
// drains onto the other, but one new node of a type cheaper than both
// together takes both nodes' pods, with the agent the DaemonSet runs on
// it.
func TestConsolidateReplacesNodesByACheaperOne(t *testing.T) {
	typeOf := func(name, cpu string, cost float64) questions.NodeType {
		n := st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{"cpu": cpu, "memory": "32Gi", "pods": "50"}).Obj()
		return questions.NodeType{Type: name, Node: n, Cost: cost, Limit: 10}
	}
	pod := func(name, node string) *v1.Pod {
		p := st.MakePod().Name(name).Node(node).Req(map[v1.ResourceName]string{"cpu": "3"}).Obj()
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, UID: types.UID(name), Controller: &yes}}
		return p
	}
	objs := []runtime.Object{node("a", "1"), node("b", "1"), pod("pa", "a"), pod("pb", "b"),
		st.MakeDaemonSet("agent", st.MakePod().Label("app", "agent").Req(map[v1.ResourceName]string{"cpu": "500m"}))}
	tests := []struct {
		name        string
		types       []questions.NodeType
		wantType    string
		wantSaving  float64
		wantReplace []string
	}{
		{name: "an 8-CPU node at 1.5 replaces both nodes, saving 0.5",
			types: []questions.NodeType{typeOf("big", "8", 1.5)}, wantType: "big", wantReplace: []string{"a", "b"}, wantSaving: 0.5},
		{name: "the cheapest type that takes the pods is chosen",
			types: []questions.NodeType{typeOf("big", "8", 1.5), typeOf("huge", "16", 1.8), typeOf("bigger", "7", 1.2)}, wantType: "bigger", wantReplace: []string{"a", "b"}, wantSaving: 0.8},
		{name: "a type with room for the pods but not for the agent too replaces nothing",
			types: []questions.NodeType{typeOf("tight", "6", 1.2)}},
		{name: "a type as dear as the nodes it would replace replaces nothing",
			types: []questions.NodeType{typeOf("big", "8", 2)}},
		{name: "without types nothing is replaced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := questions.Consolidate(context.Background(), func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }, worldMaker(t),
				questions.ConsolidateOptions{NodeTypes: tt.types}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Remove) != 0 {
				t.Fatalf("removes %v: neither node drains onto the other", res.Remove)
			}
			if tt.wantType == "" {
				if len(res.Replace) != 0 {
					t.Errorf("replaces %+v, want nothing", res.Replace)
				}
				return
			}
			if len(res.Replace) != 1 || res.Replace[0].Type != tt.wantType || !slices.Equal(res.Replace[0].Nodes, tt.wantReplace) ||
				res.Replace[0].HourlySaving != tt.wantSaving || res.HourlySaving != tt.wantSaving {
				t.Errorf("replaces %+v (saving %g), want %v by one %s saving %g", res.Replace, res.HourlySaving, tt.wantReplace, tt.wantType, tt.wantSaving)
			}
			for _, k := range res.Keep {
				if slices.Contains(tt.wantReplace, k.Node) {
					t.Errorf("node %s is both replaced and kept (%s)", k.Node, k.Reason)
				}
			}
		})
	}
}
