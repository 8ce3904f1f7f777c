package dynamicresources

import (
	"fmt"
	"strconv"
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Manager is the scheduler-wide framework.DRAManager: the claims as last
// seen or written, the devices they hold (kept up to date claim by claim,
// as kube-scheduler's allocatedDevices, rather than gathered from every
// claim for every pod), and the allocations in flight between Reserve and
// PreBind. It learns of claims from the listers when first asked and from
// OnClaimChange after that. Safe for concurrent use.
type Manager struct {
	listers framework.Listers

	mu     sync.RWMutex
	inited bool
	claims map[string]*resourceapi.ResourceClaim
	// assumed marks the keys whose claim in claims is the scheduler's
	// own write, newer than the informer's copy.
	assumed map[string]bool
	// The devices of the allocated claims: dedicated ones with how many
	// claims hold them (one, unless the cluster is inconsistent), shared
	// ones (consumable capacity) with their consumed capacity.
	devices    map[structured.DeviceID]int
	shared     map[structured.SharedDeviceID]int
	capacities structured.ConsumedCapacityCollection
	inFlight   map[types.UID]*resourceapi.ResourceClaim

	features      structured.Features
	filterTimeout bool

	// The allocation cache (allocation_cache.go): generations of the
	// slices and classes and of each pool's taken devices (under mu), and
	// the cached answers (under cacheMu).
	sliceGen   uint64
	poolGen    map[string]uint64
	nodePools  map[string][]string
	nodeSlices map[string][]*resourceapi.ResourceSlice
	// sigIDs intern the claims' signatures (short map keys).
	sigIDs        map[string]int
	nodePoolsOK   bool
	nodePoolsGen  uint64
	cacheOff      bool
	cacheMu       sync.RWMutex
	allocCache    map[allocKey]allocEntry
	cacheSliceGen uint64

	// taintRules: DeviceTaintRules taint devices (DRADeviceTaintRules);
	// patched are the slices with their taints, for patchedGen.
	taintRules bool
	patched    []*resourceapi.ResourceSlice
	patchedOK  bool
	patchedGen uint64

	// classes maps extended resources to the DeviceClasses that provide
	// them (extended_classes.go).
	classes extendedClasses
}

var _ framework.DRAManager = &Manager{}

// NewManager returns a manager over the listers' claims, slices and classes.
func NewManager(l framework.Listers) *Manager {
	return &Manager{listers: l, claims: map[string]*resourceapi.ResourceClaim{}, assumed: map[string]bool{},
		devices: map[structured.DeviceID]int{}, shared: map[structured.SharedDeviceID]int{},
		capacities: structured.NewConsumedCapacityCollection(), inFlight: map[types.UID]*resourceapi.ResourceClaim{},
		features: AllocatorFeatures, filterTimeout: true, poolGen: map[string]uint64{}, taintRules: true}
}

// SetFeatures sets the allocator's features, whether Filter has a timeout
// and whether DeviceTaintRules apply (from the feature gates); call it
// before scheduling starts.
func (m *Manager) SetFeatures(f structured.Features, filterTimeout, taintRules bool) {
	m.features, m.filterTimeout, m.taintRules = f, filterTimeout, taintRules
}

// SliceGen is the generation of the slices, classes and rules: read it
// before listing the slices a cycle's allocation cache view is for.
func (m *Manager) SliceGen() uint64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.sliceGen
}

// Features implements framework.DRAManager.
func (m *Manager) Features() (structured.Features, bool) { return m.features, m.filterTimeout }

func claimKey(ns, name string) string { return ns + "/" + name }

// initLocked fills the claims from the lister once; changes after that
// come through OnClaimChange (an informer stores an object before it calls
// the handlers, so a change seen in the list and again as an event is the
// same version, applied twice harmlessly).
func (m *Manager) initLocked() error {
	if m.inited {
		return nil
	}
	m.inited = true
	if m.listers.ResourceClaims == nil {
		return nil
	}
	list, err := m.listers.ResourceClaims.List(labels.Everything())
	if err != nil {
		return err
	}
	for _, c := range list {
		m.setLocked(claimKey(c.Namespace, c.Name), c)
	}
	return nil
}

