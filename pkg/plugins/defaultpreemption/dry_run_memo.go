package defaultpreemption

import (
	"slices"
	"sync"

	"github.com/kubesched/kubesched/pkg/framework"
)

// maxDryRunClasses bounds the memo: past it, the least recently used
// class and priority is dropped. One costs ~40 bytes per node.
const maxDryRunClasses = 16

// dryRunMemo remembers the dry runs that found no room: per pod class
// (CycleState.FilterClass) and priority, per node (by its position in the
// snapshot), the Filter status with every lower-priority pod removed, for
// the node's generation and the pods nominated to it then.
//
// That status is a function of exactly these: the pods removed are the
// node's pods below the priority, Filter runs only the class's cached
// plugins (their verdict is a function of the class and the node's
// content), and the nominated pods Filter adds are among the node's
// nominated pods of that moment. A pod that fits nowhere dry-runs every
// node where preemption might help at every attempt, and most of those
// nodes have not changed since the last pod of its class tried.
type dryRunMemo struct {
	mu      sync.Mutex
	tick    uint64
	classes map[dryRunKey]*dryRunClass
}

type dryRunKey struct {
	class    string
	priority int32
}

type dryRunClass struct {
	lastUsed uint64
	nodes    []dryRunFailure
}

// dryRunFailure is one node's failed dry run; status nil when none is
// known.
type dryRunFailure struct {
	gen       int64
	nominated []*framework.PodInfo
	status    *framework.Status
}

// classFor returns the memo of class and priority, sized for numNodes;
// nil when the pod has no class.
func (m *dryRunMemo) classFor(class string, priority int32, numNodes int) *dryRunClass {
	if class == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tick++
	k := dryRunKey{class, priority}
	c, ok := m.classes[k]
	if !ok {
		if m.classes == nil {
			m.classes = map[dryRunKey]*dryRunClass{}
		}
		if len(m.classes) >= maxDryRunClasses {
			var oldest dryRunKey
			first := true
			for k, c := range m.classes {
				if first || c.lastUsed < m.classes[oldest].lastUsed {
					oldest, first = k, false
				}
			}
			delete(m.classes, oldest)
		}
		c = &dryRunClass{}
		m.classes[k] = c
	}
	c.lastUsed = m.tick
	if len(c.nodes) < numNodes {
		c.nodes = append(c.nodes, make([]dryRunFailure, numNodes-len(c.nodes))...)
	}
	return c
}

// failed returns the status of ni's failed dry run when it still holds.
// A class is used by one cycle at a time.
func (c *dryRunClass) failed(ni *framework.NodeInfo, nominated []*framework.PodInfo) *framework.Status {
	if c == nil {
		return nil
	}
	i := ni.Index()
	if i < 0 || i >= len(c.nodes) {
		return nil
	}
	f := &c.nodes[i]
	if f.status == nil || f.gen != ni.Generation() || !slices.Equal(f.nominated, nominated) {
		return nil
	}
	return f.status
}

// record keeps ni's failed dry run.
func (c *dryRunClass) record(ni *framework.NodeInfo, nominated []*framework.PodInfo, st *framework.Status) {
	if c == nil {
		return
	}
	if i := ni.Index(); i >= 0 && i < len(c.nodes) {
		c.nodes[i] = dryRunFailure{gen: ni.Generation(), nominated: nominated, status: st}
	}
}
