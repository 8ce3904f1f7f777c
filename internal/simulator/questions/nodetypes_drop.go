package questions

import (
	"sort"

	v1 "k8s.io/api/core/v1"
)

// canGo is the packer's guess of how many of nodes (the new nodes of a
// simulation, least used first) can go: the most m, up to most, such that
// the pods on the first m fit, first-fit largest first, in the room the
// others have left (each pod on a candidate it could run on, its
// DaemonSet pods' requests kept aside). It knows nothing of spreading or
// affinity: the scheduler may place fewer, which a simulation says.
func (s *packSpace) canGo(nodes []newNode, most int) int {
	fits := func(m int) bool {
		type bin struct {
			cand int
			free []int64
		}
		bins := make([]bin, 0, len(nodes)-m)
		for _, n := range nodes[m:] {
			free := make([]int64, len(s.res))
			copy(free, s.room[n.cand])
			for _, p := range n.pods {
				for j, v := range s.demand(p) {
					if j < len(free) {
						free[j] -= v
					}
				}
			}
			bins = append(bins, bin{n.cand, free})
		}
		var pods []*v1.Pod
		for _, n := range nodes[:m] {
			pods = append(pods, n.pods...)
		}
		demands := make([][]int64, len(pods))
		for i, p := range pods {
			demands[i] = s.demand(p)
		}
		order := make([]int, len(pods))
		for i := range order {
			order[i] = i
		}
		cpu := s.resAt[v1.ResourceCPU]
		sort.SliceStable(order, func(a, b int) bool { return demands[order[a]][cpu] > demands[order[b]][cpu] })
		for _, i := range order {
			cands := s.candidates(pods[i])
			placed := false
			for b := range bins {
				if !cands[bins[b].cand] {
					continue
				}
				ok := true
				for j, v := range demands[i] {
					if j < len(bins[b].free) && bins[b].free[j] < v {
						ok = false
						break
					}
				}
				if ok {
					for j, v := range demands[i] {
						if j < len(bins[b].free) {
							bins[b].free[j] -= v
						}
					}
					placed = true
					break
				}
			}
			if !placed {
				return false
			}
		}
		return true
	}
	lo, hi := 0, most+1 // lo fits; hi does not (or is past most)
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if fits(m) {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}
