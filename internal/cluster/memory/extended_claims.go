package memory

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/pkg/framework"
)

// CreateResourceClaim implements framework.ClaimWriter as the API server
// does: a claim with only a generateName gets a name (the base, cut to 58
// characters, and five characters drawn here from a hash, so a run is
// reproducible), a UID and the creation time; the handlers hear of it.
func (s *Store) CreateResourceClaim(_ context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c = c.DeepCopy()
	if s.claims == nil {
		s.claims = map[string]*resourceapi.ResourceClaim{}
	}
	if c.Name == "" {
		if c.GenerateName == "" {
			return nil, apierrors.NewBadRequest("resourceclaims: name or generateName is required")
		}
		c.Name = s.generateNameLocked(c)
	}
	if _, ok := s.claims[key(c.Namespace, c.Name)]; ok {
		return nil, apierrors.NewAlreadyExists(claimsResource, c.Name)
	}
	c.UID = types.UID("resourceclaim-" + c.Namespace + "-" + c.Name)
	c.CreationTimestamp = metav1.NewTime(s.clock.Now())
	if err := s.putClaimLocked(c); err != nil {
		return nil, err
	}
	out := c
	s.notify(func(h cluster.EventHandler) {
		h.OnClusterEvent(framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Add, Label: string(framework.ResourceClaim) + "Add"}, nil, out)
	})
	return c.DeepCopy(), nil
}

// generateNameLocked draws a free name for the claim's generateName.
func (s *Store) generateNameLocked(c *resourceapi.ResourceClaim) string {
	base := c.GenerateName
	const maxBaseLen = 63 - 5
	if len(base) > maxBaseLen {
		base = base[:maxBaseLen]
	}
	owner := ""
	if len(c.OwnerReferences) > 0 {
		owner = string(c.OwnerReferences[0].UID)
	}
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	for attempt := 0; ; attempt++ {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%s/%s/%d", c.Namespace, c.GenerateName, owner, attempt)
		sum := h.Sum64()
		suffix := make([]byte, 5)
		for i := range suffix {
			suffix[i] = alphabet[sum%uint64(len(alphabet))]
			sum /= uint64(len(alphabet))
		}
		if name := base + string(suffix); s.claims[key(c.Namespace, name)] == nil {
			return name
		}
	}
}

// DeleteResourceClaim implements framework.ClaimWriter: the claim is gone
// (kube-scheduler takes its finalizer off first; nothing else in a
// simulation holds one).
func (s *Store) DeleteResourceClaim(_ context.Context, namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.claims[key(namespace, name)]
	if !ok {
		return apierrors.NewNotFound(claimsResource, name)
	}
	return s.removeClaimLocked(cur)
}

// removeClaimLocked removes a claim from the store and the listers.
func (s *Store) removeClaimLocked(cur *resourceapi.ResourceClaim) error {
	s.journalClaimLocked(key(cur.Namespace, cur.Name))
	delete(s.claims, key(cur.Namespace, cur.Name))
	if s.publish != nil {
		if err := s.publish(framework.DeletedObject{Obj: cur}); err != nil {
			return err
		}
	}
	s.notify(func(h cluster.EventHandler) {
		h.OnClusterEvent(framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Delete, Label: string(framework.ResourceClaim) + "Delete"}, cur, nil)
	})
	return nil
}

// PatchPodExtendedResourceClaimStatus implements framework.ClaimWriter.
func (s *Store) PatchPodExtendedResourceClaimStatus(_ context.Context, p *v1.Pod, st *v1.PodExtendedResourceClaimStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(p.Namespace, p.Name)
	old, ok := s.pods[k]
	if !ok || (p.UID != "" && old.UID != p.UID) {
		return apierrors.NewNotFound(podsResource, k)
	}
	pod := shallowCopy(old)
	pod.Status.ExtendedResourceClaimStatus = st.DeepCopy()
	s.journalPodLocked(k)
	s.pods[k] = pod
	s.notify(func(h cluster.EventHandler) { h.OnPodUpdate(old, pod) })
	return nil
}

// extendedClaimName is the special claim of a pod's extended resources
// backed by DRA, as its status names it ("" for none).
func extendedClaimName(pod *v1.Pod) string {
	if st := pod.Status.ExtendedResourceClaimStatus; st != nil {
		return st.ResourceClaimName
	}
	return ""
}

// deleteExtendedClaimLocked does for a deleted pod what the garbage
// collector does in a cluster: the special claim the pod owns is deleted
// (its devices free for the next pod).
func (s *Store) deleteExtendedClaimLocked(pod *v1.Pod) {
	name := extendedClaimName(pod)
	if name == "" {
		return
	}
	c, ok := s.claims[key(pod.Namespace, name)]
	if !ok || !slices.ContainsFunc(c.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == pod.UID }) {
		return
	}
	_ = s.removeClaimLocked(c)
}
