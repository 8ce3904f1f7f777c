package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/internal/testing/clustergen"
)

type consolidateAnswer struct {
	Remove       []string
	HourlySaving float64
	Keep         []struct{ Node, Pod, Reason string }
}

func consolidate(t *testing.T, file string) consolidateAnswer {
	t.Helper()
	code, out, errOut := run(t, "consolidate", "-f", file, "-o", "json")
	if code != 0 {
		t.Fatalf("consolidate: exit %d: %s", code, errOut)
	}
	var a consolidateAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// withoutNodes is a manifest of objs without the nodes named, their pods
// unbound as their controllers' replacements would be.
func withoutNodes(t *testing.T, objs []runtime.Object, gone ...string) string {
	t.Helper()
	drop := map[string]bool{}
	for _, n := range gone {
		drop[n] = true
	}
	var keep []runtime.Object
	for _, o := range objs {
		switch x := o.(type) {
		case *v1.Node:
			if drop[x.Name] {
				continue
			}
		case *v1.Pod:
			if drop[x.Spec.NodeName] {
				x = x.DeepCopy()
				x.Spec.NodeName = ""
				o = x
			}
		}
		keep = append(keep, o)
	}
	return writeFile(t, "without.yaml", simtest.Manifest(t, keep...))
}

// The answer holds when simulate, not consolidate, runs the cluster
// without the nodes it removes: no pod pends that did not before; every
// node is removed or kept with a pod and a reason; and a node kept for
// lack of room is one whose removal, with the others, leaves a pod out.
func TestConsolidateAnswerIsVerifiedBySimulation(t *testing.T) {
	objs := clustergen.Generate(clustergen.Options{Nodes: 30, Pods: 300, RunningFraction: 0.6, Seed: 9, Owned: true})
	gen := writeFile(t, "gen.yaml", simtest.Manifest(t, objs...))
	a := consolidate(t, gen)
	if len(a.Remove) == 0 {
		t.Fatal("nothing removed: the check is vacuous")
	}
	var nodes []string
	for _, o := range objs {
		if n, ok := o.(*v1.Node); ok {
			nodes = append(nodes, n.Name)
		}
	}
	seen := map[string]int{}
	for _, n := range a.Remove {
		seen[n]++
	}
	for _, k := range a.Keep {
		seen[k.Node]++
		if k.Pod == "" || k.Reason == "" {
			t.Errorf("node %s is kept without a pod or a reason: %+v", k.Node, k)
		}
	}
	for _, n := range nodes {
		if seen[n] != 1 {
			t.Errorf("node %s is answered %d times, want once (removed or kept)", n, seen[n])
		}
	}
	before := len(pendingPods(t, gen))
	if after := pendingPods(t, withoutNodes(t, objs, a.Remove...)); len(after) > before {
		t.Errorf("without the %d removed nodes %d pods pend, %d before: %v", len(a.Remove), len(after), before, after)
	}
	checked := 0
	for _, k := range a.Keep {
		if !strings.HasPrefix(k.Reason, "with the node drained") || checked == 3 {
			continue
		}
		checked++
		if after := pendingPods(t, withoutNodes(t, objs, append(append([]string(nil), a.Remove...), k.Node)...)); len(after) <= before {
			t.Errorf("node %s is kept (%s), but without it too no more pods pend", k.Node, k.Reason)
		}
	}
	if checked == 0 {
		t.Error("no node was kept for lack of room: that check is vacuous")
	}
}

func TestConsolidateTheExample(t *testing.T) {
	const example = "../../../examples/consolidate.yaml"
	a := consolidate(t, example)
	want := consolidateAnswer{Remove: []string{"general-a-1", "general-a-2", "general-b-1"}, HourlySaving: 1.152}
	if strings.Join(a.Remove, ",") != strings.Join(want.Remove, ",") || a.HourlySaving != want.HourlySaving {
		t.Errorf("removes %v saving %g, want %v saving %g", a.Remove, a.HourlySaving, want.Remove, want.HourlySaving)
	}
	reasons := map[string]string{}
	for _, k := range a.Keep {
		reasons[k.Node] = k.Pod + ": " + k.Reason
	}
	for node, want := range map[string]string{
		"general-c-1": "default/debug: default/debug is not replicated (the pod has no controller",
		"memory-b-1":  `pod with local storage present: cache-5dbc56ff8d-bzv9v (emptyDir volume "scratch"`,
	} {
		if !strings.Contains(reasons[node], want) {
			t.Errorf("node %s kept for %q, want %q", node, reasons[node], want)
		}
	}
	// Without the removed nodes, simulate places every pod of the example.
	manifest, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(manifest), -1) {
		removed := false
		for _, n := range a.Remove {
			removed = removed || strings.Contains(d, "kind: Node") && strings.Contains(d, "name: "+n+"\n")
		}
		if !removed {
			keep = append(keep, d)
		}
	}
	if pending := pendingPods(t, writeFile(t, "rest.yaml", strings.Join(keep, "\n---\n"))); len(pending) > 0 {
		t.Errorf("without the removed nodes these pods pend: %v", pending)
	}
}

