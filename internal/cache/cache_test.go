package cache

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	st "github.com/kubesched/kubesched/internal/testing"
)

type rl = map[v1.ResourceName]string

func newCache() *Cache { return New(klog.Background()) }

func node(name string) *v1.Node {
	return st.MakeNode().Name(name).Capacity(rl{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj()
}

func requestedCPU(t *testing.T, c *Cache, n string) int64 {
	t.Helper()
	ni, ok := c.Dump()[n]
	if !ok {
		return 0
	}
	return ni.Requested().MilliCPU
}

func TestAssumedPodLifecycle(t *testing.T) {
	pod := st.MakePod().Name("p").Node("n").Req(rl{v1.ResourceCPU: "1"}).Obj()
	tests := []struct {
		name string
		// steps after AssumePod
		run     func(t *testing.T, c *Cache)
		wantCPU int64
		wantAss bool
	}{
		{name: "an assumed pod counts on its node at once", run: func(*testing.T, *Cache) {}, wantCPU: 1000, wantAss: true},
		{name: "forgetting an assumed pod frees its resources", run: func(t *testing.T, c *Cache) {
			if err := c.ForgetPod(pod); err != nil {
				t.Fatal(err)
			}
		}, wantCPU: 0},
		{name: "an assumed pod stays counted while the world has not confirmed it (no expiry)", run: func(t *testing.T, c *Cache) {
			// kube-scheduler v1.37's cache has no TTL: a watch that lags
			// behind the Binding must not un-count the pod.
			snap := NewEmptySnapshot()
			for i := 0; i < 3; i++ {
				c.UpdateSnapshot(snap)
			}
		}, wantCPU: 1000, wantAss: true},
		{name: "a confirmed pod is no longer assumed and stays counted", run: func(t *testing.T, c *Cache) {
			if err := c.AddPod(pod); err != nil {
				t.Fatal(err)
			}
		}, wantCPU: 1000},
		{name: "a pod the world bound elsewhere moves there", run: func(t *testing.T, c *Cache) {
			moved := pod.DeepCopy()
			moved.Spec.NodeName = "m"
			if err := c.AddPod(moved); err != nil {
				t.Fatal(err)
			}
			if got := requestedCPU(t, c, "m"); got != 1000 {
				t.Errorf("cpu on m = %d, want 1000", got)
			}
		}, wantCPU: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCache()
			c.AddNode(node("n"))
			c.AddNode(node("m"))
			if err := c.AssumePod(pod); err != nil {
				t.Fatal(err)
			}
			tt.run(t, c)
			if got := requestedCPU(t, c, "n"); got != tt.wantCPU {
				t.Errorf("cpu requested on n = %dm, want %dm", got, tt.wantCPU)
			}
			if got := c.IsAssumedPod(pod); got != tt.wantAss {
				t.Errorf("assumed = %v, want %v", got, tt.wantAss)
			}
		})
	}
}

func TestAssumingTwiceFails(t *testing.T) {
	c := newCache()
	pod := st.MakePod().Name("p").Node("n").Obj()
	if err := c.AssumePod(pod); err != nil {
		t.Fatal(err)
	}
	if err := c.AssumePod(pod); err == nil {
		t.Error("second AssumePod succeeded, want an error")
	}
	// A pod the cache does not hold has nothing to undo (upstream's
	// ForgetPod returns nil); one it holds as added is not assumed.
	if err := c.ForgetPod(st.MakePod().Name("other").Node("n").Obj()); err != nil {
		t.Errorf("ForgetPod of a pod the cache does not hold: %v, want nil", err)
	}
	added := st.MakePod().Name("added").UID("uid-added").Node("n").Obj()
	if err := c.AddPod(added); err != nil {
		t.Fatal(err)
	}
	if err := c.ForgetPod(added); err == nil {
		t.Error("ForgetPod of an added pod succeeded, want an error")
	}
}

func TestRemovedNodeKeepsItsPodsUntilTheyGo(t *testing.T) {
	c := newCache()
	pod := st.MakePod().Name("p").Node("n").Req(rl{v1.ResourceCPU: "1"}).Obj()
	c.AddNode(node("n"))
	if err := c.AddPod(pod); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveNode(node("n")); err != nil {
		t.Fatal(err)
	}
	snap := NewEmptySnapshot()
	c.UpdateSnapshot(snap)
	if snap.NumNodes() != 0 {
		t.Fatalf("snapshot has %d nodes after the node was removed, want 0", snap.NumNodes())
	}
	c.AddNode(node("n"))
	c.UpdateSnapshot(snap)
	ni, err := snap.Get("n")
	if err != nil {
		t.Fatal(err)
	}
	if ni.Requested().MilliCPU != 1000 {
		t.Errorf("re-added node has %dm cpu requested, want its pod's 1000m still counted", ni.Requested().MilliCPU)
	}
	if err := c.RemovePod(pod); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveNode(node("n")); err != nil {
		t.Fatal(err)
	}
	if n, p := c.Counts(); n != 0 || p != 0 {
		t.Errorf("counts = %d nodes, %d pods; want 0, 0", n, p)
	}
}

func TestUpdateSnapshotCopiesOnlyChangedNodes(t *testing.T) {
	c := newCache()
	for _, n := range []string{"a", "b", "c", "d"} {
		c.AddNode(node(n))
	}
	snap := NewEmptySnapshot()
	if got := c.UpdateSnapshot(snap); got != 4 {
		t.Errorf("first update copied %d nodes, want 4", got)
	}
	if got := c.UpdateSnapshot(snap); got != 0 {
		t.Errorf("update without changes copied %d nodes, want 0", got)
	}
	if err := c.AddPod(st.MakePod().Name("p").Node("c").Req(rl{v1.ResourceCPU: "1"}).Obj()); err != nil {
		t.Fatal(err)
	}
	if got := c.UpdateSnapshot(snap); got != 1 {
		t.Errorf("update after one pod copied %d nodes, want 1", got)
	}
	ni, _ := snap.Get("c")
	if ni.Requested().MilliCPU != 1000 {
		t.Errorf("snapshot of c has %dm requested, want 1000m", ni.Requested().MilliCPU)
	}
	if snap.NumNodes() != 4 {
		t.Errorf("snapshot has %d nodes, want 4", snap.NumNodes())
	}
}

func TestSnapshotOrderInterleavesZones(t *testing.T) {
	c := newCache()
	for _, n := range []struct{ name, zone string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}, {"c1", "c"}, {"c2", "c"}} {
		c.AddNode(st.MakeNode().Name(n.name).Label(v1.LabelTopologyZone, n.zone).Obj())
	}
	snap := NewEmptySnapshot()
	c.UpdateSnapshot(snap)
	list, _ := snap.List()
	var got []string
	for _, ni := range list {
		got = append(got, ni.NodeName())
	}
	want := []string{"a1", "b1", "c1", "a2", "c2"}
	if len(got) != len(want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order = %v, want %v", got, want)
		}
	}
}

