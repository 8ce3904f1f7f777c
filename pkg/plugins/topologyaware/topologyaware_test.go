package topologyaware

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

const rack = "topology.kubernetes.io/rack"

func TestGeneratePlacements(t *testing.T) {
	node := func(name, rackValue string) *framework.NodeInfo {
		n := st.MakeNode().Name(name)
		if rackValue != "" {
			n = n.Label(rack, rackValue)
		}
		ni := framework.NewNodeInfo()
		ni.SetNode(n.Obj())
		return ni
	}
	nodes := []*framework.NodeInfo{node("b-1", "rack-b"), node("a-1", "rack-a"), node("x", ""), node("b-2", "rack-b"), node("a-2", "rack-a")}
	snap := cache.NewSnapshot(nodes...)
	bound := func(name, node string) *v1.Pod { return st.MakePod().Name(name).InGroup("train").Node(node).Obj() }
	constrained := st.MakePodGroup("train").Gang(2).Topology(rack).Obj()
	tests := []struct {
		name      string
		group     *framework.PodGroupInfo
		scheduled []*v1.Pod
		// want lists each placement as "name:node,node"; wantErr a part of
		// the error.
		want    []string
		wantErr string
	}{
		{name: "a group without a topology constraint gets the parent placement", group: &framework.PodGroupInfo{Namespace: "default", Name: "web", PodGroup: st.MakePodGroup("web").Obj()},
			want: []string{":a-1,a-2,b-1,b-2,x"}},
		{name: "a constrained group gets one placement per domain, sorted, nodes in the parent's order, nodes without the key in none",
			group: &framework.PodGroupInfo{Namespace: "default", Name: "train", PodGroup: constrained},
			want:  []string{"rack-a:a-1,a-2", "rack-b:b-1,b-2"}},
		{name: "a group with pods already scheduled gets only their domain",
			group:     &framework.PodGroupInfo{Namespace: "default", Name: "train", PodGroup: constrained},
			scheduled: []*v1.Pod{bound("w1", "b-2")},
			want:      []string{"rack-b:b-1,b-2"}},
		{name: "scheduled pods in two domains are an error",
			group:     &framework.PodGroupInfo{Namespace: "default", Name: "train", PodGroup: constrained},
			scheduled: []*v1.Pod{bound("w1", "b-2"), bound("w2", "a-1")},
			wantErr:   "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: rack-b, rack-a"},
		{name: "a scheduled pod on a node without the key is an error",
			group:     &framework.PodGroupInfo{Namespace: "default", Name: "train", PodGroup: constrained},
			scheduled: []*v1.Pod{bound("w1", "x")},
			wantErr:   "cannot determine domain for already scheduled pods: no topology domain found for pod default/w1"},
		{name: "a scheduled pod on a node the snapshot does not have is an error",
			group:     &framework.PodGroupInfo{Namespace: "default", Name: "train", PodGroup: constrained},
			scheduled: []*v1.Pod{bound("w1", "gone")},
			wantErr:   `cannot determine domain for already scheduled pods: getting node for pod default/w1: nodeinfo not found for node name "gone"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups := st.FakePodGroups{"default/" + tt.group.Name: {Group: tt.group.PodGroup, Scheduled: tt.scheduled}}
			pl := &TopologyPlacement{handle: st.FakeHandle{Lister: snap, Groups: groups}}
			all, _ := snap.List()
			got, status := pl.GeneratePlacements(context.Background(), tt.group, &framework.Placement{Nodes: all})
			if tt.wantErr != "" {
				if status.Code() != framework.Error || !strings.Contains(status.Message(), tt.wantErr) {
					t.Fatalf("status = %v, want an error with %q", status, tt.wantErr)
				}
				return
			}
			if !status.IsSuccess() {
				t.Fatalf("status = %v", status)
			}
			var rendered []string
			for _, p := range got {
				var names []string
				for _, ni := range p.Nodes {
					names = append(names, ni.NodeName())
				}
				rendered = append(rendered, p.Name+":"+strings.Join(names, ","))
			}
			if strings.Join(rendered, " ") != strings.Join(tt.want, " ") {
				t.Errorf("placements = %v, want %v", rendered, tt.want)
			}
		})
	}
}
