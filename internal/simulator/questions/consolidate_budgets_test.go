package questions_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// node is a 4-CPU node, priced when price is not "".
func node(name, price string) *v1.Node {
	n := st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{"cpu": "4", "memory": "16Gi", "pods": "20"}).Obj()
	if price != "" {
		n.Annotations = map[string]string{questions.HourlyCostAnnotation: price}
	}
	return n
}

// webPods is a pod of app=web requesting cpu.
func webPods(cpu string) *st.PodWrapper {
	return st.MakePod().Label("app", "web").Req(map[v1.ResourceName]string{"cpu": cpu})
}

func pdbFor(namespace string, sel *metav1.LabelSelector, maxUnavailable int32) *policyv1.PodDisruptionBudget {
	v := intstr.FromInt32(maxUnavailable)
	return &policyv1.PodDisruptionBudget{TypeMeta: metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &v, Selector: sel}}
}

var appWeb = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

func TestConsolidateCountsBudgetsAsTheDisruptionControllerDoes(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	// n1 is drained first: the dearer.
	twoNodes := []runtime.Object{node("n1", "2"), node("n2", "1")}
	web := st.MakeDeployment("web", 2, webPods("1"))
	terminating := func() *v1.Pod {
		p := st.MakePod().Name("old").Node("n1").Req(map[v1.ResourceName]string{"cpu": "1"}).Obj()
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "old", UID: "old", Controller: &yes}}
		at := metav1.NewTime(now.Add(-5 * time.Second))
		p.DeletionTimestamp = &at
		return p
	}
	coredns := func() *v1.Pod {
		p := st.MakePod().Name("coredns").Namespace("kube-system").Node("n1").Req(map[v1.ResourceName]string{"cpu": "100m"}).Obj()
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "coredns", UID: "coredns", Controller: &yes}}
		return p
	}
	tests := []struct {
		name       string
		objs       []runtime.Object
		rules      questions.Rules
		wantRemove []string
		wantReason string
	}{
		{name: "without a budget one of two half-empty nodes goes",
			objs: []runtime.Object{web}, wantRemove: []string{"n1"}},
		{name: "a budget with an empty selector guards every pod of its namespace",
			objs: []runtime.Object{web, pdbFor("default", &metav1.LabelSelector{}, 0)}, wantRemove: []string{}, wantReason: "PodDisruptionBudget default/web allows no disruption"},
		{name: "a budget written without a namespace guards the default namespace",
			objs: []runtime.Object{web, pdbFor("", appWeb, 0)}, wantRemove: []string{}, wantReason: "PodDisruptionBudget default/web allows no disruption"},
		{name: "the pods pending before the drains count against the budget",
			// web's 2 pods run and big's one pends: 3 expected, 2 desired
			// with maxUnavailable 1, 2 healthy, so no disruption allowed.
			objs:       []runtime.Object{web, st.MakeDeployment("big", 1, webPods("100")), pdbFor("default", appWeb, 1)},
			wantRemove: []string{}, wantReason: "2 healthy, 2 desired of 3 expected"},
		{name: "a kube-system pod without a budget keeps its node for cluster-autoscaler",
			objs: []runtime.Object{coredns()}, wantRemove: []string{"n2"}, wantReason: "non-pdb-assigned kube-system pod present: coredns"},
		{name: "a kube-system pod without a budget moves for Karpenter",
			objs: []runtime.Object{coredns()}, rules: questions.RulesKarpenter, wantRemove: []string{"n1"}},
		{name: "a pod terminating for seconds gets a replacement that schedules",
			objs: []runtime.Object{terminating()}, wantRemove: []string{"n1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append(slices.Clone(twoNodes), tt.objs...)
			res, err := questions.Consolidate(context.Background(), func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }, worldMaker(t),
				questions.ConsolidateOptions{Rules: tt.rules, Now: now}, nil)
			if err != nil {
				t.Fatal(err)
			}
			reasons := ""
			for _, k := range res.Keep {
				reasons += k.Node + ": " + k.Reason + "\n"
			}
			if !slices.Equal(res.Remove, tt.wantRemove) || !strings.Contains(reasons, tt.wantReason) {
				t.Errorf("removes %v, want %v; kept:\n%s\nwant a reason with %q", res.Remove, tt.wantRemove, reasons, tt.wantReason)
			}
		})
	}
}

