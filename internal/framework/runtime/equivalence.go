package runtime

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// maxEquivalenceClasses bounds the cache: past it, the least recently used
// class is dropped. A class costs ~32 bytes per node plus 8 per cached
// score plugin per node.
const maxEquivalenceClasses = 64

// equivalenceCache keeps, per class of pods (equal signatures for every
// framework.EquivalencePlugin of the profile) and per node, the Filter
// statuses and raw scores of those plugins, valid while the node's
// NodeInfo.Generation is unchanged. Generations are unique over every
// mutation of every NodeInfo (copies share the generation only while
// their content is equal), so a stale entry is always seen as stale.
//
// Scheduling cycles of one framework run one at a time; within a cycle,
// Filter and Score run in parallel over nodes and each touches only its
// node's entry.
type equivalenceCache struct {
	// filterSlot[i] is the i-th filter plugin's index among the cached
	// filter plugins, or -1; scoreSlot likewise for score plugins.
	// filterPlugin[i] and scorePlugin[i] are their indexes in plugins.
	filterSlot, filterPlugin []int
	scoreSlot, scorePlugin   []int
	numScore                 int
	// plugins are the distinct equivalence plugins, in a fixed order: the
	// signature is their signatures concatenated.
	plugins []framework.EquivalencePlugin
	classes map[string]*eqClass
	buf     []byte
	tick    uint64
}

type eqClass struct {
	key      string
	entries  []eqEntry
	scores   []int64 // node index * numScore + score slot
	lastUsed uint64
}

type eqEntry struct {
	gen int64
	// filtered counts the cached filter plugins evaluated, in order (the
	// rejecting one included); st is the rejection, at slot failAt.
	st       *framework.Status
	filtered int16
	failAt   int16
	// scored has bit k set when score slot k holds this generation's score.
	scored uint64
	// partial is the weighted sum of the scores of the cached plugins that
	// do not normalize, in the slots of partialMask, when hasPartial.
	partial     int64
	partialMask uint64
	hasPartial  bool
}

// eqCycle is one cycle's view: the pod's class, the per-cycle skip flags
// aligned with the framework's filter plugins, and the equivalence
// plugins that declined to cache this pod (bit i: plugins[i]).
type eqCycle struct {
	class      *eqClass
	skipFilter []bool
	declined   uint64
	// cachedOnly: every filter plugin that runs this cycle is cached, and
	// lastSlot+1 is how many cached slots a fully evaluated entry has; an
	// entry that passed them all needs no plugin call at all.
	cachedOnly bool
	lastSlot   int16
}

// filterSlot is filter plugin i's cache slot this cycle, or -1.
func (c *equivalenceCache) filterSlotOf(cy *eqCycle, i int) int16 {
	if s := c.filterSlot[i]; s >= 0 && cy.declined&(1<<c.filterPlugin[i]) == 0 {
		return int16(s)
	}
	return -1
}

// scoreSlotOf is score plugin i's cache slot this cycle, or -1.
func (c *equivalenceCache) scoreSlotOf(cy *eqCycle, i int) int {
	if s := c.scoreSlot[i]; s >= 0 && cy.declined&(1<<c.scorePlugin[i]) == 0 {
		return s
	}
	return -1
}

func newEquivalenceCache(f *Framework) *equivalenceCache {
	c := &equivalenceCache{classes: map[string]*eqClass{}}
	index := map[string]int{}
	// add returns pl's index in c.plugins, or -1 (at most 64 plugins).
	add := func(pl framework.Plugin) int {
		ep, ok := pl.(framework.EquivalencePlugin)
		if !ok {
			return -1
		}
		if i, ok := index[pl.Name()]; ok {
			return i
		}
		if len(c.plugins) == 64 {
			return -1
		}
		index[pl.Name()] = len(c.plugins)
		c.plugins = append(c.plugins, ep)
		return len(c.plugins) - 1
	}
	n := 0
	for _, pl := range f.filter {
		slot, p := -1, add(pl)
		if p >= 0 {
			slot = n
			n++
		}
		c.filterSlot, c.filterPlugin = append(c.filterSlot, slot), append(c.filterPlugin, p)
	}
	for _, pl := range f.score {
		slot, p := -1, add(pl.ScorePlugin)
		if p >= 0 && c.numScore < 64 {
			slot = c.numScore
			c.numScore++
		}
		c.scoreSlot, c.scorePlugin = append(c.scoreSlot, slot), append(c.scorePlugin, p)
	}
	if len(c.plugins) == 0 {
		return nil
	}
	return c
}

