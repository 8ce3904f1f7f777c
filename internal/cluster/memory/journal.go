package memory

import (
	"errors"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubesched/kubesched/internal/cluster"
)

// Journal is what the store's objects were before the writes made since
// StartJournal: each written key's first old version (nil for an object
// created since). Stored objects are never changed in place, so the old
// versions are the objects themselves.
type Journal struct {
	Nodes  map[string]*v1.Node
	Pods   map[string]*v1.Pod
	Claims map[string]*resourceapi.ResourceClaim
	// PVs by name and PVCs by namespace/name.
	PVs  map[string]*v1.PersistentVolume
	PVCs map[string]*v1.PersistentVolumeClaim
	// evictions is how many evictions were recorded at the start.
	evictions int
	// Other says the PodGroups were written too: the journal does not
	// hold their old versions.
	Other bool
}

// StartJournal starts recording the old versions of what is written from
// now on (replacing a journal running).
func (s *Store) StartJournal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.journal = &Journal{Nodes: map[string]*v1.Node{}, Pods: map[string]*v1.Pod{}, Claims: map[string]*resourceapi.ResourceClaim{},
		PVs: map[string]*v1.PersistentVolume{}, PVCs: map[string]*v1.PersistentVolumeClaim{}, evictions: len(s.evictions)}
}

// StopJournal stops recording and returns the journal (nil if none ran).
func (s *Store) StopJournal() *Journal {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.journal
	s.journal = nil
	return j
}

// The recorders, called before a write under s.mu.
func (s *Store) journalNodeLocked(name string) {
	if j := s.journal; j != nil {
		if _, seen := j.Nodes[name]; !seen {
			j.Nodes[name] = s.nodes[name]
		}
	}
}

func (s *Store) journalPodLocked(k string) {
	if j := s.journal; j != nil {
		if _, seen := j.Pods[k]; !seen {
			j.Pods[k] = s.pods[k]
		}
	}
}

func (s *Store) journalClaimLocked(k string) {
	if j := s.journal; j != nil {
		if _, seen := j.Claims[k]; !seen {
			j.Claims[k] = s.claims[k]
		}
	}
}

// journalVolumeLocked records a volume's and a claim's old versions
// (either new object may be nil; an old one is nil when created since).
func (s *Store) journalVolumeLocked(pv, oldPV *v1.PersistentVolume, pvc, oldPVC *v1.PersistentVolumeClaim) {
	j := s.journal
	if j == nil {
		return
	}
	if pv != nil {
		if _, seen := j.PVs[pv.Name]; !seen {
			j.PVs[pv.Name] = oldPV
		}
	}
	if pvc != nil {
		k := key(pvc.Namespace, pvc.Name)
		if _, seen := j.PVCs[k]; !seen {
			j.PVCs[k] = oldPVC
		}
	}
}

func (s *Store) journalOtherLocked() {
	if s.journal != nil {
		s.journal.Other = true
	}
}

// Undo writes the nodes and pods of j back as they were, through the
// same notifications as any write: the objects created since deleted,
// those deleted added again, those changed replaced by their old
// version (deleted and added again, so a pod's handlers see it as new);
// the evictions recorded since are forgotten. It refuses a journal of
// claim, volume or PodGroup writes (their old versions would have to be
// written back through the controllers that wrote them), and runs with
// no journal.
func (s *Store) Undo(j *Journal) error {
	if len(j.Claims) > 0 || len(j.PVs) > 0 || len(j.PVCs) > 0 || j.Other {
		return errors.New("undo: the journal holds claim, volume or PodGroup writes")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.journal != nil {
		return errors.New("undo: a journal is running")
	}
	pods := slices.Sorted(maps.Keys(j.Pods))
	for _, k := range pods {
		if cur, ok := s.pods[k]; ok {
			delete(s.pods, k)
			s.removals++
			s.notify(func(h cluster.EventHandler) { h.OnPodDelete(cur) })
		}
	}
	for _, name := range slices.Sorted(maps.Keys(j.Nodes)) {
		cur, ok := s.nodes[name]
		old := j.Nodes[name]
		switch {
		case ok && old == nil:
			delete(s.nodes, name)
			s.notify(func(h cluster.EventHandler) { h.OnNodeDelete(cur) })
		case ok:
			s.nodes[name] = old
			s.notify(func(h cluster.EventHandler) { h.OnNodeUpdate(cur, old) })
		case old != nil:
			s.nodes[name] = old
			s.notify(func(h cluster.EventHandler) { h.OnNodeAdd(old) })
		}
	}
	for _, k := range pods {
		if old := j.Pods[k]; old != nil {
			s.pods[k] = old
			s.notify(func(h cluster.EventHandler) { h.OnPodAdd(old) })
		}
	}
	for _, k := range s.evictions[j.evictions:] {
		delete(s.Evicted, k)
	}
	s.evictions = slices.Clip(s.evictions[:j.evictions])
	return nil
}
