package dynamicresources

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
	pluginmetrics "github.com/kubesched/kubesched/pkg/framework/metrics"
)

// isExtendedIndex: the i-th claim of the cycle is the special claim.
func (s *stateData) isExtendedIndex(i int) bool { return s.ext != nil && i == s.ext.index }

// nodeExtendedOf is Filter's special claim for the node (nil: none).
func (s *stateData) nodeExtendedOf(nodeName string) *nodeExtended {
	if s.ext == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ext.nodes[nodeName]
}

// onlyExtendedToAllocate: the special claim is the only claim to allocate
// (Reserve has nothing to do on a node whose device plugins provide the
// resources).
func (s *stateData) onlyExtendedToAllocate() bool {
	return s.ext != nil && len(s.toAllocate) == 1 && s.toAllocate[0] == s.claims[s.ext.index]
}

// unreserveExtended is upstream's unreserveExtendedResourceClaim: the
// allocation in flight is given up, and a claim PreBind created is
// deleted.
func (pl *DynamicResources) unreserveExtended(ctx context.Context, s *stateData, pod *v1.Pod) {
	if s.ext == nil {
		return
	}
	claim := s.claims[s.ext.index]
	if pl.manager.RemoveClaimPendingAllocation(s.ext.initialUID) {
		pl.manager.AssumedClaimRestore(claim.Namespace, claim.Name)
	}
	if isSpecial(claim) {
		return
	}
	w := pl.h.ClaimWriter()
	if w == nil {
		return
	}
	if err := deleteClaim(ctx, w, claim); err != nil {
		klog.FromContext(ctx).Error(err, "delete", "resourceclaim", klog.KObj(claim), "pod", klog.KObj(pod))
	}
}

// deleteClaim is upstream's deleteClaim: the deletion-protection finalizer
// is taken off (an update, retried on conflicts with the latest claim),
// then the claim is deleted; gone already is fine.
func deleteClaim(ctx context.Context, w framework.ClaimWriter, claim *resourceapi.ResourceClaim) error {
	c := claim.DeepCopy()
	refresh := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if refresh {
			latest, err := w.GetResourceClaim(ctx, c.Namespace, c.Name)
			if err != nil {
				return fmt.Errorf("get resourceclaim %s/%s: %w", c.Namespace, c.Name, err)
			}
			c = latest.DeepCopy()
		}
		refresh = true
		if i := slices.Index(c.Finalizers, resourceapi.Finalizer); i >= 0 {
			c.Finalizers = slices.Delete(c.Finalizers, i, i+1)
		}
		if _, err := w.UpdateResourceClaim(ctx, c); err != nil {
			return fmt.Errorf("update resourceclaim %s/%s: %w", c.Namespace, c.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.DeleteResourceClaim(ctx, c.Namespace, c.Name); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// bindExtended is PreBind for the special claim (upstream's bindClaim and
// its extended-resource parts): nothing when the node's device plugins
// provide the resources; else the claim is created (from the node's
// variant Filter made), its allocation and the pod's reservation written,
// and the pod's status.extendedResourceClaimStatus patched. written tells
// whether the claim was written.
func (pl *DynamicResources) bindExtended(ctx context.Context, w framework.ClaimWriter, s *stateData, pod *v1.Pod, nodeName string) (written bool, _ error) {
	i := s.ext.index
	claim, allocation := s.claims[i], s.allocations[i]
	if allocation == nil && claim.Spec.Devices.Requests == nil {
		return false, nil // the node's device plugins provide the resources
	}
	nodeExt := s.nodeExtendedOf(nodeName)
	if isSpecial(claim) {
		if nodeExt == nil || nodeExt.claim == nil {
			return false, fmt.Errorf("extended resource claim not found for node %s", nodeName)
		}
		c := nodeExt.claim.DeepCopy()
		c.Status.Allocation = nil
		c.Name = ""
		c.UID = ""
		created, err := w.CreateResourceClaim(ctx, c)
		if err != nil {
			pluginmetrics.ResourceClaimCreatesTotal.WithLabelValues("failure", "false", "", "Pod").Inc()
			return false, fmt.Errorf("create claim for extended resources %s: %w", claimName(claim), err)
		}
		pluginmetrics.ResourceClaimCreatesTotal.WithLabelValues("success", "false", "", "Pod").Inc()
		// From now on Unreserve deletes it.
		s.claims[i] = created
		pl.manager.AssumeCreatedClaim(created)
		claim = created
	}
	updated, err := pl.bindClaim(ctx, w, claim, allocation, pod)
	if err != nil {
		return false, err
	}
	s.claims[i] = updated
	pl.manager.AssumeCreatedClaim(updated)
	var mappings []v1.ContainerExtendedResourceRequest
	if nodeExt != nil {
		mappings = nodeExt.mappings
	}
	if len(mappings) == 0 {
		return true, fmt.Errorf("nil or empty request mappings, no update of pod %s/%s ExtendedResourceClaimStatus", pod.Namespace, pod.Name)
	}
	st := &v1.PodExtendedResourceClaimStatus{RequestMappings: mappings, ResourceClaimName: updated.Name}
	if err := w.PatchPodExtendedResourceClaimStatus(ctx, pod, st); err != nil {
		return true, fmt.Errorf("update pod %s/%s ExtendedResourceClaimStatus: %w", pod.Namespace, pod.Name, err)
	}
	return true, nil
}

// postFilterExtended is the end of upstream's PostFilter: the special
// claim of a former attempt (one that exists) is deleted, so the next
// attempt makes a new one.
func (pl *DynamicResources) postFilterExtended(ctx context.Context, s *stateData) (*framework.Status, bool) {
	if s.ext == nil || isSpecial(s.claims[s.ext.index]) {
		return nil, false
	}
	w := pl.h.ClaimWriter()
	if w == nil {
		return framework.NewStatus(framework.Unschedulable), true
	}
	if err := deleteClaim(ctx, w, s.claims[s.ext.index]); err != nil {
		return framework.AsStatus(err), true
	}
	return framework.NewStatus(framework.Unschedulable, "deletion of ResourceClaim completed"), true
}
