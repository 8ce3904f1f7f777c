package runtime

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// maxSerialMisses: a pass over nodes whose results are in the equivalence
// cache for all but this many nodes runs in the calling goroutine. A
// cached verdict or score is a load and a compare, cheaper than starting
// and waking workers for it.
const maxSerialMisses = 8

// runFilterPluginsCached is RunFilterPlugins with the cached plugins'
// verdicts taken from (or recorded into) the cycle's class.
func (f *Framework) runFilterPluginsCached(ctx context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo, cy *eqCycle) *framework.Status {
	e := cy.entry(ni)
	if e == nil {
		return f.RunFilterPlugins(ctx, state, pod, ni)
	}
	if cy.cachedOnly && e.final(cy) {
		return e.rejection // every plugin's verdict is cached: the rejection, or nil
	}
	for i, pl := range f.filter {
		step := cy.filter[i]
		if step.skip {
			continue
		}
		slot := step.slot
		if slot >= 0 && slot < e.filtered {
			if e.rejection != nil && slot == e.rejectedAt {
				return e.rejection
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
			st = f.eq.rejections.Intern(st)
			e.filtered, e.rejectedAt, e.rejection = slot+1, slot, st
		}
		return st
	}
	return nil
}

// final: in a cycle where only cached plugins run, the entry holds the
// verdict: every plugin passed, or one rejected (those before it passed,
// and the ones after it do not run).
func (e *eqEntry) final(cy *eqCycle) bool {
	return e.filtered >= cy.filteredAll || e.rejection != nil
}

// sizeNominated makes room for the verdicts with nominated pods.
func (cy *eqCycle) sizeNominated(numNodes int) {
	if cl := cy.class; cl != nil && len(cl.nominated) < numNodes {
		cl.nominated = append(cl.nominated, make([]eqNominated, numNodes-len(cl.nominated))...)
	}
}

// nominatedVerdict returns the class's verdict on ni with the nominated
// pods pods added, when recorded for ni's generation and the same pods
// (PodInfos are replaced, never changed, when their pod changes). Only a
// cycle whose every filter plugin is cached has one: the verdict is then
// a function of the class and the node's content.
func (cy *eqCycle) nominatedVerdict(ni *framework.NodeInfo, pods []*framework.PodInfo) (*framework.Status, bool) {
	if cy == nil || !cy.cachedOnly || ni.Index() < 0 || ni.Index() >= len(cy.class.nominated) {
		return nil, false
	}
	e := &cy.class.nominated[ni.Index()]
	if e.gen != ni.Generation() || e.pods == nil || !slices.Equal(e.pods, pods) {
		return nil, false
	}
	return e.status, true
}

// recordNominated records st as the class's verdict on ni with pods
// added; an error is not recorded.
func (cy *eqCycle) recordNominated(ni *framework.NodeInfo, pods []*framework.PodInfo, st *framework.Status) {
	if cy == nil || !cy.cachedOnly || ni.Index() < 0 || ni.Index() >= len(cy.class.nominated) {
		return
	}
	if !st.IsSuccess() && !st.IsRejected() {
		return
	}
	cy.class.nominated[ni.Index()] = eqNominated{gen: ni.Generation(), pods: pods, status: st}
}

// listGenerations returns the generations Options.NodeGenerations keeps
// beside its list when nodes is that list itself (not a subset PreFilter left):
// then position j of nodes is Index j and its generation is gens[j], and
// a pass reads neither from the NodeInfo. Else nil.
func (f *Framework) listGenerations(nodes []*framework.NodeInfo) []int64 {
	ng := f.opts.NodeGenerations
	if ng == nil || len(nodes) == 0 {
		return nil
	}
	gens := ng.Generations()
	list, _ := ng.List()
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
// is not cached). A node that gets nominated pods takes their verdict
// from the cache too. The caller evaluates the rest
// as without the cache; verdicts do not depend on who computes them.
func (f *Framework) FilterCachedPrefix(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, start, n int, statuses []*framework.Status) int {
	cy := f.cycleOf(state)
	if cy == nil || !cy.cachedOnly {
		return 0
	}
	return f.filterRange(ctx, state, pod, cy, nodes, start, n, statuses, maxSerialMisses)
}

// FilterRange evaluates Filter on nodes[(start+i)%len(nodes)], i < n,
// writing statuses[i], as RunFilterPluginsWithNominatedPods does for each;
// through the equivalence cache by position when it serves the cycle, so
// that the nodes it holds verdicts for are not read at all. Workers call
// it on parts of a pass.
func (f *Framework) FilterRange(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo, start, n int, statuses []*framework.Status) {
	if cy := f.cycleOf(state); cy != nil && cy.cachedOnly {
		f.filterRange(ctx, state, pod, cy, nodes, start, n, statuses, -1)
		return
	}
	j := start % len(nodes)
	for i := 0; i < n; i++ {
		statuses[i] = f.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodes[j])
		if j++; j == len(nodes) {
			j = 0
		}
	}
}

// filterRange is FilterCachedPrefix's pass, stopping at the first miss
// past maxMisses (none when negative).
func (f *Framework) filterRange(ctx context.Context, state *framework.CycleState, pod *v1.Pod, cy *eqCycle, nodes []*framework.NodeInfo, start, n int, statuses []*framework.Status, maxMisses int) int {
	view := f.nominatedView()
	entries, all := cy.class.entries, cy.filteredAll
	gens := f.listGenerations(nodes)
	// byPosition: the view's marks are by position in nodes itself, so an
	// unmarked node is known without reading its NodeInfo.
	byPosition := gens != nil && view.marksList(nodes)
	misses := 0
	j := start % len(nodes)
	for i := 0; i < n; i++ {
		var idx int
		var gen int64
		if gens != nil {
			idx, gen = j, gens[j]
		} else {
			idx, gen = nodes[j].Index(), nodes[j].Generation()
		}
		cached := idx >= 0 && idx < len(entries) && entries[idx].gen == gen && (entries[idx].filtered >= all || entries[idx].rejection != nil)
		var nominated []*framework.PodInfo
		if view != nil && (!byPosition || view.markedAt(j)) {
			nominated = f.nominatedFor(view, pod, nodes[j])
		}
		switch {
		case len(nominated) > 0:
			// Nominated pods are added to this node: their verdict first,
			// then (when they fit) the node's own.
			if st, ok := cy.nominatedVerdict(nodes[j], nominated); ok && (!st.IsSuccess() || cached) {
				if !st.IsSuccess() {
					statuses[i] = st
				} else {
					statuses[i] = entries[idx].rejection
				}
				break
			}
			if misses == maxMisses {
				return i
			}
			misses++
			statuses[i] = f.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodes[j])
		case cached:
			statuses[i] = entries[idx].rejection
		default:
			if misses == maxMisses {
				return i
			}
			misses++
			statuses[i] = f.runFilterPluginsCached(ctx, state, pod, nodes[j], cy)
		}
		if j++; j == len(nodes) {
			j = 0
		}
	}
	return n
}
