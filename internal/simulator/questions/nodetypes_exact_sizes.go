package questions

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// sizeNeeds is the exact search's bin-packing bound: a node holds only
// whole pods, so the room of a count vector summed over its nodes says
// too little (fifteen 3-CPU pods do not fit on ten 4-CPU nodes and ten
// 2-CPU ones). For each size q of the pods that need a place, the pods
// at least that large in every resource must fit q-sized slots: those of
// the new nodes of the candidates they can use, and of the existing
// nodes. A vector short of slots for some size places no more than the
// slots, whatever the scheduler does, and is not simulated.
type sizeNeeds struct {
	groups []sizeGroup
}

type sizeGroup struct {
	// pods: the pods needing a place at least this size; cands, the
	// candidates any of them can use, and fit[i] how many such slots one
	// new node of candidate i has; existing, the existing nodes' slots.
	pods     int
	cands    []int
	fit      []int64
	existing int64
}

// newSizeNeeds reads the pods of c (as loaded: no new node) that have no
// node yet, but the DaemonSet pods and those of floor, and the room of
// c's nodes. The room an existing node keeps for them is its allocatable
// less its pods that no pending pod can preempt (of no lower priority
// than the highest pending one; not terminating, not finished) and its
// own DaemonSet pods: a bound, not what the scheduler will do.
func (s *packSpace) newSizeNeeds(c *cluster.Cluster, floor map[string]bool) *sizeNeeds {
	var pods []*v1.Pod
	top := int32(-1 << 31)
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" || floor[p.Namespace+"/"+p.Name] {
			continue
		}
		top = max(top, corev1helpers.PodPriority(p))
		if !cluster.IsDaemonSetPod(p) {
			pods = append(pods, p)
		}
	}
	items := s.items(pods, nil, nil, false)
	used := map[string]v1.ResourceList{}
	take := func(node string, p *v1.Pod) {
		u := used[node]
		if u == nil {
			u = v1.ResourceList{}
			used[node] = u
		}
		for r, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			sum := u[r]
			sum.Add(q)
			u[r] = sum
		}
		n := u[v1.ResourcePods]
		n.Add(resource.MustParse("1"))
		u[v1.ResourcePods] = n
	}
	for _, p := range c.Pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue // its room may be free by the time it is needed
		}
		switch {
		case p.Spec.NodeName != "" && corev1helpers.PodPriority(p) >= top:
			take(p.Spec.NodeName, p)
		case p.Spec.NodeName == "" && cluster.IsDaemonSetPod(p) && !floor[p.Namespace+"/"+p.Name]:
			take(cluster.DaemonPodNode(p), p)
		}
	}
	existing := make([][]int64, len(c.Nodes))
	for k, n := range c.Nodes {
		existing[k] = s.nodeRoom(n, used[n.Name])
	}
	sn := &sizeNeeds{}
	seen := map[string]bool{}
	for _, it := range items {
		key := fmt.Sprint(it.demand)
		if seen[key] {
			continue
		}
		seen[key] = true
		g := sizeGroup{fit: make([]int64, len(s.types))}
		in := make([]bool, len(s.types))
		for _, o := range items {
			if !atLeast(o.demand, it.demand) {
				continue
			}
			g.pods++
			for i, ok := range o.cands {
				in[i] = in[i] || ok
			}
		}
		for i, ok := range in {
			if ok && s.room[i] != nil {
				g.cands = append(g.cands, i)
				g.fit[i] = slots(s.room[i], it.demand, g.pods)
			}
		}
		for _, room := range existing {
			g.existing += slots(room, it.demand, g.pods)
		}
		if g.existing < int64(g.pods) {
			sn.groups = append(sn.groups, g)
		}
	}
	return sn
}

// admits: counts' new nodes and the existing ones have a slot for every
// pod of every size.
func (z *sizeNeeds) admits(counts []int) bool {
	for _, g := range z.groups {
		have := g.existing
		for _, i := range g.cands {
			have += int64(counts[i]) * g.fit[i]
		}
		if have < int64(g.pods) {
			return false
		}
	}
	return true
}

// atLeast: d is no less than q in any resource.
func atLeast(d, q []int64) bool {
	for j, v := range q {
		if j >= len(d) || d[j] < v {
			return false
		}
	}
	return true
}

// slots is how many pods of demand q fit in room, at most most.
func slots(room, q []int64, most int) int64 {
	n := int64(most)
	for j, v := range q {
		if v <= 0 {
			continue
		}
		r := int64(0)
		if j < len(room) {
			r = max(0, room[j])
		}
		n = min(n, r/v)
	}
	return n
}
