// Package memocheck checks a plugin's memos (helper.NodeMemo) against a
// recount: it changes a cluster at random, as a scheduler's cache sees it
// change between cycles, and after every step asks the same question of
// a plugin that has followed every step (its memos refreshed
// incrementally) and of a new plugin (its memos computed from scratch).
// Any difference is a memo bug: a node's change that the memo missed, a
// contribution subtracted wrongly, or two shapes sharing a memo key.
package memocheck

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Config is a random run. The run is a function of Seed: a failure
// reproduces.
type Config struct {
	Seed int64
	// Steps is how many steps to take (300 when 0); a step makes zero to
	// three changes, then compares.
	Steps int
	// Nodes is how many nodes the cluster starts with (30 when 0).
	Nodes int
	// Node makes a node named name, or its new version when the node
	// changes; nil: DefaultNode.
	Node func(r *rand.Rand, name string) *v1.Node
	// Pod makes an existing pod named name on node; nil: DefaultPod.
	Pod func(r *rand.Rand, name, node string) *v1.Pod
}

// Zones are the zones of DefaultNode.
var Zones = []string{"a", "b", "c"}

// DefaultNode is a node in one of Zones, or, one time in five, without
// the zone label.
func DefaultNode(r *rand.Rand, name string) *v1.Node {
	n := st.MakeNode().Name(name)
	if r.Intn(5) > 0 {
		n.Label(v1.LabelTopologyZone, Zones[r.Intn(len(Zones))])
	}
	return n.Obj()
}

// DefaultPod is a pod labeled app=web, api or db.
func DefaultPod(r *rand.Rand, name, node string) *v1.Pod {
	return st.MakePod().Name(name).Label("app", []string{"web", "api", "db"}[r.Intn(3)]).Node(node).Obj()
}

// Cluster is the changing cluster: a scheduler cache and the snapshot it
// keeps up to date. It is the framework.SharedLister the plugins list
// nodes from; the snapshot it serves is replaced when a step rebuilds it.
type Cluster struct {
	r     *rand.Rand
	cfg   Config
	cache *cache.Cache
	snap  *cache.Snapshot
	nodes []string  // the nodes' names
	pods  []*v1.Pod // the pods in the cache, some on nodes gone
	next  int
}

// NodeInfos implements framework.SharedLister: the current snapshot.
func (c *Cluster) NodeInfos() framework.NodeInfoLister { return c.snap }

// List is the current snapshot's node list, as the scheduler passes it to
// PreFilter.
func (c *Cluster) List() []*framework.NodeInfo {
	list, _ := c.snap.List()
	return list
}

// Run takes cfg.Steps random steps. newPlugin builds a plugin listing nodes
// from lister; answer asks it the step's question (e.g. runs PreFilter for
// one of a few pods, by step, and returns the counts it wrote). After each
// step the answer of the plugin built at the start must equal that of a
// new one (cmp.Diff with opts).
func Run[P any](t *testing.T, cfg Config, newPlugin func(lister framework.SharedLister) P, answer func(pl P, step int, nodes []*framework.NodeInfo) any, opts ...cmp.Option) {
	t.Helper()
	c := newCluster(cfg)
	memoized := newPlugin(c)
	for step := 0; step < c.cfg.Steps; step++ {
		var did []string
		for k := c.r.Intn(4); k > 0; k-- {
			did = append(did, c.change(t, step))
		}
		c.cache.UpdateSnapshot(c.snap)
		got := answer(memoized, step, c.List())
		want := answer(newPlugin(c), step, c.List())
		if diff := cmp.Diff(want, got, opts...); diff != "" {
			t.Fatalf("seed %d, step %d (after %v): the memoized answer differs from a recount (-recount,+memo):\n%s", cfg.Seed, step, did, diff)
		}
	}
}

func newCluster(cfg Config) *Cluster {
	if cfg.Steps == 0 {
		cfg.Steps = 300
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = 30
	}
	if cfg.Node == nil {
		cfg.Node = DefaultNode
	}
	if cfg.Pod == nil {
		cfg.Pod = DefaultPod
	}
	c := &Cluster{r: rand.New(rand.NewSource(cfg.Seed)), cfg: cfg, cache: cache.New(klog.Background()), snap: cache.NewEmptySnapshot()}
	for i := 0; i < cfg.Nodes; i++ {
		c.addNode()
	}
	c.cache.UpdateSnapshot(c.snap)
	return c
}

func (c *Cluster) addNode() {
	name := fmt.Sprintf("n%03d", c.next)
	c.next++
	c.cache.AddNode(c.cfg.Node(c.r, name))
	c.nodes = append(c.nodes, name)
}

// change makes one random change and says which.
func (c *Cluster) change(t *testing.T, step int) string {
	r := c.r
	switch op := r.Intn(12); {
	case op < 4: // a pod lands on a node
		p := c.cfg.Pod(r, fmt.Sprintf("x%d-%d", step, c.next), c.nodes[r.Intn(len(c.nodes))])
		c.next++
		if err := c.cache.AddPod(p); err != nil {
			t.Fatal(err)
		}
		c.pods = append(c.pods, p)
		return "pod added"
	case op < 6 && len(c.pods) > 0: // a pod goes
		i := r.Intn(len(c.pods))
		if err := c.cache.RemovePod(c.pods[i]); err != nil {
			t.Fatal(err)
		}
		c.pods = append(c.pods[:i], c.pods[i+1:]...)
		return "pod removed"
	case op == 6: // a node joins
		c.addNode()
		return "node added"
	case op == 7 && len(c.nodes) > 5: // a node leaves (its pods stay counted until removed)
		i := r.Intn(len(c.nodes))
		if err := c.cache.RemoveNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.nodes[i]}}); err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes[:i], c.nodes[i+1:]...)
		return "node removed"
	case op == 8: // the scheduler starts over with a new snapshot, with or without a change log
		c.snap = cache.NewEmptySnapshot()
		if r.Intn(2) == 0 {
			c.snap.WithoutChangeLog()
		}
		return "snapshot rebuilt"
	default: // a node changes (labels, taints)
		name := c.nodes[r.Intn(len(c.nodes))]
		c.cache.UpdateNode(nil, c.cfg.Node(r, name))
		return "node changed"
	}
}
