package memory

import (
	"context"
	"sort"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/pkg/framework"
)

var podGroupsResource = schema.GroupResource{Group: "scheduling.k8s.io", Resource: "podgroups"}

// AddPodGroup adds a PodGroup (scheduling.k8s.io/v1beta1).
func (s *Store) AddPodGroup(pg *schedulingv1beta1.PodGroup) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(pg.Namespace, pg.Name)
	if s.podGroups == nil {
		s.podGroups = map[string]*schedulingv1beta1.PodGroup{}
	}
	if _, ok := s.podGroups[k]; ok {
		return apierrors.NewAlreadyExists(podGroupsResource, k)
	}
	s.journalOtherLocked()
	s.podGroups[k] = pg
	s.notify(func(h cluster.EventHandler) {
		h.OnClusterEvent(framework.ClusterEvent{Resource: framework.PodGroupEvent, ActionType: framework.Add}, nil, pg)
	})
	return nil
}

// DeletePodGroup deletes a PodGroup.
func (s *Store) DeletePodGroup(namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(namespace, name)
	old, ok := s.podGroups[k]
	if !ok {
		return apierrors.NewNotFound(podGroupsResource, k)
	}
	s.journalOtherLocked()
	delete(s.podGroups, k)
	s.notify(func(h cluster.EventHandler) {
		h.OnClusterEvent(framework.ClusterEvent{Resource: framework.PodGroupEvent, ActionType: framework.Delete}, old, nil)
	})
	return nil
}

// UpdatePodGroupStatus writes a PodGroup's status (the scheduler's
// PodGroupStatusWriter).
func (s *Store) UpdatePodGroupStatus(_ context.Context, pg *schedulingv1beta1.PodGroup, status *schedulingv1beta1.PodGroupStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(pg.Namespace, pg.Name)
	old, ok := s.podGroups[k]
	if !ok {
		return apierrors.NewNotFound(podGroupsResource, k)
	}
	cp := *old
	cp.Status = *status.DeepCopy()
	s.journalOtherLocked()
	s.podGroups[k] = &cp
	s.notify(func(h cluster.EventHandler) {
		h.OnClusterEvent(framework.ClusterEvent{Resource: framework.PodGroupEvent, ActionType: framework.Update}, old, &cp)
	})
	return nil
}

// PodGroups lists the PodGroups by namespace and name.
func (s *Store) PodGroups() []*schedulingv1beta1.PodGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*schedulingv1beta1.PodGroup, 0, len(s.podGroups))
	for _, pg := range s.podGroups {
		out = append(out, pg)
	}
	sort.Slice(out, func(i, j int) bool {
		return key(out[i].Namespace, out[i].Name) < key(out[j].Namespace, out[j].Name)
	})
	return out
}
