package dynamicresources

import (
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Extended resources backed by DRA (DRAExtendedResource, GA in v1.37), as
// kube-scheduler v1.37.2 does them. A pod that asks for an extended
// resource a DeviceClass provides (e.g. example.com/gpu: 1) gets a special
// claim: PreFilter finds the one a former attempt created (owned by the
// pod, annotated resource.kubernetes.io/extended-resource-claim) or makes
// one in memory, named <extended-resources>; Filter gives it, per node, a
// request for each container's share of the resources the node does not
// have in its allocatable (those it has are a device plugin's, checked by
// NodeResourcesFit), and allocates it with the pod's claims; Reserve holds
// the allocation in flight; PreBind creates the claim
// (<pod>-extended-resources-<random>), writes its allocation and
// reservation, and patches the pod's status.extendedResourceClaimStatus;
// Unreserve deletes a claim it created. A claim of a former attempt that
// still exists is deleted in PostFilter, and the pod tries again.

// specialClaimName is the in-memory name of the special claim: not a valid
// object name, so it never clashes with a real claim.
const specialClaimName = "<extended-resources>"

// Reasons of the special claim, as upstream words them.
const (
	errReasonStaleExtendedClaim = "cannot schedule extended resource claim"
	errReasonCannotFitResource  = "cannot fit resource"
)

// extendedState is the cycle's special claim.
type extendedState struct {
	// index of the special claim in stateData.claims (the last one).
	index int
	// initialUID is the claim's UID in PreFilter (a made-up one for the
	// in-memory claim): its allocation is in flight under it.
	initialUID types.UID
	// requests are the pod's requests of extended resources (non-zero,
	// by name).
	requests map[v1.ResourceName]int64
	names    []v1.ResourceName
	// nodes are Filter's per-node claims (under stateData.mu).
	nodes map[string]*nodeExtended
}

// nodeExtended is the special claim for one node and which container's
// resource each of its requests serves; claim nil when the node's device
// plugins provide every resource.
type nodeExtended struct {
	claim    *resourceapi.ResourceClaim
	mappings []v1.ContainerExtendedResourceRequest
}

// hasMappedExtendedResource: the pod asks for a resource a DeviceClass
// provides (cheap: from the PodInfo's requests).
func (pl *DynamicResources) hasMappedExtendedResource(req *framework.Resource) bool {
	for name, q := range req.Scalar {
		if q != 0 && framework.IsDRAExtendedResourceName(name) && pl.manager.DeviceClassFor(name) != nil {
			return true
		}
	}
	return false
}

// preFilterExtended is upstream's preFilterExtendedResources: nil when the
// pod asks for no resource a DeviceClass provides; else the special claim
// a former attempt created, or a new one in memory.
func (pl *DynamicResources) preFilterExtended(cs *framework.CycleState, pod *v1.Pod) (*resourceapi.ResourceClaim, *extendedState, *framework.Status) {
	if pl.manager == nil || !pl.hasMappedExtendedResource(&cs.PodInfoOf(pod).Requests) {
		return nil, nil, nil
	}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	ext := &extendedState{requests: map[v1.ResourceName]int64{}, nodes: map[string]*nodeExtended{}}
	mapped := false
	for name, q := range reqs {
		if !framework.IsDRAExtendedResourceName(name) || q.IsZero() {
			continue
		}
		ext.requests[name] = q.Value()
		ext.names = append(ext.names, name)
		if pl.manager.DeviceClassFor(name) != nil {
			mapped = true
		}
	}
	if !mapped {
		return nil, nil, nil
	}
	slices.Sort(ext.names)
	all, err := pl.manager.ListClaims()
	if err != nil {
		return nil, nil, framework.AsStatus(fmt.Errorf("listing ResourceClaims: %w", err))
	}
	if c := findExtendedClaim(pod, all); c != nil {
		ext.initialUID = c.UID
		return c, ext, nil
	}
	c := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: pod.Namespace,
			Name:      specialClaimName,
			// A made-up UID for the allocation in flight (upstream's is
			// random; this one keeps a simulation reproducible).
			UID:          types.UID(specialClaimName + string(pod.UID)),
			GenerateName: pod.Name + "-extended-resources-",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true),
			}},
			Annotations: map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"},
		},
	}
	ext.initialUID = c.UID
	return c, ext, nil
}

// findExtendedClaim is the pod's special claim from a former attempt: the
// annotated claim the pod controls.
func findExtendedClaim(pod *v1.Pod, claims []*resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
	var found *resourceapi.ResourceClaim
	for _, c := range claims {
		if c.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" || c.Namespace != pod.Namespace {
			continue
		}
		for _, or := range c.OwnerReferences {
			if or.Name == pod.Name && or.UID == pod.UID && ptr.Deref(or.Controller, false) {
				// Several (should not happen): the first by name, to be
				// deterministic.
				if found == nil || c.Name < found.Name {
					found = c
				}
			}
		}
	}
	return found
}

// isSpecial: the claim is still the in-memory one (not created yet).
func isSpecial(c *resourceapi.ResourceClaim) bool { return c.Name == specialClaimName }

