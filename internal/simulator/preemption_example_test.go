package simulator_test

import (
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	v1 "k8s.io/api/core/v1"
	"strings"
	"testing"
)

// TestThePreemptionExample: examples/preemption.yaml does what its header
// says: every web replica is placed by preempting batch pods, and the batch
// pods a PodDisruptionBudget protects are spared while others can go.
func TestThePreemptionExample(t *testing.T) {
	rep := simtest.SimulateFiles(t, "../../examples/preemption.yaml").Report()
	if rep.Summary.Scheduled != 3 || rep.Summary.Unschedulable != 0 || rep.Summary.Preempted == 0 {
		t.Errorf("summary %+v, want 3 scheduled, 0 unschedulable, some preempted", rep.Summary)
	}
	for _, p := range rep.Pods {
		if p.Status == report.StatusPreempted && strings.HasPrefix(p.Name, "batch-b") {
			t.Errorf("%s was preempted although its PodDisruptionBudget allows no disruption and other victims exist", p.Name)
		}
		if p.Status == report.StatusPreempted && !strings.HasPrefix(p.Message, "preempted by default/web-") {
			t.Errorf("%s: %q, want it preempted by a web pod", p.Name, p.Message)
		}
	}
}

// TestExplainSaysWhomPreemptionWouldEvict: for a pod that fits nowhere,
// explain runs PostFilter in its throwaway world and reports the node and
// the victims, and the message carries upstream's preemption part.
func TestExplainSaysWhomPreemptionWouldEvict(t *testing.T) {
	r := simtest.ExplainFile(t, "../../examples/preemption.yaml")
	p := r.Preemption
	// node-a1 and node-a2 are alike (two batch-a pods each, no PDB): the
	// seeded offset picks one, as upstream's random offset would.
	if p == nil || (p.Node != "node-a1" && p.Node != "node-a2") {
		t.Fatalf("preemption = %+v, want a batch-a node", p)
	}
	suffix := strings.TrimPrefix(p.Node, "node-")
	if len(p.Victims) != 2 || !strings.HasPrefix(p.Victims[0], "default/batch-a-"+suffix+"-") || !strings.HasPrefix(p.Victims[1], "default/batch-a-"+suffix+"-") {
		t.Errorf("preemption = %+v, want the two batch-a victims of %s", p, p.Node)
	}
	if want := "preemption: found a potential placement for pod on node " + p.Node + ", preempting 2 victims"; !strings.HasSuffix(r.Message, want) {
		t.Errorf("message %q, want it to end with %q (no period of ours)", r.Message, want)
	}
}

// TestTheStorageExample: examples/storage.yaml does what its header says.
func TestTheStorageExample(t *testing.T) {
	got := map[string]report.PodResult{}
	for _, p := range simtest.SimulateFiles(t, "../../examples/storage.yaml").Report().Pods {
		got[p.Name] = p
	}
	dbNodes := map[string]bool{}
	for _, db := range []string{"db-0", "db-1", "db-2"} {
		n := got[db].Node
		if n == "" || n == "node-a2" || dbNodes[n] {
			t.Errorf("%s on %q; want each db pod on its own node with a free local PV (not node-a2)", db, n)
		}
		dbNodes[n] = true
	}
	if n := got["reporter"].Node; n != "node-a1" {
		t.Errorf("reporter on %q, want node-a1: zone a (its PV), and node-a2 is at its EBS limit", n)
	}
	if n := got["uploader"].Node; n == "" || n == "node-a2" {
		t.Errorf("uploader on %q, want a node below its EBS limit", n)
	}
	if p := got["cache"]; p.Node != "" || !strings.Contains(p.Message, "did not have enough free storage") {
		t.Errorf("cache: node %q, message %q; want it pending for lack of storage capacity", p.Node, p.Message)
	}
}

// TestTheWorkloadsExample: examples/workloads.yaml on examples/cluster.yaml
// does what its header says.
func TestTheWorkloadsExample(t *testing.T) {
	w := simtest.SimulateFiles(t, "../../examples/cluster.yaml", "../../examples/workloads.yaml")
	r := w.Report()
	for _, wl := range r.Workloads {
		want := map[string]int{"Deployment": 6, "StatefulSet": 3, "Job": 4, "DaemonSet": 11}[wl.Kind]
		if wl.Pods != want || wl.Scheduled != want {
			t.Errorf("%s %s/%s: %d pods, %d scheduled; want %d, all scheduled (reasons %v)", wl.Kind, wl.Namespace, wl.Name, wl.Pods, wl.Scheduled, want, wl.Reasons)
		}
	}
	if len(r.Workloads) != 4 {
		t.Errorf("%d workloads, want 4", len(r.Workloads))
	}
	zones, dbNodes := map[string]int{}, map[string]bool{}
	nodes := map[string]*v1.Node{}
	for _, n := range w.Store.Nodes() {
		nodes[n.Name] = n
	}
	for _, p := range w.Store.Pods() {
		n, ok := nodes[p.Spec.NodeName]
		switch {
		case !ok || (p.Namespace != "shop" && p.Namespace != "monitoring"):
		case p.Labels["app"] == "web":
			zones[n.Labels[v1.LabelTopologyZone]]++
		case p.Labels["app"] == "db":
			if dbNodes[n.Name] || n.Labels["pool"] != "memory" {
				t.Errorf("%s on %s: want each db pod on its own memory node", p.Name, n.Name)
			}
			dbNodes[n.Name] = true
		case p.Labels["app"] == "node-exporter" && n.Labels["pool"] == "gpu":
			t.Errorf("%s on the tainted GPU node", p.Name)
		}
	}
	lo, hi := 6, 0
	for _, z := range []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"} {
		lo, hi = min(lo, zones[z]), max(hi, zones[z])
	}
	if hi-lo > 1 {
		t.Errorf("web pods per zone %v, want a skew of at most 1", zones)
	}
}
