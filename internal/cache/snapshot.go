package cache

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Snapshot is an immutable-during-a-cycle view of the cache. It implements
// framework.SharedLister.
type Snapshot struct {
	nodeInfoMap  map[string]*framework.NodeInfo
	nodeInfoList []*framework.NodeInfo
	// havePodsWithAffinity and havePodsWithRequiredAntiAffinity are the
	// nodes of nodeInfoList with such pods, in its order, rebuilt only when
	// a node gains its first or loses its last one (or on rebuildList).
	havePodsWithAffinity             []*framework.NodeInfo
	havePodsWithRequiredAntiAffinity []*framework.NodeInfo
	generation                       int64

	// The change log (framework.NodeInfoChanges), kept by snapshots that
	// Cache.UpdateSnapshot maintains: log holds the list positions of the
	// NodeInfos updated in place, the seq-th change at log[seq-logStart];
	// marks before validFrom (the last rebuild of the list) are stale.
	// gens[i] is nodeInfoList[i].Generation, kept beside the list so a
	// pass over many nodes can check generations without touching each
	// NodeInfo (Generations).
	gens       []int64
	names      []string // names[i] is nodeInfoList[i].NodeName(), likewise
	maintained bool     // by Cache.UpdateSnapshot, the only writer of its NodeInfos

	trackChanges        bool
	seq                 uint64
	logStart, validFrom uint64
	log                 []int32

	// placement limits the candidate nodes of a pod group's cycle
	// (AssumePlacement); nil: every node.
	placement    *framework.Placement
	placementSet map[string]bool
}

// maxChangeLog bounds the change log; a memo that has not looked for
// longer rescans its list.
const maxChangeLog = 1 << 16

var _ framework.NodeInfoChanges = &Snapshot{}

// ChangesSince implements framework.NodeInfoChanges.
func (s *Snapshot) ChangesSince(mark uint64) ([]int32, uint64, bool) {
	if !s.trackChanges || mark < s.validFrom || mark < s.logStart || mark > s.seq {
		return nil, s.seq, false
	}
	return s.log[mark-s.logStart:], s.seq, true
}

// Version changes whenever a NodeInfo of the list is updated or the list
// is rebuilt (Cache.UpdateSnapshot): equal versions of one snapshot have
// the same content.
func (s *Snapshot) Version() uint64 { return s.seq }

// WithoutChangeLog turns the change log off: plugins' memos then compare
// every node's generation (the EquivalenceCache feature gate off, where
// every reuse across cycles is checked against the generations).
func (s *Snapshot) WithoutChangeLog() *Snapshot {
	s.trackChanges = false
	return s
}

// Generations are the generations of List's NodeInfos, in its order (the
// runtime's NodeGenerations); nil for a snapshot
// built from NodeInfos its caller may change (NewSnapshot).
func (s *Snapshot) Generations() []int64 {
	if !s.maintained {
		return nil
	}
	return s.gens
}

// Names are the names of List's NodeInfos, in its order; nil when
// Generations is.
func (s *Snapshot) Names() []string {
	if !s.maintained {
		return nil
	}
	return s.names
}

// changed records that the NodeInfo at position i was updated in place.
func (s *Snapshot) changed(i int) {
	s.gens[i] = s.nodeInfoList[i].Generation()
	s.names[i] = s.nodeInfoList[i].NodeName()
	if len(s.log) == maxChangeLog {
		half := maxChangeLog / 2
		s.log = append(s.log[:0], s.log[half:]...)
		s.logStart += uint64(half)
	}
	s.log = append(s.log, int32(i))
	s.seq++
}

// rebuilt invalidates every mark: positions may all have moved.
func (s *Snapshot) rebuilt() {
	s.seq++
	s.log = s.log[:0]
	s.logStart, s.validFrom = s.seq, s.seq
	if s.placement != nil {
		// A node left (the cluster mode refreshes the snapshot between
		// a group's members): the placement keeps the nodes still here.
		kept := make([]*framework.NodeInfo, 0, len(s.placement.Nodes))
		for _, ni := range s.placement.Nodes {
			if s.nodeInfoMap[ni.NodeName()] == ni {
				kept = append(kept, ni)
			}
		}
		s.placement = &framework.Placement{Name: s.placement.Name, Nodes: kept}
	}
}

