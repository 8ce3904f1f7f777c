package queue

import (
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Nominator remembers which pods are nominated to which nodes (by
// preemption), so other pods' Filter accounts for them.
type Nominator struct {
	// count mirrors len(byPod) so the hot path can skip the lock when no
	// pod is nominated anywhere (the common case).
	count atomic.Int64
	// version changes with every nomination added or removed.
	version atomic.Uint64
	lock    sync.RWMutex
	byNode  map[string][]*framework.PodInfo
	byPod   map[types.UID]string
}

// NewNominator returns an empty nominator.
func NewNominator() *Nominator {
	return &Nominator{byNode: map[string][]*framework.PodInfo{}, byPod: map[types.UID]string{}}
}

// AddNominatedPod nominates pi to node (or to its status.nominatedNodeName when node is "").
func (n *Nominator) AddNominatedPod(pi *framework.PodInfo, node string) {
	n.lock.Lock()
	defer n.lock.Unlock()
	n.addLocked(pi, node)
}

// UpdateNominatedPod follows a pod update: a nomination added, changed or
// cleared in its status is taken; an update that leaves the status without
// one keeps the nomination made in memory (the status write may not have
// arrived yet), as upstream's nominator does.
func (n *Nominator) UpdateNominatedPod(oldPod *v1.Pod, newPi *framework.PodInfo) {
	n.lock.Lock()
	defer n.lock.Unlock()
	node := ""
	if oldPod.Status.NominatedNodeName == "" && newPi.Pod.Status.NominatedNodeName == "" {
		node = n.byPod[oldPod.UID]
	}
	n.deleteLocked(oldPod)
	if node == "" && newPi.Pod.Status.NominatedNodeName == "" {
		return
	}
	n.addLocked(newPi, node)
}

func (n *Nominator) addLocked(pi *framework.PodInfo, node string) {
	n.deleteLocked(pi.Pod)
	if node == "" {
		node = pi.Pod.Status.NominatedNodeName
	}
	if node == "" {
		return
	}
	n.byPod[pi.Pod.UID] = node
	n.byNode[node] = append(n.byNode[node], pi)
	n.count.Store(int64(len(n.byPod)))
	n.version.Add(1)
}

// DeleteNominatedPodIfExists clears a pod's nomination.
func (n *Nominator) DeleteNominatedPodIfExists(pod *v1.Pod) {
	n.lock.Lock()
	defer n.lock.Unlock()
	n.deleteLocked(pod)
}

func (n *Nominator) deleteLocked(pod *v1.Pod) {
	node, ok := n.byPod[pod.UID]
	if !ok {
		return
	}
	list := n.byNode[node]
	for i, pi := range list {
		if pi.Pod.UID == pod.UID {
			n.byNode[node] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(n.byNode[node]) == 0 {
		delete(n.byNode, node)
	}
	delete(n.byPod, pod.UID)
	n.count.Store(int64(len(n.byPod)))
	n.version.Add(1)
}

// NominatedPodsForNode returns the pods nominated to node. The slice is
// shared, not copied (Filter asks for every node of every cycle while
// preemptors wait): the caller must not modify it, and it stays valid
// because a node's list is copy-on-write. deleteLocked builds a new array
// (its append starts from list[:i:i]), and addLocked only appends, past
// the length of every slice handed out before.
func (n *Nominator) NominatedPodsForNode(node string) []*framework.PodInfo {
	if n.count.Load() == 0 {
		return nil
	}
	n.lock.RLock()
	defer n.lock.RUnlock()
	return n.byNode[node]
}

// NominatedVersion changes whenever a nomination is added or removed.
func (n *Nominator) NominatedVersion() uint64 { return n.version.Load() }

// RangeNominated calls fn for every node with nominated pods, under the
// read lock: fn must not call the nominator.
func (n *Nominator) RangeNominated(fn func(node string)) {
	n.lock.RLock()
	defer n.lock.RUnlock()
	for node := range n.byNode {
		fn(node)
	}
}

// Has is true when the pod of uid is nominated somewhere.
func (n *Nominator) Has(uid types.UID) bool {
	if n.count.Load() == 0 {
		return false
	}
	n.lock.RLock()
	defer n.lock.RUnlock()
	_, ok := n.byPod[uid]
	return ok
}

// HasNominatedPods is true when any pod is nominated anywhere.
func (n *Nominator) HasNominatedPods() bool { return n.count.Load() > 0 }
