package noderesources

import (
	"sync"

	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/dynamic-resource-allocation/cel"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// maxUtilization is 100%.
const maxUtilization = 100

// maxCustomPriorityScore is the top of a RequestedToCapacityRatio shape
// (0..10), scaled to MaxNodeScore.
const maxCustomPriorityScore = 10

type strategy int

const (
	leastAllocated strategy = iota
	mostAllocated
	requestedToCapacityRatio
	balanced
)

// resourceAllocationScorer scores a node from the requested and
// allocatable amounts of a list of resources.
type resourceAllocationScorer struct {
	strategy  strategy
	resources []configv1.ResourceSpec
	names     []v1.ResourceName
	// useRequested: count actual requests (BalancedAllocation); otherwise
	// containers without requests count as 100m cpu / 200Mi memory.
	useRequested bool
	shape        helper.FunctionShape
	// memo remembers the last pod's requests: a cycle asks for them in the
	// equivalence signature and in PreScore.
	memo *podMemo[[]int64]
	// dra and celCache count the devices of extended resources backed by
	// DRA (dra_extended.go); dra is nil without a DRA manager.
	dra      framework.DRAManager
	celCache *cel.Cache
}

// setDRA gives the scorer the DRA manager (nil: none).
func (r *resourceAllocationScorer) setDRA(dra framework.DRAManager) {
	if dra == nil {
		return
	}
	r.dra = dra
	r.celCache = cel.NewCache(10, cel.Features{EnableConsumableCapacity: true})
}

// podMemo remembers a value computed from the last pod it was asked about
// (by identity: the scheduler never mutates a pod object it has handed out).
type podMemo[T any] struct {
	mu  sync.Mutex
	pod *v1.Pod
	val T
}

// get returns compute(pod), from memory when pod is the last one asked about.
func (m *podMemo[T]) get(pod *v1.Pod, compute func(*v1.Pod) T) T {
	if m == nil {
		return compute(pod)
	}
	m.mu.Lock()
	if m.pod == pod {
		v := m.val
		m.mu.Unlock()
		return v
	}
	m.mu.Unlock()
	v := compute(pod)
	m.mu.Lock()
	m.pod, m.val = pod, v
	m.mu.Unlock()
	return v
}

func newScorer(s *configv1.ScoringStrategy) (resourceAllocationScorer, error) {
	r := resourceAllocationScorer{resources: s.Resources, memo: &podMemo[[]int64]{}}
	switch s.Type {
	case configv1.LeastAllocated:
		r.strategy = leastAllocated
	case configv1.MostAllocated:
		r.strategy = mostAllocated
	case configv1.RequestedToCapacityRatio:
		r.strategy = requestedToCapacityRatio
		if s.RequestedToCapacityRatio == nil || len(s.RequestedToCapacityRatio.Shape) == 0 {
			return r, fmt.Errorf("scoring strategy RequestedToCapacityRatio needs a shape")
		}
		for _, p := range s.RequestedToCapacityRatio.Shape {
			r.shape = append(r.shape, helper.FunctionShapePoint{Utilization: int64(p.Utilization), Score: int64(p.Score) * (framework.MaxNodeScore / maxCustomPriorityScore)})
		}
	default:
		return r, fmt.Errorf("scoring strategy %q is not supported", s.Type)
	}
	r.initNames()
	return r, nil
}

func (r *resourceAllocationScorer) initNames() {
	r.names = make([]v1.ResourceName, len(r.resources))
	for i := range r.resources {
		r.names[i] = v1.ResourceName(r.resources[i].Name)
	}
}

var nonZeroDefaults = v1.ResourceList{
	v1.ResourceCPU:    *resource.NewMilliQuantity(framework.DefaultMilliCPURequest, resource.DecimalSI),
	v1.ResourceMemory: *resource.NewQuantity(framework.DefaultMemoryRequest, resource.BinarySI),
}

// podRequests is the pod's request for each scored resource.
func (r *resourceAllocationScorer) podRequests(pod *v1.Pod) []int64 {
	return r.memo.get(pod, r.computePodRequests)
}

// podRequestsOf is podRequests from what the PodInfo derived already.
func (r *resourceAllocationScorer) podRequestsOf(pi *framework.PodInfo) []int64 {
	return r.memo.get(pi.Pod, func(pod *v1.Pod) []int64 {
		if !r.useRequested && (resourcehelper.IsPodLevelRequestsSet(pod) || framework.StatusResourcesMatter(pod)) {
			return r.computePodRequests(pod) // the PodInfo counts the pod level and the status
		}
		out := make([]int64, len(r.names))
		for i, name := range r.names {
			switch {
			case name == v1.ResourceCPU && r.useRequested:
				out[i] = pi.Requests.MilliCPU
			case name == v1.ResourceCPU:
				out[i] = pi.NonZeroCPU
			case name == v1.ResourceMemory && r.useRequested:
				out[i] = pi.Requests.Memory
			case name == v1.ResourceMemory:
				out[i] = pi.NonZeroMem
			case name == v1.ResourceEphemeralStorage:
				out[i] = pi.Requests.EphemeralStorage
			case framework.IsScalarResourceName(name):
				out[i] = pi.Requests.Scalar[name]
			default:
				return r.computePodRequests(pod) // not kept in a PodInfo
			}
		}
		return out
	})
}

func (r *resourceAllocationScorer) computePodRequests(pod *v1.Pod) []int64 {
	// BalancedAllocation's scorer counts the status's resources as the
	// PodInfo does; NodeResourcesFit's does not.
	opts := resourcehelper.PodResourcesOptions{UseStatusResources: r.useRequested, InPlacePodLevelResourcesVerticalScalingEnabled: r.useRequested}
	if !r.useRequested {
		// NodeResourcesFit scores the pod by its containers alone, pod-level
		// resources skipped: kube-scheduler v1.37.2 never sets its scorer's
		// enablePodLevelResources (NewFit sets only the Fit's own), while
		// BalancedAllocation's scorer has it on.
		opts.NonMissingContainerRequests = nonZeroDefaults
		opts.SkipPodLevelResources = true
	}
	reqs := resourcehelper.PodRequests(pod, opts)
	out := make([]int64, len(r.names))
	for i, name := range r.names {
		q := reqs[name]
		if name == v1.ResourceCPU {
			out[i] = q.MilliValue()
		} else {
			out[i] = q.Value()
		}
	}
	return out
}

// allocatableAndRequested returns the node's allocatable and what would be
// requested with the pod; (0, 0) bypasses a resource. A scalar resource the
// node does not have in its allocatable counts the devices of the
// DeviceClass that provides it, if any (dra, for the i-th resource).
func (r *resourceAllocationScorer) allocatableAndRequested(ni *framework.NodeInfo, name v1.ResourceName, podRequest int64, dra *draScoreState, i int) (int64, int64) {
	nonZero := ni.NonZeroRequested()
	requested := &nonZero
	if r.useRequested {
		all := ni.Requested()
		requested = &all
	}
	switch name {
	case v1.ResourceCPU:
		return ni.Allocatable().MilliCPU, requested.MilliCPU + podRequest
	case v1.ResourceMemory:
		return ni.Allocatable().Memory, requested.Memory + podRequest
	case v1.ResourceEphemeralStorage:
		return ni.Allocatable().EphemeralStorage, ni.Requested().EphemeralStorage + podRequest
	}
	if podRequest == 0 && framework.IsScalarResourceName(name) {
		return 0, 0
	}
	alloc, ok := ni.Allocatable().Scalar[name]
	if alloc == 0 && dra != nil {
		if capacity, allocated := dra.totals(ni.Node(), i); capacity > 0 {
			return capacity, allocated + podRequest
		}
	}
	if ok {
		return alloc, ni.Requested().Scalar[name] + podRequest
	}
	return 0, 0
}

// score computes the node's score without allocating for up to 8 resources.
func (r *resourceAllocationScorer) score(ni *framework.NodeInfo, podRequests []int64, dra *draScoreState) int64 {
	var reqBuf, allocBuf [8]int64
	requested, allocatable := reqBuf[:0], allocBuf[:0]
	if len(r.names) > len(reqBuf) {
		requested, allocatable = make([]int64, 0, len(r.names)), make([]int64, 0, len(r.names))
	}
	for i, name := range r.names {
		alloc, req := r.allocatableAndRequested(ni, name, podRequests[i], dra, i)
		if alloc == 0 {
			alloc, req = 0, 0
		}
		allocatable = append(allocatable, alloc)
		requested = append(requested, req)
	}
	switch r.strategy {
	case leastAllocated:
		return r.weighted(requested, allocatable, leastRequestedScore, false)
	case mostAllocated:
		return r.weighted(requested, allocatable, mostRequestedScore, false)
	case requestedToCapacityRatio:
		return r.weighted(requested, allocatable, r.ratioScore, true)
	default:
		// Balance with the pod against balance without it: the part of
		// requested that is the pod's own comes out for the "before" side.
		var beforeBuf [8]int64
		before := beforeBuf[:0]
		if len(requested) > len(beforeBuf) {
			before = make([]int64, 0, len(requested))
		}
		for i := range requested {
			before = append(before, requested[i]-podRequests[i])
		}
		return balancedScore(before, requested, allocatable)
	}
}

// weighted averages per-resource scores by weight over the resources the
// node has. RequestedToCapacityRatio counts only positive scores and rounds.
func (r *resourceAllocationScorer) weighted(requested, allocatable []int64, fn func(req, alloc int64) int64, ratio bool) int64 {
	var nodeScore, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		w := r.resources[i].Weight
		s := fn(requested[i], allocatable[i])
		if ratio && s <= 0 {
			continue
		}
		nodeScore += s * w
		weightSum += w
	}
	if weightSum == 0 {
		return 0
	}
	if ratio {
		return int64(math.Round(float64(nodeScore) / float64(weightSum)))
	}
	return nodeScore / weightSum
}

