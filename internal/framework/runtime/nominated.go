package runtime

import (
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Nominator is what the framework reads of the pods nominated to nodes by
// preemption.
type Nominator interface {
	HasNominatedPods() bool
	NominatedPodsForNode(node string) []*framework.PodInfo
	DeleteNominatedPodIfExists(pod *v1.Pod)
	// NominatedVersion changes whenever a nomination is added or removed.
	NominatedVersion() uint64
	// RangeNominated calls fn for every node with nominated pods, under
	// the nominator's lock: fn must not call the nominator.
	RangeNominated(fn func(node string))
}

// nominatedView marks, for one version of the nominator, the nodes of the
// snapshot's list that have nominated pods, so that Filter asks the
// nominator only about those: most nodes have none, and they take the path
// without nominated pods (and the equivalence cache). Built once per
// version, read concurrently.
type nominatedView struct {
	version uint64
	// list is the node list of Options.NodeGenerations; bit i of marked is
	// set when list[i]'s node has nominated pods, and nominees[i] holds
	// them. marked is nil when some nominated node is not in list: every
	// node is then asked by name. A NodeInfo whose Index does not name its
	// own node in list is asked by name too.
	list     []*framework.NodeInfo
	marked   []uint64
	nominees map[int]nominees
}

// nominees are the pods nominated to one node, with what Filter checks of
// each beside them.
type nominees struct {
	pods       []*framework.PodInfo
	uids       []types.UID
	priorities []int32
}

// nomineesOf pairs pods with their UIDs and priorities.
func nomineesOf(pods []*framework.PodInfo) nominees {
	if len(pods) == 0 {
		return nominees{}
	}
	n := nominees{pods: pods, uids: make([]types.UID, len(pods)), priorities: make([]int32, len(pods))}
	for k, pi := range pods {
		n.uids[k], n.priorities[k] = pi.Pod.UID, corev1helpers.PodPriority(pi.Pod)
	}
	return n
}

// nominatedViews builds and keeps the last view.
type nominatedViews struct {
	mu   sync.Mutex
	last atomic.Pointer[nominatedView]
}

// nominatedView returns the current view, nil when no pod is nominated
// anywhere.
func (f *Framework) nominatedView() *nominatedView {
	nom := f.opts.Nominator
	if nom == nil || !nom.HasNominatedPods() {
		return nil
	}
	version := nom.NominatedVersion()
	var list []*framework.NodeInfo
	if f.opts.NodeGenerations != nil {
		list, _ = f.opts.NodeGenerations.List()
	}
	if v := f.nominated.last.Load(); v.matches(version, list) {
		return v
	}
	f.nominated.mu.Lock()
	defer f.nominated.mu.Unlock()
	if v := f.nominated.last.Load(); v.matches(version, list) {
		return v
	}
	v := &nominatedView{version: version, list: list}
	if len(list) > 0 && f.opts.Snapshot != nil {
		v.marked = make([]uint64, (len(list)+63)/64)
		v.nominees = map[int]nominees{}
		infos := f.opts.Snapshot.NodeInfos()
		var nodes []string
		nom.RangeNominated(func(node string) { nodes = append(nodes, node) })
		for _, node := range nodes {
			i := -1
			ni, err := infos.Get(node)
			if err == nil {
				i = ni.Index()
			}
			if i < 0 || i >= len(list) || list[i] != ni {
				v.marked, v.nominees = nil, nil
				break
			}
			pods := nom.NominatedPodsForNode(node)
			if len(pods) == 0 {
				continue
			}
			v.marked[i/64] |= 1 << (i % 64)
			v.nominees[i] = nomineesOf(pods)
		}
	}
	f.nominated.last.Store(v)
	return v
}

func (v *nominatedView) matches(version uint64, list []*framework.NodeInfo) bool {
	return v != nil && v.version == version && len(v.list) == len(list) && (len(list) == 0 || &v.list[0] == &list[0])
}

// marksList: the view's marks are by position in nodes (the snapshot's
// list itself).
func (v *nominatedView) marksList(nodes []*framework.NodeInfo) bool {
	return v != nil && v.marked != nil && len(v.list) == len(nodes) && len(nodes) > 0 && &v.list[0] == &nodes[0]
}

// markedAt: the node at position i of the list has nominated pods.
func (v *nominatedView) markedAt(i int) bool { return v.marked[i/64]&(1<<(i%64)) != 0 }

// nominatedFor returns the pods nominated to info's node that Filter adds
// for pod: those of pod's priority or higher, other than pod itself. The
// slice is the nominator's (not to be modified) when every pod of it
// counts, else a new one.
func (f *Framework) nominatedFor(v *nominatedView, pod *v1.Pod, info *framework.NodeInfo) []*framework.PodInfo {
	if v == nil {
		return nil
	}
	var n nominees
	i := info.Index()
	if v.marked != nil && i >= 0 && i < len(v.list) && (v.list[i] == info || v.list[i].NodeName() == info.NodeName()) {
		if v.marked[i/64]&(1<<(i%64)) == 0 {
			return nil
		}
		n = v.nominees[i]
	} else {
		n = nomineesOf(f.opts.Nominator.NominatedPodsForNode(info.NodeName()))
	}
	pods, uids, priorities := n.pods, n.uids, n.priorities
	prio := corev1helpers.PodPriority(pod)
	for k := range pods {
		if uids[k] == pod.UID || priorities[k] < prio {
			// Some do not count: keep those that do.
			out := append([]*framework.PodInfo(nil), pods[:k]...)
			for k++; k < len(pods); k++ {
				if uids[k] != pod.UID && priorities[k] >= prio {
					out = append(out, pods[k])
				}
			}
			return out
		}
	}
	return pods
}
