package dynamicresources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
	pluginmetrics "github.com/kubesched/kubesched/pkg/framework/metrics"
)

// Reserve holds the node's allocation of the pod's unallocated claims in
// flight: from now on no other pod is given their devices, and PreBind
// writes them. Claims already allocated are reserved for the pod only in
// PreBind (if another pod is faster, this one tries again).
func (pl *DynamicResources) Reserve(_ context.Context, cs *framework.CycleState, _ *v1.Pod, nodeName string) *framework.Status {
	s, err := getState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if !s.allocating {
		return nil
	}
	s.mu.Lock()
	allocations, ok := s.nodeAllocations[nodeName]
	s.mu.Unlock()
	if !ok || len(allocations) == 0 {
		if s.onlyExtendedToAllocate() {
			return nil // the node's device plugins provide the resources
		}
		return framework.AsStatus(errors.New("claim allocation not found for node"))
	}
	next := 0
	for i, claim := range s.claims {
		if claim.Status.Allocation != nil {
			continue
		}
		if s.isExtendedIndex(i) {
			if ne := s.nodeExtendedOf(nodeName); ne != nil {
				claim = ne.claim // the node's variant, with its requests
			}
		}
		if next >= len(allocations) {
			return framework.AsStatus(fmt.Errorf("internal error, have %d allocations for more claims", len(allocations)))
		}
		a := &allocations[next]
		next++
		s.allocations[i] = a
		c := claim.DeepCopy()
		if !slices.Contains(c.Finalizers, resourceapi.Finalizer) {
			c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
		}
		c.Status.Allocation = a
		if err := pl.manager.SignalClaimPendingAllocation(c.UID, c); err != nil {
			return framework.AsStatus(fmt.Errorf("internal error, couldn't signal allocation for claim %s: %w", c.Name, err))
		}
	}
	return nil
}

// Unreserve gives up the allocations in flight and takes the pod out of
// the reservedFor of the claims that PreBind reserved for it.
func (pl *DynamicResources) Unreserve(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, _ string) {
	s, err := getState(cs)
	if err != nil || len(s.claims) == 0 {
		return
	}
	defer pl.unreserveExtended(ctx, s, pod)
	for i, claim := range s.claims {
		if s.isExtendedIndex(i) {
			continue
		}
		if pl.manager.RemoveClaimPendingAllocation(claim.UID) {
			pl.manager.AssumedClaimRestore(claim.Namespace, claim.Name)
		}
		if claim.Status.Allocation != nil && resourceclaim.IsReservedForPod(pod, claim, false) {
			if w := pl.h.ClaimWriter(); w != nil {
				if err := w.RemoveClaimReservation(ctx, claim, pod.UID); err != nil {
					// The pod's next attempt gets here again.
					klog.FromContext(ctx).Error(err, "unreserve", "resourceclaim", klog.KObj(claim))
				}
			}
		}
	}
}

// PreBind writes each claim's allocation (after adding the
// deletion-protection finalizer) and reserves the claim for the pod.
func (pl *DynamicResources) PreBind(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, nodeName string) *framework.Status {
	s, err := getState(cs)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(s.claims) == 0 {
		return nil
	}
	w := pl.h.ClaimWriter()
	if w == nil {
		return nil
	}
	var written []*resourceapi.ResourceClaim
	for i, claim := range s.claims {
		if resourceclaim.IsReservedForPod(pod, claim, false) {
			continue
		}
		if s.isExtendedIndex(i) {
			ok, err := pl.bindExtended(ctx, w, s, pod, nodeName)
			if ok {
				pl.manager.RemoveClaimPendingAllocation(s.ext.initialUID)
			}
			if err != nil {
				return framework.AsStatus(err)
			}
			continue
		}
		updated, err := pl.bindClaim(ctx, w, claim, s.allocations[i], pod)
		if err != nil {
			return framework.AsStatus(err)
		}
		s.claims[i] = updated
		written = append(written, updated)
	}
	// Written: the allocations are no longer in flight, the claims as
	// the API returned them count instead.
	for _, c := range written {
		pl.manager.RemoveClaimPendingAllocation(c.UID)
	}
	return pl.waitForBindingConditions(ctx, s, pod, nodeName)
}

