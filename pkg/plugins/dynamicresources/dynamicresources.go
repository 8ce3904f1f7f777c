// Package dynamicresources holds DynamicResources, which allocates the
// devices a pod's ResourceClaims ask for (dynamic resource allocation), as
// kube-scheduler v1.37's plugin of that name does: the claims of the pod
// must exist (PreEnqueue); claims already allocated pin the pod to the
// nodes of their allocation and the others are allocated per node by the
// structured allocator of k8s.io/dynamic-resource-allocation (PreFilter,
// Filter); the node whose allocation uses the earlier alternatives of
// firstAvailable requests scores higher (Score); the chosen allocation is
// held in flight so no other pod gets its devices (Reserve) until PreBind
// writes it, with the pod in status.reservedFor, to the claim.
//
// Extended resources backed by DRA (DRAExtendedResource) get a special
// claim (extended.go). Not built yet (kube-scheduler v1.37 has them): the
// pod-group (gang) paths.
package dynamicresources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "DynamicResources"

const stateKey framework.StateKey = Name

// Reasons, as kube-scheduler v1.37.2 words them.
const (
	ErrReasonCannotAllocate = "cannot allocate all claims"
	ErrReasonNotAvailable   = "resourceclaim not available on the node"
	ErrReasonInUse          = "resourceclaim in use"
)

// defaultBindingTimeout is DynamicResourcesArgs' bindingTimeout default.
const defaultBindingTimeout = 10 * time.Minute

// AllocatorFeatures are the allocator's features as kube-scheduler v1.37.2
// turns them on by default (--feature-gates changes them, see
// internal/features): admin access, prioritized lists, partitionable
// devices, device taints, binding conditions with device status, and
// consumable capacity with fractional ranges are on; list-type attributes,
// optional node operations, derived attributes and compatibility groups
// (alpha) are off.
var AllocatorFeatures = structured.Features{
	AdminAccess:             true,
	PrioritizedList:         true,
	PartitionableDevices:    true,
	DeviceTaints:            true,
	DeviceBindingAndStatus:  true,
	ConsumableCapacity:      true,
	FractionalCapacityRange: true,
}

// DynamicResources is a PreEnqueue, PreFilter, Filter, PostFilter, Score,
// Reserve and PreBind plugin.
type DynamicResources struct {
	h       framework.Handle
	manager framework.DRAManager
	// allocCache is manager's cache of Filter's allocations per node,
	// nil when the manager keeps none.
	allocCache     allocationCache
	celCache       *cel.Cache
	filterTimeout  time.Duration
	bindingTimeout time.Duration
	now            func() time.Time
}

var (
	_ framework.PreEnqueuePlugin  = &DynamicResources{}
	_ framework.PreFilterPlugin   = &DynamicResources{}
	_ framework.FilterPlugin      = &DynamicResources{}
	_ framework.PostFilterPlugin  = &DynamicResources{}
	_ framework.ScorePlugin       = &DynamicResources{}
	_ framework.ReservePlugin     = &DynamicResources{}
	_ framework.PreBindPlugin     = &DynamicResources{}
	_ framework.EnqueueExtensions = &DynamicResources{}
	_ framework.EquivalencePlugin = &DynamicResources{}
)

// New builds the plugin from DynamicResourcesArgs (filterTimeout, 10s by
// default, 0 for none; bindingTimeout).
func New(_ context.Context, args runtime.Object, h framework.Handle) (framework.Plugin, error) {
	pl := &DynamicResources{h: h, filterTimeout: 10 * time.Second, bindingTimeout: defaultBindingTimeout, now: time.Now,
		// An LRU of compiled CEL expressions, as upstream's (the most
		// recent 10 are reused across cycles).
		celCache: cel.NewCache(10, cel.Features{EnableConsumableCapacity: true}),
	}
	if h != nil {
		if clk := h.Clock(); clk != nil {
			pl.now = clk.Now
		}
	}
	if a, ok := args.(*configv1.DynamicResourcesArgs); ok && a != nil {
		if a.FilterTimeout != nil {
			pl.filterTimeout = a.FilterTimeout.Duration
		}
		if a.BindingTimeout != nil {
			pl.bindingTimeout = a.BindingTimeout.Duration
		}
	}
	if h != nil {
		pl.manager = h.SharedDRAManager()
		if pl.manager == nil {
			pl.manager = NewManager(h.Listers())
		}
		pl.allocCache, _ = pl.manager.(allocationCache)
	}
	return pl, nil
}

