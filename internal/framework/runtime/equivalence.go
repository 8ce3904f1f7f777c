package runtime

import (
	"slices"

	"github.com/kubesched/kubesched/pkg/framework"
)

// maxEquivalenceClasses bounds the cache: past it, the least recently used
// class is dropped. A class costs ~40 bytes per node plus 16 per cached
// score plugin per node.
const maxEquivalenceClasses = 64

// equivalenceCache keeps, per class of pods (equal signatures for every
// framework.EquivalencePlugin of the profile) and per node, the Filter
// statuses and raw scores of those plugins, valid while the node's
// NodeInfo.Generation is unchanged. Two NodeInfos with the same generation
// have the same content (pkg/framework's NodeInfo enforces it), so an entry
// recorded for a generation holds for any NodeInfo of that generation.
//
// The cache is keyed by the node's position in the snapshot's list
// (NodeInfo.Index) and checked against its generation.
//
// A framework runs one scheduling cycle at a time; within a cycle, Filter
// and Score run in parallel over nodes and each touches only its node's
// entry. The files:
//
//   - equivalence.go: the cache, its classes and entries;
//   - equivalence_key.go: a pod's class and the cycle's view of the plugins;
//   - equivalence_filter.go: Filter through the cache;
//   - equivalence_score.go: Score through the cache.
type equivalenceCache struct {
	// plugins are the distinct equivalence plugins, in a fixed order: a
	// class's key is made of their signatures, in this order.
	plugins []framework.EquivalencePlugin
	// filter[i] says how the cache sees the framework's i-th filter
	// plugin, score[i] its i-th score plugin.
	filter, score []cachedPlugin
	// numScore is how many score plugins are cached: the scores of a
	// class hold numScore cells per node.
	numScore int
	classes  map[string]*eqClass
	tick     uint64
	// partialSets are the sets of score slots whose weighted sum an entry
	// has kept (eqEntry.partialSet is an index here plus one).
	partialSets [][]int

	// state is the CycleState of the cycle the cache serves, and cycle
	// that cycle's view (built by beginCycle, valid while state is the
	// framework's current cycle). A CycleState that is not state, such as
	// a clone made for a speculative evaluation (preemption), runs
	// without the cache.
	state *framework.CycleState
	cycle eqCycle

	// rejections interns the rejections the classes keep: nodes that
	// reject a pod for the same reason share one status, which FitError
	// counts by pointer.
	rejections framework.StatusInterner

	// key and sig are scratch for building a class's key in beginCycle.
	key, sig []byte
}

// cachedPlugin is a filter or score plugin as the cache sees it.
type cachedPlugin struct {
	// plugin is its index in equivalenceCache.plugins, -1 when it is not
	// an equivalence plugin (it then runs every cycle).
	plugin int
	// slot numbers the cached filter (or score) plugins in the framework's
	// order: entries record filter verdicts by slot, scores are kept by
	// slot. -1 when not cached.
	slot int
}

// eqClass is one class of pods: per node (by Index), its entry and the
// score cells of the cached score plugins.
type eqClass struct {
	key     string
	entries []eqEntry
	scores  []scoreCell // node index * numScore + score slot
	// nominated holds, per node index, the verdict with nominated pods
	// added (sized only once some pod is nominated).
	nominated []eqNominated
	lastUsed  uint64
}

// eqNominated is a class's Filter verdict on a node of generation gen
// with the nominated pods pods added (in that order): nil for success.
type eqNominated struct {
	gen    int64
	pods   []*framework.PodInfo
	status *framework.Status
}

// eqEntry is what a class knows about one node, for the node's generation
// gen.
type eqEntry struct {
	gen int64
	// filtered counts the cached filter plugins (by slot, in order) whose
	// verdict on this generation is known: every slot below filtered
	// passed, except rejectedAt when rejection is not nil (the last one
	// evaluated: a rejection ends the evaluation).
	filtered   int
	rejectedAt int
	rejection  *framework.Status
	// partial is the weighted sum of the scores of the cached plugins
	// that do not normalize, when partialSet is not 0: the sum is over
	// the score slots partialSets[partialSet-1].
	partial    int64
	partialSet int
}

// scoreCell is one cached raw score, valid for the node generation gen.
type scoreCell struct {
	gen   int64
	score int64
}

func newEquivalenceCache(f *Framework) *equivalenceCache {
	c := &equivalenceCache{classes: map[string]*eqClass{}}
	index := map[string]int{}
	// add returns pl's index in c.plugins, or -1.
	add := func(pl framework.Plugin) int {
		ep, ok := pl.(framework.EquivalencePlugin)
		if !ok {
			return -1
		}
		if i, ok := index[pl.Name()]; ok {
			return i
		}
		index[pl.Name()] = len(c.plugins)
		c.plugins = append(c.plugins, ep)
		return len(c.plugins) - 1
	}
	numFilter := 0
	for _, pl := range f.filter {
		cp := cachedPlugin{plugin: add(pl), slot: -1}
		if cp.plugin >= 0 {
			cp.slot = numFilter
			numFilter++
		}
		c.filter = append(c.filter, cp)
	}
	for _, pl := range f.score {
		cp := cachedPlugin{plugin: add(pl.ScorePlugin), slot: -1}
		if cp.plugin >= 0 {
			cp.slot = c.numScore
			c.numScore++
		}
		c.score = append(c.score, cp)
	}
	if len(c.plugins) == 0 {
		return nil
	}
	return c
}

// cycleOf returns the view of the cycle whose state is state, nil when
// the cache does not serve it (no cache, no class, or another state).
func (f *Framework) cycleOf(state *framework.CycleState) *eqCycle {
	if f.eq == nil || state == nil || state != f.eq.state {
		return nil
	}
	return &f.eq.cycle
}

// class returns the class of key, creating it (and evicting the least
// recently used class when the cache is full), sized for numNodes.
func (c *equivalenceCache) class(key []byte, numNodes int) *eqClass {
	c.tick++
	cl, ok := c.classes[string(key)]
	if !ok {
		if len(c.classes) >= maxEquivalenceClasses {
			c.evict()
		}
		cl = &eqClass{key: string(key)}
		c.classes[cl.key] = cl
	}
	cl.lastUsed = c.tick
	if len(cl.entries) < numNodes {
		cl.entries = append(cl.entries, make([]eqEntry, numNodes-len(cl.entries))...)
		cl.scores = append(cl.scores, make([]scoreCell, numNodes*c.numScore-len(cl.scores))...)
	}
	return cl
}

func (c *equivalenceCache) evict() {
	var oldest *eqClass
	for _, cl := range c.classes {
		if oldest == nil || cl.lastUsed < oldest.lastUsed {
			oldest = cl
		}
	}
	delete(c.classes, oldest.key)
}

// partialSetOf returns the number of the set of score slots (one plus its
// index in partialSets), recording it when new.
func (c *equivalenceCache) partialSetOf(slots []int) int {
	for i, s := range c.partialSets {
		if slices.Equal(s, slots) {
			return i + 1
		}
	}
	c.partialSets = append(c.partialSets, append([]int(nil), slots...))
	return len(c.partialSets)
}
