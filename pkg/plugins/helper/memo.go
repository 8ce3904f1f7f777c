package helper

import (
	"sync"

	"github.com/kubesched/kubesched/pkg/framework"
)

// A memo keeps a cluster-wide aggregate (pods per topology domain, scores
// per domain, ...) across scheduling cycles, as the sum of per-node
// contributions. Counting every existing pod of every node in every cycle
// is O(pods) selector matches, while almost every node is unchanged since
// the previous cycle of a pod that reads the same things; a memo recounts
// only the nodes that changed and moves the aggregate by the difference.
//
// NodeMemo is the per-node half: one entry E per position of the
// snapshot's node list, with the NodeInfo and generation it was computed
// from. The plugin owns the aggregate; Refresh calls back to subtract a
// node's old entry from it and add the new one. MemoSet holds the memos of
// one plugin, one per key: the key encodes everything an entry depends on
// besides the node (the pod's terms, constraints, namespace, ...).

// NodeMemo holds one entry per position of a snapshot's node list.
type NodeMemo[E any] struct {
	track changeTracker
	slots []memoSlot[E]
}

// memoSlot is a position's entry and the node it was computed from (ni nil:
// never computed).
type memoSlot[E any] struct {
	ni    *framework.NodeInfo
	gen   int64
	entry E
}

// Refresh brings the memo up to date with nodes, which must be lister's
// List for the lister's change log to be used (any other list, or a lister
// without one, is compared node by node). For each position whose node is
// another NodeInfo or another generation than its entry's: apply(entry,
// -1) if the entry was computed before, compute(position, node, entry),
// apply(entry, +1). compute overwrites the entry (it may reuse its
// slices). Entries past the end of nodes are subtracted and dropped.
func (m *NodeMemo[E]) Refresh(lister framework.SharedLister, nodes []*framework.NodeInfo,
	compute func(i int, ni *framework.NodeInfo, e *E), apply func(e *E, sign int64)) {
	visit := func(i int) {
		s, ni := &m.slots[i], nodes[i]
		if s.ni == ni && s.gen == ni.Generation() {
			return
		}
		if s.ni != nil {
			apply(&s.entry, -1)
		}
		s.ni, s.gen = ni, ni.Generation()
		compute(i, ni, &s.entry)
		apply(&s.entry, 1)
	}
	if positions, all := m.track.since(lister, nodes); !all {
		// The list has the length and the slots of the last refresh.
		for _, i := range positions {
			visit(int(i))
		}
		return
	}
	for i := len(nodes); i < len(m.slots); i++ {
		if m.slots[i].ni != nil {
			apply(&m.slots[i].entry, -1)
		}
	}
	if len(m.slots) > len(nodes) {
		clear(m.slots[len(nodes):])
		m.slots = m.slots[:len(nodes)]
	}
	for i := range nodes {
		if i == len(m.slots) {
			m.slots = append(m.slots, memoSlot[E]{})
		}
		visit(i)
	}
}

// Position is ni's position in the list of the last Refresh when the
// entry there was computed from ni as it is now (same NodeInfo, same
// generation), else -1. Filter and Score use it to read what PreFilter and
// PreScore computed instead of reading the node again.
func (m *NodeMemo[E]) Position(ni *framework.NodeInfo) int {
	i := ni.Index()
	if i < 0 || i >= len(m.slots) || m.slots[i].ni != ni || m.slots[i].gen != ni.Generation() {
		return -1
	}
	return i
}

// Entry is the entry at position i (0 <= i < the list's length at the last
// Refresh).
func (m *NodeMemo[E]) Entry(i int) *E { return &m.slots[i].entry }

// MaxMemos bounds how many memos a MemoSet keeps.
const MaxMemos = 64

// MemoSet holds up to MaxMemos memos by key. A key missing when the set is
// full evicts the memo used least recently. Lock and Unlock bracket the use
// of a memo: one memo is in use at a time.
type MemoSet[M any] struct {
	mu    sync.Mutex
	byKey map[string]*keptMemo[M]
	clock uint64
}

type keptMemo[M any] struct {
	m    *M
	used uint64
}

// Lock locks the set and returns the memo of key, made by create when the
// set has none. key is a signature (framework.AppendSig* and the Append*
// of this package): two keys are equal only when what they encode is. The
// set copies the key when it keeps it; the caller may reuse its buffer.
func (s *MemoSet[M]) Lock(key []byte, create func() *M) *M {
	s.mu.Lock()
	s.clock++
	if k, ok := s.byKey[string(key)]; ok {
		k.used = s.clock
		return k.m
	}
	if s.byKey == nil {
		s.byKey = map[string]*keptMemo[M]{}
	}
	if len(s.byKey) >= MaxMemos {
		var oldest string
		used := s.clock
		for key, k := range s.byKey {
			if k.used < used {
				oldest, used = key, k.used
			}
		}
		delete(s.byKey, oldest)
	}
	k := &keptMemo[M]{m: create(), used: s.clock}
	s.byKey[string(key)] = k
	return k.m
}

// Unlock releases the set locked by Lock.
func (s *MemoSet[M]) Unlock() { s.mu.Unlock() }

// Len is the number of memos kept.
func (s *MemoSet[M]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byKey)
}
