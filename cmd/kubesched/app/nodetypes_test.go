package app

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/internal/testing/clustergen"
)

type nodeTypesAnswer struct {
	Add []struct {
		Type, Zone string
		Count      int
		HourlyCost float64
	}
	HourlyCost float64
	Scheduled  int
	Spared     int
	Pending    []struct{ Pod, Reason string }
}

// addedNodes writes the answer's nodes as a manifest, one fewer of the
// entry at skip (-1: none).
func addedNodes(t *testing.T, typesFile string, a nodeTypesAnswer, skip int) string {
	t.Helper()
	c, err := loading.Load([]string{typesFile})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*v1.Node{}
	for _, n := range c.Nodes {
		byName[n.Name] = n
	}
	var objs []runtime.Object
	for i, e := range a.Add {
		count := e.Count
		if i == skip {
			count--
		}
		for k := 0; k < count; k++ {
			n := byName[e.Type].DeepCopy()
			n.Name = fmt.Sprintf("verify-%s-%s-%d", e.Type, e.Zone, k)
			n.Labels[v1.LabelHostname] = n.Name
			if e.Zone != "" {
				n.Labels[v1.LabelTopologyZone] = e.Zone
			}
			objs = append(objs, n)
		}
	}
	if len(objs) == 0 {
		return writeFile(t, "none.yaml", "")
	}
	return writeFile(t, "added.yaml", simtest.Manifest(t, objs...))
}

// pendingPods runs simulate and returns the pods it leaves unschedulable.
func pendingPods(t *testing.T, files ...string) []string {
	t.Helper()
	pending, _ := outcomes(t, files...)
	return pending
}

// outcomes runs simulate and returns the pods it leaves unschedulable and
// those it preempts.
func outcomes(t *testing.T, files ...string) (pending, preempted []string) {
	t.Helper()
	args := []string{"simulate", "-o", "json"}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	code, out, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, errOut)
	}
	var r struct {
		Pods []struct{ Namespace, Name, Status string }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Pods {
		switch p.Status {
		case "Unschedulable":
			pending = append(pending, p.Namespace+"/"+p.Name)
		case "Preempted":
			preempted = append(preempted, p.Namespace+"/"+p.Name)
		}
	}
	return pending, preempted
}

// The answer is checked by simulate, not by the search's own runs: with
// its nodes added only the pods it names stay pending, and with any one of
// them removed more do.
func TestNodeTypesAnswerIsVerifiedBySimulation(t *testing.T) {
	gen := clustergen.Options{Nodes: 30, Pods: 400, RunningFraction: 0.5, Seed: 5}
	genFile := writeFile(t, "gen.yaml", simtest.Manifest(t, clustergen.Generate(gen)...))
	tests := []struct {
		name    string
		cluster string
	}{
		{name: "the example cluster with the example node types", cluster: "../../../examples/cluster.yaml"},
		{name: "a generated cluster under pressure with the example node types", cluster: genFile},
	}
	const types = "../../../examples/node-types.yaml"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, preemptedBefore := outcomes(t, tt.cluster)
			if len(before) == 0 {
				t.Fatal("nothing pending: the question is vacuous")
			}
			code, out, errOut := run(t, "capacity", "-f", tt.cluster, "--node-types", types, "-o", "json")
			if code != 0 {
				t.Fatalf("capacity --node-types: exit %d: %s", code, errOut)
			}
			var a nodeTypesAnswer
			if err := json.Unmarshal([]byte(out), &a); err != nil {
				t.Fatal(err)
			}
			if len(a.Add) == 0 {
				t.Fatalf("no node added: %s", out)
			}
			for _, p := range a.Pending {
				if p.Reason == "" {
					t.Errorf("pod %s stays pending without a reason", p.Pod)
				}
			}
			with, preemptedWith := outcomes(t, tt.cluster, addedNodes(t, types, a, -1))
			if got := len(preemptedBefore) - len(preemptedWith); got != a.Spared || len(preemptedWith) != 0 {
				t.Errorf("with the answer's nodes %d pods are preempted (%v), %d fewer than without; the answer says it spares %d", len(preemptedWith), preemptedWith, got, a.Spared)
			}
			if len(with) != len(a.Pending) {
				t.Errorf("with the answer's nodes %d pods pend (%v), the answer says %d", len(with), with, len(a.Pending))
			}
			if got := len(before) - len(with); got != a.Scheduled {
				t.Errorf("the answer's nodes schedule %d pending pods, it says %d", got, a.Scheduled)
			}
			for i, e := range a.Add {
				if fewer, preempted := outcomes(t, tt.cluster, addedNodes(t, types, a, i)); len(fewer)+len(preempted) <= len(with)+len(preemptedWith) {
					t.Errorf("with one %s node fewer in %s, %d pods pend and %d are preempted, no more than with it: the answer is not minimal", e.Type, e.Zone, len(fewer), len(preempted))
				}
			}
		})
	}
}

