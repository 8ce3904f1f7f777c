package interpodaffinity

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// PreFilter's counts of the incoming pod's own required terms (existing
// pods matching all its affinity terms, or one of its anti-affinity
// terms, per topology domain) kept across cycles, as PodTopologySpread's
// memo does: counting every existing pod of every node for every pod is
// O(pods) selector matches per cycle, and almost every node is unchanged
// since the previous cycle of a pod with the same terms. A memo keeps, per
// set of terms, each node's contribution and the aggregate; a cycle
// recounts only the nodes whose NodeInfo changed (another pointer at that
// position of the snapshot's list, or another generation).

// maxMemos bounds how many term sets are remembered; beyond, all are dropped.
const maxMemos = 64

type incomingEntry struct {
	ni  *framework.NodeInfo
	gen int64
	// affinity: pods of the node matching all affinity terms, counted in
	// the domain affPairs[i] of each term i (ok false: the node lacks the key).
	affinity int64
	affPairs []optPair
	// anti[i]: pods matching anti-affinity term i, in antiPairs[i].
	anti      []int64
	antiPairs []optPair
}

type optPair struct {
	topologyPair
	ok bool
}

// incomingMemo is the state of one set of terms.
type incomingMemo struct {
	track          helper.ChangeTracker
	entries        []incomingEntry
	affinity, anti pairCounts
}

func (m *incomingMemo) apply(e *incomingEntry, sign int64) {
	if e.affinity != 0 {
		for _, p := range e.affPairs {
			if p.ok {
				m.affinity.addPair(p.topologyPair, sign*e.affinity)
			}
		}
	}
	for i, n := range e.anti {
		if n != 0 && e.antiPairs[i].ok {
			m.anti.addPair(e.antiPairs[i].topologyPair, sign*n)
		}
	}
}

func (m pairCounts) addPair(p topologyPair, delta int64) {
	m[p] += delta
	if m[p] == 0 {
		delete(m, p)
	}
}

// refresh brings the aggregates up to date with nodes.
func (m *incomingMemo) refresh(lister framework.SharedLister, nodes []*framework.NodeInfo, affinityTerms, antiTerms []framework.AffinityTerm) {
	positions, all := m.track.Since(lister, nodes)
	for k := 0; ; k++ {
		var i int
		if all {
			if i = k; i == len(nodes) {
				break
			}
		} else {
			if k == len(positions) {
				return // only the changed positions: the list's length is the same
			}
			i = int(positions[k])
		}
		ni := nodes[i]
		if i == len(m.entries) {
			m.entries = append(m.entries, incomingEntry{affPairs: make([]optPair, len(affinityTerms)),
				anti: make([]int64, len(antiTerms)), antiPairs: make([]optPair, len(antiTerms))})
		}
		e := &m.entries[i]
		if e.ni == ni && e.gen == ni.Generation() {
			continue
		}
		if e.ni != nil {
			m.apply(e, -1)
		}
		e.ni, e.gen, e.affinity = ni, ni.Generation(), 0
		clear(e.anti)
		clear(e.affPairs)
		clear(e.antiPairs)
		if node := ni.Node(); node != nil {
			for t := range affinityTerms {
				v, ok := node.Labels[affinityTerms[t].TopologyKey]
				e.affPairs[t] = optPair{topologyPair{affinityTerms[t].TopologyKey, v}, ok}
			}
			for t := range antiTerms {
				v, ok := node.Labels[antiTerms[t].TopologyKey]
				e.antiPairs[t] = optPair{topologyPair{antiTerms[t].TopologyKey, v}, ok}
			}
			for _, existing := range ni.Pods() {
				if matchesAllTerms(affinityTerms, existing.Pod, nil) {
					e.affinity++
				}
				for t := range antiTerms {
					if antiTerms[t].Matches(existing.Pod, nil) {
						e.anti[t]++
					}
				}
			}
		}
		m.apply(e, 1)
	}
	for i := len(nodes); i < len(m.entries); i++ {
		if m.entries[i].ni != nil {
			m.apply(&m.entries[i], -1)
		}
	}
	m.entries = m.entries[:len(nodes)]
}

// memos holds the term sets' memos.
type memos struct {
	mu    sync.Mutex
	byKey map[string]*incomingMemo
}

