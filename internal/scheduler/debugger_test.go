package scheduler_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
)

func TestTheCacheDebuggerReportsEveryDifferenceFromTheAPI(t *testing.T) {
	n1 := st.MakeNode().Name("n1").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj()
	n2 := st.MakeNode().Name("n2").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj()
	bound := st.MakePod().Name("bound").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Node("n1").Obj()
	pending := st.MakePod().Name("pending").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100"}).Obj()
	tests := []struct {
		name string
		// world edits what the API lists, starting from what the scheduler saw.
		world func(nodes []*v1.Node, pods []*v1.Pod) ([]*v1.Node, []*v1.Pod)
		want  []string
	}{
		{name: "a cache that saw everything has no differences", world: func(n []*v1.Node, p []*v1.Pod) ([]*v1.Node, []*v1.Pod) { return n, p }},
		{name: "a node the cache never saw is reported", world: func(n []*v1.Node, p []*v1.Pod) ([]*v1.Node, []*v1.Pod) {
			return append(n, st.MakeNode().Name("n3").Obj()), p
		}, want: []string{"node n3: in the API, not in the cache"}},
		{name: "a node gone from the API is reported", world: func(n []*v1.Node, p []*v1.Pod) ([]*v1.Node, []*v1.Pod) { return n[:1], p },
			want: []string{"node n2: in the cache, not in the API"}},
		{name: "a bound pod gone from the API is reported with the room it still takes", world: func(n []*v1.Node, p []*v1.Pod) ([]*v1.Node, []*v1.Pod) {
			return n, []*v1.Pod{pending}
		}, want: []string{"node n1: the cache counts 1 pods, 1000m cpu", "pod default/bound: counted on n1 in the cache, not in the API"}},
		{name: "a pod bound elsewhere in the API is reported", world: func(n []*v1.Node, p []*v1.Pod) ([]*v1.Node, []*v1.Pod) {
			moved := bound.DeepCopy()
			moved.Spec.NodeName = "n2"
			return n, []*v1.Pod{moved, pending}
		}, want: []string{"node n1: the cache counts 1 pods", "node n2: the cache counts 0 pods", "pod default/bound: bound to n2 in the API, counted on n1 in the cache"}},
		{name: "a pending pod the queue lost is reported", world: func(n []*v1.Node, p []*v1.Pod) ([]*v1.Node, []*v1.Pod) {
			return n, append(p, st.MakePod().Name("lost").Obj())
		}, want: []string{"pod default/lost: pending in the API, not in the queue"}},
		{name: "a queued pod deleted from the API is reported", world: func(n []*v1.Node, p []*v1.Pod) ([]*v1.Node, []*v1.Pod) {
			return n, []*v1.Pod{bound}
		}, want: []string{"pod default/pending: in the queue, not in the API"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil, nil)
			e.add(t, n1, n2, bound.DeepCopy(), pending.DeepCopy())
			e.drain()
			nodes, pods := tt.world([]*v1.Node{n1, n2}, []*v1.Pod{e.pod(t, "bound"), e.pod(t, "pending")})
			got := e.sched.CompareWithWorld(nodes, pods)
			if len(got) != len(tt.want) {
				t.Fatalf("differences = %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("difference %d = %q, want it to start with %q", i, got[i], tt.want[i])
				}
			}
			report, diffs := e.sched.DebugReport(nodes, pods)
			if len(diffs) != len(tt.want) || !strings.Contains(report, "node n1:") || !strings.Contains(report, "queue:") {
				t.Errorf("report lacks the dump or the differences:\n%s", report)
			}
		})
	}
}