// allocationCache is a DRAManager that keeps Filter's allocations per node
// across cycles (allocation_cache.go): this package's Manager is one; a
// manager without it (a test's fake) has every cycle allocate anew.
type allocationCache interface {
	framework.DRAManager
	// SliceGen is the generation of the slices, classes and rules.
	SliceGen() uint64
	allocatedStateAndView(sig string, sliceGen uint64, slices []*resourceapi.ResourceSlice) (*structured.AllocatedState, *cycleView, error)
	lookup(v *cycleView, node string) ([]resourceapi.AllocationResult, bool)
	store(v *cycleView, node string, result []resourceapi.AllocationResult)
}

// Name implements framework.Plugin.
func (*DynamicResources) Name() string { return Name }

// stateData is the cycle's view of the pod's claims. It is shared by the
// clones of the cycle state (Filter on nominated pods writes to it too),
// as upstream's.
type stateData struct {
	// claims match pod.spec.resourceClaims one to one (those with a
	// claim), as read at the start of the cycle.
	claims []*resourceapi.ResourceClaim
	// availableOnNodes is the node selector of each allocated claim.
	availableOnNodes []*nodeaffinity.NodeSelector
	// allocations are set by Reserve for the claims it allocated.
	allocations []*resourceapi.AllocationResult
	// allocating: some claims need an allocation. allocator serves every
	// node; with the allocation cache's view it is nil and a node that
	// misses the cache gets an allocator over its own slices, from the
	// allocated state PreFilter captured (the answer is the same: with
	// the cache on, every slice belongs to one node).
	allocating bool
	allocator  structured.Allocator
	allocated  *structured.AllocatedState
	features   structured.Features
	// toAllocate are the claims without an allocation, in the pod's
	// order; timeout: Filter's allocation is bounded by filterTimeout.
	toAllocate []*resourceapi.ResourceClaim
	timeout    bool
	// cache is the allocation cache's view of this cycle (nil: not used).
	cache *cycleView

	mu sync.Mutex
	// unavailableClaims are the allocated claims some node could not use
	// (PostFilter may deallocate one).
	unavailableClaims map[int]bool
	// nodeAllocations are Filter's allocations per node, in the order of
	// the claims to allocate.
	nodeAllocations map[string][]resourceapi.AllocationResult

	// ext is the special claim of the pod's extended resources backed by
	// DRA, the last of claims (nil: none; extended.go).
	ext *extendedState
}

// Clone implements framework.StateData: the state is shared.
func (s *stateData) Clone() framework.StateData { return s }

func getState(cs *framework.CycleState) (*stateData, error) {
	d, err := cs.Read(stateKey)
	if err != nil {
		return nil, err
	}
	s, ok := d.(*stateData)
	if !ok {
		return nil, errors.New("unable to convert state into stateData")
	}
	return s, nil
}

// forEachPodClaim looks up each claim of the pod, as upstream's
// foreachPodResourceClaim: a claim not generated yet (a template's, not
// named in the pod's status) is skipped; one that is missing, being
// deleted or not owned by the pod is an error.
func (pl *DynamicResources) forEachPodClaim(pod *v1.Pod, cb func(claim *resourceapi.ResourceClaim)) error {
	for i := range pod.Spec.ResourceClaims {
		name, mustCheckOwner, err := resourceclaim.Name(pod, &pod.Spec.ResourceClaims[i])
		if err != nil {
			return err
		}
		if name == nil {
			continue
		}
		claim, err := pl.manager.GetClaim(pod.Namespace, *name)
		if err != nil {
			return err
		}
		if claim.DeletionTimestamp != nil {
			return fmt.Errorf("resourceclaim %q is being deleted", claim.Name)
		}
		if mustCheckOwner {
			if err := resourceclaim.IsForPod(pod, claim, false); err != nil {
				return err
			}
		}
		if cb != nil {
			cb(claim)
		}
	}
	return nil
}

// unschedulable is upstream's statusUnschedulable: every "cannot" of this
// plugin is UnschedulableAndUnresolvable (preemption would not help).
func unschedulable(reason string) *framework.Status {
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, reason)
}

// PreEnqueue keeps a pod out of the active queue until all its claims
// exist (a template's claim is waited for until it is named in the pod's
// status).
func (pl *DynamicResources) PreEnqueue(_ context.Context, pod *v1.Pod) *framework.Status {
	if len(pod.Spec.ResourceClaims) == 0 {
		return nil
	}
	if err := pl.forEachPodClaim(pod, nil); err != nil {
		return unschedulable(err.Error())
	}
	return nil
}

