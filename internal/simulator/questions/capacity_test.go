package questions_test

import (
	"context"
	"fmt"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
)

func worldMaker(t *testing.T) func(*cluster.Cluster) (*simulator.World, error) {
	return func(c *cluster.Cluster) (*simulator.World, error) {
		return simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	}
}

// pendingAfter simulates the objects and counts the pods left unscheduled.
func pendingAfter(t *testing.T, objs []runtime.Object) int {
	t.Helper()
	_, r := simtest.Simulate(t, simtest.LoadObjects(t, objs), 1)
	n := 0
	for _, p := range r.Pods {
		if p.Status != report.StatusScheduled {
			n++
		}
	}
	return n
}

func capacityCluster() []runtime.Object {
	cpu := func(n string) map[v1.ResourceName]string {
		return map[v1.ResourceName]string{v1.ResourceCPU: n, v1.ResourceMemory: "64Gi"}
	}
	return []runtime.Object{
		st.MakeNode().Name("a1").Label(v1.LabelTopologyZone, "a").Capacity(cpu("4")).Obj(),
		st.MakeNode().Name("a2").Label(v1.LabelTopologyZone, "a").Capacity(cpu("2")).Obj(),
		st.MakeNode().Name("b1").Label(v1.LabelTopologyZone, "b").Capacity(cpu("8")).Obj(),
		st.MakeNode().Name("tainted").Label(v1.LabelTopologyZone, "b").Capacity(cpu("8")).Taint("x", "y", v1.TaintEffectNoSchedule).Obj(),
		st.MakePod().Name("running").Node("b1").Req(map[v1.ResourceName]string{v1.ResourceCPU: "3"}).Obj(),
		st.MakePod().Name("pending").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1500m"}).Obj(),
	}
}

func TestCapacityAnswerHoldsWhenSimulated(t *testing.T) {
	tests := []struct {
		name      string
		cpu       string
		limit     int
		wantFits  int
		wantNext  string // substring of the next copy's message; "" when the limit stops it
		wantZones map[string]int
	}{
		// The pending 1500m pod lands on a1 (least allocated) first: free
		// whole cores then a1 2, a2 2, b1 5 (8 less the running 3); the
		// tainted node takes none.
		{name: "copies fill every node they fit and the next one says why not", cpu: "1", limit: 100, wantFits: 9,
			wantNext: "Insufficient cpu", wantZones: map[string]int{"a": 4, "b": 5}},
		{name: "a copy larger than any node fits nowhere", cpu: "9", limit: 100, wantFits: 0, wantNext: "Insufficient cpu"},
		{name: "the limit stops the count", cpu: "1", limit: 3, wantFits: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := st.MakePod().Name("web").Req(map[v1.ResourceName]string{v1.ResourceCPU: tt.cpu}).Obj()
			res, err := questions.Capacity(context.Background(), simtest.LoadObjects(t, capacityCluster()), worldMaker(t), pod, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if res.Fits != tt.wantFits {
				t.Errorf("fits %d, want %d", res.Fits, tt.wantFits)
			}
			sum := 0
			for _, n := range res.Nodes {
				sum += n
			}
			if sum != res.Fits {
				t.Errorf("per-node counts %v add up to %d, not %d", res.Nodes, sum, res.Fits)
			}
			if tt.wantZones != nil && fmt.Sprint(res.Zones) != fmt.Sprint(tt.wantZones) {
				t.Errorf("zones %v, want %v", res.Zones, tt.wantZones)
			}
			switch {
			case tt.wantNext == "" && res.Next != nil:
				t.Errorf("next %q, want none (the limit)", res.Next.Message)
			case tt.wantNext != "" && (res.Next == nil || !strings.Contains(res.Next.Message, tt.wantNext)):
				t.Errorf("next %+v, want a message with %q", res.Next, tt.wantNext)
			}
			if tt.wantNext == "" {
				return
			}
			// Re-simulate: the cluster with that many copies as plain
			// pods schedules them all; one more leaves one pending.
			for extra, want := range map[int]int{0: 0, 1: 1} {
				objs := capacityCluster()
				for i := 0; i < res.Fits+extra; i++ {
					objs = append(objs, st.MakePod().Name(fmt.Sprintf("copy-%d", i)).Req(map[v1.ResourceName]string{v1.ResourceCPU: tt.cpu}).Obj())
				}
				if got := pendingAfter(t, objs); got != want {
					t.Errorf("%d copies simulated as pods: %d pending, want %d", res.Fits+extra, got, want)
				}
			}
		})
	}
}

