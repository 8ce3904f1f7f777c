package runtime

import (
	"github.com/kubesched/kubesched/pkg/framework"
)

// A class's key is, for each equivalence plugin in the cache's order, a
// tag and, when the plugin signs the pod, its signature length-prefixed;
// then the indexes of the cached filter plugins skipped this cycle. Each
// part delimits itself, so two keys are equal only when every plugin's
// part is.
const (
	keyDeclined byte = 0 // the plugin declined to cache this pod
	keySigned   byte = 1 // the plugin's signature follows
)

// eqCycle is the cache's view of one cycle: the pod's class and how the
// cycle runs each filter and score plugin of the framework.
type eqCycle struct {
	class *eqClass
	// declined[k]: plugins[k] declined to cache this pod.
	declined []bool
	// filter[i] is how the cycle runs the framework's i-th filter plugin.
	filter []filterStep
	// scoreSlot[i] is the framework's i-th score plugin's slot this cycle,
	// -1 when its scores are not cached (not an equivalence plugin, or it
	// declined this pod).
	scoreSlot []int
	// cachedOnly: every filter plugin that runs this cycle is cached, so
	// an entry with a rejection, or whose filtered has reached
	// filteredAll, holds the verdict (eqEntry.final) and needs no plugin
	// call.
	cachedOnly  bool
	filteredAll int
}

// filterStep is how a cycle runs one filter plugin.
type filterStep struct {
	// skip: the plugin's PreFilter returned Skip.
	skip bool
	// slot is its cache slot this cycle, -1 when its verdicts are not
	// cached (not an equivalence plugin, declined, or skipped).
	slot int
}

// beginCycle makes the cache serve the cycle of state: it computes the
// pod's class, creating it, and the cycle's view of the plugins. When
// every plugin declines to cache this pod the cache serves no cycle.
// numNodes sizes the class.
func (c *equivalenceCache) beginCycle(state *framework.CycleState, pi *framework.PodInfo, skip framework.PluginNames, filter []framework.FilterPlugin, numNodes int) {
	c.state = nil
	cy := &c.cycle
	cy.declined = resize(cy.declined, len(c.plugins))
	key := c.key[:0]
	signed := false
	for k, pl := range c.plugins {
		sig, ok := pl.AppendPodSignature(c.sig[:0], pi)
		c.sig = sig[:0]
		cy.declined[k] = !ok
		if !ok {
			key = append(key, keyDeclined)
			continue
		}
		signed = true
		key = append(key, keySigned)
		key = framework.AppendSigBytes(key, sig)
	}
	if !signed {
		c.key = key
		return
	}
	cy.filter = resize(cy.filter, len(filter))
	cy.cachedOnly, cy.filteredAll = true, 0
	for i, pl := range filter {
		cp := c.filter[i]
		step := filterStep{skip: skip.Has(pl.Name()), slot: -1}
		switch {
		case step.skip:
			if cp.slot >= 0 {
				// A skipped cached plugin is part of the class.
				key = framework.AppendSigInt(key, int64(i))
			}
		case cp.slot >= 0 && !cy.declined[cp.plugin]:
			step.slot = cp.slot
			cy.filteredAll = cp.slot + 1
		default:
			cy.cachedOnly = false
		}
		cy.filter[i] = step
	}
	cy.scoreSlot = resize(cy.scoreSlot, len(c.score))
	for i, cp := range c.score {
		cy.scoreSlot[i] = -1
		if cp.slot >= 0 && !cy.declined[cp.plugin] {
			cy.scoreSlot[i] = cp.slot
		}
	}
	c.key = key
	cy.class = c.class(key, numNodes)
	c.state = state
}

// resize returns s with length n, reusing its array when large enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// entry returns the entry of ni, reset if it is of another generation;
// nil when ni has no place in the class.
func (cy *eqCycle) entry(ni *framework.NodeInfo) *eqEntry {
	if ni.Index() < 0 || ni.Index() >= len(cy.class.entries) {
		return nil
	}
	e := &cy.class.entries[ni.Index()]
	if e.gen != ni.Generation() {
		*e = eqEntry{gen: ni.Generation()}
	}
	return e
}
