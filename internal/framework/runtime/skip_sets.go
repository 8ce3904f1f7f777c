package runtime

import (
	"slices"
	"sync"

	"github.com/kubesched/kubesched/pkg/framework"
)

// skipSets hands out the lists of plugins that returned Skip at PreFilter
// or PreScore. A cycle collects its skips as a mask of the plugins'
// indexes and gets the one list made for that mask, in plugin order (what
// Insert one by one made, and allocated, every cycle: four growths a pod).
// The lists are never written: CycleState.Clone copies them, and each has
// its length for capacity, so an append makes a copy.
type skipSets struct {
	mu    sync.Mutex
	lists map[uint64]framework.PluginNames
}

// maxSkipPlugins is how many plugins a mask can index.
const maxSkipPlugins = 64

// list returns the list of the plugins in mask, name(i) naming plugin i;
// nil for none.
func (s *skipSets) list(mask uint64, n int, name func(int) string) framework.PluginNames {
	if mask == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.lists[mask]; ok {
		return l
	}
	var l framework.PluginNames
	for i := 0; i < n; i++ {
		if mask&(1<<i) != 0 {
			l = append(l, name(i))
		}
	}
	l = slices.Clip(l)
	if s.lists == nil {
		s.lists = map[uint64]framework.PluginNames{}
	}
	s.lists[mask] = l
	return l
}