// PreFilter reads the pod's claims, pins the allocated ones to their
// nodes, checks the device classes of the others and prepares the
// allocator over the ResourceSlices and the devices not taken.
func (pl *DynamicResources) PreFilter(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	s := &stateData{}
	cs.Write(stateKey, s)
	var claims []*resourceapi.ResourceClaim
	if err := pl.forEachPodClaim(pod, func(c *resourceapi.ResourceClaim) { claims = append(claims, c) }); err != nil {
		return nil, unschedulable(err.Error())
	}
	extClaim, ext, st := pl.preFilterExtended(cs, pod)
	if st != nil {
		return nil, st
	}
	if extClaim != nil {
		ext.index = len(claims)
		claims = append(claims, extClaim)
		s.ext = ext
	}
	if len(claims) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	s.availableOnNodes = make([]*nodeaffinity.NodeSelector, len(claims))
	s.allocations = make([]*resourceapi.AllocationResult, len(claims))
	var toAllocate []*resourceapi.ResourceClaim
	for i, claim := range claims {
		if claim.Status.Allocation != nil {
			if !resourceclaim.CanBeReserved(claim) && !resourceclaim.IsReservedForPod(pod, claim, false) {
				return nil, unschedulable(ErrReasonInUse)
			}
			if sel := claim.Status.Allocation.NodeSelector; sel != nil {
				ns, err := nodeaffinity.NewNodeSelector(sel)
				if err != nil {
					return nil, framework.AsStatus(err)
				}
				s.availableOnNodes[i] = ns
			}
			continue
		}
		toAllocate = append(toAllocate, claim)
		// An allocation in flight: better wait for it.
		if pl.manager.GetPendingAllocation(claim.UID) != nil {
			return nil, unschedulable(fmt.Sprintf("resource claim %s is in the process of being allocated", claimName(claim)))
		}
		if s.ext != nil && i == s.ext.index {
			continue // no requests yet, or a former attempt's (Filter)
		}
		for _, r := range claim.Spec.Devices.Requests {
			switch {
			case r.Exactly != nil:
				if st := pl.validateDeviceClass(r.Exactly.DeviceClassName, r.Name); st != nil {
					return nil, st
				}
			case len(r.FirstAvailable) > 0:
				for _, sub := range r.FirstAvailable {
					if st := pl.validateDeviceClass(sub.DeviceClassName, r.Name+"/"+sub.Name); st != nil {
						return nil, st
					}
				}
			default:
				return nil, unschedulable(fmt.Sprintf("resource claim %s, request %s: unknown request type", claimName(claim), r.Name))
			}
		}
	}
	if len(toAllocate) > 0 {
		// The special claim's requests differ per node: no allocation
		// cache for it.
		ac := pl.allocCache
		if s.ext != nil {
			ac = nil
		}
		var sliceGen uint64
		if ac != nil {
			sliceGen = ac.SliceGen()
		}
		slices, err := pl.manager.ResourceSlices()
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		var allocated *structured.AllocatedState
		if ac != nil {
			allocated, s.cache, err = ac.allocatedStateAndView(claimsSignature(toAllocate), sliceGen, slices)
		} else {
			allocated, err = pl.manager.AllocatedState()
		}
		if err != nil {
			return nil, framework.AsStatus(fmt.Errorf("gather allocation state: %w", err))
		}
		var bounded bool
		s.features, bounded = pl.manager.Features()
		s.timeout = bounded && pl.filterTimeout > 0
		s.allocated, s.allocating, s.toAllocate = allocated, true, toAllocate
		all := slices
		if s.cache != nil {
			all = nil // per node, in Filter; this one checks the features
		}
		a, err := structured.NewAllocator(ctx, s.features, *allocated, pl.manager.DeviceClasses(), all, pl.celCache)
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		if s.cache == nil {
			s.allocator = a
		}
		s.nodeAllocations = map[string][]resourceapi.AllocationResult{}
	}
	s.claims = claims
	return nil, nil
}

func (pl *DynamicResources) validateDeviceClass(class, request string) *framework.Status {
	if class == "" {
		return framework.AsStatus(fmt.Errorf("request %s: unsupported request type", request))
	}
	if _, err := pl.manager.DeviceClasses().Get(class); err != nil && apierrors.IsNotFound(err) {
		return unschedulable(fmt.Sprintf("request %s: device class %s does not exist", request, class))
	}
	return nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*DynamicResources) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter checks that the pod's allocated claims can be used on the node
