package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// zoned is a 4-CPU node in zone z of region r ("" for no label).
func zoned(name, r, z string) *v1.Node {
	w := st.MakeNode().Name(name).Capacity(rl{v1.ResourceCPU: "4"})
	if z != "" {
		w = w.Label(v1.LabelTopologyZone, z)
	}
	if r != "" {
		w = w.Label(v1.LabelTopologyRegion, r)
	}
	return w.Obj()
}

// TestTheNodeListFollowsUpstreamsNodeTree holds the snapshot's order to
// the rules of upstream's node tree (backend/cache/node_tree.go, v1.37.2):
// zones in the order first seen, nodes in the order added, round-robin.
func TestTheNodeListFollowsUpstreamsNodeTree(t *testing.T) {
	type step struct {
		add    *v1.Node
		update *v1.Node
		remove string
	}
	add := func(n *v1.Node) step { return step{add: n} }
	tests := []struct {
		name  string
		steps []step
		want  string
	}{
		{name: "zones come in the order their first node was added, not by name",
			steps: []step{add(zoned("a-1", "r", "z3")), add(zoned("b-1", "r", "z1")), add(zoned("c-1", "r", "z2")), add(zoned("a-2", "r", "z3"))},
			want:  "a-1,b-1,c-1,a-2"},
		{name: "a node added later goes last in its zone, whatever its name",
			steps: []step{add(zoned("m", "r", "z1")), add(zoned("n", "r", "z1")), add(zoned("x", "r", "z2")), add(zoned("a", "r", "z1"))},
			want:  "m,x,n,a"},
		{name: "a zone left empty is forgotten and goes last when seen again",
			steps: []step{add(zoned("a", "r", "z1")), add(zoned("b", "r", "z2")), {remove: "a"}, add(zoned("c", "r", "z1")), add(zoned("d", "r", "z2"))},
			want:  "b,c,d"},
		{name: "a node whose zone changed goes last in its new zone at the next listing",
			steps: []step{add(zoned("a", "r", "z1")), add(zoned("b", "r", "z1")), add(zoned("c", "r", "z2")), {update: zoned("a", "r", "z2")}, add(zoned("d", "r", "z1"))},
			want:  "b,c,d,a"},
		{name: "a node whose zone changed keeps its place until a node is added or removed",
			steps: []step{add(zoned("a", "r", "z1")), add(zoned("b", "r", "z1")), add(zoned("c", "r", "z2")), {update: zoned("a", "r", "z2")}},
			want:  "a,c,b"},
		{name: "the beta failure-domain zone label is read before the stable one",
			steps: []step{add(zoned("a", "", "z1")), add(zoned("b", "", "z1")),
				add(st.MakeNode().Name("c").Label(v1.LabelTopologyZone, "z1").Label(v1.LabelFailureDomainBetaZone, "z2").Obj())},
			want: "a,c,b"},
		{name: "a node with a region and no zone is in a zone of its own, apart from unlabelled nodes",
			steps: []step{add(zoned("a", "", "")), add(zoned("b", "", "")), add(zoned("c", "r", ""))},
			want:  "a,c,b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, snap := newCache(), NewEmptySnapshot()
			live := map[string]*v1.Node{}
			for _, s := range tt.steps {
				switch {
				case s.add != nil:
					live[s.add.Name] = s.add
					c.AddNode(s.add)
				case s.update != nil:
					c.UpdateNode(live[s.update.Name], s.update)
					live[s.update.Name] = s.update
				default:
					if err := c.RemoveNode(live[s.remove]); err != nil {
						t.Fatal(err)
					}
					delete(live, s.remove)
				}
				c.UpdateSnapshot(snap)
			}
			list, _ := snap.List()
			if got := strings.Join(names(list), ","); got != tt.want {
				t.Errorf("list %s, want %s", got, tt.want)
			}
		})
	}
}