// bindingConditionsPollInterval is how often PreBind looks at the claims
// while it waits for their devices' binding conditions (upstream's 5 s).
const bindingConditionsPollInterval = 5 * time.Second

// waitForBindingConditions is upstream's wait at the end of PreBind
// (DRADeviceBindingConditions, on by default): when an allocated device
// has binding conditions (a device a driver must attach first), the pod
// is bound only once every condition is true in the claim's device status;
// a binding failure condition, or bindingTimeout since the allocation,
// fails PreBind (the pod tries again, and PostFilter may deallocate).
// Checked at once, then every 5 s.
func (pl *DynamicResources) waitForBindingConditions(ctx context.Context, s *stateData, pod *v1.Pod, nodeName string) *framework.Status {
	if features, _ := pl.manager.Features(); !features.DeviceBindingAndStatus || !hasBindingConditions(s.claims) {
		return nil
	}
	if rec := pl.h.EventRecorder(); rec != nil {
		rec.Eventf(pod, nil, v1.EventTypeNormal, "BindingConditionsPending", "Scheduling", "waiting for binding conditions for device on node %s", nodeName)
	}
	clk := pl.h.Clock()
	start := clk.Now()
	ready := func() (bool, error) {
		for i, c := range s.claims {
			latest, err := pl.manager.GetClaim(c.Namespace, c.Name)
			if err != nil {
				return false, err
			}
			s.claims[i] = latest
			ready, err := claimReadyForBinding(latest)
			if err != nil {
				return false, err
			}
			if !ready {
				if pl.claimTimedOut(latest) {
					return false, fmt.Errorf("%w: claim=%s", errDeviceBindingTimeout, latest.Name)
				}
				return false, nil
			}
		}
		return true, nil
	}
	// Checked at once, then every interval until bindingTimeout (wait's
	// PollUntilContextTimeout, on the scheduler's clock: a test or a
	// simulation steps it). The pod's deletion cancels ctx.
	var err error
	for {
		var done bool
		if done, err = ready(); done || err != nil {
			break
		}
		if clk.Since(start) >= pl.bindingTimeout {
			err = context.DeadlineExceeded
			break
		}
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-clk.After(bindingConditionsPollInterval):
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w: %w", errDeviceBindingTimeout, err)
	}
	pl.recordBindingConditions(s.claims, err, clk.Since(start))
	if err != nil {
		return framework.AsStatus(err)
	}
	return nil
}

// recordBindingConditions records the wait as upstream does: its duration
// for every allocated device, and one allocation per device with binding
// conditions, per profile, driver and outcome.
func (pl *DynamicResources) recordBindingConditions(claims []*resourceapi.ResourceClaim, err error, waited time.Duration) {
	status := pluginmetrics.BindingConditionsStatusSuccess
	switch {
	case err == nil:
	case errors.Is(err, errDeviceBindingTimeout):
		status = pluginmetrics.BindingConditionsStatusTimeout
	case errors.Is(err, errDeviceBindingFailed):
		status = pluginmetrics.BindingConditionsStatusFailed
	default:
		status = pluginmetrics.BindingConditionsStatusError
	}
	profile := pl.h.ProfileName()
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			pluginmetrics.DRABindingConditionsWaitDuration.WithLabelValues(profile, r.Driver, status).Observe(waited.Seconds())
			if len(r.BindingConditions) > 0 {
				pluginmetrics.DRABindingConditionsAllocationsTotal.WithLabelValues(profile, r.Driver, status).Inc()
			}
		}
	}
}

// errDeviceBindingTimeout and errDeviceBindingFailed are upstream's
// ErrDeviceBindingTimeout and ErrDeviceBindingFailed.
var (
	errDeviceBindingTimeout = errors.New("device binding timeout")
	errDeviceBindingFailed  = errors.New("device binding failed")
)

