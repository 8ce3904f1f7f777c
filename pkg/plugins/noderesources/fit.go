// Package noderesources holds NodeResourcesFit (requests must fit the
// node's free allocatable; scoring by LeastAllocated, MostAllocated or
// RequestedToCapacityRatio) and NodeResourcesBalancedAllocation.
package noderesources

import (
	"context"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// FitName is the name of the fit plugin.
const FitName = "NodeResourcesFit"

// ReasonTooManyPods is upstream's reason when the pod count is full.
const ReasonTooManyPods = "Too many pods"

const (
	preFilterStateKey framework.StateKey = "PreFilter" + FitName
	preScoreStateKey  framework.StateKey = "PreScore" + FitName
)

// Fit is a PreFilter, Filter, PreScore and Score plugin.
type Fit struct {
	ignoredResources      sets.Set[string]
	ignoredResourceGroups sets.Set[string]
	scorer                resourceAllocationScorer
	// request remembers the last pod's request (signature, then PreFilter).
	request *podMemo[*preFilterState]
	// dra maps extended resources to DeviceClasses (nil: no DRA).
	dra framework.DRAManager
}

var (
	_ framework.PreFilterPlugin   = &Fit{}
	_ framework.FilterPlugin      = &Fit{}
	_ framework.PreScorePlugin    = &Fit{}
	_ framework.ScorePlugin       = &Fit{}
	_ framework.EnqueueExtensions = &Fit{}
)

// NewFit builds the plugin from *configv1.NodeResourcesFitArgs (nil: defaults).
func NewFit(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	args, err := helper.Args[configv1.NodeResourcesFitArgs](obj)
	if err != nil {
		return nil, err
	}
	scorer, err := newScorer(args.ScoringStrategy)
	if err != nil {
		return nil, err
	}
	scorer.setDRA(draResolver(h))
	return &Fit{
		ignoredResources:      sets.New(args.IgnoredResources...),
		ignoredResourceGroups: sets.New(args.IgnoredResourceGroups...),
		scorer:                scorer,
		request:               &podMemo[*preFilterState]{},
		dra:                   draResolver(h),
	}, nil
}

// Name implements framework.Plugin.
func (*Fit) Name() string { return FitName }

// preFilterState is the pod's request, with its scalar resources listed
// in a fixed order so Filter neither allocates nor depends on map order.
type preFilterState struct {
	framework.Resource
	scalars []v1.ResourceName
	// delegated marks the scalars a DeviceClass provides (nil: none),
	// left to DynamicResources on nodes without them (dra_extended.go).
	delegated []bool
}

func (s *preFilterState) Clone() framework.StateData { return s }

func computePodResourceRequest(pod *v1.Pod) *preFilterState {
	req, _, _ := framework.PodSpecRequests(pod)
	return requestOf(req)
}

// requestOf is the PreFilter state of a pod that requests req (read-only:
// it may share req's scalar map with a PodInfo).
func requestOf(req framework.Resource) *preFilterState {
	s := &preFilterState{Resource: req}
	for name := range s.Scalar {
		s.scalars = append(s.scalars, name)
	}
	sort.Slice(s.scalars, func(i, j int) bool { return s.scalars[i] < s.scalars[j] })
	return s
}

// PreFilter takes the pod's request from its PodInfo.
func (f *Fit) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	state.Write(preFilterStateKey, f.withDelegation(f.requestOf(state.PodInfoOf(pod))))
	return nil, nil
}

// requestOf is the pod's PreFilter state, remembered for the last pod.
func (f *Fit) requestOf(pi *framework.PodInfo) *preFilterState {
	return f.request.get(pi.Pod, func(pod *v1.Pod) *preFilterState {
		if framework.StatusResourcesMatter(pod) {
			return computePodResourceRequest(pod) // the PodInfo counts the status
		}
		return requestOf(pi.Requests)
	})
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*Fit) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// InsufficientResource describes one resource that does not fit.
type InsufficientResource struct {
	ResourceName v1.ResourceName
	Reason       string
	Requested    int64
	Used         int64
	Capacity     int64
	// Unresolvable is true when the request exceeds the node's whole allocatable.
	Unresolvable bool
}