// AssumePlacement limits the nodes a pod group's members may land on to
// the placement's (upstream's Snapshot.AssumePlacement): the Filter
// candidates, the count in a FitError, the nominated node. Plugins still
// see every node through List. A placement of every node, or nil, is no
// limit. Its nodes must be in this snapshot; they are taken by name (the
// cluster mode may have refreshed the snapshot since the placement was
// made, where upstream's snapshot stays as it was for the group's cycle).
func (s *Snapshot) AssumePlacement(p *framework.Placement) error {
	s.ForgetPlacement()
	if p == nil || len(p.Nodes) == len(s.nodeInfoList) {
		return nil
	}
	set := make(map[string]bool, len(p.Nodes))
	var renewed []*framework.NodeInfo // p.Nodes with the current NodeInfos, if any changed
	for i, ni := range p.Nodes {
		name := ni.NodeName()
		cur, ok := s.nodeInfoMap[name]
		if !ok {
			return fmt.Errorf("node %s in placement is not present in snapshot", name)
		}
		if cur != ni {
			if renewed == nil {
				renewed = slices.Clone(p.Nodes)
			}
			renewed[i] = cur
		}
		set[name] = true
	}
	if renewed != nil {
		p = &framework.Placement{Name: p.Name, Nodes: renewed}
	}
	s.placement, s.placementSet = p, set
	return nil
}

// ForgetPlacement lifts the limit.
func (s *Snapshot) ForgetPlacement() { s.placement, s.placementSet = nil, nil }

// ListInPlacement lists the candidate nodes: the placement's, or every node.
func (s *Snapshot) ListInPlacement() []*framework.NodeInfo {
	if s.placement != nil {
		return s.placement.Nodes
	}
	return s.nodeInfoList
}

// NumInPlacement counts ListInPlacement's nodes.
func (s *Snapshot) NumInPlacement() int { return len(s.ListInPlacement()) }

// InPlacement tells whether a node is a candidate.
func (s *Snapshot) InPlacement(name string) bool {
	return s.placement == nil || s.placementSet[name] && s.nodeInfoMap[name] != nil
}

var _ framework.SharedLister = &Snapshot{}

// NewEmptySnapshot returns a snapshot to be filled by Cache.UpdateSnapshot,
// which logs its changes.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}, trackChanges: true, maintained: true}
}

// NewSnapshot builds a snapshot straight from NodeInfos (tests, explain).
func NewSnapshot(infos ...*framework.NodeInfo) *Snapshot {
	// Built from NodeInfos its caller may go on changing: no change log.
	// The image states are set first: setting them gives each NodeInfo a
	// new generation, which the list below records.
	counts := map[string]*framework.ImageStateSummary{}
	for _, ni := range infos {
		for _, img := range ni.Node().Status.Images {
			for _, name := range img.Names {
				if counts[name] == nil {
					counts[name] = &framework.ImageStateSummary{Size: img.SizeBytes}
				}
				counts[name].NumNodes++
			}
		}
	}
	for _, ni := range infos {
		states := map[string]*framework.ImageStateSummary{}
		for _, img := range ni.Node().Status.Images {
			for _, name := range img.Names {
				states[name] = counts[name]
			}
		}
		ni.SetImageStates(states)
	}
	// The nodes are filed by name, as kube-scheduler's informer lists
	// them from the API server when it starts.
	s := &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}}
	order := newNodeTree()
	for _, ni := range infos {
		s.nodeInfoMap[ni.NodeName()] = ni
	}
	for _, name := range sortedKeys(s.nodeInfoMap) {
		order.add(s.nodeInfoMap[name].Node())
	}
	s.rebuildList(order)
	return s
}