// and allocates the others there.
func (pl *DynamicResources) Filter(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	s, err := getState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.claims) == 0 {
		return nil
	}
	var nodeExt *nodeExtended
	if s.ext != nil {
		var st *framework.Status
		if nodeExt, st = pl.filterExtended(s, pod, ni); st != nil {
			return st
		}
		if nodeExt == nil && s.ext.index == 0 {
			return nil // the node's device plugins provide the resources
		}
	}
	node := ni.Node()
	var unavailable []int
	for i, claim := range s.claims {
		if sel := s.availableOnNodes[i]; sel != nil && !sel.Match(node) {
			unavailable = append(unavailable, i)
			continue
		}
		if claim.Status.Allocation != nil {
			// A device that skips node operations needs a node that
			// declares the DRAOptionalNodeOperations feature.
			if requiresOptionalNodeOperations(claim.Status.Allocation) && !slices.Contains(node.Status.DeclaredFeatures, "DRAOptionalNodeOperations") {
				unavailable = append(unavailable, i)
				continue
			}
			ready, err := claimReadyForBinding(claim)
			if err != nil || (!ready && pl.claimTimedOut(claim)) {
				unavailable = append(unavailable, i)
			}
		}
	}
	var allocations []resourceapi.AllocationResult
	if s.allocating {
		toAllocate := s.toAllocate
		if nodeExt != nil {
			toAllocate = withNodeClaim(toAllocate, s.claims[s.ext.index], nodeExt.claim)
		}
		var result []resourceapi.AllocationResult
		cached := false
		if s.cache != nil {
			result, cached = pl.allocCache.lookup(s.cache, node.Name)
		}
		if !cached {
			actx := ctx
			if s.timeout {
				c, cancel := context.WithTimeout(ctx, pl.filterTimeout)
				defer cancel()
				actx = c
			}
			a := s.allocator
			if a == nil {
				if a, err = structured.NewAllocator(actx, s.features, *s.allocated, pl.manager.DeviceClasses(), s.cache.nodeSlices[node.Name], pl.celCache); err != nil {
					return framework.AsStatus(err)
				}
			}
			result, err = a.Allocate(actx, node, toAllocate)
			if err == nil && s.cache != nil && (result == nil || len(result) == len(toAllocate)) {
				pl.allocCache.store(s.cache, node.Name, result)
			}
		}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return framework.AsStatus(fmt.Errorf("node %s: timed out trying to allocate devices", node.Name))
		case errors.Is(err, structured.ErrFailedAllocationOnNode):
			return unschedulable(err.Error())
		case ctx.Err() != nil:
			return unschedulable(fmt.Sprintf("asked by caller to stop allocating devices: %v", context.Cause(ctx)))
		case err != nil:
			// Something is wrong with a claim or class (a CEL error):
			// abort, as upstream.
			return framework.AsStatus(err)
		}
		if len(result) != len(toAllocate) {
			return unschedulable(ErrReasonCannotAllocate)
		}
		allocations = result
	}
	if !s.allocating && len(unavailable) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(unavailable) > 0 {
		if s.unavailableClaims == nil {
			s.unavailableClaims = map[int]bool{}
		}
		for _, i := range unavailable {
			s.unavailableClaims[i] = true
		}
		return unschedulable(ErrReasonNotAvailable)
	}
	s.nodeAllocations[node.Name] = allocations
	if nodeExt != nil {
		s.ext.nodes[node.Name] = nodeExt
	}
	return nil
}

func requiresOptionalNodeOperations(a *resourceapi.AllocationResult) bool {
	for _, r := range a.Devices.Results {
		if len(r.SkipNodeOperations) > 0 {
			return true
		}
	}
	return false
}

// claimReadyForBinding is upstream's isClaimReadyForBinding: true when
// every binding condition of the allocated devices holds; an error when a
// binding failure condition does.
func claimReadyForBinding(claim *resourceapi.ResourceClaim) (bool, error) {
	if claim.Status.Allocation == nil {
		return false, nil
	}
	for _, r := range claim.Status.Allocation.Devices.Results {
		if len(r.BindingConditions) == 0 {
			continue
		}
		var status *resourceapi.AllocatedDeviceStatus
		for i := range claim.Status.Devices {
			d := &claim.Status.Devices[i]
			if d.Driver == r.Driver && d.Pool == r.Pool && d.Device == r.Device && ptr.Deref(d.ShareID, "") == string(ptr.Deref(r.ShareID, "")) {
				status = d
				break
			}
		}
		if status == nil {
			return false, nil
		}
		for _, c := range r.BindingFailureConditions {
			if f := apimeta.FindStatusCondition(status.Conditions, c); f != nil && f.Status == metav1.ConditionTrue {
				return false, fmt.Errorf("%w: claim=%s, reason=%s, message=%q", errDeviceBindingFailed, claim.Name, f.Reason, f.Message)
			}
		}
		for _, c := range r.BindingConditions {
			if !apimeta.IsStatusConditionTrue(status.Conditions, c) {
				return false, nil
			}
		}
	}
	return true, nil
}