func (m *Manager) ensureInit() error {
	m.mu.RLock()
	done := m.inited
	m.mu.RUnlock()
	if done {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.initLocked()
}

// OnClaimChange takes an informer's (or the simulated store's) claim
// event: oldObj nil for an addition, newObj nil for a deletion. A version
// older than the one the scheduler wrote itself is ignored.
func (m *Manager) OnClaimChange(oldObj, newObj interface{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.inited {
		return // the first use lists them
	}
	if newObj == nil {
		if c, ok := oldObj.(*resourceapi.ResourceClaim); ok {
			k := claimKey(c.Namespace, c.Name)
			m.setLocked(k, nil)
			delete(m.assumed, k)
		}
		return
	}
	c, ok := newObj.(*resourceapi.ResourceClaim)
	if !ok {
		return
	}
	k := claimKey(c.Namespace, c.Name)
	if cur := m.claims[k]; cur != nil && m.assumed[k] {
		if cur.UID == c.UID && olderVersion(c.ResourceVersion, cur.ResourceVersion) {
			return
		}
		delete(m.assumed, k)
	}
	m.setLocked(k, c)
}

// olderVersion reports whether resource version a is older than b; versions
// that are not numbers are never older (the informer's copy wins).
func olderVersion(a, b string) bool {
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}

// setLocked replaces the claim of a key (nil removes it) and moves its
// devices.
func (m *Manager) setLocked(k string, c *resourceapi.ResourceClaim) {
	if old := m.claims[k]; old != nil {
		m.countDevices(old, -1)
	}
	if c == nil {
		delete(m.claims, k)
		return
	}
	m.claims[k] = c
	m.countDevices(c, 1)
}

// countDevices adds (delta 1) or removes (-1) the devices a claim holds
// exclusively, as kube-scheduler's foreachAllocatedDevice: devices with
// admin access are not taken; a device allocated with a share ID is
// shared, its consumed capacity counted (DRAConsumableCapacity, on by
// default in v1.37).
func (m *Manager) countDevices(c *resourceapi.ResourceClaim, delta int) {
	m.bumpPools(c)
	forEachDevice(c, func(id structured.DeviceID) {
		if m.devices[id] += delta; m.devices[id] <= 0 {
			delete(m.devices, id)
		}
	}, func(id structured.SharedDeviceID, capacity *structured.DeviceConsumedCapacity) {
		if m.shared[id] += delta; m.shared[id] <= 0 {
			delete(m.shared, id)
		}
		if capacity != nil {
			if delta > 0 {
				m.capacities.Insert(*capacity)
			} else {
				m.capacities.Remove(*capacity)
			}
		}
	})
}

// bumpPools marks the pools of a claim's devices as changed (m.mu held):
// the allocation cache's answers for their nodes are stale.
func (m *Manager) bumpPools(c *resourceapi.ResourceClaim) {
	if c.Status.Allocation == nil {
		return
	}
	for _, r := range c.Status.Allocation.Devices.Results {
		m.poolGen[poolKey(r.Driver, r.Pool)]++
	}
}

func forEachDevice(c *resourceapi.ResourceClaim, dedicated func(structured.DeviceID), shared func(structured.SharedDeviceID, *structured.DeviceConsumedCapacity)) {
	if c.Status.Allocation == nil {
		return
	}
	for _, r := range c.Status.Allocation.Devices.Results {
		if ptr.Deref(r.AdminAccess, false) {
			continue
		}
		id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
		if r.ShareID != nil {
			var capacity *structured.DeviceConsumedCapacity
			if r.ConsumedCapacity != nil {
				cc := structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity)
				capacity = &cc
			}
			shared(structured.MakeSharedDeviceID(id, r.ShareID), capacity)
			continue
		}
		dedicated(id)
	}
}

// GetClaim implements framework.DRAManager.
func (m *Manager) GetClaim(namespace, name string) (*resourceapi.ResourceClaim, error) {
	if err := m.ensureInit(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if c := m.claims[claimKey(namespace, name)]; c != nil {
		return c, nil
	}
	return nil, &claimNotFoundError{key: claimKey(namespace, name), apiErr: apierrors.NewNotFound(resourceapi.Resource("resourceclaims"), name)}
}

// claimNotFoundError says what kube-scheduler says of a missing claim: its
// claims come from an assume cache, whose ErrNotFound reads `could not
// find ResourceClaim "namespace/name"`; the pod's rejection carries it.
// It unwraps to the API's NotFound, so apierrors.IsNotFound holds.
type claimNotFoundError struct {
	key    string
	apiErr error
}

func (e *claimNotFoundError) Error() string {
	return fmt.Sprintf("could not find ResourceClaim %q", e.key)
}
func (e *claimNotFoundError) Unwrap() error { return e.apiErr }

// AllocatedState implements framework.DRAManager.
func (m *Manager) AllocatedState() (*structured.AllocatedState, error) {
	if err := m.ensureInit(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.allocatedStateLocked(), nil
}

// allocatedStateAndView is AllocatedState with the allocation cache's view
// of the same moment (nil when the cache cannot serve the cycle).
func (m *Manager) allocatedStateAndView(sig string, sliceGen uint64, slices []*resourceapi.ResourceSlice) (*structured.AllocatedState, *cycleView, error) {
	if err := m.ensureInit(); err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.allocatedStateLocked(), m.cycleViewLocked(sig, sliceGen, slices), nil
}

func (m *Manager) allocatedStateLocked() *structured.AllocatedState {
	s := &structured.AllocatedState{
		AllocatedDevices:         make(sets.Set[structured.DeviceID], len(m.devices)+len(m.inFlight)),
		AllocatedSharedDeviceIDs: make(sets.Set[structured.SharedDeviceID], len(m.shared)),
		AggregatedCapacity:       m.capacities.Clone(),
	}
	for id := range m.devices {
		s.AllocatedDevices[id] = struct{}{}
	}
	for id := range m.shared {
		if m.features.ConsumableCapacity {
			s.AllocatedSharedDeviceIDs[id] = struct{}{}
		} else {
			// Without DRAConsumableCapacity a shared device is
			// simply taken (upstream's GatherAllocatedState).
			s.AllocatedDevices[id.GetDeviceID()] = struct{}{}
		}
	}
	if !m.features.ConsumableCapacity {
		s.AggregatedCapacity = structured.NewConsumedCapacityCollection()
	}
	for _, c := range m.inFlight {
		forEachDevice(c, func(id structured.DeviceID) { s.AllocatedDevices[id] = struct{}{} },
			func(id structured.SharedDeviceID, capacity *structured.DeviceConsumedCapacity) {
				s.AllocatedSharedDeviceIDs[id] = struct{}{}
				if capacity != nil {
					s.AggregatedCapacity.Insert(*capacity)
				}
			})
	}
	return s
}

// DeviceClasses implements framework.DRAManager.
func (m *Manager) DeviceClasses() structured.DeviceClassLister { return classLister{m.listers} }

type classLister struct{ l framework.Listers }

func (c classLister) List() ([]*resourceapi.DeviceClass, error) {
	if c.l.DeviceClasses == nil {
		return nil, nil
	}
	return c.l.DeviceClasses.List(labels.Everything())
}

func (c classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c.l.DeviceClasses == nil {
		return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
	}
	return c.l.DeviceClasses.Get(name)
}

// GetPendingAllocation implements framework.DRAManager.
func (m *Manager) GetPendingAllocation(uid types.UID) *resourceapi.AllocationResult {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if c := m.inFlight[uid]; c != nil {
		return c.Status.Allocation
	}
	return nil
}

// SignalClaimPendingAllocation implements framework.DRAManager.
func (m *Manager) SignalClaimPendingAllocation(uid types.UID, allocated *resourceapi.ResourceClaim) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.inFlight[uid]; ok {
		return fmt.Errorf("claim %s/%s is already being allocated", allocated.Namespace, allocated.Name)
	}
	m.inFlight[uid] = allocated
	m.bumpPools(allocated)
	return nil
}

// RemoveClaimPendingAllocation implements framework.DRAManager.
func (m *Manager) RemoveClaimPendingAllocation(uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.inFlight[uid]
	if ok {
		m.bumpPools(c)
	}
	delete(m.inFlight, uid)
	return ok
}

// AssumeClaimAfterAPICall implements framework.DRAManager.
func (m *Manager) AssumeClaimAfterAPICall(claim *resourceapi.ResourceClaim) error {
	if err := m.ensureInit(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := claimKey(claim.Namespace, claim.Name)
	cur := m.claims[k]
	if cur == nil {
		return apierrors.NewNotFound(resourceapi.Resource("resourceclaims"), claim.Name)
	}
	if cur.UID != claim.UID || olderVersion(claim.ResourceVersion, cur.ResourceVersion) {
		return fmt.Errorf("claim %s: a newer or other version is known", k)
	}
	m.setLocked(k, claim)
	m.assumed[k] = true
	return nil
}

// AssumedClaimRestore implements framework.DRAManager.
func (m *Manager) AssumedClaimRestore(namespace, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := claimKey(namespace, name)
	if !m.assumed[k] {
		return
	}
	delete(m.assumed, k)
	var c *resourceapi.ResourceClaim
	if m.listers.ResourceClaims != nil {
		c, _ = m.listers.ResourceClaims.ResourceClaims(namespace).Get(name)
	}
	m.setLocked(k, c)
}