// rebuildList lists the snapshot's nodes in the tree's order (nodeTree:
// upstream's node tree, round-robin over the zones).
func (s *Snapshot) rebuildList(order *nodeTree) {
	s.nodeInfoList = s.nodeInfoList[:0]
	order.each(func(name string) {
		if ni := s.nodeInfoMap[name]; ni != nil {
			s.nodeInfoList = append(s.nodeInfoList, ni)
		}
	})
	s.gens, s.names = s.gens[:0], s.names[:0]
	for i, ni := range s.nodeInfoList {
		ni.SetIndex(i)
		s.gens = append(s.gens, ni.Generation())
		s.names = append(s.names, ni.NodeName())
	}
	s.rebuilt()
	s.rebuildAffinityLists()
}

// rebuildAffinityLists recomputes the lists of nodes with affinity pods.
func (s *Snapshot) rebuildAffinityLists() {
	s.havePodsWithAffinity = s.havePodsWithAffinity[:0]
	s.havePodsWithRequiredAntiAffinity = s.havePodsWithRequiredAntiAffinity[:0]
	for _, ni := range s.nodeInfoList {
		if len(ni.PodsWithAffinity()) > 0 {
			s.havePodsWithAffinity = append(s.havePodsWithAffinity, ni)
		}
		if len(ni.PodsWithRequiredAntiAffinity()) > 0 {
			s.havePodsWithRequiredAntiAffinity = append(s.havePodsWithRequiredAntiAffinity, ni)
		}
	}
}

// HavePodsWithAffinityList implements framework.NodeInfoLister.
func (s *Snapshot) HavePodsWithAffinityList() ([]*framework.NodeInfo, error) {
	return s.havePodsWithAffinity, nil
}

// HavePodsWithRequiredAntiAffinityList implements framework.NodeInfoLister.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() ([]*framework.NodeInfo, error) {
	return s.havePodsWithRequiredAntiAffinity, nil
}

// NodeInfos implements framework.SharedLister.
func (s *Snapshot) NodeInfos() framework.NodeInfoLister { return s }

// NumNodes counts the nodes.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }

// List returns the nodes in scheduling order.
func (s *Snapshot) List() ([]*framework.NodeInfo, error) { return s.nodeInfoList, nil }

// Get returns one node.
func (s *Snapshot) Get(name string) (*framework.NodeInfo, error) {
	if ni, ok := s.nodeInfoMap[name]; ok && ni.Node() != nil {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

// Mutations, for a pod group's preemption dry run (DefaultPreemption's
// PodGroupPostFilter removes victims and places members in the cycle's
// snapshot, as upstream's MutableSnapshotSharedLister): each changes a
// NodeInfo of the list in place and logs the change, so plugins' memos
// see it. Invalidate then makes the next Cache.UpdateSnapshot copy every
// node from the cache again, which undoes them all.

// AddPodInfo adds a pod to node's NodeInfo.
func (s *Snapshot) AddPodInfo(node string, pi *framework.PodInfo) error {
	ni, ok := s.nodeInfoMap[node]
	if !ok {
		return fmt.Errorf("node %q not in the snapshot", node)
	}
	aff, anti := len(ni.PodsWithAffinity()) > 0, len(ni.PodsWithRequiredAntiAffinity()) > 0
	ni.AddPodInfo(pi)
	s.mutated(ni, aff, anti)
	return nil
}

// RemovePod removes a pod from node's NodeInfo.
func (s *Snapshot) RemovePod(node string, pod *v1.Pod) error {
	ni, ok := s.nodeInfoMap[node]
	if !ok {
		return fmt.Errorf("node %q not in the snapshot", node)
	}
	aff, anti := len(ni.PodsWithAffinity()) > 0, len(ni.PodsWithRequiredAntiAffinity()) > 0
	if err := ni.RemovePod(pod); err != nil {
		return err
	}
	s.mutated(ni, aff, anti)
	return nil
}

func (s *Snapshot) mutated(ni *framework.NodeInfo, hadAffinity, hadAntiAffinity bool) {
	if s.maintained {
		s.changed(ni.Index())
	}
	if hadAffinity != (len(ni.PodsWithAffinity()) > 0) || hadAntiAffinity != (len(ni.PodsWithRequiredAntiAffinity()) > 0) {
		s.rebuildAffinityLists()
	}
}

// Invalidate makes the next Cache.UpdateSnapshot copy every node again.
func (s *Snapshot) Invalidate() { s.generation = 0 }