func TestConsolidateSaysWhichRemovedNodesHaveNoPrice(t *testing.T) {
	objs := []runtime.Object{node("n1", "0.5"), node("n2", ""), node("n3", "0.25")}
	res, err := questions.Consolidate(context.Background(), func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }, worldMaker(t), questions.ConsolidateOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Remove, []string{"n1", "n3", "n2"}) || !slices.Equal(res.Unpriced, []string{"n2"}) || res.HourlySaving != 0.75 {
		t.Errorf("remove %v saving %g, unpriced %v; want [n1 n3 n2] saving 0.75, unpriced [n2]", res.Remove, res.HourlySaving, res.Unpriced)
	}
}

// TestConsolidateDrainsTwoPodsOfABudgetThatAllowsOne: six half-idle
// 4-CPU nodes, each with one 1-CPU web replica; a budget allows one
// disruption and one replica is annotated safe-to-evict "false". Four
// nodes can go: their four pods fit on the ledger's node and one other
// (three CPUs free each). After the first drains a node holds two web
// pods; neither project sums them against the budget (each reads the
// disruptions allowed pod by pod, and its drain retries the refused
// eviction until the first replacement runs), so that node goes too.
// Summing them kept it: 3 nodes.
func TestConsolidateDrainsTwoPodsOfABudgetThatAllowsOne(t *testing.T) {
	var objs []runtime.Object
	for i := range 6 {
		name := "n" + string(rune('1'+i))
		objs = append(objs, node(name, "1"))
		p := webPods("1").Name("web-" + name).Node(name).Obj()
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "web", Controller: &yes}}
		if i == 5 {
			p.Annotations = map[string]string{questions.SafeToEvictAnnotation: "false"}
		}
		objs = append(objs, p)
	}
	objs = append(objs, pdbFor("default", appWeb, 1))
	for _, rules := range []questions.Rules{questions.RulesClusterAutoscaler, questions.RulesKarpenter} {
		t.Run(string(rules), func(t *testing.T) {
			res, err := questions.Consolidate(context.Background(), func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }, worldMaker(t),
				questions.ConsolidateOptions{Rules: rules}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Remove) != 4 {
				t.Errorf("removes %v, want 4 nodes; keeps %+v", res.Remove, res.Keep)
			}
		})
	}
}

// TestConsolidatePlansHoldWithEveryNodeOfThePlanCordonedFromTheStart:
// cluster-autoscaler and Karpenter cordon every node they will remove
// before the first drain. Here a drain of a alone puts its 2-CPU pod z-a
// on b (the least allocated node), and b's drain then places a-b (3 CPU)
// on c and z-a on d: one at a time, a and b both go. With b cordoned
// from the start, z-a goes to c, the least allocated of the nodes left,
// and a-b then fits nowhere: the plan that removes both would stall on
// b's drain. Nine full nodes, each pod pinned to its own, make it a
// question too large for the exact search (which finds a, c and d), so
// the search one node at a time answers and the whole plan's check cuts
// it to a, b kept saying why.
func TestConsolidatePlansHoldWithEveryNodeOfThePlanCordonedFromTheStart(t *testing.T) {
	objs := []runtime.Object{
		sizedNode("a", "4", "3"), sizedNode("b", "16", "2"), sizedNode("c", "4", "1"), sizedNode("d", "4", "1"),
		ownedPod("z-a", "a", "2"), ownedPod("a-b", "b", "3"), ownedPod("c1", "c", "1"), ownedPod("d1", "d", "2"),
	}
	for i := range 9 {
		name := fmt.Sprintf("full-%d", i)
		p := ownedPod("pinned-"+name, name, "4")
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
		objs = append(objs, sizedNode(name, "4", "0.5"), p)
	}
	res, err := questions.Consolidate(context.Background(), func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }, worldMaker(t), questions.ConsolidateOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Remove, []string{"a"}) {
		t.Errorf("removes %v, want [a]; keeps %+v", res.Remove, res.Keep)
	}
	for _, k := range res.Keep {
		if k.Node == "b" && !strings.Contains(k.Reason, "not with the plan's 1 nodes before it cordoned together") {
			t.Errorf("b kept for %q, want the plan's cordoned nodes named", k.Reason)
		}
	}
}

