package simulator_test

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

const rackKey = "topology.kubernetes.io/rack"

// rackCluster has racks of 2-CPU nodes named rack-R-node-I, sizes[R-1]
// nodes in rack R, plus unlabelled nodes without a rack.
func rackCluster(sizes []int, unlabelled int, objs ...runtime.Object) *cluster.Cluster {
	c := cluster.New()
	capacity := map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "4Gi"}
	for r, n := range sizes {
		for i := 0; i < n; i++ {
			c.Add("test", st.MakeNode().Name(fmt.Sprintf("rack-%d-node-%d", r+1, i)).Label(rackKey, fmt.Sprintf("rack-%d", r+1)).Capacity(capacity).Obj())
		}
	}
	for i := 0; i < unlabelled; i++ {
		c.Add("test", st.MakeNode().Name(fmt.Sprintf("loose-%d", i)).Capacity(capacity).Obj())
	}
	for _, o := range objs {
		c.Add("test", o)
	}
	return c
}

func TestTopologyAwarePlacementsInSimulation(t *testing.T) {
	rackGang := func(minCount int32) runtime.Object {
		return st.MakePodGroup("train").Gang(minCount).Topology(rackKey).Obj()
	}
	workers := func(n int) []runtime.Object {
		var out []runtime.Object
		for i := 1; i <= n; i++ {
			out = append(out, worker(fmt.Sprintf("w%d", i), "train"))
		}
		return out
	}
	tests := []struct {
		name       string
		sizes      []int
		unlabelled int
		objs       []runtime.Object
		// wantRack: every bound worker is in this rack ("" for none bound).
		wantRack     string
		wantBound    int
		wantMessages map[string]string
	}{
		{name: "a rack-constrained gang lands whole in the one rack where it fits", sizes: []int{2, 3},
			objs: append([]runtime.Object{rackGang(3)}, workers(3)...), wantRack: "rack-2", wantBound: 3},
		{name: "a gang that fits across racks but in no single one stays whole-pending, its members told of the placements", sizes: []int{2, 2},
			objs: append([]runtime.Object{rackGang(3)}, workers(3)...),
			wantMessages: map[string]string{
				"w1": "pod group is unschedulable, pod group is unschedulable, 0/2 placements are available, first placement status: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor",
				// Within its placement, the rack's nodes are all the nodes.
				"w3": "0/2 nodes are available: 2 Insufficient cpu.",
			}},
		{name: "nodes without the topology key are in no placement", sizes: []int{2}, unlabelled: 2,
			objs: append([]runtime.Object{rackGang(3)}, workers(3)...),
			wantMessages: map[string]string{
				"w3": "0/2 nodes are available: 2 Insufficient cpu.",
			}},
		{name: "a member judged within its placement counts the placement's nodes where a pod outside the group counts them all", sizes: []int{2, 2},
			objs: []runtime.Object{
				filler("f1", "rack-1-node-0"), filler("f2", "rack-1-node-1"), filler("f3", "rack-2-node-0"), filler("f4", "rack-2-node-1"),
				st.MakePod().Name("loner").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1500m"}).Obj(),
				rackGang(2), worker("w1", "train"), worker("w2", "train")},
			wantBound: 4,
			wantMessages: map[string]string{
				"loner": "0/4 nodes are available: 4 Insufficient cpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.",
				"w1":    "0/2 nodes are available: 2 Insufficient cpu.",
			}},
		{name: "a group without a constraint is placed across racks as without placements", sizes: []int{2, 2},
			objs: append([]runtime.Object{st.MakePodGroup("train").Gang(3).Obj()}, workers(3)...), wantBound: 3},
		{name: "a late member is held to the rack of its group's running pods though another rack has room", sizes: []int{2, 1},
			objs: []runtime.Object{rackGang(2),
				st.MakePod().Name("w1").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1500m"}).InGroup("train").Node("rack-1-node-0").Obj(),
				st.MakePod().Name("w2").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1500m"}).InGroup("train").Node("rack-1-node-1").Obj(),
				worker("w3", "train")},
			wantRack: "rack-1", wantBound: 2,
			wantMessages: map[string]string{"w3": "0/2 nodes are available: 2 Insufficient cpu."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, r := simtest.SimulatePlacements(t, rackCluster(tt.sizes, tt.unlabelled, tt.objs...), 1)
			// The report's pod-group row agrees with the pods.
			if len(r.PodGroups) != 1 {
				t.Fatalf("report has %d pod groups, want 1", len(r.PodGroups))
			}
			if g := r.PodGroups[0]; g.Scheduled+g.Pending != g.Pods || (tt.wantRack != "" && g.Domain != tt.wantRack) {
				t.Errorf("report's group %+v, want its pods counted and domain %q", g, tt.wantRack)
			}
			racks := map[string]string{}
			for _, n := range w.Store.Nodes() {
				racks[n.Name] = n.Labels[rackKey]
			}
			bound := 0
			for _, p := range w.Store.Pods() {
				if p.Spec.NodeName == "" {
					continue
				}
				bound++
				if tt.wantRack != "" && racks[p.Spec.NodeName] != tt.wantRack {
					t.Errorf("%s bound on %s, outside %s", p.Name, p.Spec.NodeName, tt.wantRack)
				}
			}
			if bound != tt.wantBound {
				t.Errorf("%d pods bound, want %d", bound, tt.wantBound)
			}
			for _, p := range w.Store.Pods() {
				want, ok := tt.wantMessages[p.Name]
				if !ok {
					continue
				}
				var got string
				for _, c := range p.Status.Conditions {
					if c.Type == v1.PodScheduled {
						got = c.Message
					}
				}
				if got != want {
					t.Errorf("%s: condition message %q, want %q", p.Name, got, want)
				}
			}
		})
	}
}

// filler is a running pod taking 1 of its node's 2 CPUs.
func filler(name, node string) *v1.Pod {
	return st.MakePod().Name(name).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Node(node).Obj()
}

func TestInvariantCheckCatchesAGroupAcrossDomains(t *testing.T) {
	tests := []struct {
		name      string
		nodes     []string
		wantError bool
	}{
		{name: "a rack-constrained gang bound across two racks by a buggy scheduler is reported", nodes: []string{"rack-1-node-0", "rack-2-node-0"}, wantError: true},
		{name: "the gang bound within one rack is fine", nodes: []string{"rack-2-node-0", "rack-2-node-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := rackCluster([]int{2, 2}, 0, st.MakePodGroup("train").Gang(2).Topology(rackKey).Obj(), worker("w1", "train"), worker("w2", "train"))
			w := simtest.PlacementWorld(t, c, 1)
			for i, node := range tt.nodes {
				bindAround(t, w, fmt.Sprintf("w%d", i+1), node)
			}
			found := invariantReported(t, w, "pod group default/train: its pods are bound in 2 domains of topology.kubernetes.io/rack (rack-1, rack-2)")
			if found != tt.wantError {
				t.Errorf("group across racks reported: %v, want %v", found, tt.wantError)
			}
		})
	}
}
