package cache

import (
	"fmt"
	"sort"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// podState is a pod the cache counts. An assumed pod stays assumed until
// the world confirms it (AddPod) or the scheduler forgets it (ForgetPod,
// RemoveAssumedPod): there is no expiry, as in kube-scheduler v1.37, so a
// watch that lags behind a Binding never un-counts a bound pod.
type podState struct {
	pod *v1.Pod
}

// nodeItem is a NodeInfo in a list ordered by recency of change.
type nodeItem struct {
	info       *framework.NodeInfo
	prev, next *nodeItem
}

type imageState struct {
	size  int64
	nodes sets.Set[string]
}

// Cache is safe for concurrent use.
type Cache struct {
	mu     sync.RWMutex
	logger klog.Logger

	nodes map[string]*nodeItem
	head  *nodeItem // most recently changed
	// tree is the nodes' order (nodeTree); nodeSetChanged is set when a
	// node was added or removed, so the snapshot lists them anew (as
	// upstream, not when a node only changed zone).
	tree           *nodeTree
	nodeSetChanged bool

	podStates   map[types.UID]*podState
	assumedPods sets.Set[types.UID]
	imageStates map[string]*imageState

	// podGroupsOn: the GenericWorkload gate (podgroups.go).
	podGroupsOn bool
	podGroups   map[string]*podGroupState
}

// New returns an empty cache.
func New(logger klog.Logger) *Cache {
	return &Cache{
		logger:      logger,
		nodes:       map[string]*nodeItem{},
		tree:        newNodeTree(),
		podStates:   map[types.UID]*podState{},
		assumedPods: sets.New[types.UID](),
		imageStates: map[string]*imageState{},
	}
}

// moveToHead marks an item as the most recently changed.
func (c *Cache) moveToHead(name string) {
	it := c.nodes[name]
	if it == nil || it == c.head {
		return
	}
	if it.prev != nil {
		it.prev.next = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	}
	if c.head != nil {
		c.head.prev = it
	}
	it.next, it.prev = c.head, nil
	c.head = it
}

func (c *Cache) unlink(name string) {
	it := c.nodes[name]
	if it == nil {
		return
	}
	if it.prev != nil {
		it.prev.next = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	}
	if c.head == it {
		c.head = it.next
	}
	delete(c.nodes, name)
}

// nodeFor returns the item for a node name, creating an empty one (pods can
// arrive before their node).
func (c *Cache) nodeFor(name string) *nodeItem {
	it, ok := c.nodes[name]
	if !ok {
		it = &nodeItem{info: framework.NewNodeInfo()}
		c.nodes[name] = it
	}
	return it
}

func (c *Cache) addPodLocked(pod *v1.Pod) { c.addPodInfoLocked(framework.NewPodInfo(pod)) }

func (c *Cache) addPodInfoLocked(pi *framework.PodInfo) {
	it := c.nodeFor(pi.Pod.Spec.NodeName)
	it.info.AddPodInfo(pi)
	c.moveToHead(pi.Pod.Spec.NodeName)
}

func (c *Cache) removePodLocked(pod *v1.Pod) error {
	it, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		return fmt.Errorf("node %q of pod %s/%s is not in the cache", pod.Spec.NodeName, pod.Namespace, pod.Name)
	}
	if err := it.info.RemovePod(pod); err != nil {
		return err
	}
	if len(it.info.Pods()) == 0 && it.info.Node() == nil {
		c.unlink(pod.Spec.NodeName)
	} else {
		c.moveToHead(pod.Spec.NodeName)
	}
	return nil
}

// AssumePod counts pod (with spec.nodeName set to the chosen node) on its
// node before the binding is confirmed.
func (c *Cache) AssumePod(pod *v1.Pod) error { return c.AssumePodInfo(framework.NewPodInfo(pod)) }

// AssumePodInfo is AssumePod with the PodInfo already computed (the
// scheduler has it from the queue).
func (c *Cache) AssumePodInfo(pi *framework.PodInfo) error {
	pod := pi.Pod
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.podStates[pod.UID]; ok {
		return fmt.Errorf("pod %s/%s (uid %s) is in the cache, so can't be assumed", pod.Namespace, pod.Name, pod.UID)
	}
	c.addPodInfoLocked(pi)
	c.podStates[pod.UID] = &podState{pod: pod}
	c.assumedPods.Insert(pod.UID)
	c.podGroupAssumed(pod)
	return nil
}

// ForgetPod undoes AssumePod for a pod that still exists: a member of a
// pod group goes back to its group's unscheduled pods.
func (c *Cache) ForgetPod(pod *v1.Pod) error { return c.removeAssumed(pod, true) }