// Filter checks the pod count and every requested resource.
func (f *Fit) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	var s *preFilterState
	if d, err := state.Read(preFilterStateKey); err == nil {
		s = d.(*preFilterState)
	} else {
		s = computePodResourceRequest(pod)
	}
	if f.fits(s, ni) {
		return nil
	}
	insufficient := f.fitsRequest(s, ni)
	reasons := make([]string, 0, len(insufficient))
	code := framework.Unschedulable
	for _, r := range insufficient {
		reasons = append(reasons, r.Reason)
		if r.Unresolvable {
			code = framework.UnschedulableAndUnresolvable
		}
	}
	return framework.NewStatus(code, reasons...)
}

func (f *Fit) ignored(name v1.ResourceName) bool {
	if f.ignoredResources.Has(string(name)) {
		return true
	}
	if f.ignoredResourceGroups.Len() > 0 {
		group, _, _ := strings.Cut(string(name), "/")
		return f.ignoredResourceGroups.Has(group)
	}
	return false
}

// fits is the allocation-free fast path of fitsRequest.
func (f *Fit) fits(s *preFilterState, ni *framework.NodeInfo) bool {
	if int64(len(ni.Pods()))+1 > ni.Allocatable().AllowedPodNumber {
		return false
	}
	allocatable, requested := ni.Allocatable(), ni.Requested()
	a, r := &allocatable, &requested
	if s.MilliCPU > 0 && s.MilliCPU > a.MilliCPU-r.MilliCPU {
		return false
	}
	if s.Memory > 0 && s.Memory > a.Memory-r.Memory {
		return false
	}
	if s.EphemeralStorage > 0 && s.EphemeralStorage > a.EphemeralStorage-r.EphemeralStorage {
		return false
	}
	for i, name := range s.scalars {
		q := s.Scalar[name]
		if q == 0 || f.ignored(name) || s.leftToDRA(i, a) {
			continue
		}
		if q > a.Scalar[name]-r.Scalar[name] {
			return false
		}
	}
	return true
}

// The reasons of the three resources every pod may request, made once: a
// rejection of thousands of nodes shares the strings, and the FitError's
// histogram compares them by pointer first.
var (
	insufficientCPU              = "Insufficient " + string(v1.ResourceCPU)
	insufficientMemory           = "Insufficient " + string(v1.ResourceMemory)
	insufficientEphemeralStorage = "Insufficient " + string(v1.ResourceEphemeralStorage)
)

func insufficient(name v1.ResourceName) string {
	switch name {
	case v1.ResourceCPU:
		return insufficientCPU
	case v1.ResourceMemory:
		return insufficientMemory
	case v1.ResourceEphemeralStorage:
		return insufficientEphemeralStorage
	}
	return "Insufficient " + string(name)
}

// fitsRequest lists what does not fit, in upstream's order: pods, cpu,
// memory, ephemeral-storage, then scalar resources by name.
func (f *Fit) fitsRequest(s *preFilterState, ni *framework.NodeInfo) []InsufficientResource {
	var out []InsufficientResource
	allocatable, requested := ni.Allocatable(), ni.Requested()
	a, r := &allocatable, &requested
	if n := int64(len(ni.Pods())); n+1 > a.AllowedPodNumber {
		out = append(out, InsufficientResource{ResourceName: v1.ResourcePods, Reason: ReasonTooManyPods, Requested: 1, Used: n, Capacity: a.AllowedPodNumber}) // never unresolvable, as upstream
	}
	if s.MilliCPU == 0 && s.Memory == 0 && s.EphemeralStorage == 0 && len(s.scalars) == 0 {
		return out
	}
	check := func(name v1.ResourceName, req, alloc, used int64) {
		if req > 0 && req > alloc-used {
			out = append(out, InsufficientResource{ResourceName: name, Reason: insufficient(name), Requested: req, Used: used, Capacity: alloc, Unresolvable: req > alloc})
		}
	}
	check(v1.ResourceCPU, s.MilliCPU, a.MilliCPU, r.MilliCPU)
	check(v1.ResourceMemory, s.Memory, a.Memory, r.Memory)
	check(v1.ResourceEphemeralStorage, s.EphemeralStorage, a.EphemeralStorage, r.EphemeralStorage)
	for i, name := range s.scalars {
		if f.ignored(name) || s.leftToDRA(i, a) {
			continue
		}
		check(name, s.Scalar[name], a.Scalar[name], r.Scalar[name])
	}
	return out
}

