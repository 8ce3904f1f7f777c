package plannerfuzz

import (
	"fmt"
	"math/bits"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// The resources the bounds count: cpu (millicores), memory (bytes) and
// pod slots.
const (
	resCPU = iota
	resMem
	resPods
	nRes
)

type amount [nRes]int64

func (a *amount) add(b amount) {
	for r := range a {
		a[r] += b[r]
	}
}

func (a amount) fits(b amount) bool {
	for r := range a {
		if a[r] > b[r] {
			return false
		}
	}
	return true
}

func requestsOf(p *v1.Pod) amount {
	req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	return amount{req.Cpu().MilliValue(), req.Memory().Value(), 1}
}

func allocatableOf(n *v1.Node) amount {
	a := n.Status.Allocatable
	return amount{a.Cpu().MilliValue(), a.Memory().Value(), a.Pods().Value()}
}

// bounds are the necessary conditions a count vector must meet for every
// pod to be placed, DaemonSet pods of the new nodes included; each is a
// consequence of Filter's rules alone (requests within allocatable,
// nodeSelector and taints, one pod of an anti-affine group per node), so
// a vector that fails one is infeasible whatever the scheduler's order,
// and the exhaustive search need not simulate it. Spreading and
// fragmentation are left to the simulation.
//
// The bins are the existing nodes, then the candidates (a candidate's
// bin is all its new nodes). Each pod to place can use a set of bins;
// for every union U of such sets (Hall's condition), the pods whose set
// lies within U must fit in U's room.
type bounds struct {
	nExisting int
	// net is a new node's room per candidate once its DaemonSet pods are
	// in; usable is false when they do not fit in it.
	net    []amount
	usable []bool
	// ub bounds each candidate's count: its limit, and the pods to place
	// that could use it (a node more than those holds none).
	ub []int
	// unions are the Hall sets checked.
	unions []hallSet
	// spreads are the zone spreads whose pods must all be placed.
	spreads []spread
}

// hallSet is a union of the bins' sets: its existing nodes' room, its
// candidates, and what its pods need: their requests and, for an
// anti-affine group, as many nodes as its pods within U.
type hallSet struct {
	cands    uint64
	existing amount
	nodes    int // existing nodes in U
	demand   amount
	needs    int // nodes an anti-affine group needs in U
	// sizes: for each request q of a pod within U, the pods within U
	// requesting at least q, and how many pods of q the existing nodes
	// of U hold (each alone): a node holds at most fit(room, q) of them.
	sizes []sizeNeed
}

// sizeNeed is a hallSet's count of pods requesting at least q.
type sizeNeed struct {
	q        amount
	pods     int
	existing int64
}

// fit is how many pods of request q fit in room, alone.
func fit(room, q amount) int64 {
	n := int64(-1)
	for r := range room {
		if q[r] <= 0 {
			continue
		}
		if k := max(room[r], 0) / q[r]; n < 0 || k < n {
			n = k
		}
	}
	return max(n, 0)
}

// maxUnions bounds the Hall sets kept (unions of one, two and three
// pods' sets, and all of them, first).
const maxUnions = 400

// newBounds reads the cluster (as loaded, with no new node) and the
// DaemonSet pods each candidate's node gets (daemons[i]); place says
// which pods must be placed (nil: all but the DaemonSet pods).
func newBounds(c *cluster.Cluster, types []questions.NodeType, daemons [][]*v1.Pod, place func(*v1.Pod) bool) (*bounds, error) {
	if len(c.Nodes)+len(types) > 64 {
		return nil, fmt.Errorf("%d nodes and %d candidates: the bounds handle 64 bins", len(c.Nodes), len(types))
	}
	b := &bounds{nExisting: len(c.Nodes), net: make([]amount, len(types)), usable: make([]bool, len(types)), ub: make([]int, len(types))}
	for i, t := range types {
		var ds amount
		for _, p := range daemons[i] {
			ds.add(requestsOf(p))
		}
		net := allocatableOf(t.Node)
		for r := range net {
			net[r] -= ds[r]
		}
		b.net[i], b.usable[i] = net, ds.fits(allocatableOf(t.Node))
	}
	type need struct {
		set   uint64
		req   amount
		group string
	}
	var needs []need
	eligible := map[uint64]bool{}
	for _, p := range c.Pods {
		if cluster.IsDaemonSetPod(p) || (place != nil && !place(p)) {
			continue
		}
		aff := nodeaffinity.GetRequiredNodeAffinity(p)
		req := requestsOf(p)
		var set uint64
		for i, n := range c.Nodes {
			if p.Spec.NodeName == n.Name || couldRun(p, aff, req, n, allocatableOf(n)) {
				set |= 1 << i
			}
		}
		for i, t := range types {
			if b.usable[i] && couldRun(p, aff, req, t.Node, b.net[i]) {
				set |= 1 << (b.nExisting + i)
				b.ub[i]++
			}
		}
		needs = append(needs, need{set, req, antiGroup(p)})
		eligible[set] = true
	}
	b.spreads = spreadsOf(c, types, b, place)
	for i, t := range types {
		b.ub[i] = min(b.ub[i], t.Limit)
	}
	// The unions: every pod's set, and unions of two and three, the
	// union of all first.
	sets := make([]uint64, 0, len(eligible))
	for s := range eligible {
		sets = append(sets, s)
	}
	sort.Slice(sets, func(i, j int) bool { return sets[i] < sets[j] })
	var all uint64
	for _, s := range sets {
		all |= s
	}
	seen := map[uint64]bool{}
	var unions []uint64
	addUnion := func(u uint64) {
		if !seen[u] && len(unions) < maxUnions {
			seen[u] = true
			unions = append(unions, u)
		}
	}
	addUnion(all)
	for i := range sets {
		addUnion(sets[i])
	}
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			addUnion(sets[i] | sets[j])
		}
	}
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			for k := j + 1; k < len(sets); k++ {
				addUnion(sets[i] | sets[j] | sets[k])
			}
		}
	}
	existing := make([]amount, len(c.Nodes))
	for i, n := range c.Nodes {
		existing[i] = allocatableOf(n)
	}
	for _, u := range unions {
		h := hallSet{cands: u >> b.nExisting}
		for i := range c.Nodes {
			if u&(1<<i) != 0 {
				h.existing.add(existing[i])
				h.nodes++
			}
		}
		groups := map[string]int{}
		sizes := map[amount]bool{}
		var within []amount
		for _, n := range needs {
			if n.set&^u != 0 {
				continue
			}
			h.demand.add(n.req)
			within = append(within, n.req)
			if !sizes[n.req] {
				sizes[n.req] = true
				h.sizes = append(h.sizes, sizeNeed{q: n.req})
			}
			if n.group != "" {
				groups[n.group]++
				h.needs = max(h.needs, groups[n.group])
			}
		}
		for k := range h.sizes {
			sz := &h.sizes[k]
			for _, q := range within {
				if sz.q.fits(q) {
					sz.pods++
				}
			}
			for i := range c.Nodes {
				if u&(1<<i) != 0 {
					sz.existing += fit(existing[i], sz.q)
				}
			}
		}
		b.unions = append(b.unions, h)
	}
	return b, nil
}

