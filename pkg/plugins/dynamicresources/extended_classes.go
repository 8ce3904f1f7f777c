package dynamicresources

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// extendedClasses maps extended resource names to DeviceClasses, as
// kube-scheduler's extended resource cache (DeviceClassResolver): every
// class provides deviceclass.resource.kubernetes.io/<its name>, and the
// extendedResourceName of its spec if it has one. When two classes name
// the same extended resource, the newer one (by creation time; then the
// lower name) provides it. The map is built again from the lister after a
// DeviceClass changed (the manager's slice generation moved).
type extendedClasses struct {
	mu    sync.RWMutex
	built bool
	gen   uint64
	byRes map[v1.ResourceName]*resourceapi.DeviceClass
}

// DeviceClassFor implements framework.DRAManager.
func (m *Manager) DeviceClassFor(name v1.ResourceName) *resourceapi.DeviceClass {
	gen := m.SliceGen()
	c := &m.classes
	c.mu.RLock()
	if c.built && c.gen == gen {
		class := c.byRes[name]
		c.mu.RUnlock()
		return class
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.built || c.gen != gen {
		c.byRes = mapExtendedResources(m.listers.DeviceClasses)
		c.built, c.gen = true, gen
	}
	return c.byRes[name]
}

func mapExtendedResources(l interface {
	List(labels.Selector) ([]*resourceapi.DeviceClass, error)
}) map[v1.ResourceName]*resourceapi.DeviceClass {
	out := map[v1.ResourceName]*resourceapi.DeviceClass{}
	if l == nil {
		return out
	}
	classes, err := l.List(labels.Everything())
	if err != nil {
		return out
	}
	for _, class := range classes {
		out[v1.ResourceName(resourceapi.ResourceDeviceClassPrefix+class.Name)] = class
	}
	for _, class := range classes {
		if class.Spec.ExtendedResourceName == nil {
			continue
		}
		name := v1.ResourceName(*class.Spec.ExtendedResourceName)
		if cur := out[name]; cur == nil || newerClass(class, cur) {
			out[name] = class
		}
	}
	return out
}

// newerClass: a was created after b, or at the same time with a lower name.
func newerClass(a, b *resourceapi.DeviceClass) bool {
	ta, tb := a.CreationTimestamp.UnixNano(), b.CreationTimestamp.UnixNano()
	if ta != tb {
		return ta > tb
	}
	return a.Name < b.Name
}

// ListClaims implements framework.DRAManager.
func (m *Manager) ListClaims() ([]*resourceapi.ResourceClaim, error) {
	if err := m.ensureInit(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*resourceapi.ResourceClaim, 0, len(m.claims))
	for _, c := range m.claims {
		out = append(out, c)
	}
	return out, nil
}

// AssumeCreatedClaim implements framework.DRAManager: kube-scheduler polls
// its assume cache until the informer has the new claim, then assumes the
// version it wrote; the manager takes that version at once (the
// informer's older copies are ignored when they come, as for any claim
// the scheduler wrote).
func (m *Manager) AssumeCreatedClaim(claim *resourceapi.ResourceClaim) {
	if err := m.ensureInit(); err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := claimKey(claim.Namespace, claim.Name)
	if cur := m.claims[k]; cur != nil && (cur.UID != claim.UID || olderVersion(claim.ResourceVersion, cur.ResourceVersion)) {
		return
	}
	m.setLocked(k, claim)
	m.assumed[k] = true
}
