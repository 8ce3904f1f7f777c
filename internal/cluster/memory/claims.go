package memory

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/pkg/framework"
)

var claimsResource = resourceapi.Resource("resourceclaims")

// SetClaims gives the store its ResourceClaims and a function that
// publishes a changed claim to the plugins' listers (the simulation's
// informer cache). Each claim gets a resource version.
func (s *Store) SetClaims(claims []*resourceapi.ResourceClaim, publish func(obj interface{}) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims = map[string]*resourceapi.ResourceClaim{}
	s.publish = publish
	for _, c := range claims {
		if err := s.putClaimLocked(c.DeepCopy()); err != nil {
			return err
		}
	}
	return nil
}

// putClaimLocked stores a claim (the caller's copy) with the next resource
// version and publishes it to the listers.
func (s *Store) putClaimLocked(c *resourceapi.ResourceClaim) error {
	s.claimVersion++
	c.ResourceVersion = strconv.FormatInt(s.claimVersion, 10)
	s.journalClaimLocked(key(c.Namespace, c.Name))
	s.claims[key(c.Namespace, c.Name)] = c
	if s.publish == nil {
		return nil
	}
	return s.publish(c)
}

// Claim returns a claim as stored; ok is false when there is none.
func (s *Store) Claim(ns, name string) (*resourceapi.ResourceClaim, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.claims[key(ns, name)]
	return c, ok
}

// writeClaimLocked stores a new version of a claim, as the API server
// would: the resource version must match (a conflict otherwise) and is
// bumped; the handlers hear of the update.
func (s *Store) writeClaimLocked(next *resourceapi.ResourceClaim, change func(cur, next *resourceapi.ResourceClaim) *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	k := key(next.Namespace, next.Name)
	cur, ok := s.claims[k]
	if !ok {
		return nil, apierrors.NewNotFound(claimsResource, next.Name)
	}
	if next.ResourceVersion != "" && next.ResourceVersion != cur.ResourceVersion {
		return nil, apierrors.NewConflict(claimsResource, next.Name, nil)
	}
	out := change(cur, next)
	if err := s.putClaimLocked(out); err != nil {
		return nil, err
	}
	s.notify(func(h cluster.EventHandler) {
		h.OnClusterEvent(framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Update, Label: string(framework.ResourceClaim) + "Update"}, cur, out)
	})
	return out, nil
}

// GetResourceClaim implements framework.ClaimWriter.
func (s *Store) GetResourceClaim(_ context.Context, namespace, name string) (*resourceapi.ResourceClaim, error) {
	if c, ok := s.Claim(namespace, name); ok {
		return c.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(claimsResource, name)
}

// UpdateResourceClaim implements framework.ClaimWriter: metadata and spec
// change, the status stays.
func (s *Store) UpdateResourceClaim(_ context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeClaimLocked(c, func(cur, next *resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
		out := next.DeepCopy()
		out.Status = *cur.Status.DeepCopy()
		return out
	})
}

// UpdateResourceClaimStatus implements framework.ClaimWriter: the status
// changes; an allocation's timestamp is the simulated clock's.
func (s *Store) UpdateResourceClaimStatus(_ context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeClaimLocked(c, func(cur, next *resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
		out := cur.DeepCopy()
		out.Status = *next.Status.DeepCopy()
		if a := out.Status.Allocation; a != nil && a.AllocationTimestamp != nil && (cur.Status.Allocation == nil || cur.Status.Allocation.AllocationTimestamp == nil) {
			a.AllocationTimestamp = &metav1.Time{Time: s.clock.Now()}
		}
		s.attachDevices(out)
		return out
	})
}

// attachDevices does what a DRA driver does for devices with binding
// conditions (a device that must be attached before the pod may bind):
// each condition is set true in the claim's device status, at once. The
// simulation has no driver, and assumes the attachment succeeds.
func (s *Store) attachDevices(c *resourceapi.ResourceClaim) {
	if c.Status.Allocation == nil {
		return
	}
	now := metav1.Time{Time: s.clock.Now()}
	for _, r := range c.Status.Allocation.Devices.Results {
		if len(r.BindingConditions) == 0 {
			continue
		}
		i := slices.IndexFunc(c.Status.Devices, func(d resourceapi.AllocatedDeviceStatus) bool {
			return d.Driver == r.Driver && d.Pool == r.Pool && d.Device == r.Device && ptr.Deref(d.ShareID, "") == string(ptr.Deref(r.ShareID, ""))
		})
		if i < 0 {
			d := resourceapi.AllocatedDeviceStatus{Driver: r.Driver, Pool: r.Pool, Device: r.Device}
			if r.ShareID != nil {
				d.ShareID = ptr.To(string(*r.ShareID))
			}
			c.Status.Devices = append(c.Status.Devices, d)
			i = len(c.Status.Devices) - 1
		}
		for _, cond := range r.BindingConditions {
			meta.SetStatusCondition(&c.Status.Devices[i].Conditions, metav1.Condition{Type: cond, Status: metav1.ConditionTrue,
				Reason: "Simulated", Message: "set by the simulation, as the device's driver would", LastTransitionTime: now})
		}
	}
}

// RemoveClaimReservation implements framework.ClaimWriter.
func (s *Store) RemoveClaimReservation(_ context.Context, c *resourceapi.ResourceClaim, podUID types.UID) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.claims[key(c.Namespace, c.Name)]
	if !ok {
		return apierrors.NewNotFound(claimsResource, c.Name)
	}
	next := cur.DeepCopy()
	next.Status.ReservedFor = slices.DeleteFunc(next.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == podUID })
	_, err := s.writeClaimLocked(next, func(_, n *resourceapi.ResourceClaim) *resourceapi.ResourceClaim { return n })
	return err
}