// couldRun: the pod's requests fit in room, its nodeSelector and
// required node affinity match the node and it tolerates the node's
// NoSchedule and NoExecute taints.
func couldRun(p *v1.Pod, aff nodeaffinity.RequiredNodeAffinity, req amount, n *v1.Node, room amount) bool {
	if !req.fits(room) {
		return false
	}
	if ok, _ := aff.Match(n); !ok {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, p.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}, true)
	return !untolerated
}

// antiGroup names the group of pods a pod's required hostname
// anti-affinity keeps one to a node ("" when it has none that selects
// the pod itself): its namespace and the term's selector.
func antiGroup(p *v1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return ""
	}
	for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if t.TopologyKey != v1.LabelHostname || t.LabelSelector == nil || len(t.Namespaces) > 0 || t.NamespaceSelector != nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		return p.Namespace + "/" + sel.String()
	}
	return ""
}

// withinBounds: no count is above its candidate's bound.
func (b *bounds) withinBounds(counts []int) bool {
	for i, k := range counts {
		if k > b.ub[i] {
			return false
		}
	}
	return true
}

// admits says whether counts meet every bound.
func (b *bounds) admits(counts []int) bool {
	for i, k := range counts {
		if k > 0 && (!b.usable[i] || k > b.ub[i]) {
			return false
		}
	}
	for _, h := range b.unions {
		room, nodes := h.existing, h.nodes
		for m := h.cands; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			k := int64(counts[i])
			for r := range room {
				room[r] += k * b.net[i][r]
			}
			nodes += counts[i]
		}
		if !h.demand.fits(room) || h.needs > nodes || !b.sizesFit(&h, counts, -1, nil, 0) {
			return false
		}
	}
	for i := range b.spreads {
		if !b.spreads[i].admits(counts, b.net) {
			return false
		}
	}
	return true
}

// couldReach says whether counts, with the candidates from `from` on
// still to choose within budget hundredths, could meet the Hall set of
// all bins: each later candidate given as many nodes as its bound and
// the budget allow alone (an over-estimate, so the pruning is safe).
func (b *bounds) couldReach(counts []int, from int, cents []int, budget int) bool {
	if len(b.unions) == 0 {
		return true
	}
	h := b.unions[0]
	room, nodes := h.existing, h.nodes
	for i := range counts {
		if h.cands&(1<<i) == 0 {
			continue
		}
		k := counts[i]
		if i >= from && b.usable[i] {
			k = b.ub[i]
			if cents[i] > 0 {
				k = min(k, budget/cents[i])
			}
		}
		for r := range room {
			room[r] += int64(k) * b.net[i][r]
		}
		nodes += k
	}
	return h.demand.fits(room) && h.needs <= nodes && b.sizesFit(&h, counts, from, cents, budget)
}

// sizesFit checks h's sizes against counts, the candidates from `from`
// on (when from >= 0) given as many nodes as the budget allows each.
func (b *bounds) sizesFit(h *hallSet, counts []int, from int, cents []int, budget int) bool {
	for _, sz := range h.sizes {
		held := sz.existing
		for m := h.cands; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			k := counts[i]
			if from >= 0 && i >= from {
				k = 0
				if b.usable[i] {
					k = b.ub[i]
					if cents[i] > 0 {
						k = min(k, budget/cents[i])
					}
				}
			}
			held += int64(k) * fit(b.net[i], sz.q)
		}
		if held < int64(sz.pods) {
			return false
		}
	}
	return true
}
