package defaultpreemption

import (
	"math"
	"sync"

	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// lowestPriorities remembers, per node (by its position in the snapshot)
// and for the node's generation, the lowest priority of its pods. A dry
// run on a node whose pods all have the preemptor's priority or more has
// no victim to find; a pod that fits nowhere asks this of every node of
// the cluster at every attempt, and most nodes have not changed since.
type lowestPriorities struct {
	mu      sync.Mutex
	entries []lowestPriority
}

type lowestPriority struct {
	gen    int64
	lowest int32
	known  bool
}

// of returns the lowest priority of ni's pods (MaxInt32 for none).
func (l *lowestPriorities) of(ni *framework.NodeInfo) int32 {
	i := ni.Index()
	if i < 0 {
		return scanLowest(ni)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if i >= len(l.entries) {
		l.entries = append(l.entries, make([]lowestPriority, i+1-len(l.entries))...)
	}
	e := &l.entries[i]
	if !e.known || e.gen != ni.Generation() {
		*e = lowestPriority{gen: ni.Generation(), lowest: scanLowest(ni), known: true}
	}
	return e.lowest
}

func scanLowest(ni *framework.NodeInfo) int32 {
	lowest := int32(math.MaxInt32)
	for _, pi := range ni.Pods() {
		lowest = min(lowest, corev1helpers.PodPriority(pi.Pod))
	}
	return lowest
}
