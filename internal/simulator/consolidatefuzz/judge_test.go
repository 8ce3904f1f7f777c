package consolidatefuzz

import (
	"context"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/simulator/plannerfuzz"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	st "github.com/kubesched/kubesched/internal/testing"
)

// The judge on small clusters whose answer is known: each a set of nodes
// to remove, and the verdict.
func TestTheJudge(t *testing.T) {
	node := func(name string, cpu string) *v1.Node {
		return st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: "16Gi"}).Obj()
	}
	// web is a ReplicaSet's running pod (one CPU) on a node, with the
	// ReplicaSet.
	web := func(name, node string, edit ...func(*st.PodWrapper)) []runtime.Object {
		p := st.MakePod().Name(name).Label("app", "web").Node(node).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).OwnedBy("apps/v1", "ReplicaSet", "web")
		for _, e := range edit {
			e(p)
		}
		running(p.Obj())
		return []runtime.Object{p.Obj()}
	}
	rs := func(n int32, edit ...func(*st.PodWrapper)) runtime.Object {
		p := st.MakePod().Label("app", "web").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"})
		for _, e := range edit {
			e(p)
		}
		r := st.MakeReplicaSet("web", n, p)
		r.UID = "uid-web"
		return r
	}
	spread := func(p *st.PodWrapper) { p.SpreadConstraint(1, v1.LabelHostname, v1.DoNotSchedule, "web") }
	high := func(p *st.PodWrapper) { p.Spec.PriorityClassName = "high" }
	budget := func(name string, sel *metav1.LabelSelector) runtime.Object {
		one := intstr.FromInt32(1)
		return &policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: sel}}
	}
	appWeb := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	highClass := &schedulingv1.PriorityClass{TypeMeta: metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"}, ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}
	low := func(name, node, cpu string) runtime.Object {
		return st.MakePod().Name(name).Label("app", "low").Node(node).Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).OwnedBy("apps/v1", "ReplicaSet", "low").Obj()
	}
	lowRS := func(cpu string) runtime.Object {
		return st.MakeReplicaSet("low", 2, st.MakePod().Label("app", "low").Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}))
	}
	awayFromLow := func(p *st.PodWrapper) { p.PodAntiAffinity(st.AffinityTerm(v1.LabelHostname, "low")) }
	cat := func(parts ...[]runtime.Object) []runtime.Object { return slices.Concat(parts...) }
	one := func(objs ...runtime.Object) []runtime.Object { return objs }
	tests := []struct {
		name      string
		objs      []runtime.Object
		rules     questions.Rules
		strict    bool
		remove    []string
		feasible  bool
		simulated bool
		// why or waits holds this, when not "".
		want string
	}{
		{name: "a pod that fits elsewhere moves",
			objs:   cat(one(node("a", "4"), node("b", "4"), rs(2)), web("web-1", "a"), web("web-2", "b")),
			remove: []string{"a"}, feasible: true, simulated: true},
		{name: "pods that need more room than the nodes left have are refused unsimulated",
			objs:   cat(one(node("a", "4"), node("b", "4"), rs(2)), web("web-1", "a"), web("web-2", "b")),
			remove: []string{"a", "b"}, want: "the nodes left have 0m free"},
		{name: "a bare pod keeps its node for cluster-autoscaler",
			objs:   one(node("a", "4"), node("b", "4"), st.MakePod().Name("bare").Node("a").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()),
			remove: []string{"a"}, want: "no controller"},
		{name: "a bare pod moves for Karpenter", rules: questions.RulesKarpenter,
			objs:   one(node("a", "4"), node("b", "4"), st.MakePod().Name("bare").Node("a").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()),
			remove: []string{"a"}, feasible: true, simulated: true},
		{name: "a pod two budgets select keeps its node",
			objs:   cat(one(node("a", "4"), node("b", "4"), rs(2), budget("one", appWeb), budget("all", &metav1.LabelSelector{})), web("web-1", "a"), web("web-2", "b")),
			remove: []string{"a"}, want: "both select it"},
		{name: "a hostname spread's replacement waits for its node's deletion",
			objs:   cat(one(node("a", "4"), node("b", "4"), rs(2, spread)), web("web-1", "a", spread), web("web-2", "b", spread)),
			remove: []string{"b"}, feasible: true, simulated: true, want: "didn't match pod topology spread constraints"},
		{name: "which the strict judge refuses", strict: true,
			objs:   cat(one(node("a", "4"), node("b", "4"), rs(2, spread)), web("web-1", "a", spread), web("web-2", "b", spread)),
			remove: []string{"b"}, simulated: true, want: "with the nodes cordoned"},
		{name: "a budget whose evictions wait for a replacement that waits for the node's deletion stalls the drain",
			objs: cat(one(node("a", "4"), node("b", "4"), rs(3, spread), budget("web", appWeb)),
				web("web-1", "a", spread), web("web-2", "b", spread), web("web-3", "b", spread)),
			remove: []string{"b"}, simulated: true, want: "the drain may stall"},
		{name: "a pod that fits no node left alone is refused unsimulated",
			// Half a CPU free on each of a and c: enough in sum, on no
			// node alone (the replacement would preempt).
			objs: cat(one(node("a", "2"), node("b", "4"), node("c", "2"), rs(1, high), highClass,
				low("low-1", "a", "1500m"), low("low-2", "c", "1500m"), lowRS("1500m")),
				web("web-1", "b", high)),
			remove: []string{"b"}, want: "fits on none of the nodes left"},
		{name: "a replacement that preempts a pod is refused",
			// Room on a and c, but web-1 keeps away from the low pods:
			// it preempts one.
			objs: cat(one(node("a", "2"), node("b", "4"), node("c", "2"), rs(1, high, awayFromLow), highClass,
				low("low-1", "a", "1"), low("low-2", "c", "1"), lowRS("1")),
				web("web-1", "b", high, awayFromLow)),
			remove: []string{"b"}, simulated: true, want: "is preempted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := plannerfuzz.NewEnv(tt.objs)
			if err != nil {
				t.Fatal(err)
			}
			rules := tt.rules
			if rules == "" {
				rules = questions.RulesClusterAutoscaler
			}
			j, err := NewJudge(context.Background(), env, rules)
			if err != nil {
				t.Fatal(err)
			}
			j.StrictCordon = tt.strict
			v, err := j.Check(tt.remove)
			if err != nil {
				t.Fatal(err)
			}
			if v.Feasible != tt.feasible || v.Simulated != tt.simulated || !strings.Contains(v.Why+v.Waits, tt.want) {
				t.Errorf("feasible %v, simulated %v, why %q, waits %q; want feasible %v, simulated %v, saying %q",
					v.Feasible, v.Simulated, v.Why, v.Waits, tt.feasible, tt.simulated, tt.want)
			}
		})
	}
}

