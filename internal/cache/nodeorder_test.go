package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// nodeTreeOrder is the list order from scratch: zones sorted, each
// zone's nodes sorted by name, taken round-robin.
func nodeTreeOrder(nodes map[string]*v1.Node) []string {
	byZone := map[string][]string{}
	for name, n := range nodes {
		z := zoneOf(n)
		byZone[z] = append(byZone[z], name)
	}
	var zones []string
	for z, names := range byZone {
		zones = append(zones, z)
		sort.Strings(names)
	}
	sort.Strings(zones)
	var out []string
	for i := 0; len(out) < len(nodes); i++ {
		for _, z := range zones {
			if i < len(byZone[z]) {
				out = append(out, byZone[z][i])
			}
		}
	}
	return out
}

// TestTheNodeListKeepsTheNodeTreeOrderAsNodesComeAndGo: the snapshot's
// list, kept between rebuilds, is always the order built from scratch,
// through random additions, removals and zone moves (a zone move is seen
// at the next rebuild, as before the index was kept: without an addition
// or removal the list stays as it was).
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
			mk := func(name string) *v1.Node {
				w := st.MakeNode().Name(name).Capacity(rl{v1.ResourceCPU: "4"})
				if z := tt.zones[r.IntN(len(tt.zones))]; z != "" {
					w = w.Label(v1.LabelTopologyZone, z).Label(v1.LabelTopologyRegion, "r")
				}
				return w.Obj()
			}
			for step := range 400 {
				for range 1 + r.IntN(4) {
					name := fmt.Sprintf("n-%d", r.IntN(60))
					old, ok := live[name]
					switch {
					case !ok:
						live[name] = mk(name)
						c.AddNode(live[name])
					case r.IntN(3) == 0:
						n := mk(name)
						live[name] = n
						c.UpdateNode(old, n)
					default:
						delete(live, name)
						if err := c.RemoveNode(old); err != nil {
							t.Fatal(err)
						}
					}
				}
				before, _ := snap.List()
				want := names(before)
				if c.nodeSetChanged {
					want = nodeTreeOrder(live)
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