// TestASnapshotBuiltFromNodeInfosFilesThemByName: NewSnapshot lists
// nodes as a scheduler started on them would, having listed them by name.
func TestASnapshotBuiltFromNodeInfosFilesThemByName(t *testing.T) {
	var infos []*framework.NodeInfo
	for _, n := range []*v1.Node{zoned("d", "r", "z2"), zoned("b", "r", "z1"), zoned("c", "r", "z2"), zoned("a", "r", "z2")} {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		infos = append(infos, ni)
	}
	list, _ := NewSnapshot(infos...).List()
	if got := strings.Join(names(list), ","); got != "a,b,c,d" {
		t.Errorf("list %s, want a,b,c,d (zone z2 first: its node a comes first by name)", got)
	}
}

// modelTree is upstream's node tree as plainly as it can be written: the
// order the snapshot must list after any sequence of changes.
type modelTree struct {
	zones  []string
	byZone map[string][]string
}

func (m *modelTree) add(name, zone string) {
	if _, ok := m.byZone[zone]; !ok {
		m.zones = append(m.zones, zone)
	}
	m.byZone[zone] = append(m.byZone[zone], name)
}

func (m *modelTree) remove(name, zone string) {
	m.byZone[zone] = slices.DeleteFunc(m.byZone[zone], func(n string) bool { return n == name })
	if len(m.byZone[zone]) == 0 {
		delete(m.byZone, zone)
		m.zones = slices.DeleteFunc(m.zones, func(z string) bool { return z == zone })
	}
}

func (m *modelTree) list() []string {
	var out []string
	for i := 0; ; i++ {
		more := false
		for _, z := range m.zones {
			if i < len(m.byZone[z]) {
				out = append(out, m.byZone[z][i])
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// TestTheNodeListKeepsTheNodeTreeOrderAsNodesComeAndGo: through random
// additions, removals and zone moves, the snapshot's list is the model
// tree's at every listing (a zone move is seen at the next addition or
// removal: without one the list stays as it was).
func TestTheNodeListKeepsTheNodeTreeOrderAsNodesComeAndGo(t *testing.T) {
	tests := []struct {
		name  string
		seed  uint64
		zones []string
	}{
		{name: "nodes over three zones of one region", seed: 1, zones: []string{"a", "b", "c"}},
		{name: "nodes with and without a zone", seed: 2, zones: []string{"", "a"}},
		{name: "nodes of one zone", seed: 3, zones: []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(tt.seed, 7))
			c, snap := newCache(), NewEmptySnapshot()
			live := map[string]*v1.Node{}
			model := &modelTree{byZone: map[string][]string{}}
			zoneKey := func(z string) string {
				if z == "" {
					return ""
				}
				return "r:\x00:" + z
			}
			zoneOf := map[string]string{}
			mk := func(name string) (*v1.Node, string) {
				z := tt.zones[r.IntN(len(tt.zones))]
				if z == "" {
					return zoned(name, "", ""), ""
				}
				return zoned(name, "r", z), zoneKey(z)
			}
			for step := range 400 {
				for range 1 + r.IntN(4) {
					name := fmt.Sprintf("n-%d", r.IntN(60))
					old, ok := live[name]
					switch {
					case !ok:
						n, z := mk(name)
						live[name], zoneOf[name] = n, z
						c.AddNode(n)
						model.add(name, z)
					case r.IntN(3) == 0:
						n, z := mk(name)
						c.UpdateNode(old, n)
						if z != zoneOf[name] {
							model.remove(name, zoneOf[name])
							model.add(name, z)
						}
						live[name], zoneOf[name] = n, z
					default:
						if err := c.RemoveNode(old); err != nil {
							t.Fatal(err)
						}
						model.remove(name, zoneOf[name])
						delete(live, name)
					}
				}
				before, _ := snap.List()
				want := names(before)
				if c.nodeSetChanged {
					want = model.list()
				}
				c.UpdateSnapshot(snap)
				list, _ := snap.List()
				if got := names(list); !slices.Equal(got, want) {
					t.Fatalf("step %d: list %s, want %s", step, strings.Join(got, ","), strings.Join(want, ","))
				}
				for i, ni := range list {
					if ni.Index() != i {
						t.Fatalf("step %d: node %s at %d has index %d", step, ni.NodeName(), i, ni.Index())
					}
				}
			}
		})
	}
}

func names(list []*framework.NodeInfo) []string {
	out := make([]string, 0, len(list))
	for _, ni := range list {
		out = append(out, ni.NodeName())
	}
	return out
}