func TestAddNodesIsTheFewestThatScheduleEveryPod(t *testing.T) {
	node := st.MakeNode().Name("extra").Label(v1.LabelTopologyZone, "c").
		Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "16Gi"}).Obj()
	tests := []struct {
		name    string
		pods    int    // pending 3-core pods added to the cluster
		cpu     string // their request
		want    int
		wantErr string
	}{
		{name: "nothing pending needs no node", pods: 0, cpu: "3", want: 0},
		// The 1500m pod takes a1 first; b1 holds one 3-core pod; the
		// other six need a 4-core node each.
		{name: "each 3-core pod the cluster cannot hold needs a 4-core node", pods: 7, cpu: "3", want: 6},
		{name: "a pod no node of that shape can hold is an error naming it", pods: 1, cpu: "6", wantErr: "with 16 nodes like extra added"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := capacityCluster()
			for i := 0; i < tt.pods; i++ {
				objs = append(objs, st.MakePod().Name(fmt.Sprintf("big-%d", i)).Req(map[v1.ResourceName]string{v1.ResourceCPU: tt.cpu}).Obj())
			}
			load := func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }
			res, err := questions.AddNodes(context.Background(), load, worldMaker(t), node, 16)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "big-0") {
					t.Fatalf("error %v, want one with %q naming big-0", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			k := res.AddNodes
			if k != tt.want {
				t.Errorf("%d nodes, want %d", k, tt.want)
			}
			// Re-simulate with k nodes (none pending) and k-1 (some).
			for _, n := range []int{k, k - 1} {
				if n < 0 {
					continue
				}
				c := simtest.LoadObjects(t, objs)
				c.Nodes = append(c.Nodes, questions.NodeCopies(node, n, c)...)
				w, err := worldMaker(t)(c)
				if err != nil {
					t.Fatal(err)
				}
				w.Run(context.Background())
				pending := 0
				for _, p := range w.Report().Pods {
					if p.Status != report.StatusScheduled {
						pending++
					}
				}
				if (pending == 0) != (n == k) {
					t.Errorf("with %d nodes added: %d pending", n, pending)
				}
			}
		})
	}
}

func TestWorkloadCapacityHoldsWhenTheWorkloadIsSimulatedAtThatSize(t *testing.T) {
	pod := func() *st.PodWrapper {
		return st.MakePod().Label("app", "web").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	}
	tests := []struct {
		name     string
		workload func(replicas int32) runtime.Object
		kind     string
		start    int32
		wantFits int
	}{
		// Free whole cores: a1 4 (less the pending 1500m pod: 2), a2 2, b1 5.
		{name: "a Deployment's replicas fill the free room", kind: "Deployment", start: 1, wantFits: 8,
			workload: func(n int32) runtime.Object { return st.MakeDeployment("web", n, pod()) }},
		{name: "a StatefulSet's ordinals fill it one at a time", kind: "StatefulSet", start: 2, wantFits: 7,
			workload: func(n int32) runtime.Object { return st.MakeStatefulSet("web", n, pod()).Obj() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := worldMaker(t)(simtest.LoadObjects(t, append(capacityCluster(), tt.workload(tt.start))))
			if err != nil {
				t.Fatal(err)
			}
			res, err := questions.WorkloadCapacity(context.Background(), w, tt.kind, "", "web", 100)
			if err != nil {
				t.Fatal(err)
			}
			if res.Fits != tt.wantFits || res.Next == nil || !strings.Contains(res.Next.Message, "Insufficient cpu") || res.Next.Explain == nil {
				t.Fatalf("fits %d, next %+v; want %d and an explained FitError", res.Fits, res.Next, tt.wantFits)
			}
			// Re-simulate the workload at start+fits replicas: all placed;
			// one more leaves one pending.
			for extra, want := range map[int32]int{0: 0, 1: 1} {
				n := tt.start + int32(res.Fits) + extra
				if got := pendingAfter(t, append(capacityCluster(), tt.workload(n))); got != want {
					t.Errorf("%s at %d replicas: %d pending, want %d", tt.kind, n, got, want)
				}
			}
		})
	}
}

