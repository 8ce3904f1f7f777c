package cache

import (
	"fmt"

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
}

var _ framework.SharedLister = &Snapshot{}

// NewEmptySnapshot returns a snapshot to be filled by Cache.UpdateSnapshot.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}}
}

// NewSnapshot builds a snapshot straight from NodeInfos (tests, explain).
func NewSnapshot(infos ...*framework.NodeInfo) *Snapshot {
	s := NewEmptySnapshot()
	for _, ni := range infos {
		s.nodeInfoMap[ni.NodeName()] = ni
	}
	s.rebuildList()
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
		ni.ImageStates = map[string]*framework.ImageStateSummary{}
		for _, img := range ni.Node().Status.Images {
			for _, name := range img.Names {
				ni.ImageStates[name] = counts[name]
			}
		}
	}
	return s
}

// rebuildList orders nodes as upstream's node tree does: round-robin over
// zones, so that a partial search (percentageOfNodesToScore) sees every
// zone; zones and the nodes in each are sorted by name for determinism.
func (s *Snapshot) rebuildList() {
	byZone := map[string][]string{}
	for _, name := range sortedKeys(s.nodeInfoMap) {
		z := zoneOf(s.nodeInfoMap[name].Node())
		byZone[z] = append(byZone[z], name)
	}
	zones := sortedKeys(byZone)
	s.nodeInfoList = s.nodeInfoList[:0]
	for i := 0; len(s.nodeInfoList) < len(s.nodeInfoMap); i++ {
		for _, z := range zones {
			if i < len(byZone[z]) {
				s.nodeInfoList = append(s.nodeInfoList, s.nodeInfoMap[byZone[z][i]])
			}
		}
	}
	for i, ni := range s.nodeInfoList {
		ni.Index = i
	}
	s.rebuildAffinityLists()
}

// rebuildAffinityLists recomputes the lists of nodes with affinity pods.
func (s *Snapshot) rebuildAffinityLists() {
	s.havePodsWithAffinity = s.havePodsWithAffinity[:0]
	s.havePodsWithRequiredAntiAffinity = s.havePodsWithRequiredAntiAffinity[:0]
	for _, ni := range s.nodeInfoList {
		if len(ni.PodsWithAffinity) > 0 {
			s.havePodsWithAffinity = append(s.havePodsWithAffinity, ni)
		}
		if len(ni.PodsWithRequiredAntiAffinity) > 0 {
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
