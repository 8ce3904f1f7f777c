package dynamicresources

import (
	"context"
	"errors"
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/kubesched/kubesched/pkg/framework"
)

// RejectionDetails says, for explain, why the pod's claims cannot be
// allocated on a node this plugin rejected with "cannot allocate all
// claims", which says nothing of which request failed. Each request of
// each claim to allocate is tried alone (without the claim's constraints)
// on the node, with the devices allocated now and then as if every device
// were free; then each claim whole, then all claims together:
//
//   - a request that does not fit even on a free node: too few of the
//     node's devices match it (its device class, its selectors, its
//     count);
//   - one that fits on a free node only: enough match, too few are free;
//   - requests that fit alone but not in their claim: the claim's
//     constraints, or requests that want the same devices;
//   - claims that fit alone but not together: not enough for all.
//
// The runtime asks the plugin that rejected the node (a method, not an
// extension point). Nothing for other rejections.
func (pl *DynamicResources) RejectionDetails(cs *framework.CycleState, nodeName string) []string {
	s, err := getState(cs)
	if err != nil || !s.allocating || len(s.toAllocate) == 0 || pl.manager == nil {
		return nil
	}
	ni, err := pl.h.SnapshotSharedLister().NodeInfos().Get(nodeName)
	if err != nil || ni == nil || ni.Node() == nil {
		return nil
	}
	node := ni.Node()
	slices, err := pl.manager.ResourceSlices()
	if err != nil {
		return nil
	}
	ctx := context.Background()
	free := structured.AllocatedState{}
	// fits: the claims can all be allocated on the node from allocated.
	fits := func(allocated structured.AllocatedState, claims ...*resourceapi.ResourceClaim) (bool, error) {
		a, err := structured.NewAllocator(ctx, s.features, allocated, pl.manager.DeviceClasses(), slices, pl.celCache)
		if err != nil {
			return false, err
		}
		res, err := a.Allocate(ctx, node, claims)
		if err != nil && !errors.Is(err, structured.ErrFailedAllocationOnNode) {
			return false, err
		}
		return err == nil && len(res) == len(claims), nil
	}
	var out []string
	wholeClaims := true
	for _, claim := range s.toAllocate {
		requestsFit := true
		for _, r := range claim.Spec.Devices.Requests {
			one := claim.DeepCopy()
			one.Spec.Devices.Requests = []resourceapi.DeviceRequest{r}
			one.Spec.Devices.Constraints, one.Spec.Devices.Config = nil, nil
			ok, err := fits(*s.allocated, one)
			if ok {
				continue
			}
			requestsFit = false
			what := fmt.Sprintf("claim %s, request %s: ", claimName(claim), r.Name)
			if err != nil {
				out = append(out, what+err.Error())
				continue
			}
			if onFree, err := fits(free, one); err == nil && onFree {
				out = append(out, what+"enough of the node's devices match it, but too few of them are free (the others are allocated to other claims)")
			} else {
				out = append(out, what+"too few of the node's devices match it (its device class, its selectors and its count)")
			}
		}
		if !requestsFit {
			wholeClaims = false
			continue
		}
		if ok, _ := fits(*s.allocated, claim); !ok {
			wholeClaims = false
			out = append(out, fmt.Sprintf("claim %s: each request fits alone, but not all of them together (the claim's constraints, or requests that want the same devices)", claimName(claim)))
		}
	}
	if wholeClaims && len(s.toAllocate) > 1 {
		if ok, _ := fits(*s.allocated, s.toAllocate...); !ok {
			out = append(out, fmt.Sprintf("each of the pod's %d claims fits alone, but not all of them together", len(s.toAllocate)))
		}
	}
	return out
}
