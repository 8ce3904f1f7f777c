package framework

import (
	"context"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/structured"
)

// DRAManager is the scheduler's view of dynamic resource allocation,
// shared by all profiles (kube-scheduler's SharedDRAManager): the
// ResourceClaims as the scheduler last wrote or saw them, which devices are
// taken, and the allocations made in Reserve that PreBind has not written
// yet ("in flight"), so that two pods never get the same device.
type DRAManager interface {
	// GetClaim returns the newest known version of a claim: the one the
	// scheduler wrote (assumed) until the informer has caught up with it.
	// The object is shared: do not modify it.
	GetClaim(namespace, name string) (*resourceapi.ResourceClaim, error)
	// AllocatedState is what the allocator must not hand out again: the
	// devices of every allocated claim and of every allocation in flight.
	// The sets are the caller's.
	AllocatedState() (*structured.AllocatedState, error)
	// ResourceSlices lists the published ResourceSlices.
	ResourceSlices() ([]*resourceapi.ResourceSlice, error)
	// DeviceClasses reads DeviceClasses.
	DeviceClasses() structured.DeviceClassLister
	// GetPendingAllocation returns the in-flight allocation of a claim,
	// nil when there is none.
	GetPendingAllocation(uid types.UID) *resourceapi.AllocationResult
	// SignalClaimPendingAllocation records an allocation made in Reserve
	// (the claim with its status.allocation set).
	SignalClaimPendingAllocation(uid types.UID, allocated *resourceapi.ResourceClaim) error
	// RemoveClaimPendingAllocation forgets an in-flight allocation (written
	// by PreBind, or given up by Unreserve); false when there was none.
	RemoveClaimPendingAllocation(uid types.UID) bool
	// AssumeClaimAfterAPICall records a claim as the API server returned it
	// after the scheduler's write, newer than what the informer has.
	AssumeClaimAfterAPICall(claim *resourceapi.ResourceClaim) error
	// AssumedClaimRestore drops an assumed version: the informer's is
	// the truth again.
	AssumedClaimRestore(namespace, name string)
	// Features are the allocator's features (the DRA feature gates), and
	// whether Filter's allocation is bounded by filterTimeout.
	Features() (f structured.Features, filterTimeout bool)

	// Extended resources backed by DRA (DRAExtendedResource):

	// DeviceClassFor is the DeviceClass that provides an extended resource
	// (its spec.extendedResourceName, or the implicit
	// deviceclass.resource.kubernetes.io/<class>), nil when none does:
	// kube-scheduler's DeviceClassResolver. Shared: do not modify it.
	DeviceClassFor(name v1.ResourceName) *resourceapi.DeviceClass
	// ListClaims lists every known claim (the scheduler's own writes
	// included), in no particular order. Shared: do not modify them.
	ListClaims() ([]*resourceapi.ResourceClaim, error)
	// AssumeCreatedClaim records a claim the scheduler has just created
	// (and written), whether or not the informer has seen it yet.
	AssumeCreatedClaim(claim *resourceapi.ResourceClaim)
}

// ClaimWriter writes ResourceClaims: the API in a cluster, the in-memory
// store in a simulation. Each returns the claim as stored.
type ClaimWriter interface {
	// GetResourceClaim reads a claim's latest version (after a conflict).
	GetResourceClaim(ctx context.Context, namespace, name string) (*resourceapi.ResourceClaim, error)
	// UpdateResourceClaim updates a claim's metadata and spec (the
	// deletion-protection finalizer).
	UpdateResourceClaim(ctx context.Context, claim *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error)
	// UpdateResourceClaimStatus updates a claim's status (allocation,
	// reservedFor).
	UpdateResourceClaimStatus(ctx context.Context, claim *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error)
	// RemoveClaimReservation takes a pod out of a claim's
	// status.reservedFor (a strategic merge patch, as kube-scheduler's
	// Unreserve).
	RemoveClaimReservation(ctx context.Context, claim *resourceapi.ResourceClaim, podUID types.UID) error
	// CreateResourceClaim creates a claim (the special claim of a pod's
	// extended resources backed by DRA, named from its generateName).
	CreateResourceClaim(ctx context.Context, claim *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error)
	// DeleteResourceClaim deletes a claim; NotFound (apierrors) when it
	// is gone already.
	DeleteResourceClaim(ctx context.Context, namespace, name string) error
	// PatchPodExtendedResourceClaimStatus sets the pod's
	// status.extendedResourceClaimStatus (a patch of the status, as
	// kube-scheduler's PatchPodStatus).
	PatchPodExtendedResourceClaimStatus(ctx context.Context, pod *v1.Pod, status *v1.PodExtendedResourceClaimStatus) error
}
