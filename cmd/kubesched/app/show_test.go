package app

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	st "github.com/kubesched/kubesched/internal/testing"
)

// The planners' tables say what matters first: past 50 nodes, explain,
// capacity and consolidate list the nodes that matter and fold the rest
// (--show all lists every node), and a saving without prices is unknown.
func TestThePlannersTablesSayWhatMattersFirst(t *testing.T) {
	cpu := func(n string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: n} }
	var objs []runtime.Object
	for i := range 60 {
		size := "4"
		if i >= 30 {
			size = "1" // too small for the 2-CPU pod
		}
		objs = append(objs, st.MakeNode().Name(fmt.Sprintf("node-%02d", i)).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: size, v1.ResourceMemory: "8Gi"}).Obj())
	}
	cluster := writeObjects(t, "cluster.yaml", objs...)
	// Each node runs a pod without a controller, which keeps it.
	for i := range 60 {
		objs = append(objs, st.MakePod().Name(fmt.Sprintf("bare-%02d", i)).Node(fmt.Sprintf("node-%02d", i)).Req(cpu("100m")).Obj())
	}
	bare := writeObjects(t, "bare.yaml", objs...)
	empty := func(priced bool) string {
		var nodes []runtime.Object
		for _, name := range []string{"a", "b"} {
			n := st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj()
			if priced && name == "a" {
				n.Annotations = map[string]string{"simulation.kubesched.io/hourly-cost": "0.5"}
			}
			nodes = append(nodes, n)
		}
		return writeObjects(t, fmt.Sprintf("empty-%v.yaml", priced), nodes...)
	}
	// 60 empty nodes: 40 of one type in zone-a, 20 dearer ones in zone-b.
	var spare []runtime.Object
	for i := range 60 {
		typ, zone, price := "m6i.large", "zone-a", "0.1"
		if i >= 40 {
			typ, zone, price = "c6i.large", "zone-b", "0.2"
		}
		n := st.MakeNode().Name(fmt.Sprintf("spare-%02d", i)).Label(v1.LabelInstanceTypeStable, typ).Label(v1.LabelTopologyZone, zone).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj()
		n.Annotations = map[string]string{"simulation.kubesched.io/hourly-cost": price}
		spare = append(spare, n)
	}
	spares := writeObjects(t, "spares.yaml", spare...)
	pod := writeObjects(t, "pod.yaml", st.MakePod().Name("web").Req(cpu("2")).Obj())
	var pending []runtime.Object
	for i := range 120 {
		pending = append(pending, st.MakePod().Name(fmt.Sprintf("web-%03d", i)).Label("app", "web").Req(cpu("100m")).Obj())
	}
	webs := writeObjects(t, "webs.yaml", pending...)
	binPacking := "../../../examples/scheduler-config.yaml"
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
		notWant  []string
	}{
		{
			name: "explain of a 60-node cluster lists 20 feasible nodes and folds the rejected ones",
			args: []string{"explain", "-f", cluster, "--pod", pod},
			want: []string{"30/60 nodes feasible", "... and 10 more feasible nodes, with lower scores.",
				"NodeResourcesFit  30     Insufficient cpu  node-30", "Not listed one by one: 40 nodes of 60"},
			notWant: []string{"node-31"},
		},
		{
			name:    "explain --show all lists every node",
			args:    []string{"explain", "-f", cluster, "--pod", pod, "--show", "all"},
			want:    []string{"node-31", "node-59"},
			notWant: []string{"Not listed"},
		},
		{
			name: "capacity of a 30-node answer lists the 20 nodes with most copies after the summary",
			args: []string{"capacity", "-f", cluster, "--pod", pod, "--show", "summary"},
			want: []string{"60 more copies of default/web fit.", "... and 10 more nodes hold copies too (--show all",
				"The next copy does not fit: 0/60 nodes are available: 60 Insufficient cpu.", "NodeResourcesFit  60"},
		},
		{
			name: "capacity on zoned nodes gives the zones' table, then the nodes', a blank line between",
			args: []string{"capacity", "-f", spares, "--pod", pod},
			want: []string{"120 more copies of default/web fit.", "ZONE      COPIES\nzone-a    80\nzone-b    40\n\nNODE      COPIES\n"},
		},
		{
			name:    "consolidate keeping 60 nodes for one reason gives it one row",
			args:    []string{"consolidate", "-f", bare},
			want:    []string{"Keep 60 node(s):", "NODES  FOR EXAMPLE  POD              REASON\n60     node-00      default/bare-00  ", "share a row; --show all lists every node kept"},
			notWant: []string{"node-01"},
		},
		{
			name:    "consolidate --show all lists every node kept",
			args:    []string{"consolidate", "-f", bare, "--show", "all"},
			want:    []string{"node-59  default/bare-59"},
			notWant: []string{"FOR EXAMPLE"},
		},
		{
			name: "consolidate of nodes without a price says the saving is not known",
			args: []string{"consolidate", "-f", empty(false)},
			want: []string{"Remove 2 node(s), in this order, saving an unknown cost (none of them has a simulation.kubesched.io/hourly-cost annotation)"},
		},
		{
			name: "consolidate of a priced node and an unpriced one gives the saving as a floor",
			args: []string{"consolidate", "-f", empty(true)},
			want: []string{"Remove 2 node(s), in this order, saving at least 0.5 per hour (1 of them have no simulation.kubesched.io/hourly-cost annotation and count 0)"},
		},
		{
			name: "consolidate removing 60 nodes counts them by instance type and zone and names the first 20 in order",
			args: []string{"consolidate", "-f", spares},
			want: []string{"Remove 60 node(s), in this order, saving 8 per hour",
				"  NODES  INSTANCE TYPE  ZONE    SAVING PER HOUR\n  40     m6i.large      zone-a  4\n  20     c6i.large      zone-b  4\n",
				"The first 20, in order:\n\n  spare-40\n  spare-41\n", "  spare-59\n  ... and 40 more (--show all lists every node in order"},
			notWant: []string{"spare-00"},
		},
		{
			name:    "consolidate --show all lists every node removed in order",
			args:    []string{"consolidate", "-f", spares, "--show", "all"},
			want:    []string{"  spare-59\n  spare-00\n", "  spare-39\n"},
			notWant: []string{"INSTANCE TYPE", "more (--show all"},
		},
		{
			name: "a comparison moving 120 pods across 60 nodes counts the moves by workload and lists the nodes that differ most",
			args: []string{"simulate", "-f", cluster, "-f", webs, "--compare", binPacking},
			want: []string{"nodes with pods  60", "NODE (20 of the ", "more nodes differ (--show all lists them).",
				"PODS PLACED DIFFERENTLY, BY WORKLOAD  MOVED", "Pods default app=web", "pods placed differently (--show all lists every one)."},
			notWant: []string{"POD                  NODE A"},
		},
		{
			name:    "a comparison with --show all lists every node and pod",
			args:    []string{"simulate", "-f", cluster, "-f", webs, "--compare", binPacking, "--show", "all"},
			want:    []string{"NODE (those that differ)", "default/web-", "pods placed differently.\n"},
			notWant: []string{"BY WORKLOAD", "more nodes differ"},
		},
		{
			name:     "--show is for simulate's table, not --compare's JSON",
			args:     []string{"simulate", "-f", cluster, "-f", webs, "--compare", binPacking, "--show", "all", "-o", "json"},
			wantCode: 1,
			want:     []string{"--show chooses what simulate's table lists: not with -o json"},
		},
		{
			name:     "--show names its values",
			args:     []string{"explain", "-f", cluster, "--pod", pod, "--show", "some"},
			wantCode: 1,
			want:     []string{`--show: Unsupported value: "some": supported values: "summary", "all"`},
		},
		{
			name:     "--show is for the table",
			args:     []string{"capacity", "-f", cluster, "--pod", pod, "--show", "all", "-o", "json"},
			wantCode: 1,
			want:     []string{"--show chooses what capacity's table lists: not with -o json"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tt.wantCode, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("the output lacks %q:\n%s%s", w, out, errOut)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("the output has %q:\n%s", w, out)
				}
			}
			for line := range strings.Lines(out) {
				if strings.HasSuffix(strings.TrimSuffix(line, "\n"), " ") {
					t.Errorf("a line ends in a space: %q", line)
				}
			}
		})
	}
}
