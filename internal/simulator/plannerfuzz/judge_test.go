package plannerfuzz

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/questions"
	st "github.com/kubesched/kubesched/internal/testing"
)

func cpu(q string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: q} }

// nodeType is a candidate of cores cpus and 4 GiB a core in a zone.
func nodeType(name, zone string, cores, limit int, cost float64) questions.NodeType {
	n := st.MakeNode().Name(name).Label(v1.LabelTopologyZone, zone).Label(PoolLabel, generalPool).
		Capacity(map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprint(cores), v1.ResourceMemory: fmt.Sprintf("%dGi", 4*cores), v1.ResourcePods: "110"}).Obj()
	return questions.NodeType{Type: name, Zone: zone, Node: n, Cost: cost, Limit: limit}
}

// pods are n plain pods named name-1..name-n requesting req cpus, pinned
// to a zone when zone is not "".
func pods(name string, n int, req, zone string) []runtime.Object {
	var out []runtime.Object
	for i := range n {
		p := st.MakePod().Name(fmt.Sprintf("%s-%d", name, i+1)).Label("app", name).Req(cpu(req))
		if zone != "" {
			p.NodeSelector(v1.LabelTopologyZone, zone)
		}
		out = append(out, p.Obj())
	}
	return out
}

func agent(req string) runtime.Object {
	return st.MakeDaemonSet("agent", st.MakePod().Label("app", "agent").Req(cpu(req)))
}

func TestTheJudge(t *testing.T) {
	small := nodeType("c4", "zone-a", 4, 5, 0.2)
	otherZone := nodeType("c4", "zone-b", 4, 5, 0.2)
	cases := []struct {
		name    string
		objs    []runtime.Object
		types   []questions.NodeType
		counts  []int
		allowed []string
		// want: feasible; the missing pods' DaemonSet pods of new nodes;
		// the empty new nodes.
		feasible   bool
		newDaemons int
		empty      []string
	}{
		{
			name:  "a DaemonSet pod of a new node that does not fit is counted as pending",
			objs:  append(pods("web", 1, "1", ""), agent("5")),
			types: []questions.NodeType{small}, counts: []int{1},
			newDaemons: 1,
		},
		{
			name:  "a plan with room for its nodes' agents is feasible",
			objs:  append(pods("web", 2, "1500m", ""), agent("1")),
			types: []questions.NodeType{small}, counts: []int{1},
			feasible: true,
		},
		{
			name:  "a new node holding only its DaemonSet pods is empty",
			objs:  append(pods("web", 2, "1", "zone-a"), agent("500m")),
			types: []questions.NodeType{small, otherZone}, counts: []int{1, 1},
			feasible: true, empty: []string{"c4-zone-b-new-1"},
		},
		{
			name:  "a pod left pending that the floor places makes the plan infeasible",
			objs:  pods("web", 3, "1500m", ""),
			types: []questions.NodeType{small}, counts: []int{1},
		},
		{
			name:  "pods no plan places may stay pending",
			objs:  pods("web", 3, "1500m", ""),
			types: []questions.NodeType{small}, counts: []int{1}, allowed: []string{"default/web-1", "default/web-2", "default/web-3"},
			feasible: true,
		},
		{
			name:  "a plan of no node leaves every pod pending",
			objs:  pods("web", 2, "1", ""),
			types: []questions.NodeType{small}, counts: []int{0},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, err := NewEnv(tc.objs)
			if err != nil {
				t.Fatal(err)
			}
			check, err := NewJudge(context.Background(), env, tc.types).Check(tc.counts)
			if err != nil {
				t.Fatal(err)
			}
			allowed := map[string]bool{}
			for _, p := range tc.allowed {
				allowed[p] = true
			}
			v := VerdictOf(check, allowed)
			newDaemons := 0
			for _, u := range v.Missing {
				if u.Daemon && u.NewNode {
					newDaemons++
				}
			}
			if v.Feasible() != tc.feasible || newDaemons != tc.newDaemons || !slices.Equal(v.Empty, tc.empty) {
				t.Errorf("feasible %v, %d DaemonSet pods of new nodes missing, empty %v; want %v, %d, %v\nmissing: %+v",
					v.Feasible(), newDaemons, v.Empty, tc.feasible, tc.newDaemons, tc.empty, v.Missing)
			}
		})
	}
}

// The floor is what the plan of every type at its limit leaves: its own
// new nodes' DaemonSet pods are no pods a plan must leave pending.
func TestUnplaceableLeavesOutTheNewNodesDaemonSetPods(t *testing.T) {
	objs := append(pods("web", 1, "1", ""), agent("5"))
	env, err := NewEnv(objs)
	if err != nil {
		t.Fatal(err)
	}
	check, err := NewJudge(context.Background(), env, []questions.NodeType{nodeType("c4", "zone-a", 4, 2, 0.2)}).Check([]int{2})
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Unplaced) != 2 {
		t.Fatalf("unplaced %+v, want the agents of the 2 new nodes", check.Unplaced)
	}
	if floor := Unplaceable(check); len(floor) != 0 {
		t.Errorf("floor %v, want none", floor)
	}
}

// The judge's description of a defect names what is wrong.
func TestDescribeNamesTheDefect(t *testing.T) {
	c := &Case{Seed: 7, Types: []questions.NodeType{nodeType("c4", "zone-a", 4, 5, 0.2)}, Cents: []int{20}, Kinds: map[string]int{}}
	r := &Result{Case: c, Answer: []int{2}, AnswerCents: 40, Verdict: &Verdict{
		Missing: []questions.UnplacedPod{{Pod: "default/agent-x", Status: "Unschedulable", Reason: "Insufficient cpu", Daemon: true, NewNode: true, Node: "c4-zone-a-new-2"}},
		Empty:   []string{"c4-zone-a-new-1"},
	}}
	got := Describe(r)
	for _, want := range []string{"seed 7:", "planner: 2×c4@a = 0.40", "INFEASIBLE", "DaemonSet pod of new node c4-zone-a-new-2", "EMPTY NODES: c4-zone-a-new-1"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}

// With Limits.Orders, the judge places a plan in other orders of its new
// nodes too (shuffled, named check-<order>-<i>, the tie-break draws
// seeded apart): the first order that leaves a pod unplaced is the
// verdict.
func TestTheJudgeInOtherOrders(t *testing.T) {
	small := nodeType("c4", "zone-a", 4, 5, 0.2)
	cases := []struct {
		name      string
		objs      []runtime.Object
		counts    []int
		wantOrder int // 0: feasible in every order
		wantNodes []string
	}{
		{name: "a plan with room in every order is feasible in each", objs: pods("web", 2, "1500m", ""), counts: []int{2}},
		{name: "a plan short of room is infeasible in the first other order, its nodes named for it", objs: pods("web", 5, "1500m", ""), counts: []int{2},
			wantOrder: 1, wantNodes: []string{"check-1-0000", "check-1-0001"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, err := NewEnv(tc.objs)
			if err != nil {
				t.Fatal(err)
			}
			j := NewJudge(context.Background(), env, []questions.NodeType{small})
			j.orders = 3
			v, err := j.InOrders(tc.counts, map[string]bool{})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantOrder == 0 && v != nil:
				t.Fatalf("infeasible in order %d: %+v", v.Order, v.Missing)
			case tc.wantOrder != 0 && (v == nil || v.Order != tc.wantOrder || !slices.Equal(v.Check.NewNodes, tc.wantNodes)):
				t.Fatalf("verdict %+v, want infeasible in order %d on nodes %v", v, tc.wantOrder, tc.wantNodes)
			}
		})
	}
}
