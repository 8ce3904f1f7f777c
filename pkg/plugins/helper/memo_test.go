package helper

import (
	"fmt"
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/internal/testing/memocheck"
	"github.com/kubesched/kubesched/pkg/framework"
)

// podsPerZone is the smallest memo: pods per zone label value.
type podsPerZone struct {
	lister   framework.SharedLister
	nodes    NodeMemo[zoneEntry]
	counts   map[string]int
	computed int
}

type zoneEntry struct {
	zone string
	has  bool
	pods int
}

func (z *podsPerZone) apply(e *zoneEntry, sign int64) {
	if e.has {
		z.counts[e.zone] += int(sign) * e.pods
		if z.counts[e.zone] == 0 {
			delete(z.counts, e.zone)
		}
	}
}

// answer is the counts, and for each node whether the memo holds it at
// its position with its own zone.
func (z *podsPerZone) answer(nodes []*framework.NodeInfo) any {
	z.nodes.Refresh(z.lister, nodes, func(_ int, ni *framework.NodeInfo, e *zoneEntry) {
		z.computed++
		e.zone, e.has = ni.Node().Labels[v1.LabelTopologyZone]
		e.pods = len(ni.Pods())
	}, z.apply)
	held := map[string]string{}
	for _, ni := range nodes {
		held[ni.NodeName()] = "not held"
		if i := z.nodes.Position(ni); i == ni.Index() {
			held[ni.NodeName()] = z.nodes.Entry(i).zone
		}
	}
	return struct {
		Counts map[string]int
		Held   map[string]string
	}{maps.Clone(z.counts), held}
}

// TestNodeMemoFollowsTheClusterRecountingOnlyChangedNodes: across random
// cluster changes (memocheck), a NodeMemo's aggregate equals a recount,
// it holds every node of the list at its position, and it computed far
// fewer entries than a recount in every step would.
func TestNodeMemoFollowsTheClusterRecountingOnlyChangedNodes(t *testing.T) {
	var first *podsPerZone
	const steps = 300
	memocheck.Run(t, memocheck.Config{Seed: 1, Steps: steps},
		func(l framework.SharedLister) *podsPerZone {
			z := &podsPerZone{lister: l, counts: map[string]int{}}
			if first == nil {
				first = z
			}
			return z
		},
		func(z *podsPerZone, _ int, nodes []*framework.NodeInfo) any { return z.answer(nodes) })
	if first.computed > steps*30/4 {
		t.Errorf("the memo computed %d entries in %d steps of about 30 nodes: not incrementally", first.computed, steps)
	}
}

// TestMemoSetEvictsTheLeastRecentlyUsedMemo: a full set makes room for a
// new key by dropping the memo used least recently; the others are kept.
func TestMemoSetEvictsTheLeastRecentlyUsedMemo(t *testing.T) {
	var s MemoSet[int]
	made := 0
	get := func(k int) *int {
		m := s.Lock(AppendStrings(nil, []string{fmt.Sprint(k)}), func() *int { made++; v := k; return &v })
		s.Unlock()
		return m
	}
	for k := 0; k < MaxMemos; k++ {
		get(k)
	}
	get(0) // key 1 is now the least recently used
	get(MaxMemos)
	if s.Len() != MaxMemos {
		t.Fatalf("the set keeps %d memos, want %d", s.Len(), MaxMemos)
	}
	before := made
	if *get(0) != 0 || made != before {
		t.Errorf("the recently used key 0 was evicted")
	}
	if get(1); made != before+1 {
		t.Errorf("the least recently used key 1 was kept")
	}
}

// TestNodeMemoLooksOnlyAtThePositionsTheChangeLogNames: with a snapshot
// that logs its changes, a refresh visits the logged positions only: a
// NodeInfo changed behind the log's back is not seen, one changed through
// the cache is; a list without a log is compared node by node.
func TestNodeMemoLooksOnlyAtThePositionsTheChangeLogNames(t *testing.T) {
	for _, tc := range []struct {
		name      string
		changeLog bool
		want      int
	}{
		{name: "a snapshot with a change log: only the node the cache changed", changeLog: true, want: 1},
		{name: "a snapshot without one: both changed nodes", changeLog: false, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cache.New(klog.Background())
			for i := 0; i < 4; i++ {
				c.AddNode(st.MakeNode().Name(fmt.Sprintf("n%d", i)).Label(v1.LabelTopologyZone, "a").Obj())
			}
			snap := cache.NewEmptySnapshot()
			if !tc.changeLog {
				snap.WithoutChangeLog()
			}
			c.UpdateSnapshot(snap)
			z := &podsPerZone{lister: snap, counts: map[string]int{}}
			list, _ := snap.List()
			z.answer(list)
			z.computed = 0
			if err := c.AddPod(st.MakePod().Name("p").Node("n1").Obj()); err != nil {
				t.Fatal(err)
			}
			c.UpdateSnapshot(snap)
			behind := list[0]
			if behind.NodeName() == "n1" {
				behind = list[1]
			}
			behind.AddPod(st.MakePod().Name("q").Node(behind.NodeName()).Obj())
			z.answer(list)
			if z.computed != tc.want {
				t.Errorf("the refresh computed %d entries, want %d", z.computed, tc.want)
			}
		})
	}
}