// The subsets are searched from the largest saving down, and of two
// saving as much, the one removing more nodes first.
func TestTheSubsetsOrder(t *testing.T) {
	c := &Case{Nodes: []string{"a", "b", "c"}, Cents: map[string]int{"a": 30, "b": 10, "c": 20}}
	var got []string
	for _, s := range subsets(c) {
		got = append(got, strings.Join(s.nodes, "+"))
	}
	want := []string{"a+b+c", "a+c", "a+b", "b+c", "a", "c", "b", ""}
	if !slices.Equal(got, want) {
		t.Errorf("subsets %q, want %q", got, want)
	}
}

// The judge on plans with swaps: each swap's nodes replaced by one new
// node of a type, with the DaemonSet's pod it runs there, after the
// removals.
func TestTheJudgeOfSwaps(t *testing.T) {
	node := func(name, cpu string) *v1.Node {
		return st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: "32Gi", v1.ResourcePods: "50"}).Obj()
	}
	nodeType := func(name, cpu string) questions.NodeType {
		return questions.NodeType{Type: name, Node: node(name, cpu), Cost: 1, Limit: 10}
	}
	// pod is a ReplicaSet's running pod of cpu on node.
	pod := func(name, node, cpu string) []runtime.Object {
		p := st.MakePod().Name(name).Label("app", name).Node(node).Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}).OwnedBy("apps/v1", "ReplicaSet", name).Obj()
		running(p)
		return []runtime.Object{p, st.MakeReplicaSet(name, 1, st.MakePod().Label("app", name).Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu}))}
	}
	agent := st.MakeDaemonSet("agent", st.MakePod().Label("app", "agent").Req(map[v1.ResourceName]string{v1.ResourceCPU: "500m"}))
	// Two 4-CPU nodes, each with 3 CPU of pods and the agent's 500m: they
	// drain onto no other node, but a new one of 7 CPU or more takes
	// both nodes' pods with its own agent.
	pair := slices.Concat([]runtime.Object{node("a", "4"), node("b", "4"), agent}, pod("pa", "a", "3"), pod("pb", "b", "3"))
	types := []questions.NodeType{nodeType("big", "8"), nodeType("tight", "6"), nodeType("tiny", "250m"), nodeType("huge", "12")}
	tests := []struct {
		name      string
		objs      []runtime.Object
		plan      Plan
		feasible  bool
		simulated bool
		want      string
	}{
		{name: "two nodes replaced by one with room for their pods and its agent",
			objs: pair, plan: Plan{Swaps: []Swap{{Nodes: []string{"a", "b"}, Type: 0}}}, feasible: true, simulated: true},
		{name: "a type with room for the pods but not for its agent too is refused unsimulated",
			objs: pair, plan: Plan{Swaps: []Swap{{Nodes: []string{"a", "b"}, Type: 1}}}, want: "the nodes left have 5500m free"},
		{name: "a type its agent does not fit is refused unsimulated",
			objs: pair, plan: Plan{Swaps: []Swap{{Nodes: []string{"a", "b"}, Type: 2}}}, want: "do not fit a new node of type tiny"},
		{name: "the removals drain first, their pods moving again when a swap takes their node",
			// c's pod goes to a or b (500m free on each), then moves to
			// the new node.
			objs: slices.Concat(pair[:2], []runtime.Object{node("c", "4")}, pair[2:], pod("pc", "c", "500m")),
			plan: Plan{Remove: []string{"c"}, Swaps: []Swap{{Nodes: []string{"a", "b"}, Type: 3}}}, feasible: true, simulated: true},
		{name: "the removals drain before the new node joins",
			// c's pod of 2 CPU fits the new node, not a and b: the
			// removal of c cannot drain first.
			objs: slices.Concat(pair[:2], []runtime.Object{node("c", "4")}, pair[2:], pod("pc", "c", "2")),
			plan: Plan{Remove: []string{"c"}, Swaps: []Swap{{Nodes: []string{"a", "b"}, Type: 3}}}, want: "the moving pods request 2000m CPU, the nodes left have 1000m free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := plannerfuzz.NewEnv(tt.objs)
			if err != nil {
				t.Fatal(err)
			}
			j, err := NewJudge(context.Background(), env, questions.RulesClusterAutoscaler, types...)
			if err != nil {
				t.Fatal(err)
			}
			v, err := j.CheckPlan(tt.plan)
			if err != nil {
				t.Fatal(err)
			}
			if v.Feasible != tt.feasible || v.Simulated != tt.simulated || !strings.Contains(v.Why+v.Waits, tt.want) {
				t.Errorf("feasible %v, simulated %v, why %q, waits %q; want feasible %v, simulated %v, saying %q",
					v.Feasible, v.Simulated, v.Why, v.Waits, tt.feasible, tt.simulated, tt.want)
			}
		})
	}
}

// With node types, the plans are searched from the largest saving down;
// of two saving as much, the one without a swap first, then the one
// removing more nodes.
func TestThePlansOrder(t *testing.T) {
	c := &Case{Nodes: []string{"a", "b"}, Cents: map[string]int{"a": 30, "b": 10}, Types: []questions.NodeType{{Type: "t"}}, TypeCents: []int{5}}
	var got []string
	for _, s := range plans(c) {
		got = append(got, s.plan().String(c))
	}
	want := []string{"a, b = 0.40", "b + a by t (0.05) = 0.35", "a + b by t (0.05) = 0.35", "a, b by t (0.05) = 0.35",
		"a = 0.30", "a by t (0.05) = 0.25", "b = 0.10", "b by t (0.05) = 0.05", "nothing"}
	if !slices.Equal(got, want) {
		t.Errorf("plans\n%q\nwant\n%q", got, want)
	}
}