// beginCycle returns the pod's class, creating it, or nil when every
// plugin declines to cache this pod. numNodes sizes the class.
func (c *equivalenceCache) beginCycle(pi *framework.PodInfo, skip framework.PluginNames, filter []framework.FilterPlugin, numNodes int) *eqCycle {
	b := c.buf[:0]
	cy := &eqCycle{skipFilter: make([]bool, len(filter))}
	for i, pl := range c.plugins {
		var ok bool
		start := len(b)
		if b, ok = pl.AppendPodSignature(b, pi); !ok {
			b = append(b[:start], 0xfe) // declined: part of the class
			cy.declined |= 1 << i
			continue
		}
		b = append(b, 0xff)
	}
	if cy.declined == 1<<len(c.plugins)-1 {
		c.buf = b
		return nil
	}
	for i, pl := range filter {
		if skip.Has(pl.Name()) {
			cy.skipFilter[i] = true
			if c.filterSlot[i] >= 0 {
				b = append(b, byte(i)) // a skipped cached plugin is part of the class
			}
		}
	}
	cy.cachedOnly, cy.lastSlot = true, -1
	for i := range filter {
		if cy.skipFilter[i] {
			continue
		}
		if s := c.filterSlotOf(cy, i); s >= 0 {
			cy.lastSlot = s
		} else {
			cy.cachedOnly = false
		}
	}
	c.buf = b
	c.tick++
	cl, ok := c.classes[string(b)]
	if !ok {
		if len(c.classes) >= maxEquivalenceClasses {
			c.evict()
		}
		cl = &eqClass{key: string(b)}
		c.classes[cl.key] = cl
	}
	cl.lastUsed = c.tick
	if len(cl.entries) < numNodes {
		cl.entries = append(cl.entries, make([]eqEntry, numNodes-len(cl.entries))...)
		cl.scores = append(cl.scores, make([]int64, numNodes*c.numScore-len(cl.scores))...)
	}
	cy.class = cl
	return cy
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

// entry returns ni's entry, reset if it is of another generation; nil
// when ni has no slot in the class.
func (cy *eqCycle) entry(ni *framework.NodeInfo) *eqEntry {
	if ni.Index < 0 || ni.Index >= len(cy.class.entries) {
		return nil
	}
	e := &cy.class.entries[ni.Index]
	if e.gen != ni.Generation {
		*e = eqEntry{gen: ni.Generation}
	}
	return e
}

// runFilterPluginsCached is RunFilterPlugins with the cached plugins'
// verdicts taken from (or recorded into) the cycle's class.
func (f *Framework) runFilterPluginsCached(ctx context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, cy *eqCycle) *framework.Status {
	e := cy.entry(ni)
	if e == nil {
		return f.RunFilterPlugins(ctx, state, pod, ni)
	}
	if cy.cachedOnly && e.filtered > cy.lastSlot {
		return e.st // every plugin's verdict is cached: the rejection, or nil
	}
	for i, pl := range f.filter {
		if cy.skipFilter[i] {
			continue
		}
		slot := f.eq.filterSlotOf(cy, i)
		if slot >= 0 && slot < e.filtered {
			if slot == e.failAt && e.st != nil {
				return e.st
			}
			continue
		}
		st := f.runFilter(ctx, pl, state, pod, ni)
		if st.IsSuccess() {
			if slot >= 0 {
				e.filtered = slot + 1
			}
			continue
		}
		if !st.IsRejected() {
			// Errors are not cached: the next cycle tries again.
			return framework.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), st.AsError())).WithPlugin(pl.Name())
		}
		st = st.WithPlugin(pl.Name())
		if slot >= 0 {
			e.filtered, e.failAt, e.st = slot+1, slot, st
		}
		return st
	}
	return nil
}

