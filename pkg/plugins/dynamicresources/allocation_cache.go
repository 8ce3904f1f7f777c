package dynamicresources

import (
	"encoding/json"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
)

// The allocation cache is the equivalence cache of this plugin: the
// structured allocator's answer for a node is a function of the claims'
// specs, the node's ResourceSlices, the device classes and which of the
// node's devices are taken. When every slice belongs to one node (no
// network-attached devices), the answer computed for one pod on a node is
// therefore the answer for the next pod with claims of the same specs on
// that node, as long as no slice or class changed and no device of the
// node's pools was taken or freed meanwhile. A pod of a Job or a
// Deployment, whose claims all come from one template, then allocates on
// the node where the previous pod went, not on every node again. On by
// default with the EquivalenceCache feature gate, off with it; decisions
// are the same either way (the equivalence tests compare them).

// poolKey names a pool: driver/pool.
func poolKey(driver, pool string) string { return driver + "/" + pool }

// allocEntry is one node's cached answer: the allocations (nil when the
// claims cannot be allocated there), valid for the slice generation and
// the generations of the node's pools it was computed at.
type allocEntry struct {
	sliceGen uint64
	pools    []poolStamp
	result   []resourceapi.AllocationResult
}

type poolStamp struct {
	pool string
	gen  uint64
}

// allocKey is a class of claims (an interned signature) on a node.
type allocKey struct {
	sig  int
	node string
}

// cycleView is what PreFilter captured for the cache, consistent with the
// allocated state the cycle's allocator was given.
type cycleView struct {
	sig      int
	sliceGen uint64
	poolGen  map[string]uint64
	// nodePools are the pools of each node's slices, nodeSlices the
	// slices.
	nodePools  map[string][]string
	nodeSlices map[string][]*resourceapi.ResourceSlice
}

// claimsSignature is the claims' specs, in order: the only part of a claim
// the allocator reads ("" when one cannot be encoded).
func claimsSignature(claims []*resourceapi.ResourceClaim) string {
	var b strings.Builder
	for _, c := range claims {
		js, err := json.Marshal(&c.Spec)
		if err != nil {
			return ""
		}
		b.Write(js)
		b.WriteByte(0)
	}
	return b.String()
}

// cacheable reports whether every slice belongs to one node by name (no
// shared, selector-based or per-device slices), and maps nodes to pools.
func nodePoolsOf(slices []*resourceapi.ResourceSlice) (map[string][]string, map[string][]*resourceapi.ResourceSlice, bool) {
	out := map[string][]string{}
	bySlice := map[string][]*resourceapi.ResourceSlice{}
	for _, s := range slices {
		if s.Spec.NodeName == nil || *s.Spec.NodeName == "" || (s.Spec.PerDeviceNodeSelection != nil && *s.Spec.PerDeviceNodeSelection) {
			return nil, nil, false
		}
		bySlice[*s.Spec.NodeName] = append(bySlice[*s.Spec.NodeName], s)
		k := poolKey(s.Spec.Driver, s.Spec.Pool.Name)
		pools := out[*s.Spec.NodeName]
		found := false
		for _, p := range pools {
			if p == k {
				found = true
				break
			}
		}
		if !found {
			out[*s.Spec.NodeName] = append(pools, k)
		}
	}
	// A pool spread over several nodes would make one node's answer
	// depend on another's devices.
	owner := map[string]string{}
	for node, pools := range out {
		for _, p := range pools {
			if o, ok := owner[p]; ok && o != node {
				return nil, nil, false
			}
			owner[p] = node
		}
	}
	return out, bySlice, true
}

// lookup returns the cached answer for the node, if it is valid for the
// cycle's view.
func (m *Manager) lookup(v *cycleView, node string) ([]resourceapi.AllocationResult, bool) {
	m.cacheMu.RLock()
	e, ok := m.allocCache[allocKey{v.sig, node}]
	m.cacheMu.RUnlock()
	if !ok || e.sliceGen != v.sliceGen || len(e.pools) != len(v.nodePools[node]) {
		return nil, false
	}
	for _, p := range e.pools {
		if v.poolGen[p.pool] != p.gen {
			return nil, false
		}
	}
	// Shared, not copied: allocation results are never modified once
	// made (Reserve points at them, PreBind copies one before it sets the
	// timestamp, the worlds copy what they store).
	return e.result, true
}

// store caches an answer computed with the cycle's view. Answers with
// shared devices (a share ID is drawn per allocation) are not kept.
func (m *Manager) store(v *cycleView, node string, result []resourceapi.AllocationResult) {
	for i := range result {
		for _, r := range result[i].Devices.Results {
			if r.ShareID != nil {
				return
			}
		}
	}
	e := allocEntry{sliceGen: v.sliceGen}
	for _, p := range v.nodePools[node] {
		e.pools = append(e.pools, poolStamp{p, v.poolGen[p]})
	}
	e.result = result // shared, as in lookup
	m.cacheMu.Lock()
	defer m.cacheMu.Unlock()
	if m.allocCache == nil || m.cacheSliceGen != v.sliceGen {
		m.allocCache = map[allocKey]allocEntry{}
		m.cacheSliceGen = v.sliceGen
	}
	m.allocCache[allocKey{v.sig, node}] = e
}

// OnSliceOrClassChange takes a ResourceSlice or DeviceClass event: every
// cached answer is stale.
func (m *Manager) OnSliceOrClassChange() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sliceGen++
	m.nodePools = nil
}

// SetCache turns the allocation cache on or off (the EquivalenceCache
// feature gate).
func (m *Manager) SetCache(on bool) { m.cacheOff = !on }

// cycleViewLocked captures the cache's view with the allocated state
// (m.mu held). nil when the cache cannot serve this cycle.
//
// sliceGen is the generation read before the slices were listed: a
// slice event in between leaves the view with the older generation, whose
// answers no later cycle uses.
func (m *Manager) cycleViewLocked(sig string, sliceGen uint64, slices []*resourceapi.ResourceSlice) *cycleView {
	if m.cacheOff || sig == "" {
		return nil
	}
	if m.nodePools == nil || m.nodePoolsGen != sliceGen {
		np, ns, ok := nodePoolsOf(slices)
		m.nodePools, m.nodeSlices, m.nodePoolsOK, m.nodePoolsGen = np, ns, ok, sliceGen
	}
	if !m.nodePoolsOK {
		return nil
	}
	id, ok := m.sigIDs[sig]
	if !ok {
		if m.sigIDs == nil {
			m.sigIDs = map[string]int{}
		}
		id = len(m.sigIDs)
		m.sigIDs[sig] = id
	}
	v := &cycleView{sig: id, sliceGen: sliceGen, nodePools: m.nodePools, nodeSlices: m.nodeSlices, poolGen: make(map[string]uint64, len(m.poolGen))}
	for k, g := range m.poolGen {
		v.poolGen[k] = g
	}
	return v
}