// With --workload, the nodes are sized for that workload's pods: with
// them added, none of its pods pends.
func TestNodeTypesForAWorkloadScheduleItsPods(t *testing.T) {
	const cluster, types = "../../../examples/cluster.yaml", "../../../examples/node-types.yaml"
	manifest, err := os.ReadFile("../../../examples/capacity-workload.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wl := writeFile(t, "api.yaml", strings.Replace(string(manifest), "replicas: 2", "replicas: 150", 1))
	apiPending := func(pending []string) (n int) {
		for _, p := range pending {
			if strings.HasPrefix(p, "shop/api-") {
				n++
			}
		}
		return n
	}
	if n := apiPending(pendingPods(t, cluster, wl)); n == 0 {
		t.Fatal("no pod of the workload pends: the question is vacuous")
	}
	code, out, errOut := run(t, "capacity", "-f", cluster, "--node-types", types, "--workload", wl, "-o", "json")
	if code != 0 {
		t.Fatalf("capacity --node-types --workload: exit %d: %s", code, errOut)
	}
	var a nodeTypesAnswer
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if n := apiPending(pendingPods(t, cluster, wl, addedNodes(t, types, a, -1))); n != 0 {
		t.Errorf("with the answer's nodes %d pods of the workload pend: %s", n, out)
	}
	for i, e := range a.Add {
		if n := apiPending(pendingPods(t, cluster, wl, addedNodes(t, types, a, i))); n == 0 {
			t.Errorf("with one %s node fewer in %s, no pod of the workload pends: the answer is not minimal", e.Type, e.Zone)
		}
	}
}

func TestNodeTypesRefusesBadTypes(t *testing.T) {
	node := func(annotations string) string {
		return writeFile(t, "types.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: small\n  annotations: {"+annotations+"}\nstatus:\n  allocatable: {cpu: \"1\", memory: 1Gi, pods: \"10\"}\n")
	}
	zoned := func(zone, annotations string) string {
		return writeFile(t, "zoned-types.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: small\n  labels: {topology.kubernetes.io/zone: "+zone+"}\n  annotations: {"+annotations+"}\nstatus:\n  allocatable: {cpu: \"1\", memory: 1Gi, pods: \"10\"}\n")
	}
	tests := []struct {
		name, types, want string
	}{
		{name: "a type without a price is refused, naming the file, the node and the annotation",
			types: node(""), want: `document 1 (Node small): metadata.annotations[simulation.kubesched.io/hourly-cost]: Required value`},
		{name: "a price that is not a decimal is refused",
			types: node(`simulation.kubesched.io/hourly-cost: "cheap"`), want: `metadata.annotations[simulation.kubesched.io/hourly-cost]: Invalid value: "cheap"`},
		{name: "a negative price is refused",
			types: node(`simulation.kubesched.io/hourly-cost: "-1"`), want: `Invalid value: "-1": want a decimal price per hour, 0 or more`},
		{name: "a negative limit per zone is refused",
			types: node(`simulation.kubesched.io/hourly-cost: "1", simulation.kubesched.io/max-per-zone: "-2"`), want: `metadata.annotations[simulation.kubesched.io/max-per-zone]: Invalid value: "-2"`},
		{name: "a zone listed twice is refused: it would double the type's limit there",
			types: node(`simulation.kubesched.io/hourly-cost: "1", simulation.kubesched.io/zones: "a,b,a"`), want: `metadata.annotations[simulation.kubesched.io/zones]: Duplicate value: "a"`},
		{name: "a zone label the zones annotation contradicts is refused",
			types: zoned("c", `simulation.kubesched.io/hourly-cost: "1", simulation.kubesched.io/zones: "a,b"`),
			want:  `metadata.labels[topology.kubernetes.io/zone]: Invalid value: "c": contradicts simulation.kubesched.io/zones "a,b"`},
		{name: "a file without a Node is refused",
			types: writeFile(t, "empty-types.yaml", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"), want: "holds no Node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := run(t, "capacity", "-f", "../../../examples/cluster.yaml", "--node-types", tt.types)
			if code == 0 || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, tt.types) {
				t.Errorf("exit %d, stderr %q; want non-zero, the file and %q", code, errOut, tt.want)
			}
		})
	}
}

