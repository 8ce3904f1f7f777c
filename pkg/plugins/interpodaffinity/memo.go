package interpodaffinity

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// The plugin's three memos (helper.NodeMemo): each keeps, across cycles,
// every node's contribution to one cluster-wide count and the count, and
// a cycle recounts only the nodes that changed since the memo's last one.
//
//   - incomingMemo: PreFilter's counts of the incoming pod's own required
//     terms (existing pods matching all its affinity terms, or one of its
//     anti-affinity terms, per topology domain), per set of terms.
//   - antiMemo: PreFilter's counts of existing pods' required
//     anti-affinity terms that select the incoming pod, per pod shape
//     (namespace, labels, namespace labels: what the terms match against).
//   - scoreMemo: PreScore's domain scores, per what the per-node
//     contributions read of the pod (scoreKey).

func (m pairCounts) addPair(p topologyPair, delta int64) {
	m[p] += delta
	if m[p] == 0 {
		delete(m, p)
	}
}

// optPair is a node's domain for a term's key (ok false: the node lacks it).
type optPair struct {
	topologyPair
	ok bool
}

// incomingEntry is one node's part of an incomingMemo.
type incomingEntry struct {
	// affinity: pods of the node matching all affinity terms, counted in
	// the domain affPairs[i] of each term i.
	affinity int64
	affPairs []optPair
	// anti[i]: pods matching anti-affinity term i, in antiPairs[i].
	anti      []int64
	antiPairs []optPair
}

// incomingMemo is the memo of one set of terms.
type incomingMemo struct {
	nodes          helper.NodeMemo[incomingEntry]
	affinity, anti pairCounts
}

func newIncomingMemo() *incomingMemo {
	return &incomingMemo{affinity: pairCounts{}, anti: pairCounts{}}
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

// refresh brings the counts up to date with nodes.
func (m *incomingMemo) refresh(lister framework.SharedLister, nodes []*framework.NodeInfo, affinityTerms, antiTerms []framework.AffinityTerm) {
	m.nodes.Refresh(lister, nodes, func(_ int, ni *framework.NodeInfo, e *incomingEntry) {
		e.affinity = 0
		e.affPairs = zeroed(e.affPairs, len(affinityTerms))
		e.anti = zeroed(e.anti, len(antiTerms))
		e.antiPairs = zeroed(e.antiPairs, len(antiTerms))
		node := ni.Node()
		if node == nil {
			return
		}
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
	}, m.apply)
}

// zeroed is s with length n, every element zero (s's array reused when
// large enough).
func zeroed[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// termsKey is everything an incomingEntry depends on besides the node:
// each term's namespaces (resolved), namespace selector, selector and
// topology key.
func termsKey(b []byte, affinityTerms, antiTerms []framework.AffinityTerm) []byte {
	for _, ts := range [][]framework.AffinityTerm{affinityTerms, antiTerms} {
		b = framework.AppendSigInt(b, int64(len(ts)))
		for i := range ts {
			b = helper.AppendAffinityTerm(b, &ts[i])
		}
	}
	return b
}

// scoreContrib is a matching term's weight in a node's domain.
type scoreContrib struct {
	pair   topologyPair
	weight int64
}

// scoreEntry is one node's part of a scoreMemo.
type scoreEntry struct {
	contrib []scoreContrib
	matches int
}

// scoreMemo is the memo of one scoreKey.
type scoreMemo struct {
	nodes helper.NodeMemo[scoreEntry]
	// scores aggregates the contributions per key and domain (a domain's
	// entry goes when its sum is 0 again); matches counts the matching
	// terms (PreScore skips when there are none, whatever the sums).
	scores  []keyScores
	matches int
}

func newScoreMemo() *scoreMemo { return &scoreMemo{} }

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

// refresh brings the scores up to date with nodes; compute appends a
// node's contributions to an emptied entry.
func (m *scoreMemo) refresh(lister framework.SharedLister, nodes []*framework.NodeInfo, compute func(*framework.NodeInfo, *scoreEntry)) {
	m.nodes.Refresh(lister, nodes, func(_ int, ni *framework.NodeInfo, e *scoreEntry) {
		e.contrib, e.matches = e.contrib[:0], 0
		compute(ni, e)
	}, m.apply)
}

// scoreKey is what PreScore's per-node contributions read besides the
// node: the pod's namespace, labels and namespace labels (existing pods'
// terms match against them), whether it has preferred terms (then every
// pod of a node counts), and its preferred terms with their weights.
func scoreKey(b []byte, pod *v1.Pod, nsLabels labels.Set, hasPreferred bool, preferred, preferredAnti []framework.WeightedAffinityTerm) []byte {
	b = podKey(b, pod, nsLabels)
	b = helper.AppendBool(b, hasPreferred)
	for _, ts := range [][]framework.WeightedAffinityTerm{preferred, preferredAnti} {
		b = framework.AppendSigInt(b, int64(len(ts)))
		for i := range ts {
			b = framework.AppendSigInt(b, int64(ts[i].Weight))
			b = helper.AppendAffinityTerm(b, &ts[i].AffinityTerm)
		}
	}
	return b
}

// pairCount is a node's count in one domain.
type pairCount struct {
	pair topologyPair
	n    int64
}

// antiEntry is one node's part of an antiMemo.
type antiEntry struct {
	counts []pairCount
}

// antiMemo is the memo of one pod shape (podKey).
type antiMemo struct {
	nodes  helper.NodeMemo[antiEntry]
	counts pairCounts
}

func newAntiMemo() *antiMemo { return &antiMemo{counts: pairCounts{}} }

func (m *antiMemo) apply(e *antiEntry, sign int64) {
	for _, c := range e.counts {
		m.counts.addPair(c.pair, sign*c.n)
	}
}

// refresh brings the counts up to date with nodes.
func (m *antiMemo) refresh(lister framework.SharedLister, nodes []*framework.NodeInfo, pod *v1.Pod, nsLabels labels.Set) {
	m.nodes.Refresh(lister, nodes, func(_ int, ni *framework.NodeInfo, e *antiEntry) {
		e.counts = e.counts[:0]
		node := ni.Node()
		if node == nil {
			return
		}
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
	}, m.apply)
}

// podKey is what existing pods' terms read of the incoming pod.
func podKey(b []byte, pod *v1.Pod, nsLabels labels.Set) []byte {
	b = framework.AppendSigString(b, pod.Namespace)
	b = helper.AppendLabels(b, pod.Labels)
	return helper.AppendLabels(b, nsLabels)
}
