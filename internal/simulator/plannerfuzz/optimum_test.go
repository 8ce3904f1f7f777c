package plannerfuzz

import (
	"context"
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/questions"
	st "github.com/kubesched/kubesched/internal/testing"
)

// issueExample is issue 43's: 40 pending 1-cpu pods, a 4-cpu type at
// 0.20 and a 16-cpu type at 0.60, in one zone, no node yet.
func issueExample() ([]runtime.Object, []questions.NodeType, []int) {
	objs := []runtime.Object{st.MakeDeployment("web", 40, st.MakePod().Label("app", "web").Req(cpu("1")))}
	types := []questions.NodeType{nodeType("c4", "zone-a", 4, 10, 0.20), nodeType("c16", "zone-a", 16, 10, 0.60)}
	return objs, types, []int{20, 60}
}

// boundsOf reads the bounds of objs and types, every pod to be placed.
func boundsOf(t *testing.T, objs []runtime.Object, types []questions.NodeType) (*Env, *bounds) {
	t.Helper()
	env, err := NewEnv(objs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := env.Load()
	if err != nil {
		t.Fatal(err)
	}
	daemons, err := daemonPods(env, types)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBounds(c, types, daemons, nil)
	if err != nil {
		t.Fatal(err)
	}
	return env, b
}

func TestTheExhaustiveSearch(t *testing.T) {
	objs, types, cents := issueExample()
	// The arithmetic, from the nodes' allocatable: 2 × 16 + 2 × 4 = 40
	// cpus, the pods' 40 requests exactly, for 2 × 0.60 + 2 × 0.20 =
	// 1.60; 3 large nodes (1.80) and 10 small (2.00) cost more, and every
	// vector under 1.60 (2 large + 1 small: 36 cpus; 1 large + 4 small:
	// 32) has fewer than 40 cpus.
	small, large := types[0].Node.Status.Allocatable.Cpu().Value(), types[1].Node.Status.Allocatable.Cpu().Value()
	if 2*large+2*small != 40 || 2*cents[1]+2*cents[0] != 160 {
		t.Fatalf("allocatable %d and %d cpus: the example's arithmetic no longer holds", small, large)
	}
	cases := []struct {
		name      string
		below     int
		wantFound bool
		want      []int
	}{
		{name: "it finds the mixed optimum of the issue's example below the answer of 3 large nodes", below: 180, wantFound: true, want: []int{2, 2}},
		{name: "it finds no cheaper plan than the optimum when there is none", below: 160},
		{name: "it finds the optimum below the 10 small nodes one type alone needs", below: 200, wantFound: true, want: []int{2, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, b := boundsOf(t, objs, types)
			o, err := cheapest(NewJudge(context.Background(), env, types), b, cents, tc.below, map[string]bool{}, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if !o.decided || o.found != tc.wantFound || (tc.wantFound && !slices.Equal(o.counts, tc.want)) {
				t.Errorf("decided %v, found %v %v (%d); want found %v %v", o.decided, o.found, o.counts, o.cents, tc.wantFound, tc.want)
			}
		})
	}
	t.Run("the bounds alone leave no vector under 1.60 to simulate", func(t *testing.T) {
		_, b := boundsOf(t, objs, types)
		vs, err := cheaperVectors(b, cents, 160, 1000)
		if err != nil || len(vs) != 0 {
			t.Errorf("%d vectors (%v), want none", len(vs), err)
		}
	})
}

// The vectors come cheapest first, then with the fewest nodes, and all
// cost less than the bound.
func TestCheaperVectorsComeCheapestFirst(t *testing.T) {
	objs, types, cents := issueExample()
	_, b := boundsOf(t, objs, types)
	vs, err := cheaperVectors(b, cents, 221, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 || !slices.Equal(vs[0].counts, []int{2, 2}) {
		t.Fatalf("vectors %v, want 2 small + 2 large first", vs)
	}
	for i, v := range vs {
		if v.cents >= 221 || v.cents != costOf(v.counts, cents) {
			t.Errorf("vector %v costs %d: want its counts' cost, under 221", v.counts, v.cents)
		}
		if i > 0 && (v.cents < vs[i-1].cents || (v.cents == vs[i-1].cents && v.nodes < vs[i-1].nodes)) {
			t.Errorf("vector %v after %v", v.counts, vs[i-1].counts)
		}
	}
}

func TestTheBounds(t *testing.T) {
	c4a := nodeType("c4", "zone-a", 4, 6, 0.2)
	c4b := nodeType("c4", "zone-b", 4, 6, 0.2)
	tainted := nodeType("t4", "zone-b", 4, 6, 0.1)
	tainted.Node.Spec.Taints = []v1.Taint{{Key: TaintKey, Value: batchPool, Effect: v1.TaintEffectNoSchedule}}
	spreadPods := func(n int) []runtime.Object {
		var out []runtime.Object
		for i := range n {
			out = append(out, st.MakePod().Name(fmt.Sprintf("s-%d", i+1)).Label("app", "s").Req(cpu("1")).
				SpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule, "s").Obj())
		}
		return out
	}
	antiPods := func(n int) []runtime.Object {
		var out []runtime.Object
		for i := range n {
			out = append(out, st.MakePod().Name(fmt.Sprintf("a-%d", i+1)).Label("app", "a").Req(cpu("500m")).
				PodAntiAffinity(st.AffinityTerm(v1.LabelHostname, "a")).Obj())
		}
		return out
	}
	cases := []struct {
		name   string
		objs   []runtime.Object
		types  []questions.NodeType
		counts []int
		want   bool
	}{
		{"a vector without the cpus the pods request is rejected", pods("web", 9, "1", ""), []questions.NodeType{c4a}, []int{2}, false},
		{"a vector with the cpus the pods request is admitted", pods("web", 8, "1", ""), []questions.NodeType{c4a}, []int{2}, true},
		{"pods of 3 cpus go one to a 4-cpu node: 2 nodes do not hold 3 of them", pods("big", 3, "3", ""), []questions.NodeType{c4a}, []int{2}, false},
		{"pods of 3 cpus go one to a 4-cpu node: 3 nodes hold 3 of them", pods("big", 3, "3", ""), []questions.NodeType{c4a}, []int{3}, true},
		{"pods pinned to a zone need the room in that zone", pods("web", 5, "1", "zone-b"), []questions.NodeType{c4a, c4b}, []int{3, 1}, false},
		{"an anti-affine group needs a node per pod", antiPods(3), []questions.NodeType{c4a}, []int{2}, false},
		{"an anti-affine group fits a node per pod", antiPods(3), []questions.NodeType{c4a}, []int{3}, true},
		{"a type whose nodes cannot hold their DaemonSet pods is rejected", append(pods("web", 1, "1", ""), agent("5")), []questions.NodeType{c4a}, []int{1}, false},
		{"a type's DaemonSet pods take their room from its nodes", append(pods("web", 4, "1", ""), agent("1")), []questions.NodeType{c4a}, []int{1}, false},
		{"a spread's zone its pods cannot run in holds the others to one a zone", spreadPods(4), []questions.NodeType{c4a, tainted}, []int{1, 1}, false},
		{"a spread over the zones its pods can run in is admitted", spreadPods(4), []questions.NodeType{c4a, c4b}, []int{1, 1}, true},
		{"a spread of 4 pods over 2 zones needs room for 2 in each", spreadPods(4), []questions.NodeType{nodeType("c1", "zone-a", 1, 6, 0.1), c4b}, []int{1, 1}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, b := boundsOf(t, tc.objs, tc.types)
			if got := b.admits(tc.counts); got != tc.want {
				t.Errorf("admits(%v) = %v, want %v", tc.counts, got, tc.want)
			}
		})
	}
}