// RemoveAssumedPod removes an assumed pod that was deleted from the
// cluster (upstream's RemoveAssumedPod): as ForgetPod, but a member of a
// pod group leaves its group's state, so the group no longer counts it.
func (c *Cache) RemoveAssumedPod(pod *v1.Pod) error { return c.removeAssumed(pod, false) }

func (c *Cache) removeAssumed(pod *v1.Pod, forget bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.podStates[pod.UID]
	if !ok {
		// Gone already (its deletion removed it): nothing to undo, as
		// upstream's ForgetPod and RemoveAssumedPod.
		return nil
	}
	if !c.assumedPods.Has(pod.UID) {
		return fmt.Errorf("pod %s/%s (uid %s) is not assumed, so can't be forgotten", pod.Namespace, pod.Name, pod.UID)
	}
	if ps.pod.Spec.NodeName != pod.Spec.NodeName {
		return fmt.Errorf("pod %s/%s was assumed on %s but forgotten on %s", pod.Namespace, pod.Name, ps.pod.Spec.NodeName, pod.Spec.NodeName)
	}
	if err := c.removePodLocked(ps.pod); err != nil {
		return err
	}
	delete(c.podStates, pod.UID)
	c.assumedPods.Delete(pod.UID)
	if forget {
		c.podGroupForgotten(pod)
	} else {
		c.podGroupRemoved(pod)
	}
	return nil
}

// AddPod records an assigned pod seen in the world; it confirms an assumed
// one (moving it if the world put it elsewhere).
func (c *Cache) AddPod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.podStates[pod.UID]
	switch {
	case ok && c.assumedPods.Has(pod.UID):
		if err := c.removePodLocked(ps.pod); err != nil {
			return err
		}
		c.addPodLocked(pod)
		c.assumedPods.Delete(pod.UID)
		ps.pod = pod
		c.podGroupAdded(pod)
	case !ok:
		c.addPodLocked(pod)
		c.podStates[pod.UID] = &podState{pod: pod}
		c.podGroupAdded(pod)
	default:
		return fmt.Errorf("pod %s/%s (uid %s) was already added", pod.Namespace, pod.Name, pod.UID)
	}
	return nil
}

// UpdatePod replaces an assigned pod.
func (c *Cache) UpdatePod(oldPod, newPod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.podStates[oldPod.UID]
	if !ok || c.assumedPods.Has(oldPod.UID) {
		return fmt.Errorf("pod %s/%s (uid %s) is not added to the cache, so can't be updated", oldPod.Namespace, oldPod.Name, oldPod.UID)
	}
	if err := c.removePodLocked(ps.pod); err != nil {
		return err
	}
	c.addPodLocked(newPod)
	ps.pod = newPod
	c.podGroupAdded(newPod)
	return nil
}

// RemovePod forgets an assigned pod (deleted, or terminated).
func (c *Cache) RemovePod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.podStates[pod.UID]
	if !ok {
		return fmt.Errorf("pod %s/%s (uid %s) is not in the cache, so can't be removed", pod.Namespace, pod.Name, pod.UID)
	}
	if err := c.removePodLocked(ps.pod); err != nil {
		return err
	}
	delete(c.podStates, pod.UID)
	c.assumedPods.Delete(pod.UID)
	c.podGroupRemoved(ps.pod)
	return nil
}

// IsAssumedPod tells whether the pod is assumed and not yet confirmed.
func (c *Cache) IsAssumedPod(pod *v1.Pod) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.assumedPods.Has(pod.UID)
}

// GetPod returns the cached version of a pod.
func (c *Cache) GetPod(pod *v1.Pod) (*v1.Pod, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ps, ok := c.podStates[pod.UID]
	if !ok {
		return nil, false
	}
	return ps.pod, true
}

// AddNode records a node.
func (c *Cache) AddNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it := c.nodeFor(node.Name)
	if it.info.Node() == nil {
		c.nodeSetChanged = true
	} else {
		c.removeImages(it.info.Node())
	}
	c.addImages(node)
	it.info.SetNode(node)
	c.tree.add(node)
	c.moveToHead(node.Name)
}

// UpdateNode replaces a node.
func (c *Cache) UpdateNode(_, newNode *v1.Node) { c.AddNode(newNode) }

