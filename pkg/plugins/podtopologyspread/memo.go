package podtopologyspread

import (
	"encoding/json"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// PreFilter's domain counts, kept across cycles. Counting every node's
// matching pods for every pod costs O(nodes) label lookups and selector
// matches per cycle, and almost every node is unchanged since the previous
// cycle of a pod of the same shape (same namespace, constraints and node
// inclusion). A memo keeps, per shape, each node's contribution and the
// aggregate; a cycle recomputes only the nodes whose NodeInfo changed
// (another pointer at that position of the snapshot's list, or another
// generation) and adjusts the aggregate by the difference.

// maxMemos bounds how many shapes are remembered; beyond, all are dropped.
const maxMemos = 64

// contribution is one node's part for one constraint.
type contribution struct {
	counted bool // the node has every key and meets the inclusion policies
	value   string
	pods    int
}

type memoEntry struct {
	ni      *framework.NodeInfo
	gen     int64
	contrib []contribution
}

// memo is the state of one pod shape.
type memo struct {
	// track says which positions changed since the last refresh.
	track   helper.ChangeTracker
	entries []memoEntry
	// counts[i] maps a domain of constraint i to its matching pods; nodes[i]
	// to the number of counted nodes in it (a domain exists while > 0).
	counts []map[string]int
	nodes  []map[string]int
	// labels holds, per position in the node list, each constraint key's
	// label value (and whether the node has it): Filter and Score read
	// them by NodeInfo.Index instead of the node's label map, which is the
	// per-node memory access that dominated their cost.
	labels nodeLabels
}

// nodeLabels are the label values of a list of nodes for a few keys,
// flattened: position*len(keys) + key.
type nodeLabels struct {
	keys   []string
	vals   []string
	has    []bool
	intern map[string]string
}

// set records node ni at position i.
func (l *nodeLabels) set(i int, ni *framework.NodeInfo) {
	nk := len(l.keys)
	if need := (i + 1) * nk; len(l.vals) < need {
		l.vals = append(l.vals, make([]string, need-len(l.vals))...)
		l.has = append(l.has, make([]bool, need-len(l.has))...)
	}
	node := ni.Node()
	for k, key := range l.keys {
		v, ok := "", false
		if node != nil {
			v, ok = node.Labels[key]
		}
		// Interned: the few distinct domain values share their bytes, so
		// hashing them for the count maps stays in cache.
		if iv, seen := l.intern[v]; seen {
			v = iv
		} else if len(l.intern) < 1<<16 {
			l.intern[v] = v
		}
		l.vals[i*nk+k], l.has[i*nk+k] = v, ok
	}
}

// at returns key k's value on ni if position ni.Index of entries is ni.
func (m *memo) at(ni *framework.NodeInfo, k int) (string, bool, bool) {
	i := ni.Index()
	if i < 0 || i >= len(m.entries) || m.entries[i].ni != ni || m.entries[i].gen != ni.Generation() {
		return "", false, false
	}
	j := i*len(m.labels.keys) + k
	return m.labels.vals[j], m.labels.has[j], true
}

// hasAll reports whether ni has every constraint's key, from the memo
// when it holds ni, else from its labels.
func (m *memo) hasAll(ni *framework.NodeInfo, cs []constraint) bool {
	for i := range cs {
		_, ok, known := m.at(ni, i)
		if !known {
			return hasAllKeys(ni.Node().Labels, cs)
		}
		if !ok {
			return false
		}
	}
	return true
}

func newMemo(keys []string) *memo {
	constraints := len(keys)
	m := &memo{counts: make([]map[string]int, constraints), nodes: make([]map[string]int, constraints),
		labels: nodeLabels{keys: keys, intern: map[string]string{}}}
	for i := range m.counts {
		m.counts[i], m.nodes[i] = map[string]int{}, map[string]int{}
	}
	return m
}

func (m *memo) apply(c []contribution, sign int) {
	for i := range c {
		if !c[i].counted {
			continue
		}
		v := c[i].value
		m.counts[i][v] += sign * c[i].pods
		m.nodes[i][v] += sign
		if m.nodes[i][v] == 0 {
			delete(m.nodes[i], v)
			delete(m.counts[i], v)
		}
	}
}

// refresh brings the aggregate up to date with nodes (lister's List),
// calling compute for the nodes that changed since the last cycle: the
// positions lister logged as changed, or every position when it can't
// tell.
func (m *memo) refresh(lister framework.SharedLister, nodes []*framework.NodeInfo, compute func(ni *framework.NodeInfo, into []contribution)) {
	visit := func(i int, ni *framework.NodeInfo) {
		e := &m.entries[i]
		if e.ni == ni && e.gen == ni.Generation() {
			return
		}
		if e.ni != nil {
			m.apply(e.contrib, -1)
		}
		e.ni, e.gen = ni, ni.Generation()
		clear(e.contrib)
		compute(ni, e.contrib)
		m.apply(e.contrib, 1)
		m.labels.set(i, ni)
	}
	if positions, all := m.track.Since(lister, nodes); !all {
		for _, i := range positions {
			visit(int(i), nodes[i])
		}
		return
	}
	for i, ni := range nodes {
		if i == len(m.entries) {
			m.entries = append(m.entries, memoEntry{contrib: make([]contribution, len(m.counts))})
		}
		visit(i, ni)
	}
	for i := len(nodes); i < len(m.entries); i++ {
		if m.entries[i].ni != nil {
			m.apply(m.entries[i].contrib, -1)
		}
	}
	m.entries = m.entries[:len(nodes)]
}

// memos holds the shapes' memos.
type memos struct {
	mu    sync.Mutex
	byKey map[string]*memo
}

// get returns the memo of a shape (whose constraints have these topology
// keys), locked: call the returned unlock when done.
func (ms *memos) get(key string, keys []string) (*memo, func()) {
	ms.mu.Lock()
	if ms.byKey == nil || len(ms.byKey) >= maxMemos {
		ms.byKey = map[string]*memo{}
	}
	m, ok := ms.byKey[key]
	if !ok {
		m = newMemo(keys)
		ms.byKey[key] = m
	}
	return m, ms.mu.Unlock
}

// shapeKey is everything a node's contribution depends on besides the
// node: the namespace, the constraints (selectors with matchLabelKeys
// merged, keys, policies) and, when a policy is Honor, the pod's node
// selection and tolerations.
func shapeKey(pod *v1.Pod, cs []constraint) string {
	var b strings.Builder
	b.WriteString(pod.Namespace)
	affinity, taints := false, false
	for i := range cs {
		c := &cs[i]
		b.WriteString("|")
		b.WriteString(c.TopologyKey)
		b.WriteString(";")
		b.WriteString(helper.SelectorKey(c.Selector))
		b.WriteString(";")
		b.WriteString(string(c.NodeAffinityPolicy))
		b.WriteString(";")
		b.WriteString(string(c.NodeTaintsPolicy))
		affinity = affinity || c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
		taints = taints || c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
	}
	if affinity {
		var required *v1.NodeSelector
		if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
			required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
		js, _ := json.Marshal(struct {
			S map[string]string
			R *v1.NodeSelector
		}{pod.Spec.NodeSelector, required})
		b.WriteString("|a")
		b.Write(js)
	}
	if taints {
		js, _ := json.Marshal(pod.Spec.Tolerations)
		b.WriteString("|t")
		b.Write(js)
	}
	return b.String()
}