// releaseClaimsLocked does for a deleted pod what the resourceclaim
// controller does in a cluster: the pod leaves the reservedFor of its
// claims, and a claim nobody uses any more is deallocated (its devices
// free for the next pod). Then, as the garbage collector would, the
// claims the pod controls are deleted: those generated for it from its
// templates and the special claim of its extended resources backed by
// DRA. (A replacement of the same name and UID, as consolidate's drains
// make, gets its claims generated again under the same names.)
func (s *Store) releaseClaimsLocked(pod *v1.Pod) {
	s.deleteExtendedClaimLocked(pod)
	if len(pod.Spec.ResourceClaims) == 0 || len(s.claims) == 0 {
		return
	}
	for _, name := range s.podClaimNames(pod) {
		cur, ok := s.claims[key(pod.Namespace, name)]
		if !ok {
			continue
		}
		if i := slices.IndexFunc(cur.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == pod.UID }); i >= 0 {
			next := cur.DeepCopy()
			next.Status.ReservedFor = slices.Delete(next.Status.ReservedFor, i, i+1)
			if len(next.Status.ReservedFor) == 0 {
				next.Status.Allocation = nil
				next.Status.Devices = nil
				next.Finalizers = slices.DeleteFunc(next.Finalizers, func(f string) bool { return f == resourceapi.Finalizer })
			}
			if cur, _ = s.writeClaimLocked(next, func(_, n *resourceapi.ResourceClaim) *resourceapi.ResourceClaim { return n }); cur == nil {
				continue
			}
		}
		if owner := metav1.GetControllerOf(cur); owner != nil && owner.UID == pod.UID {
			_ = s.removeClaimLocked(cur)
		}
	}
}

// podClaimNames are the names of the claims a pod uses: named directly,
// or generated from a template and named in the pod's status.
func (s *Store) podClaimNames(pod *v1.Pod) []string {
	var out []string
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimName != nil {
			out = append(out, *pc.ResourceClaimName)
			continue
		}
		for _, st := range pod.Status.ResourceClaimStatuses {
			if st.Name == pc.Name && st.ResourceClaimName != nil {
				out = append(out, *st.ResourceClaimName)
			}
		}
	}
	return out
}

// AddClaim creates a claim (a template's, generated for a new pod).
func (s *Store) AddClaim(c *resourceapi.ResourceClaim) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key(c.Namespace, c.Name)
	if s.claims == nil {
		s.claims = map[string]*resourceapi.ResourceClaim{}
	}
	if _, ok := s.claims[k]; ok {
		return apierrors.NewAlreadyExists(claimsResource, c.Name)
	}
	c = c.DeepCopy()
	if err := s.putClaimLocked(c); err != nil {
		return err
	}
	s.notify(func(h cluster.EventHandler) {
		h.OnClusterEvent(framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Add, Label: string(framework.ResourceClaim) + "Add"}, nil, c)
	})
	return nil
}

// CheckClaims verifies the claims against the pods: no device is
// allocated to two claims (but with admin access or a share ID), and a
// claim reserved for a pod that is bound is allocated on that pod's node.
func (s *Store) CheckClaims(nodes map[string]*v1.Node) []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	holder := map[string]string{}
	byUID := map[types.UID]*v1.Pod{}
	for _, p := range s.pods {
		byUID[p.UID] = p
	}
	keys := make([]string, 0, len(s.claims))
	for k := range s.claims {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c := s.claims[k]
		a := c.Status.Allocation
		if a == nil {
			continue
		}
		for _, r := range a.Devices.Results {
			if ptr.Deref(r.AdminAccess, false) || r.ShareID != nil {
				continue
			}
			id := r.Driver + "/" + r.Pool + "/" + r.Device
			if other, taken := holder[id]; taken {
				errs = append(errs, fmt.Errorf("device %s allocated to both %s and %s", id, other, k))
			}
			holder[id] = k
		}
		for _, ref := range c.Status.ReservedFor {
			p := byUID[ref.UID]
			if p == nil || p.Spec.NodeName == "" || a.NodeSelector == nil {
				continue
			}
			sel, err := nodeaffinity.NewNodeSelector(a.NodeSelector)
			if n := nodes[p.Spec.NodeName]; err == nil && n != nil && !sel.Match(n) {
				errs = append(errs, fmt.Errorf("claim %s reserved for pod %s/%s on %s, allocated elsewhere", k, p.Namespace, p.Name, n.Name))
			}
		}
	}
	return errs
}

// Claims returns the claims, sorted by namespace/name.
func (s *Store) Claims() []*resourceapi.ResourceClaim {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.claims))
	for k := range s.claims {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]*resourceapi.ResourceClaim, 0, len(keys))
	for _, k := range keys {
		out = append(out, s.claims[k])
	}
	return out
}

// NotifyAdded tells the handlers that an object plugins read was created
// (a ResourceSlice, a DeviceClass), as an informer would.
func (s *Store) NotifyAdded(resource framework.EventResource, obj interface{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notify(func(h cluster.EventHandler) {
		h.OnClusterEvent(framework.ClusterEvent{Resource: resource, ActionType: framework.Add, Label: string(resource) + "Add"}, nil, obj)
	})
}