// filterExtended is upstream's filterExtendedResources: the special claim
// for the node, with a request per container for the resources the node
// must provide by DRA (those it does not have in its allocatable); nil
// when its device plugins provide them all and the pod has no other
// claims. A claim of a former attempt
// (it has requests) rejects every node: PostFilter deletes it.
func (pl *DynamicResources) filterExtended(s *stateData, pod *v1.Pod, ni *framework.NodeInfo) (*nodeExtended, *framework.Status) {
	claim := s.claims[s.ext.index]
	if claim.Spec.Devices.Requests != nil {
		return nil, unschedulable(errReasonStaleExtendedClaim)
	}
	var viaDRA map[v1.ResourceName]int64
	for _, name := range s.ext.names {
		allocatable, inAllocatable := ni.Allocatable().Scalar[name]
		if pl.manager.DeviceClassFor(name) != nil && allocatable == 0 {
			if viaDRA == nil {
				viaDRA = map[v1.ResourceName]int64{}
			}
			viaDRA[name] = s.ext.requests[name]
		} else if !inAllocatable {
			return nil, unschedulable(errReasonCannotFitResource)
		}
	}
	// Without user claims, nothing is left to do when the device plugins
	// provide everything. With some, upstream goes on with a claim
	// without requests, allocated along with them.
	if (viaDRA == nil && s.ext.index == 0) || claim.Status.Allocation != nil {
		return nil, nil
	}
	nc := claim.DeepCopy()
	reqs, mappings := pl.requestsAndMappings(pod, viaDRA)
	nc.Spec.Devices.Requests = reqs
	return &nodeExtended{claim: nc, mappings: mappings}, nil
}

// requestsAndMappings is upstream's createRequestsAndMappings: for each
// resource (by name), a request per long-lived container (regular, or a
// sidecar init container) that asks for it, and one for the largest need
// of the init containers that run before, less what the long-lived
// containers started after them hold already (those they reuse first); a
// request asks ExactCount devices of the class, named
// container-<index in init+regular containers>-request-<index of the
// resource among the container's sorted requests>.
func (pl *DynamicResources) requestsAndMappings(pod *v1.Pod, viaDRA map[v1.ResourceName]int64) ([]resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	containers := slices.Clone(pod.Spec.InitContainers)
	containers = append(containers, pod.Spec.Containers...)
	nInit := len(pod.Spec.InitContainers)
	var longLived, shortLived []int
	for i, c := range containers {
		if i < nInit && (c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways) {
			shortLived = append(shortLived, i)
			continue
		}
		longLived = append(longLived, i)
	}
	names := make([]v1.ResourceName, 0, len(viaDRA))
	for name := range viaDRA {
		names = append(names, name)
	}
	slices.Sort(names)
	var requests []resourceapi.DeviceRequest
	var mappings []v1.ContainerExtendedResourceRequest
	for _, name := range names {
		class := pl.manager.DeviceClassFor(name)
		if class == nil {
			continue
		}
		var longMappings, shortMappings []v1.ContainerExtendedResourceRequest
		longReqs := make([]*resourceapi.DeviceRequest, len(containers))
		for _, i := range longLived {
			r, m := containerRequest(i, &containers[i], name, class.Name, nil)
			longReqs[i] = r
			longMappings = append(longMappings, m...)
		}
		var maxShort *resourceapi.DeviceRequest
		shortNames := map[string]bool{}
		for _, i := range shortLived {
			r, m := containerRequest(i, &containers[i], name, class.Name, longReqs[i:])
			if r != nil {
				shortNames[r.Name] = true
				if maxShort == nil || maxShort.Exactly.Count < r.Exactly.Count {
					maxShort = r
				}
			}
			shortMappings = append(shortMappings, m...)
		}
		if maxShort != nil && len(shortNames) > 1 {
			delete(shortNames, maxShort.Name)
			for i := range shortMappings {
				if shortNames[shortMappings[i].RequestName] {
					shortMappings[i].RequestName = maxShort.Name
				}
			}
		}
		if maxShort != nil {
			requests = append(requests, *maxShort)
		}
		for _, r := range longReqs {
			if r != nil {
				requests = append(requests, *r)
			}
		}
		mappings = append(mappings, longMappings...)
		mappings = append(mappings, shortMappings...)
	}
	sort.Slice(requests, func(i, j int) bool { return requests[i].Name < requests[j].Name })
	return requests, mappings
}

// containerRequest is upstream's createResourceRequestAndMappings for one
// container and resource: the requests it reuses (of long-lived
// containers started after it) first, then a request of its own for the
// rest, if any.
func containerRequest(index int, c *v1.Container, name v1.ResourceName, class string, reusable []*resourceapi.DeviceRequest) (*resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	q, ok := c.Resources.Requests[name]
	if !ok {
		return nil, nil
	}
	want, ok := (&q).AsInt64()
	if !ok || want == 0 {
		return nil, nil
	}
	var mappings []v1.ContainerExtendedResourceRequest
	var sum int64
	for _, r := range reusable {
		if r == nil {
			continue
		}
		sum += r.Exactly.Count
		mappings = append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: string(name), RequestName: r.Name})
		if sum >= want {
			return nil, mappings
		}
	}
	keys := make([]string, 0, len(c.Resources.Requests))
	for k := range c.Resources.Requests {
		keys = append(keys, string(k))
	}
	slices.Sort(keys)
	ridx := max(slices.Index(keys, string(name)), 0)
	reqName := fmt.Sprintf("container-%d-request-%d", index, ridx)
	mappings = append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: string(name), RequestName: reqName})
	return &resourceapi.DeviceRequest{
		Name: reqName,
		Exactly: &resourceapi.ExactDeviceRequest{
			DeviceClassName: class,
			AllocationMode:  resourceapi.DeviceAllocationModeExactCount,
			Count:           want - sum,
		},
	}, mappings
}

// withNodeClaim is the claims to allocate with the special claim replaced
// by the node's.
func withNodeClaim(toAllocate []*resourceapi.ResourceClaim, special, node *resourceapi.ResourceClaim) []*resourceapi.ResourceClaim {
	out := slices.Clone(toAllocate)
	for i, c := range out {
		if c == special {
			out[i] = node
		}
	}
	return out
}