// The table's PODS column counts every pod the simulation put on the new
// nodes; when that is more than the pods they are added for, the answer
// says so.
func TestNodeTypesTableSaysWhatItsPodsColumnCounts(t *testing.T) {
	cpu := func(q string) map[v1.ResourceName]string {
		return map[v1.ResourceName]string{v1.ResourceCPU: q, v1.ResourceMemory: "1Gi"}
	}
	wide := st.MakeNode().Name("wide").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "10"}).Obj()
	wide.Annotations = map[string]string{"simulation.kubesched.io/hourly-cost": "1"}
	types := writeObjects(t, "types.yaml", wide)
	old := func() *v1.Node {
		return st.MakeNode().Name("old").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi", v1.ResourcePods: "10"}).Obj()
	}
	const note = "PODS counts every pod the simulation placed on the new nodes (2, DaemonSet pods aside), not only the 1 they are added for"
	tests := []struct {
		name     string
		objs     []runtime.Object
		wantNote bool
	}{
		{name: "a pending pod that fits on an existing node lands on the emptier new one, and the note says PODS counts it",
			objs:     []runtime.Object{old(), st.MakePod().Name("fits").Req(cpu("1")).Obj(), st.MakePod().Name("big").Req(cpu("3")).Obj()},
			wantNote: true},
		{name: "when only the pod the node is added for lands there, there is no note",
			objs: []runtime.Object{old(), st.MakePod().Name("running").Node("old").Req(cpu("2")).Obj(), st.MakePod().Name("big").Req(cpu("3")).Obj()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, "capacity", "-f", writeObjects(t, "cluster.yaml", tt.objs...), "--node-types", types)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if !strings.Contains(out, "Add 1 node (1 per hour): 1 pending pod scheduled, checked by simulation.") {
				t.Fatalf("not the one-node answer the case is built for:\n%s", out)
			}
			if got := strings.Contains(out, note); got != tt.wantNote {
				t.Errorf("note shown: %v, want %v:\n%s", got, tt.wantNote, out)
			}
			if !tt.wantNote && strings.Contains(out, "PODS counts") {
				t.Errorf("a note with other figures:\n%s", out)
			}
		})
	}
}

func TestCapacityRefusesLimitsOfNoNode(t *testing.T) {
	types := "../../../examples/node-types.yaml"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "--max-nodes -1 is refused, not a panic", args: []string{"--node-types", types, "--max-nodes", "-1"}, want: "--max-nodes: Invalid value: -1: must be 1 or more"},
		{name: "--max-nodes 0 is refused, not 'no node type can run' every pod", args: []string{"--node-types", types, "--max-nodes", "0"}, want: "--max-nodes: Invalid value: 0: must be 1 or more"},
		{name: "--max-nodes 0 with --add-nodes too", args: []string{"--add-nodes", "../../../examples/gpu-node.yaml", "--max-nodes", "0"}, want: "--max-nodes: Invalid value: 0"},
		{name: "--max 0 is refused", args: []string{"--pod", "../../../examples/pending-pod.yaml", "--max", "0"}, want: "--max: Invalid value: 0: must be 1 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := run(t, append([]string{"capacity", "-f", "../../../examples/cluster.yaml"}, tt.args...)...)
			if code == 0 || !strings.Contains(errOut, tt.want) || strings.Contains(errOut, "panic") {
				t.Errorf("exit %d, stderr %q; want non-zero and %q", code, errOut, tt.want)
			}
		})
	}
}