type preScoreState struct {
	podRequests []int64
	// dra counts the devices behind DRA-backed scored resources (nil: none).
	dra *draScoreState
}

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore computes the pod's request per scored resource.
func (f *Fit) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	reqs := f.scorer.podRequestsOf(state.PodInfoOf(pod))
	dra, st := f.scorer.draScoreStateOf(reqs)
	if st != nil {
		return st
	}
	state.Write(preScoreStateKey, &preScoreState{podRequests: reqs, dra: dra})
	return nil
}

// Score implements framework.ScorePlugin with the configured strategy.
func (f *Fit) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	var reqs []int64
	var dra *draScoreState
	if s, err := state.Read(preScoreStateKey); err == nil {
		reqs, dra = s.(*preScoreState).podRequests, s.(*preScoreState).dra
	} else {
		reqs = f.scorer.podRequests(pod)
	}
	return f.scorer.score(ni, reqs, dra), nil
}

// ScoreExtensions implements framework.ScorePlugin: scores are already 0..100.
func (*Fit) ScoreExtensions() framework.ScoreExtensions { return nil }

// EventsToRegister: room freed on a node, a node added or grown, the
// pod's own requests scaled down (as upstream with InPlacePodVerticalScaling, GA),
// or a DeviceClass that now provides a resource the pod requests
// (DRAExtendedResource, GA).
func (f *Fit) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete | framework.UpdatePodScaleDown}, QueueingHintFn: f.afterPodEvent},
		{Event: framework.ClusterEvent{Resource: framework.TargetPod, ActionType: framework.UpdatePodScaleDown}},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeAllocatable}, QueueingHintFn: f.afterNodeEvent},
		{Event: framework.ClusterEvent{Resource: framework.DeviceClass, ActionType: framework.Add | framework.Update}, QueueingHintFn: f.afterDeviceClassEvent},
	}, nil
}

// afterPodEvent: the deletion (or scale-down) of a pod that held a node's
// resources may make room; one that was never placed does not.
func (f *Fit) afterPodEvent(_ klog.Logger, _ *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, _, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return framework.Queue, err
	}
	if old != nil && old.Spec.NodeName == "" && old.Status.NominatedNodeName == "" {
		return framework.QueueSkip, nil
	}
	return framework.Queue, nil
}

// afterNodeEvent: a node the pod could fit on when empty, added or with
// more of what the pod requests.
func (f *Fit) afterNodeEvent(_ klog.Logger, pod *v1.Pod, oldObj, newObj interface{}) (framework.QueueingHint, error) {
	old, cur, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil || cur == nil {
		return framework.Queue, err
	}
	s := f.withDelegation(computePodResourceRequest(pod))
	req := s.Resource
	fitsEmpty := func(n *v1.Node) bool {
		ni := framework.NewNodeInfo()
		ni.SetNode(n)
		return f.fits(s, ni)
	}
	if !fitsEmpty(cur) {
		return framework.QueueSkip, nil
	}
	if old == nil || !fitsEmpty(old) {
		return framework.Queue, nil
	}
	a, b := framework.NewResource(old.Status.Allocatable), framework.NewResource(cur.Status.Allocatable)
	if (req.MilliCPU > 0 && b.MilliCPU > a.MilliCPU) || (req.Memory > 0 && b.Memory > a.Memory) ||
		(req.EphemeralStorage > 0 && b.EphemeralStorage > a.EphemeralStorage) || b.AllowedPodNumber > a.AllowedPodNumber {
		return framework.Queue, nil
	}
	for i, name := range s.scalars {
		if q := req.Scalar[name]; q > 0 && (b.Scalar[name] > a.Scalar[name] || s.leftToDRA(i, b)) {
			return framework.Queue, nil
		}
	}
	return framework.QueueSkip, nil
}

// AppendPodSignature implements framework.EquivalencePlugin: Filter reads
// the pod's request, Score the requests of the scored resources; both
// are computed from the pod alone, and read nothing but the NodeInfo. A
// pod asking for a resource a DeviceClass provides is not cached: that
// resource's verdict and score depend on the classes, slices and claims.
func (f *Fit) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	s := f.requestOf(pi)
	if requestsDRABacked(f.dra, &s.Resource) {
		return b, false
	}
	b = framework.AppendSigResource(b, &s.Resource, s.scalars)
	for _, r := range f.scorer.podRequestsOf(pi) {
		b = framework.AppendSigInt(b, r)
	}
	return b, true
}
