package podtopologyspread

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// PreFilter's and PreScore's domain counts, kept across cycles in memos
// (helper.NodeMemo), one per pod shape (memoKey: what a node's
// contribution depends on besides the node): each keeps every node's
// contribution and the aggregate, and a cycle recounts only the nodes that
// changed since the shape's last one.

// contribution is one node's part for one constraint.
type contribution struct {
	counted bool // the node has every key and meets the inclusion policies
	value   string
	pods    int
}

// memo is the state of one pod shape.
type memo struct {
	// nodes holds each node's contribution per constraint.
	nodes helper.NodeMemo[[]contribution]
	// counts[i] maps a domain of constraint i to its matching pods;
	// domains[i] to the number of counted nodes in it (a domain exists
	// while > 0).
	counts  []map[string]int
	domains []map[string]int
	// labels holds, per position in the node list, each constraint key's
	// label value (and whether the node has it): Filter and Score read
	// them by position instead of from the node's label map.
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

// at returns key k's value on ni if the memo holds ni as it is now.
func (m *memo) at(ni *framework.NodeInfo, k int) (v string, ok, known bool) {
	i := m.nodes.Position(ni)
	if i < 0 {
		return "", false, false
	}
	j := i*len(m.labels.keys) + k
	return m.labels.vals[j], m.labels.has[j], true
}

// label is constraint k's key (key) value on ni, and whether ni has it:
// from the memo (m may be nil) when it holds ni as it is now (known),
// else from ni's labels.
func (m *memo) label(ni *framework.NodeInfo, k int, key string) (v string, ok, known bool) {
	if m != nil {
		if v, ok, known = m.at(ni, k); known {
			return v, ok, true
		}
	}
	v, ok = ni.Node().Labels[key]
	return v, ok, false
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
	m := &memo{counts: make([]map[string]int, constraints), domains: make([]map[string]int, constraints),
		labels: nodeLabels{keys: keys, intern: map[string]string{}}}
	for i := range m.counts {
		m.counts[i], m.domains[i] = map[string]int{}, map[string]int{}
	}
	return m
}

func (m *memo) apply(c *[]contribution, sign int64) {
	for i, c := range *c {
		if !c.counted {
			continue
		}
		m.counts[i][c.value] += int(sign) * c.pods
		m.domains[i][c.value] += int(sign)
		if m.domains[i][c.value] == 0 {
			delete(m.domains[i], c.value)
			delete(m.counts[i], c.value)
		}
	}
}

// refresh brings the aggregate up to date with nodes (lister's List),
// calling compute, with a zeroed contribution per constraint, for the
// nodes that changed since the last cycle.
func (m *memo) refresh(lister framework.SharedLister, nodes []*framework.NodeInfo, compute func(ni *framework.NodeInfo, into []contribution)) {
	m.nodes.Refresh(lister, nodes, func(i int, ni *framework.NodeInfo, c *[]contribution) {
		if *c == nil {
			*c = make([]contribution, len(m.counts))
		} else {
			clear(*c)
		}
		compute(ni, *c)
		m.labels.set(i, ni)
	}, m.apply)
}

// contributionAt is constraint k's contribution of ni, which must be held
// (at returned known).
func (m *memo) contributionAt(ni *framework.NodeInfo, k int) contribution {
	return (*m.nodes.Entry(ni.Index()))[k]
}

// Which count a memo keeps: PreFilter's, or PreScore's (whose rules
// differ, and differ again when every key is required).
const (
	filterMemo byte = iota
	scoreMemo
	scoreMemoRequireAll
)

// memoKey is everything a node's contribution depends on besides the
// node: which count, the namespace, the constraints (selectors with
// matchLabelKeys merged, keys, policies) and, when a policy is Honor, the
// pod's node selection and tolerations.
func memoKey(b []byte, kind byte, pod *v1.Pod, cs []constraint) []byte {
	b = append(b, kind)
	b = framework.AppendSigString(b, pod.Namespace)
	b = framework.AppendSigInt(b, int64(len(cs)))
	affinity, taints := false, false
	for i := range cs {
		c := &cs[i]
		b = framework.AppendSigString(b, c.TopologyKey)
		b = helper.AppendSelector(b, c.Selector)
		b = framework.AppendSigString(b, string(c.NodeAffinityPolicy))
		b = framework.AppendSigString(b, string(c.NodeTaintsPolicy))
		affinity = affinity || c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor
		taints = taints || c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor
	}
	b = helper.AppendBool(b, affinity)
	if affinity {
		var required *v1.NodeSelector
		if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
			required = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
		}
		b = helper.AppendLabels(b, pod.Spec.NodeSelector)
		js, _ := json.Marshal(required)
		b = framework.AppendSigBytes(b, js)
	}
	b = helper.AppendBool(b, taints)
	if taints {
		b = framework.AppendSigTolerations(b, pod.Spec.Tolerations)
	}
	return b
}