// TestConsolidateHonoursDisruptionBudgets: four nodes with room for each
// other's pods, one web pod on each. Without a budget the drains empty
// three of them; a budget that allows no disruption of web keeps every
// node, each with its web pod and the budget as the reason. One that
// allows a single disruption lets every drain go: the rules read the
// disruptions allowed pod by pod, and a drain's evictions are retried as
// its replacements start (as cluster-autoscaler's, Karpenter's and
// kubectl drain's are), so the third node's two web pods go one after
// the other.
func TestConsolidateHonoursDisruptionBudgets(t *testing.T) {
	var base []runtime.Object
	for i := 0; i < 4; i++ {
		name := "n" + string(rune('1'+i))
		base = append(base, st.MakeNode().Name(name).Label("kubernetes.io/hostname", name).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "10"}).Obj())
		pod := st.MakePod().Name("web-"+name).UID("web-"+name).Label("app", "web").Node(name).
			Container(map[v1.ResourceName]string{v1.ResourceCPU: "500m"}).Obj()
		yes := true
		pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "web", Controller: &yes}}
		base = append(base, pod)
	}
	budget := func(minAvailable int) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(int32(minAvailable))),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	}
	tests := []struct {
		name        string
		pdb         *policyv1.PodDisruptionBudget
		wantRemoved int
	}{
		{name: "without a budget three of the four nodes go", wantRemoved: 3},
		{name: "a budget allowing no disruption keeps every node", pdb: budget(4), wantRemoved: 0},
		{name: "a budget allowing one disruption lets every drain go, its evictions one after another", pdb: budget(3), wantRemoved: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append([]runtime.Object(nil), base...)
			if tt.pdb != nil {
				objs = append(objs, tt.pdb)
			}
			a := consolidate(t, writeFile(t, "c.yaml", simtest.Manifest(t, objs...)))
			if len(a.Remove) != tt.wantRemoved {
				t.Errorf("removes %v, want %d nodes; keeps %+v", a.Remove, tt.wantRemoved, a.Keep)
			}
			if tt.pdb == nil || tt.wantRemoved > 0 {
				return
			}
			if len(a.Keep) != 4-tt.wantRemoved {
				t.Fatalf("keeps %+v, want the other %d nodes", a.Keep, 4-tt.wantRemoved)
			}
			for _, k := range a.Keep {
				if !strings.HasPrefix(k.Pod, "default/web-") || !strings.Contains(k.Reason, "PodDisruptionBudget default/web") {
					t.Errorf("node %s kept by %s (%s), want its web pod and the budget", k.Node, k.Pod, k.Reason)
				}
			}
		})
	}
}

// TestConsolidateReadsTheClusterFromStandardInput: consolidate reads its
// input once, so kubesched snapshot | kubesched consolidate -f - works
// and answers as with the file.
func TestConsolidateReadsTheClusterFromStandardInput(t *testing.T) {
	const example = "../../../examples/consolidate.yaml"
	manifest, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	_, fromFile, _ := run(t, "consolidate", "-f", example, "-o", "json")
	var out, errOut bytes.Buffer
	cmd := newCommand(streams{out: &out, errOut: &errOut, in: bytes.NewReader(manifest)})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if code := Run(context.Background(), cmd, []string{"consolidate", "-f", "-", "-o", "json"}); code != 0 {
		t.Fatalf("consolidate -f - exited %d: %s", code, errOut.String())
	}
	if out.String() != fromFile || !strings.Contains(fromFile, `"remove"`) {
		t.Errorf("consolidate -f - answered\n%s\nwith the file\n%s", out.String(), fromFile)
	}
}

func TestConsolidateRefusesANodePriceThatIsNotAPrice(t *testing.T) {
	priced := func(price string) string {
		n := st.MakeNode().Name("n1").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "10"}).Obj()
		n.Annotations = map[string]string{"simulation.kubesched.io/hourly-cost": price}
		return writeObjects(t, "priced.yaml", n)
	}
	for _, tc := range []struct{ name, price, want string }{
		{name: "a price with a currency sign is refused, naming the file, the node and the annotation", price: "$0.38",
			want: `document 1 (Node n1): metadata.annotations[simulation.kubesched.io/hourly-cost]: Invalid value: "$0.38"`},
		{name: "a negative price is refused", price: "-1", want: `Invalid value: "-1": want a decimal price per hour, 0 or more`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := priced(tc.price)
			code, _, errOut := run(t, "consolidate", "-f", file)
			if code == 0 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, file) {
				t.Errorf("exit %d, stderr %q; want non-zero, the file and %q", code, errOut, tc.want)
			}
		})
	}
}

func TestConsolidateSaysWhichNodesACheaperOneReplaces(t *testing.T) {
	node := func(name, cpu, price string) *v1.Node {
		n := st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cpu, v1.ResourceMemory: "16Gi", v1.ResourcePods: "20"}).Obj()
		n.Annotations = map[string]string{"simulation.kubesched.io/hourly-cost": price}
		return n
	}
	pod := func(name, node string) *v1.Pod {
		p := st.MakePod().Name(name).Node(node).Container(map[v1.ResourceName]string{v1.ResourceCPU: "3"}).Obj()
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: name, UID: types.UID(name), Controller: &yes}}
		return p
	}
	cluster := writeObjects(t, "cluster.yaml", node("a", "4", "1"), node("b", "4", "1"), pod("pa", "a"), pod("pb", "b"))
	nodeTypes := writeObjects(t, "types.yaml", node("big", "8", "1.5"))
	code, out, errOut := run(t, "consolidate", "-f", cluster, "--node-types", nodeTypes)
	for _, want := range []string{
		"No node can be removed with every pod still running.",
		"Replace, after the removals, each new node joining before its nodes are drained",
		"2 node(s) ([a b]) by one big at 1.5 per hour, saving 0.5 per hour",
		"Saving 0.5 per hour in all.",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("exit %d, output lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
}