// RemoveNode forgets a node. Its pods stay counted until they are removed
// themselves, so a node that comes back is not overcommitted.
func (c *Cache) RemoveNode(node *v1.Node) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.nodes[node.Name]
	if !ok || it.info.Node() == nil {
		return fmt.Errorf("node %s is not in the cache", node.Name)
	}
	c.removeImages(it.info.Node())
	c.tree.remove(node.Name)
	c.nodeSetChanged = true
	if len(it.info.Pods()) == 0 {
		c.unlink(node.Name)
	} else {
		it.info.RemoveNode()
		c.moveToHead(node.Name)
	}
	return nil
}

func (c *Cache) addImages(node *v1.Node) {
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			st, ok := c.imageStates[name]
			if !ok {
				st = &imageState{size: img.SizeBytes, nodes: sets.New[string]()}
				c.imageStates[name] = st
			}
			st.nodes.Insert(node.Name)
		}
	}
}

func (c *Cache) removeImages(node *v1.Node) {
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if st, ok := c.imageStates[name]; ok {
				st.nodes.Delete(node.Name)
				if st.nodes.Len() == 0 {
					delete(c.imageStates, name)
				}
			}
		}
	}
}

// Counts returns the numbers of nodes (with a Node object) and of pods.
func (c *Cache) Counts() (nodes, pods int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, it := range c.nodes {
		if it.info.Node() != nil {
			nodes++
		}
	}
	return nodes, len(c.podStates)
}

// Dump returns copies of every NodeInfo, by node name (for tests and reports).
func (c *Cache) Dump() map[string]*framework.NodeInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(map[string]*framework.NodeInfo, len(c.nodes))
	for name, it := range c.nodes {
		out[name] = it.info.Snapshot()
	}
	return out
}

// NodeOrder saves the order of the cache's nodes (the node tree's), for
// RestoreNodeOrder.
func (c *Cache) NodeOrder() NodeOrder {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tree.save()
}

// RestoreNodeOrder puts a saved order back, for a planner that undoes
// what it simulated (a node deleted and added again, which the node tree
// would put last in its zone): it must hold the nodes the cache holds.
// The next snapshot lists them anew.
func (c *Cache) RestoreNodeOrder(o NodeOrder) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, names := range o.byZone {
		for _, name := range names {
			if it, ok := c.nodes[name]; !ok || it.info.Node() == nil {
				return fmt.Errorf("restore node order: node %s is not in the cache", name)
			}
			n++
		}
	}
	if n != c.tree.len() {
		return fmt.Errorf("restore node order: %d nodes saved, the cache holds %d", n, c.tree.len())
	}
	c.tree.restore(o)
	c.nodeSetChanged = true
	return nil
}

// UpdateSnapshot brings s up to date, copying only the NodeInfos that
// changed since s was last updated; it returns how many it copied.
func (c *Cache) UpdateSnapshot(s *Snapshot) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	snapGen := s.generation
	rebuild := c.nodeSetChanged
	affinityChanged := false
	copied := 0
	for it := c.head; it != nil && it.info.Generation() > snapGen; it = it.next {
		name := it.info.NodeName()
		if name == "" {
			continue // node gone; its entry leaves the snapshot on rebuild
		}
		ni := it.info.Snapshot()
		// The copy's image states are the cluster's now, not the cache
		// NodeInfo's (which has none): other content, a new generation.
		ni.SetImageStates(c.imageSummaries(it.info.Node()))
		copied++
		if old, ok := s.nodeInfoMap[name]; ok {
			if (len(old.PodsWithAffinity()) > 0) != (len(ni.PodsWithAffinity()) > 0) ||
				(len(old.PodsWithRequiredAntiAffinity()) > 0) != (len(ni.PodsWithRequiredAntiAffinity()) > 0) {
				affinityChanged = true
			}
			ni.SetIndex(old.Index())
			*old = *ni
			s.changed(old.Index())
		} else {
			s.nodeInfoMap[name] = ni
			rebuild = true
		}
	}
	if c.head != nil {
		s.generation = c.head.info.Generation()
	}
	if rebuild {
		for name := range s.nodeInfoMap {
			if it, ok := c.nodes[name]; !ok || it.info.Node() == nil {
				delete(s.nodeInfoMap, name)
			}
		}
		s.rebuildList(c.tree)
		c.nodeSetChanged = false
	} else if affinityChanged {
		s.rebuildAffinityLists()
	}
	return copied
}

func (c *Cache) imageSummaries(node *v1.Node) map[string]*framework.ImageStateSummary {
	if len(node.Status.Images) == 0 {
		return nil
	}
	out := make(map[string]*framework.ImageStateSummary, len(node.Status.Images))
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if st, ok := c.imageStates[name]; ok {
				out[name] = &framework.ImageStateSummary{Size: st.size, NumNodes: st.nodes.Len()}
			}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