// cachedScore returns the raw score of a cached score plugin on ni (whose
// entry is e), computing and recording it when missing.
func (f *Framework) cachedScore(ctx context.Context, pl framework.ScorePlugin, slot int, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, cy *eqCycle, e *eqEntry) (int64, *framework.Status) {
	at := ni.Index*f.eq.numScore + slot
	if e.scored&(1<<slot) != 0 {
		return cy.class.scores[at], nil
	}
	s, st := runScore(ctx, pl, state, pod, ni)
	if st.IsSuccess() {
		cy.class.scores[at] = s
		e.scored |= 1 << slot
	}
	return s, st
}

// maxSerialMisses: a pass over nodes whose results are in the equivalence
// cache for all but this many nodes runs in the calling goroutine. A cached
// verdict or score is a load and a compare; starting and waking workers for
// a few hundred of them costs more than the pass (SchedulingBasic: ~30% of
// the scheduling CPU went to goroutine starts and futex wake-ups).
const maxSerialMisses = 8

// listGenerations returns the generations kept beside the snapshot's
// list when nodes is that list, else nil.
func (f *Framework) listGenerations(nodes []*framework.NodeInfo) []int64 {
	if f.opts.Snapshot == nil || len(nodes) == 0 {
		return nil
	}
	nl := f.opts.Snapshot.NodeInfos()
	ng, ok := nl.(framework.NodeGenerations)
	if !ok {
		return nil
	}
	gens := ng.Generations()
	list, _ := nl.List()
	if len(gens) != len(nodes) || len(list) != len(nodes) || &list[0] != &nodes[0] {
		return nil
	}
	return gens
}

// FilterCachedPrefix evaluates Filter on nodes[(start+i)%len(nodes)],
// i < n, in the calling goroutine, writing statuses[i]: from the
// equivalence cache, running the plugins for at most maxSerialMisses
// nodes whose verdicts it does not hold. It returns how many nodes it
// evaluated: n, or the position of the first miss past that bound, or 0
// when the cache cannot serve this cycle (no class, a filter plugin that
// is not cached, pods nominated somewhere). The caller evaluates the rest
// as without the cache; verdicts do not depend on who computes them.
func (f *Framework) FilterCachedPrefix(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, start, n int, statuses []*framework.Status) int {
	cy, ok := state.Equivalence.(*eqCycle)
	if !ok || !cy.cachedOnly || (f.opts.Nominator != nil && f.opts.Nominator.HasNominatedPods()) {
		return 0
	}
	entries, last := cy.class.entries, cy.lastSlot
	misses := 0
	j := start % len(nodes)
	if gens := f.listGenerations(nodes); gens != nil {
		// nodes is the snapshot's list: position j is Index j, and its
		// generation is gens[j]; a warm window touches no NodeInfo.
		for i := 0; i < n; i++ {
			if j < len(entries) {
				if e := &entries[j]; e.gen == gens[j] && e.filtered > last {
					statuses[i] = e.st
					if j++; j == len(nodes) {
						j = 0
					}
					continue
				}
			}
			if misses == maxSerialMisses {
				return i
			}
			misses++
			statuses[i] = f.runFilterPluginsCached(ctx, state, pod, nodes[j], cy)
			if j++; j == len(nodes) {
				j = 0
			}
		}
		return n
	}
	for i := 0; i < n; i++ {
		ni := nodes[j]
		if j++; j == len(nodes) {
			j = 0
		}
		if idx := ni.Index; idx >= 0 && idx < len(entries) {
			if e := &entries[idx]; e.gen == ni.Generation && e.filtered > last {
				statuses[i] = e.st
				continue
			}
		}
		if misses == maxSerialMisses {
			return i
		}
		misses++
		statuses[i] = f.runFilterPluginsCached(ctx, state, pod, ni, cy)
	}
	return n
}

// scoresCached is FiltersCached for the score plugins of this cycle, whose
// cache slots are slots (-1: not cached).
func (cy *eqCycle) scoresCached(nodes []*framework.NodeInfo, slots []int) bool {
	var need uint64
	for _, s := range slots {
		if s < 0 {
			return false
		}
		need |= 1 << s
	}
	misses := 0
	for _, ni := range nodes {
		if ni.Index < 0 || ni.Index >= len(cy.class.entries) {
			return false
		}
		if e := &cy.class.entries[ni.Index]; e.gen != ni.Generation || e.scored&need != need {
			if misses++; misses > maxSerialMisses {
				return false
			}
		}
	}
	return true
}