// get returns the memo of a set of terms, locked: call unlock when done.
func (ms *memos) get(key string) (*incomingMemo, func()) {
	ms.mu.Lock()
	if ms.byKey == nil || len(ms.byKey) >= maxMemos {
		ms.byKey = map[string]*incomingMemo{}
	}
	m, ok := ms.byKey[key]
	if !ok {
		m = &incomingMemo{affinity: pairCounts{}, anti: pairCounts{}}
		ms.byKey[key] = m
	}
	return m, ms.mu.Unlock
}

// termsKey is everything a node's contribution depends on besides the
// node: each term's namespaces (resolved), namespace selector, selector
// and topology key.
func termsKey(affinityTerms, antiTerms []framework.AffinityTerm) string {
	var b strings.Builder
	write := func(ts []framework.AffinityTerm) {
		for i := range ts {
			t := &ts[i]
			ns := make([]string, 0, t.Namespaces.Len())
			for n := range t.Namespaces {
				ns = append(ns, n)
			}
			sort.Strings(ns)
			b.WriteString(strings.Join(ns, ","))
			b.WriteString(";")
			b.WriteString(helper.SelectorKey(t.NamespaceSelector))
			b.WriteString(";")
			b.WriteString(helper.SelectorKey(t.Selector))
			b.WriteString(";")
			b.WriteString(t.TopologyKey)
			b.WriteString("|")
		}
	}
	write(affinityTerms)
	b.WriteString("#")
	write(antiTerms)
	return b.String()
}

// PreScore's domain scores, kept across cycles in the same way: per pod
// "shape" (what the per-node contributions depend on besides the node),
// each node's matching terms and the aggregate.

type scoreContrib struct {
	pair   topologyPair
	weight int64
}

type scoreEntry struct {
	ni      *framework.NodeInfo
	gen     int64
	contrib []scoreContrib
	matches int
}

type scoreMemo struct {
	track   helper.ChangeTracker
	entries []scoreEntry
	// scores aggregates the contributions per key and domain (a domain's
	// entry goes when its sum is 0 again); matches counts the matching
	// terms (PreScore skips when there are none, whatever the sums).
	scores  []keyScores
	matches int
}

func (m *scoreMemo) apply(e *scoreEntry, sign int64) {
	m.matches += int(sign) * e.matches
	for _, c := range e.contrib {
		i := 0
		for i < len(m.scores) && m.scores[i].key != c.pair.key {
			i++
		}
		if i == len(m.scores) {
			m.scores = append(m.scores, keyScores{key: c.pair.key, values: map[string]int64{}})
		}
		v := m.scores[i].values
		v[c.pair.value] += sign * c.weight
		if v[c.pair.value] == 0 {
			delete(v, c.pair.value)
		}
	}
}

func (m *scoreMemo) refresh(lister framework.SharedLister, nodes []*framework.NodeInfo, compute func(*framework.NodeInfo, *scoreEntry)) {
	positions, all := m.track.Since(lister, nodes)
	for k := 0; ; k++ {
		var i int
		if all {
			if i = k; i == len(nodes) {
				break
			}
		} else {
			if k == len(positions) {
				return
			}
			i = int(positions[k])
		}
		ni := nodes[i]
		if i == len(m.entries) {
			m.entries = append(m.entries, scoreEntry{})
		}
		e := &m.entries[i]
		if e.ni == ni && e.gen == ni.Generation() {
			continue
		}
		if e.ni != nil {
			m.apply(e, -1)
		}
		e.ni, e.gen, e.contrib, e.matches = ni, ni.Generation(), e.contrib[:0], 0
		compute(ni, e)
		m.apply(e, 1)
	}
	for i := len(nodes); i < len(m.entries); i++ {
		if m.entries[i].ni != nil {
			m.apply(&m.entries[i], -1)
		}
	}
	m.entries = m.entries[:len(nodes)]
}

type scoreMemos struct {
	mu    sync.Mutex
	byKey map[string]*scoreMemo
}

func (ms *scoreMemos) get(key string) (*scoreMemo, func()) {
	ms.mu.Lock()
	if ms.byKey == nil || len(ms.byKey) >= maxMemos {
		ms.byKey = map[string]*scoreMemo{}
	}
	m, ok := ms.byKey[key]
	if !ok {
		m = &scoreMemo{}
		ms.byKey[key] = m
	}
	return m, ms.mu.Unlock
}

