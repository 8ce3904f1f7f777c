package questions

import (
	v1 "k8s.io/api/core/v1"
)

// canGo is the packer's guess of how many of nodes (the new nodes of a
// simulation, least used first) can go: the most m, up to most, such that
// the pods on the first m fit, first-fit largest first (the packer's
// items and fitting), in the room the others have left (each pod on a
// candidate it could run on, its DaemonSet pods' requests kept aside). It knows nothing of spreading or
// affinity: the scheduler may place fewer, which a simulation says.
func (s *packSpace) canGo(nodes []newNode, most int) int {
	// What each node's pods take, once (s.res may grow as demands are
	// read: padded when used).
	used := make([][]int64, len(nodes))
	for k, n := range nodes {
		for _, p := range n.pods {
			d := s.demand(p)
			used[k] = append(used[k], make([]int64, max(0, len(d)-len(used[k])))...)
			for j, v := range d {
				used[k][j] += v
			}
		}
	}
	fits := func(m int) bool {
		bins := make([]*vnode, 0, len(nodes)-m)
		for k, n := range nodes[m:] {
			u := make([]int64, len(s.res))
			copy(u, used[m+k])
			bins = append(bins, &vnode{cands: []int{n.cand}, used: u})
		}
		var pods []*v1.Pod
		for _, n := range nodes[:m] {
			pods = append(pods, n.pods...)
		}
		var buf []int
		for _, it := range s.items(pods, nil, nil, false) {
			placed := false
			for _, b := range bins {
				if buf = s.fitting(b, it, buf); len(buf) > 0 {
					b.add(it, buf)
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