// TestConsolidateAnswersASmallQuestionWithTheSubsetThatSavesTheMost:
// the cluster above without the full nodes: one node at a time a goes
// and then nothing else does, 3/h; the exact search drains a, c and d
// together (their pods all fit b), 5/h.
func TestConsolidateAnswersASmallQuestionWithTheSubsetThatSavesTheMost(t *testing.T) {
	objs := []runtime.Object{
		sizedNode("a", "4", "3"), sizedNode("b", "16", "2"), sizedNode("c", "4", "1"), sizedNode("d", "4", "1"),
		ownedPod("z-a", "a", "2"), ownedPod("a-b", "b", "3"), ownedPod("c1", "c", "1"), ownedPod("d1", "d", "2"),
	}
	res, err := questions.Consolidate(context.Background(), func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }, worldMaker(t), questions.ConsolidateOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Remove, []string{"a", "c", "d"}) || res.HourlySaving != 5 {
		t.Errorf("removes %v saving %g, want [a c d] saving 5; keeps %+v", res.Remove, res.HourlySaving, res.Keep)
	}
}

// TestConsolidateCountsPodSlotsBeforeItSimulates: nodes of 3 pod slots,
// each holding 2 small pods: a drain's pods have the CPU elsewhere but
// not the slots, which the cheap check says without a simulation.
func TestConsolidateCountsPodSlotsBeforeItSimulates(t *testing.T) {
	var objs []runtime.Object
	for i := range 2 {
		name := "n" + string(rune('1'+i))
		n := node(name, "1")
		n.Status.Allocatable[v1.ResourcePods] = resource.MustParse("3")
		n.Status.Capacity[v1.ResourcePods] = resource.MustParse("3")
		objs = append(objs, n)
		for j := range 2 {
			p := webPods("100m").Name(fmt.Sprintf("p-%s-%d", name, j)).Node(name).Obj()
			yes := true
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "web", Controller: &yes}}
			objs = append(objs, p)
		}
	}
	res, err := questions.Consolidate(context.Background(), func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }, worldMaker(t), questions.ConsolidateOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Remove) != 0 || len(res.Keep) != 2 {
		t.Fatalf("removes %v, keeps %+v; want both kept", res.Remove, res.Keep)
	}
	for _, k := range res.Keep {
		if !strings.Contains(k.Reason, "its 2 pods need as many pod slots; the other nodes have 1 free") {
			t.Errorf("node %s kept for %q, want the pod slots", k.Node, k.Reason)
		}
	}
}

// TestConsolidateSaysWhereAMovedPodRunsNow: a's 2-CPU pod moves to b
// when a goes; b is then kept because that pod fits nowhere else (c and
// d have 1.5 CPU free each). The reason names the pod, which runs on a
// until the plan drains it.
func TestConsolidateSaysWhereAMovedPodRunsNow(t *testing.T) {
	objs := []runtime.Object{node("a", "2"), node("b", "1"), node("c", "1"), node("d", "1"),
		ownedPod("x-a", "a", "2"), ownedPod("b1", "b", "1"), ownedPod("c1", "c", "2500m"), ownedPod("d1", "d", "2500m")}
	res, err := questions.Consolidate(context.Background(), func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }, worldMaker(t), questions.ConsolidateOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Remove, []string{"a"}) {
		t.Fatalf("removes %v, want [a]; keeps %+v", res.Remove, res.Keep)
	}
	i := slices.IndexFunc(res.Keep, func(k questions.KeptNode) bool { return k.Node == "b" })
	if i < 0 {
		t.Fatalf("b is not kept: %+v", res.Keep)
	}
	if k := res.Keep[i]; k.Pod != "default/x-a" || !strings.HasSuffix(k.Reason, "(the pod runs on a now: the plan's drain of a moves it here)") {
		t.Errorf("b kept by %s for %q, want x-a and where it runs now", k.Pod, k.Reason)
	}
}

// sizedNode is node with cpu CPUs, labelled with its hostname.
func sizedNode(name, cpu, price string) *v1.Node {
	n := node(name, price)
	n.Status.Capacity[v1.ResourceCPU] = resource.MustParse(cpu)
	n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse(cpu)
	n.Labels = map[string]string{"kubernetes.io/hostname": name}
	return n
}

// ownedPod is a pod bound to node requesting cpu, its own ReplicaSet's
// (of its name, not in the input).
func ownedPod(name, node, cpu string) *v1.Pod {
	p := st.MakePod().Name(name).Node(node).Req(map[v1.ResourceName]string{"cpu": cpu}).Obj()
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, UID: types.UID(name), Controller: &yes}}
	return p
}