// scoreKey is what PreScore's per-node contributions read besides the
// node: the pod's namespace, labels and namespace labels (existing pods'
// terms match against them), whether it has preferred terms (then every
// pod of a node counts), and its preferred terms with their weights.
func scoreKey(pod *v1.Pod, nsLabels labels.Set, hasPreferred bool, preferred, preferredAnti []framework.WeightedAffinityTerm) string {
	var b strings.Builder
	b.WriteString(pod.Namespace)
	b.WriteString("|")
	b.WriteString(labels.Set(pod.Labels).String())
	b.WriteString("|")
	b.WriteString(nsLabels.String())
	fmt.Fprintf(&b, "|%v|", hasPreferred)
	for _, ts := range [][]framework.WeightedAffinityTerm{preferred, preferredAnti} {
		plain := make([]framework.AffinityTerm, len(ts))
		for i := range ts {
			plain[i] = ts[i].AffinityTerm
			fmt.Fprintf(&b, "%d,", ts[i].Weight)
		}
		b.WriteString(termsKey(plain, nil))
		b.WriteString("#")
	}
	return b.String()
}

// PreFilter's counts of existing pods' required anti-affinity terms that
// select the incoming pod, kept across cycles likewise, per pod shape
// (namespace, labels, namespace labels: what the terms match against).

type antiEntry struct {
	ni     *framework.NodeInfo
	gen    int64
	counts []pairCount
}

type pairCount struct {
	pair topologyPair
	n    int64
}

type antiMemo struct {
	track   helper.ChangeTracker
	entries []antiEntry
	counts  pairCounts
}

func (m *antiMemo) apply(e *antiEntry, sign int64) {
	for _, c := range e.counts {
		m.counts.addPair(c.pair, sign*c.n)
	}
}

func (m *antiMemo) refresh(lister framework.SharedLister, nodes []*framework.NodeInfo, pod *v1.Pod, nsLabels labels.Set) {
	positions, all := m.track.Since(lister, nodes)
	for k := 0; ; k++ {
		var i int
		if all {
			if i = k; i == len(nodes) {
				break
			}
		} else {
			if k == len(positions) {
				return
			}
			i = int(positions[k])
		}
		ni := nodes[i]
		if i == len(m.entries) {
			m.entries = append(m.entries, antiEntry{})
		}
		e := &m.entries[i]
		if e.ni == ni && e.gen == ni.Generation() {
			continue
		}
		if e.ni != nil {
			m.apply(e, -1)
		}
		e.ni, e.gen, e.counts = ni, ni.Generation(), e.counts[:0]
		if node := ni.Node(); node != nil {
			for _, existing := range ni.PodsWithRequiredAntiAffinity() {
				for t := range existing.RequiredAntiAffinityTerms {
					term := &existing.RequiredAntiAffinityTerms[t]
					v, ok := node.Labels[term.TopologyKey]
					if !ok || !term.Matches(pod, nsLabels) {
						continue
					}
					p := topologyPair{term.TopologyKey, v}
					j := 0
					for j < len(e.counts) && e.counts[j].pair != p {
						j++
					}
					if j == len(e.counts) {
						e.counts = append(e.counts, pairCount{pair: p})
					}
					e.counts[j].n++
				}
			}
		}
		m.apply(e, 1)
	}
	for i := len(nodes); i < len(m.entries); i++ {
		if m.entries[i].ni != nil {
			m.apply(&m.entries[i], -1)
		}
	}
	m.entries = m.entries[:len(nodes)]
}

type antiMemos struct {
	mu    sync.Mutex
	byKey map[string]*antiMemo
}

func (ms *antiMemos) get(key string) (*antiMemo, func()) {
	ms.mu.Lock()
	if ms.byKey == nil || len(ms.byKey) >= maxMemos {
		ms.byKey = map[string]*antiMemo{}
	}
	m, ok := ms.byKey[key]
	if !ok {
		m = &antiMemo{counts: pairCounts{}}
		ms.byKey[key] = m
	}
	return m, ms.mu.Unlock
}

// podKey is what existing pods' terms read of the incoming pod.
func podKey(pod *v1.Pod, nsLabels labels.Set) string {
	return pod.Namespace + "|" + labels.Set(pod.Labels).String() + "|" + nsLabels.String()
}