// A workload with a replica of its own pending has no room for one more:
// the count stops at the first step, on that replica's reason.
func TestWorkloadCapacityOfAWorkloadWithAPendingReplicaIsNone(t *testing.T) {
	pod := st.MakePod().Label("app", "web").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"})
	w, err := worldMaker(t)(simtest.LoadObjects(t, append(capacityCluster(), st.MakeDeployment("web", 20, pod))))
	if err != nil {
		t.Fatal(err)
	}
	res, err := questions.WorkloadCapacity(context.Background(), w, "Deployment", "", "web", 100)
	if err != nil {
		t.Fatal(err)
	}
	if res.Fits != 0 || res.Next == nil || !strings.Contains(res.Next.Message, "Insufficient cpu") {
		t.Fatalf("fits %d, next %+v; want none and the pending replica's FitError", res.Fits, res.Next)
	}
}

// --add-nodes counts what new nodes can change: pods left pending and
// pods preempted, not a DaemonSet's pod or its victims (it belongs to
// its node).
func TestAddNodesCountsThePodsNewNodesCanPlace(t *testing.T) {
	cpu := func(n string) map[v1.ResourceName]string {
		return map[v1.ResourceName]string{v1.ResourceCPU: n, v1.ResourceMemory: "1Gi"}
	}
	full := func() []runtime.Object {
		return []runtime.Object{
			st.MakeNode().Name("n1").Capacity(cpu("2")).Obj(),
			st.MakePod().Name("low").Node("n1").Priority(0).Req(cpu("2")).Obj(),
		}
	}
	node := st.MakeNode().Name("extra").Capacity(cpu("2")).Obj()
	tests := []struct {
		name                           string
		objs                           []runtime.Object
		wantNodes, wantPending, wantPr int
	}{
		{name: "a running pod a pending one preempts counts, and the node added spares it",
			objs:      append(full(), st.MakePod().Name("high").Priority(100).Req(cpu("2")).Obj()),
			wantNodes: 1, wantPr: 1},
		{name: "a pending pod that fits nowhere counts",
			objs:      append(full(), st.MakePod().Name("same").Priority(0).Req(cpu("2")).Obj()),
			wantNodes: 1, wantPending: 1},
		{name: "a DaemonSet's pod that preempts on its own node is no reason to add nodes",
			objs: append(full(), st.MakeDaemonSet("agent", st.MakePod().Name("agent").Label("app", "agent").Priority(1000).Req(cpu("1")))),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			load := func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, tt.objs), nil }
			res, err := questions.AddNodes(context.Background(), load, worldMaker(t), node, 8)
			if err != nil {
				t.Fatal(err)
			}
			if res.AddNodes != tt.wantNodes || res.Pending != tt.wantPending || res.Preempted != tt.wantPr {
				t.Errorf("%d nodes for %d pending and %d preempted, want %d for %d and %d", res.AddNodes, res.Pending, res.Preempted, tt.wantNodes, tt.wantPending, tt.wantPr)
			}
		})
	}
}