func TestSnapshotLogsWhichPositionsChanged(t *testing.T) {
	c := New(klog.Background())
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(node(n))
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	list, _ := s.List()
	_, mark, _ := s.ChangesSince(0)
	pos := func(name string) int32 {
		ni, _ := s.Get(name)
		return int32(ni.Index())
	}

	if got, _, ok := s.ChangesSince(mark); !ok || len(got) != 0 {
		t.Fatalf("nothing changed: ChangesSince = %v, %v; want no positions, ok", got, ok)
	}
	if err := c.AddPod(st.MakePod().Name("p").UID("p").Node("b").Obj()); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	got, next, ok := s.ChangesSince(mark)
	if !ok || len(got) != 1 || got[0] != pos("b") {
		t.Fatalf("a pod added to b: ChangesSince = %v, %v; want [%d], ok", got, ok, pos("b"))
	}
	if _, _, ok := s.ChangesSince(next + 1); ok {
		t.Errorf("a mark from the future was accepted")
	}
	c.AddNode(node("d"))
	c.UpdateSnapshot(s)
	if _, _, ok := s.ChangesSince(next); ok {
		t.Errorf("a node was added (the list rebuilt), yet an older mark was accepted")
	}
	if l2, _ := s.List(); len(l2) != len(list)+1 {
		t.Fatalf("list has %d nodes, want %d", len(l2), len(list)+1)
	}
	if _, _, ok := NewSnapshot().ChangesSince(0); ok {
		t.Errorf("a snapshot built from NodeInfos claims to log changes")
	}
	if _, _, ok := NewEmptySnapshot().WithoutChangeLog().ChangesSince(0); ok {
		t.Errorf("a snapshot without its change log claims to log changes")
	}
}
