package loading

import (
	"maps"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// interner shares equal resource lists between the objects of one load:
// the pods of a workload request the same, the nodes of a pool have the
// same capacity, and each decoded list is a map of quantities that
// would otherwise be held once per object. Shared lists are never
// written: the loader's defaulting copies a list before it adds to it
// (defaultContainers).
type interner struct {
	mu    sync.Mutex
	lists map[string]v1.ResourceList
	buf   []byte
	// specs and statuses are the shared members of share.go.
	specs    map[string]v1.PodSpec
	statuses map[string]v1.NodeStatus
}

func newInterner() *interner {
	return &interner{lists: map[string]v1.ResourceList{}, specs: map[string]v1.PodSpec{}, statuses: map[string]v1.NodeStatus{}}
}

// list returns the shared list equal to rl (by name and exact quantity).
func (in *interner) list(rl v1.ResourceList) v1.ResourceList {
	if in == nil || len(rl) == 0 || len(rl) > 8 {
		return rl
	}
	var names [8]v1.ResourceName
	ns := names[:0]
	for n := range rl {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	in.mu.Lock()
	defer in.mu.Unlock()
	// The key is each name with its quantity's format and canonical form
	// (what String and MarshalJSON print: a parsed quantity keeps no other
	// text), so lists under one key are alike in every way anyone reads.
	b := in.buf[:0]
	var scratch [40]byte
	for _, n := range ns {
		q := rl[n]
		b = append(b, n...)
		b = append(b, '=')
		b = append(b, q.Format...)
		b = append(b, ':')
		num, suffix := q.CanonicalizeBytes(scratch[:0])
		b = append(b, num...)
		b = append(b, suffix...)
		b = append(b, 0)
	}
	in.buf = b
	if shared, ok := in.lists[string(b)]; ok {
		return shared
	}
	in.lists[string(b)] = rl
	return rl
}

// pod shares the pod's containers' requests and limits and its overhead.
func (in *interner) pod(p *v1.Pod) {
	if in == nil {
		return
	}
	for _, cs := range [2][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			r := &cs[i].Resources
			r.Requests, r.Limits = in.list(r.Requests), in.list(r.Limits)
		}
	}
	p.Spec.Overhead = in.list(p.Spec.Overhead)
}

// node shares the node's capacity and allocatable.
func (in *interner) node(n *v1.Node) {
	if in == nil {
		return
	}
	n.Status.Capacity, n.Status.Allocatable = in.list(n.Status.Capacity), in.list(n.Status.Allocatable)
}

// cloneForWrite returns a list the caller may add to: a copy, since rl may
// be shared.
func cloneForWrite(rl v1.ResourceList) v1.ResourceList {
	if rl == nil {
		return v1.ResourceList{}
	}
	return maps.Clone(rl)
}