// hasBindingConditions: an allocated device of the claims has binding
// conditions.
func hasBindingConditions(claims []*resourceapi.ResourceClaim) bool {
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if len(r.BindingConditions) > 0 {
				return true
			}
		}
	}
	return false
}

// bindClaim is upstream's bindClaim: on a conflict (a benign concurrent
// change, such as a driver's) it reads the claim again and retries
// (retry.DefaultRetry), checking again that nobody allocated, deallocated
// or deleted it meanwhile.
func (pl *DynamicResources) bindClaim(ctx context.Context, w framework.ClaimWriter, claim *resourceapi.ResourceClaim, allocation *resourceapi.AllocationResult, pod *v1.Pod) (*resourceapi.ResourceClaim, error) {
	c := claim.DeepCopy()
	refresh := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if refresh {
			latest, err := w.GetResourceClaim(ctx, c.Namespace, c.Name)
			if err != nil {
				return fmt.Errorf("get updated claim %s after conflict: %w", claimName(c), err)
			}
			c = latest.DeepCopy()
		}
		refresh = true
		if c.DeletionTimestamp != nil {
			return fmt.Errorf("claim %s got deleted in the meantime", claimName(c))
		}
		if allocation != nil {
			if c.Status.Allocation != nil {
				return fmt.Errorf("claim %s got allocated elsewhere in the meantime", claimName(c))
			}
			if !slices.Contains(c.Finalizers, resourceapi.Finalizer) {
				c.Finalizers = append(c.Finalizers, resourceapi.Finalizer)
				updated, err := w.UpdateResourceClaim(ctx, c)
				if err != nil {
					return fmt.Errorf("add finalizer to claim %s: %w", claimName(c), err)
				}
				c = updated.DeepCopy()
			}
			c.Status.Allocation = allocation
		}
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{
			APIGroup: v1.GroupName, Resource: "pods", Name: pod.Name, UID: pod.UID})
		if c.Status.Allocation == nil {
			return fmt.Errorf("claim %s got deallocated elsewhere in the meantime", claimName(c))
		}
		if c.Status.Allocation.AllocationTimestamp == nil {
			c.Status.Allocation = c.Status.Allocation.DeepCopy()
			c.Status.Allocation.AllocationTimestamp = &metav1.Time{Time: pl.now()}
		}
		updated, err := w.UpdateResourceClaimStatus(ctx, c)
		if err != nil {
			if allocation != nil {
				return fmt.Errorf("add allocation and reservation to claim %s: %w", claimName(c), err)
			}
			return fmt.Errorf("add reservation to claim %s: %w", claimName(c), err)
		}
		c = updated
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := pl.manager.AssumeClaimAfterAPICall(c); err != nil {
		klog.FromContext(ctx).V(5).Info("Claim not stored in assume cache", "err", err, "claim", klog.KObj(c))
	}
	return c, nil
}

// ReplayPostFilter implements framework.PostFilterReplayer. A pod's
// outcome is replayed only for a pod of a class this plugin signs: one
// without claims and without extended resources backed by devices, for
// which PostFilter has nothing to deallocate and records nothing.
func (pl *DynamicResources) ReplayPostFilter(*v1.Pod) {}

// PostFilter, when no node fits, deallocates one of the pod's allocated
// claims that some node could not use and that no other pod uses, so
// the next attempt can allocate it where the pod fits. Upstream picks one
// at random (map order); kubesched takes the first in the pod's order, for
// a deterministic simulation.
func (pl *DynamicResources) PostFilter(ctx context.Context, cs *framework.CycleState, pod *v1.Pod, _ framework.NodeToStatusReader) (*framework.PostFilterResult, *framework.Status) {
	s, err := getState(cs)
	if err != nil || len(s.claims) == 0 {
		// No state: an earlier PreFilter plugin rejected the pod before
		// this one ran. Upstream's lookup fails there and its error ends
		// the pod's message with " not found", skipping preemption;
		// kubesched lets preemption say why it cannot help (README,
		// "Differences from kube-scheduler").
		return nil, framework.NewStatus(framework.Unschedulable)
	}
	_, st := pl.deallocateOrDeletePodClaims(ctx, pod, s)
	return nil, st
}

