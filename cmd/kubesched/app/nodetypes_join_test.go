package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/questions"
	st "github.com/kubesched/kubesched/internal/testing"
)

// scenarioCreating is a timeline that creates nodes at a virtual time.
func scenarioCreating(t *testing.T, at string, nodes ...*v1.Node) runtime.Object {
	t.Helper()
	var create []interface{}
	for _, n := range nodes {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(n)
		if err != nil {
			t.Fatal(err)
		}
		m["apiVersion"], m["kind"] = "v1", "Node"
		create = append(create, m)
	}
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "simulation.kubesched.io/v1alpha1",
		"kind":       "Scenario",
		"metadata":   map[string]interface{}{"name": "nodes-join"},
		"spec": map[string]interface{}{"steps": []interface{}{
			map[string]interface{}{"at": at, "name": "the new nodes join", "create": create},
		}},
	}}
}

// nodeTypesRun runs capacity --node-types with --nodes-join join:
// its table, and its JSON answer.
func nodeTypesRun(t *testing.T, cluster, types, join string) (table string, res questions.NodeTypesResult) {
	t.Helper()
	args := []string{"capacity", "-f", cluster, "--node-types", types, "--nodes-join", join}
	code, table, errOut := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, out, errOut := run(t, append(args, "-o", "json")...)
	if code != 0 {
		t.Fatalf("-o json: exit %d: %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	return table, res
}

// --nodes-join says when the answer's nodes join: settled answers the
// nodes a running cluster needs once the scheduler has placed what its
// nodes take (checked by a timeline that adds them then), start those it
// needs there from the start (checked by simulate with them added). Six
// 1-CPU pods spread over zones (maxSkew 1) and an existing 4-CPU node in
// zone a; the type is a 2-CPU node offered in zone b. Settled: four pods
// run in a, and one new node takes the two left (a 4, b 2: each placed
// where the skew allowed it). From the start: the pods alternate, b's
// node holds two, and the sixth would make a 4 against b 2: two nodes.
func TestNodesJoinSaysWhenTheAnswersNodesJoin(t *testing.T) {
	cpu := func(q string) map[v1.ResourceName]string {
		return map[v1.ResourceName]string{v1.ResourceCPU: q, v1.ResourceMemory: "1Gi"}
	}
	objs := []runtime.Object{st.MakeNode().Name("old").Label(v1.LabelTopologyZone, "a").
		Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "16Gi", v1.ResourcePods: "110"}).Obj()}
	for i := range 6 {
		objs = append(objs, st.MakePod().Name(fmt.Sprintf("web-%d", i)).Label("app", "web").Req(cpu("1")).
			SpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule, "web").Obj())
	}
	cluster := writeObjects(t, "cluster.yaml", objs...)
	small := func(name string) *v1.Node {
		return st.MakeNode().Name(name).Label(v1.LabelTopologyZone, "b").
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj()
	}
	tmpl := small("small")
	tmpl.Annotations = map[string]string{"simulation.kubesched.io/hourly-cost": "0.20"}
	types := writeObjects(t, "types.yaml", tmpl)
	// scheduled counts the pods simulate places.
	scheduled := func(t *testing.T, args ...string) int {
		t.Helper()
		code, out, errOut := run(t, append([]string{"simulate", "-o", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("simulate: exit %d: %s", code, errOut)
		}
		var r struct {
			Pods []struct{ Status string } `json:"pods"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range r.Pods {
			if p.Status == "Scheduled" {
				n++
			}
		}
		return n
	}
	tests := []struct {
		name     string
		join     string
		wantLine string
		wantJSON string
		// check places the answer's nodes (count) as they join, and
		// one fewer, and returns the pods scheduled.
		check func(t *testing.T, count int) int
	}{
		{
			name: "settled answers one node, and a timeline adding it once the rest runs places every pod (none does not)",
			join: "settled", wantLine: "Add 1 node (0.2 per hour): 2 pending pods scheduled, checked by simulation of the cluster as the scheduler leaves it, the new nodes joining it then (--nodes-join settled).",
			wantJSON: "settled",
			check: func(t *testing.T, count int) int {
				var nodes []*v1.Node
				for i := range count {
					nodes = append(nodes, small(fmt.Sprintf("small-%d", i)))
				}
				return scheduled(t, "-f", cluster, "-f", writeObjects(t, "scenario.yaml", scenarioCreating(t, "1m", nodes...)))
			},
		},
		{
			name: "start answers two nodes, and simulate with them added places every pod (one does not)",
			join: "start", wantLine: "Add 2 nodes (0.4 per hour): 2 pending pods scheduled, checked by simulation.",
			wantJSON: "start",
			check: func(t *testing.T, count int) int {
				objs := []runtime.Object{}
				for i := range count {
					objs = append(objs, small(fmt.Sprintf("small-%d", i)))
				}
				args := []string{"-f", cluster}
				if len(objs) > 0 {
					args = append(args, "-f", writeObjects(t, "added.yaml", objs...))
				}
				return scheduled(t, args...)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, res := nodeTypesRun(t, cluster, types, tt.join)
			if !strings.Contains(out, tt.wantLine) {
				t.Fatalf("no %q in:\n%s", tt.wantLine, out)
			}
			if res.NodesJoin != tt.wantJSON || len(res.Add) != 1 {
				t.Fatalf("nodesJoin %q, add %v: want %q and one type", res.NodesJoin, res.Add, tt.wantJSON)
			}
			count := res.Add[0].Count
			if got := tt.check(t, count); got != 6 {
				t.Errorf("the answer's %d node(s) place %d of 6 pods", count, got)
			}
			if got := tt.check(t, count-1); got == 6 {
				t.Errorf("%d node(s), one fewer than the answer, place every pod too", count-1)
			}
		})
	}
}

// On the settled cluster a pod preempted before the nodes join is pending
// again (its controller's replacement, or, without one, itself): the
// nodes are bought for it, and the answer says it is placed again rather
// than spared. A 2-CPU node runs a low-priority pod; a pending
// high-priority pod takes its place.
func TestNodesJoinSettledPlacesThePodsPreemptedBeforeTheNodesJoin(t *testing.T) {
	cpu := func(q string) map[v1.ResourceName]string {
		return map[v1.ResourceName]string{v1.ResourceCPU: q, v1.ResourceMemory: "1Gi"}
	}
	cluster := writeObjects(t, "cluster.yaml",
		st.MakeNode().Name("old").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj(),
		st.MakePod().Name("low").Node("old").Priority(0).Req(cpu("2")).Obj(),
		st.MakePod().Name("high").Priority(1000).Req(cpu("2")).Obj())
	tmpl := st.MakeNode().Name("small").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj()
	tmpl.Annotations = map[string]string{"simulation.kubesched.io/hourly-cost": "0.20"}
	types := writeObjects(t, "types.yaml", tmpl)
	tests := []struct {
		name, join, want string
	}{
		{name: "settled: the preempted pod is placed again on the node bought for it", join: "settled",
			want: "Add 1 node (0.2 per hour): 0 pending pods scheduled, and 1 pod preempted before the nodes join placed again, checked by simulation of the cluster as the scheduler leaves it"},
		{name: "from the start: the node spares the pod its preemption", join: "start",
			want: "Add 1 node (0.2 per hour): 0 pending pods scheduled, and 1 pod no longer preempted, checked by simulation."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, res := nodeTypesRun(t, cluster, types, tt.join)
			if !strings.Contains(out, tt.want) {
				t.Errorf("no %q in:\n%s", tt.want, out)
			}
			if len(res.Add) != 1 || res.Add[0].Pods != 1 {
				t.Errorf("add %+v: want one type whose node runs one pod (the preempted one)", res.Add)
			}
		})
	}
}

// --nodes-join auto (the default) searches on the settled cluster from
// 200 existing nodes, from the start below: the answer says which.
func TestNodesJoinAutoSettlesFrom200ExistingNodes(t *testing.T) {
	full := func(nodes int) string {
		var objs []runtime.Object
		for i := range nodes {
			name := fmt.Sprintf("old-%03d", i)
			objs = append(objs, st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourceMemory: "4Gi", v1.ResourcePods: "110"}).Obj(),
				st.MakePod().Name("running-"+name).Node(name).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
		}
		objs = append(objs, st.MakePod().Name("pending").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
		return writeObjects(t, "cluster.yaml", objs...)
	}
	tmpl := st.MakeNode().Name("small").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj()
	tmpl.Annotations = map[string]string{"simulation.kubesched.io/hourly-cost": "0.20"}
	types := writeObjects(t, "types.yaml", tmpl)
	tests := []struct {
		name  string
		nodes int
		want  string
	}{
		{name: "199 existing nodes: from the start", nodes: 199, want: questions.JoinAtStart},
		{name: "200 existing nodes: settled", nodes: 200, want: questions.JoinSettled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, res := nodeTypesRun(t, full(tt.nodes), types, "auto")
			if res.NodesJoin != tt.want || len(res.Add) != 1 || res.Add[0].Count != 1 {
				t.Errorf("nodesJoin %q, add %+v: want %q and one node", res.NodesJoin, res.Add, tt.want)
			}
		})
	}
}
