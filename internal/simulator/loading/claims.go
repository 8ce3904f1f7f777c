package loading

import (
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// Claims returns the cluster's ResourceClaims and its
// ResourceClaimTemplates by namespace/name.
func Claims(c *cluster.Cluster) ([]*resourceapi.ResourceClaim, map[string]*resourceapi.ResourceClaimTemplate) {
	var claims []*resourceapi.ResourceClaim
	templates := map[string]*resourceapi.ResourceClaimTemplate{}
	for _, o := range c.Others {
		switch t := o.(type) {
		case *resourceapi.ResourceClaim:
			DefaultClaim(t)
			claims = append(claims, t)
		case *resourceapi.ResourceClaimTemplate:
			DefaultClaimTemplate(t)
			templates[t.Namespace+"/"+t.Name] = t
		}
	}
	return claims, templates
}

// DefaultClaim gives a claim of the manifests the namespace, a UID and
// the API server's defaults.
func DefaultClaim(c *resourceapi.ResourceClaim) {
	if c.Namespace == "" {
		c.Namespace = v1.NamespaceDefault
	}
	if c.UID == "" {
		c.UID = types.UID("resourceclaim-" + c.Namespace + "-" + c.Name)
	}
	defaultDeviceClaim(&c.Spec.Devices)
}

// DefaultClaimTemplate gives a template the namespace and the API
// server's defaults.
func DefaultClaimTemplate(t *resourceapi.ResourceClaimTemplate) {
	if t.Namespace == "" {
		t.Namespace = v1.NamespaceDefault
	}
	defaultDeviceClaim(&t.Spec.Spec.Devices)
}

// defaultDeviceClaim applies the API server's defaults to a claim's
// requests (k8s.io/kubernetes/pkg/apis/resource/v1): allocationMode
// ExactCount, count 1 in that mode, and tolerations' operator Equal.
func defaultDeviceClaim(d *resourceapi.DeviceClaim) {
	mode := func(m *resourceapi.DeviceAllocationMode, count *int64, tolerations []resourceapi.DeviceToleration) {
		if *m == "" {
			*m = resourceapi.DeviceAllocationModeExactCount
		}
		if *m == resourceapi.DeviceAllocationModeExactCount && *count == 0 {
			*count = 1
		}
		for i := range tolerations {
			if tolerations[i].Operator == "" {
				tolerations[i].Operator = resourceapi.DeviceTolerationOpEqual
			}
		}
	}
	for i := range d.Requests {
		r := &d.Requests[i]
		if r.Exactly != nil {
			mode(&r.Exactly.AllocationMode, &r.Exactly.Count, r.Exactly.Tolerations)
		}
		for j := range r.FirstAvailable {
			sub := &r.FirstAvailable[j]
			mode(&sub.AllocationMode, &sub.Count, sub.Tolerations)
		}
	}
}