// deallocateOrDeletePodClaims is upstream's: it deallocates the first
// allocated claim of the pod that some node could not use and that no
// other pod uses, or else deletes the pod's claim for extended resources
// backed by devices. found is false when there was nothing to do.
func (pl *DynamicResources) deallocateOrDeletePodClaims(ctx context.Context, pod *v1.Pod, s *stateData) (bool, *framework.Status) {
	s.mu.Lock()
	idx := make([]int, 0, len(s.unavailableClaims))
	for i := range s.unavailableClaims {
		idx = append(idx, i)
	}
	s.mu.Unlock()
	sort.Ints(idx)
	w := pl.h.ClaimWriter()
	for _, i := range idx {
		claim := s.claims[i]
		if s.isExtendedIndex(i) {
			if !isSpecial(claim) {
				break
			}
			continue
		}
		rf := claim.Status.ReservedFor
		if len(rf) == 0 || (len(rf) == 1 && rf[0].UID == pod.UID) {
			if w == nil {
				break
			}
			c := claim.DeepCopy()
			c.Status.ReservedFor = nil
			c.Status.Allocation = nil
			c.Status.Devices = nil
			klog.FromContext(ctx).V(5).Info("Deallocation of ResourceClaim", "pod", klog.KObj(pod), "resourceclaim", klog.KObj(c))
			if _, err := w.UpdateResourceClaimStatus(ctx, c); err != nil {
				return true, framework.AsStatus(err)
			}
			return true, framework.NewStatus(framework.Unschedulable, "deallocation of ResourceClaim completed")
		}
	}
	if st, done := pl.postFilterExtended(ctx, s); done {
		return true, st
	}
	return false, framework.NewStatus(framework.Unschedulable)
}

var _ framework.PodGroupPostFilterPlugin = &DynamicResources{}

// PodGroupPostFilter implements framework.PodGroupPostFilterPlugin for a
// pod group that did not fit, as v1.37.2's: for each of the group's
// unscheduled pods tried in the failed cycle, what its PostFilter would do
// (a claim allocated where it cannot be used is deallocated, a claim for
// extended resources deleted), so the next cycle can allocate anew; then
// Unschedulable with "deallocation and deletion of ResourceClaims
// completed". A group with topology constraints while
// TopologyAwareWorkloadScheduling is on is left alone (a bare
// Unschedulable), as upstream. The group's own claims (the
// DRAWorkloadResourceClaims gate) are not supported, so there are none
// to unreserve.
func (pl *DynamicResources) PodGroupPostFilter(ctx context.Context, state *framework.PodGroupCycleState, g *framework.QueuedPodGroupInfo, _ framework.PodGroupSchedulingFunc) (*framework.PodGroupPostFilterResult, *framework.Status) {
	if pl.h.Features().TopologyAwareWorkloadScheduling && g.PodGroup != nil && g.PodGroup.Spec.SchedulingConstraints != nil {
		klog.FromContext(ctx).V(5).Info("DRA PodGroupPostFilter is not supporting topology-aware workloads", "podGroup", g.Name)
		return nil, framework.NewStatus(framework.Unschedulable)
	}
	for _, pod := range g.UnscheduledPods {
		cs := state.Member(pod.Namespace, pod.Name)
		if cs == nil {
			continue
		}
		s, err := getState(cs)
		if err != nil {
			continue // PreFilter did not get this far for the pod
		}
		if _, st := pl.deallocateOrDeletePodClaims(ctx, pod, s); st.Code() == framework.Error {
			return nil, st
		}
	}
	return nil, framework.NewStatus(framework.Unschedulable, "deallocation and deletion of ResourceClaims completed")
}