// leastRequestedScore favors free room: (capacity-requested)*100/capacity.
func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return (capacity - requested) * framework.MaxNodeScore / capacity
}

// mostRequestedScore favors packing: requested*100/capacity.
func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	if requested > capacity {
		requested = capacity
	}
	return requested * framework.MaxNodeScore / capacity
}

// ratioScore is the broken-linear shape at the utilization.
func (r *resourceAllocationScorer) ratioScore(requested, capacity int64) int64 {
	return r.shape.ScoreAt(requested, capacity)
}

// balancedScore rates how the pod changes the node's balance (upstream
// v1.37, kubernetes#135573): with std the standard deviation of the
// utilization fractions, score = (0.75 + (stdBefore - stdAfter)/2) * 100,
// so no change scores 75, balanced to fully imbalanced 50, and fully
// imbalanced to balanced 100.
func balancedScore(before, after, allocatable []int64) int64 {
	scoreBefore := int64((1 - fractionStd(before, allocatable)) * float64(framework.MaxNodeScore))
	scoreAfter := int64((1 - fractionStd(after, allocatable)) * float64(framework.MaxNodeScore))
	return (3*framework.MaxNodeScore/2 + scoreAfter - scoreBefore) / 2
}

// fractionStd is the standard deviation of requested/allocatable over the
// resources the node has, each fraction capped at 1.
func fractionStd(requested, allocatable []int64) float64 {
	var fractions [8]float64
	n := 0
	var total float64
	for i := range requested {
		if allocatable[i] == 0 || n == len(fractions) {
			continue
		}
		f := float64(requested[i]) / float64(allocatable[i])
		if f > 1 {
			f = 1
		}
		total += f
		fractions[n] = f
		n++
	}
	switch {
	case n == 2:
		return math.Abs((fractions[0] - fractions[1]) / 2)
	case n > 2:
		mean := total / float64(n)
		var sum float64
		for _, f := range fractions[:n] {
			sum += (f - mean) * (f - mean)
		}
		return math.Sqrt(sum / float64(n))
	}
	return 0
}