// claimTimedOut: a device with binding conditions allocated longer ago
// than the binding timeout.
func (pl *DynamicResources) claimTimedOut(claim *resourceapi.ResourceClaim) bool {
	a := claim.Status.Allocation
	if a == nil || a.AllocationTimestamp == nil {
		return false
	}
	for _, r := range a.Devices.Results {
		if r.BindingConditions != nil && a.AllocationTimestamp.Add(pl.bindingTimeout).Before(pl.now()) {
			return true
		}
	}
	return false
}

// Score favours the node whose allocation uses the earlier alternatives of
// the claims' firstAvailable requests: each allocated subrequest at
// position i adds 8-i (FirstAvailableDeviceRequestMaxSize - i).
func (pl *DynamicResources) Score(_ context.Context, cs *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	s, err := getState(cs)
	if err != nil || len(s.claims) == 0 {
		// No state: PreFilter did not run (a test scoring alone); the
		// pod has no claims to score as far as this cycle knows.
		return 0, nil
	}
	s.mu.Lock()
	allocations, found := s.nodeAllocations[ni.Node().Name]
	s.mu.Unlock()
	if !found {
		return 0, nil
	}
	var score int64
	next := 0
	for i, claim := range s.claims {
		if s.ext != nil && i == s.ext.index {
			break // its requests have no firstAvailable
		}
		allocation := claim.Status.Allocation
		if allocation == nil {
			if next >= len(allocations) {
				return 0, framework.AsStatus(fmt.Errorf("number of allocations %d is smaller than number of claims needing allocation", len(allocations)))
			}
			allocation = &allocations[next]
			next++
		}
		for _, req := range claim.Spec.Devices.Requests {
			for i, sub := range req.FirstAvailable {
				ref := resourceclaim.CreateSubRequestRef(req.Name, sub.Name)
				for _, r := range allocation.Devices.Results {
					if r.Request == ref {
						score += int64(resourceapi.FirstAvailableDeviceRequestMaxSize - i)
						break
					}
				}
			}
		}
	}
	return score, nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *DynamicResources) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales the scores to 0-100.
func (*DynamicResources) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	return helper.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
}

// AppendPodSignature implements framework.EquivalencePlugin: for a pod
// without claims (nor extended resources a DeviceClass provides) Filter
// passes and Score is 0 on every node; another pod is not cached (an
// allocation depends on more than the node).
func (pl *DynamicResources) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	if len(pi.Pod.Spec.ResourceClaims) != 0 {
		return b, false
	}
	return b, pl.manager == nil || !pl.hasMappedExtendedResource(&pi.Requests)
}

// claimName is namespace/name, as klog.KObj prints it in upstream's messages.
func claimName(c *resourceapi.ResourceClaim) string {
	return strings.TrimPrefix(c.Namespace+"/"+c.Name, "/")
}

// NodeDetails is what explain shows of a feasible node: the devices
// Filter allocated on it, "claim/request: driver/pool/device". The
// runtime asks every plugin that has this method.
func (pl *DynamicResources) NodeDetails(cs *framework.CycleState, nodeName string) []string {
	s, err := getState(cs)
	if err != nil || len(s.claims) == 0 {
		return nil
	}
	s.mu.Lock()
	allocations := s.nodeAllocations[nodeName]
	var nodeExt *nodeExtended
	if s.ext != nil {
		nodeExt = s.ext.nodes[nodeName]
	}
	s.mu.Unlock()
	var out []string
	next := 0
	for i, c := range s.claims {
		if s.ext != nil && i == s.ext.index && nodeExt != nil {
			c = nodeExt.claim
		}
		a := c.Status.Allocation
		if a == nil {
			if next >= len(allocations) {
				return out
			}
			a = &allocations[next]
			next++
		}
		for _, r := range a.Devices.Results {
			out = append(out, fmt.Sprintf("%s/%s: %s/%s/%s", c.Name, r.Request, r.Driver, r.Pool, r.Device))
		}
	}
	return out
}
