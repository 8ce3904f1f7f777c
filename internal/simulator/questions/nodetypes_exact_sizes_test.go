package questions

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	st "github.com/kubesched/kubesched/internal/testing"
)

// The exact search's slots per pod size: a vector is simulated only when
// its new nodes and the existing ones have a whole slot for every pod
// that needs a place, size by size.
func TestSizeNeedsAdmitVectorsWithASlotForEveryPod(t *testing.T) {
	cpu := func(q string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: q} }
	node := func(name, cores string) *v1.Node {
		return st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: cores, v1.ResourceMemory: "64Gi", v1.ResourcePods: "110"}).Obj()
	}
	pending := func(prefix string, n int, cores string, prio int32) []*v1.Pod {
		var out []*v1.Pod
		for i := range n {
			out = append(out, st.MakePod().Name(fmt.Sprintf("%s-%d", prefix, i)).Req(cpu(cores)).Priority(prio).Obj())
		}
		return out
	}
	types := []NodeType{
		{Type: "c4", Node: node("c4", "4"), Cost: 0.2, Limit: 100},
		{Type: "c2", Node: node("c2", "2"), Cost: 0.1, Limit: 100},
	}
	cases := []struct {
		name     string
		nodes    []*v1.Node
		pods     []*v1.Pod
		agentCPU string // the requests of a new node's DaemonSet pod
		floor    []string
		counts   []int
		want     bool
	}{
		{name: "fifteen 3-CPU pods find no slot on 2-CPU nodes", pods: pending("p", 15, "3", 0), counts: []int{10, 10}},
		{name: "fifteen 3-CPU pods fill fifteen 4-CPU nodes", pods: pending("p", 15, "3", 0), counts: []int{15, 0}, want: true},
		{name: "a new node's agent takes room from its slots", pods: pending("p", 4, "2", 0), agentCPU: "1", counts: []int{3, 0}},
		{name: "a new node with its agent still has a slot for each pod", pods: pending("p", 4, "2", 0), agentCPU: "1", counts: []int{4, 0}, want: true},
		{name: "two sizes: the large pods count among the small ones' slots too", pods: append(pending("l", 2, "3", 0), pending("s", 4, "1", 0)...), counts: []int{1, 1}},
		{name: "two sizes fit on two 4-CPU nodes", pods: append(pending("l", 2, "3", 0), pending("s", 4, "1", 0)...), counts: []int{2, 0}, want: true},
		{
			name:  "an existing node's room gives a slot, less its running pods",
			nodes: []*v1.Node{node("old", "4")}, pods: append(pending("p", 3, "2", 0), st.MakePod().Name("run").Req(cpu("2")).Node("old").Obj()),
			counts: []int{1, 0}, want: true,
		},
		{
			name:  "an existing node's running pods keep their room from pods of their priority",
			nodes: []*v1.Node{node("old", "4")}, pods: append(pending("p", 3, "2", 0), st.MakePod().Name("run").Req(cpu("2")).Node("old").Obj()),
			counts: []int{0, 1},
		},
		{
			name:  "pods of a higher priority may preempt the running ones: their room is a slot",
			nodes: []*v1.Node{node("old", "4")}, pods: append(pending("p", 2, "2", 100), st.MakePod().Name("run").Req(cpu("2")).Node("old").Obj()),
			counts: []int{0, 0}, want: true,
		},
		{
			name:  "a finished pod on an existing node leaves its room",
			nodes: []*v1.Node{node("old", "4")}, pods: append(pending("p", 3, "2", 0), st.MakePod().Name("done").Req(cpu("2")).Node("old").Phase(v1.PodSucceeded).Obj()),
			counts: []int{0, 1}, want: true,
		},
		{name: "pods of the floor need no slot", pods: pending("p", 3, "3", 0), floor: []string{"default/p-1", "default/p-2"}, counts: []int{1, 0}, want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			daemon := make([]v1.ResourceList, len(types))
			if tc.agentCPU != "" {
				for i := range daemon {
					daemon[i] = v1.ResourceList{v1.ResourceCPU: resource.MustParse(tc.agentCPU), v1.ResourcePods: resource.MustParse("1")}
				}
			}
			space := newPackSpace(types, []bool{true, true}, daemon, false)
			floor := map[string]bool{}
			for _, p := range tc.floor {
				floor[p] = true
			}
			sizes := space.newSizeNeeds(&cluster.Cluster{Nodes: tc.nodes, Pods: tc.pods}, floor)
			if got := sizes.admits(tc.counts); got != tc.want {
				t.Errorf("admits(%v) = %v, want %v", tc.counts, got, tc.want)
			}
		})
	}
}
