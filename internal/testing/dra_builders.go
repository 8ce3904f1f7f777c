package testing

import (
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// DeviceClass is a class selecting the devices of a driver, with an
// optional extra CEL selector.
func DeviceClass(name, driver string, cel ...string) *resourceapi.DeviceClass {
	c := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Spec.Selectors = append(c.Spec.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "` + driver + `"`}})
	for _, e := range cel {
		c.Spec.Selectors = append(c.Spec.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: e}})
	}
	return c
}

// SliceWrapper builds a ResourceSlice.
type SliceWrapper struct{ resourceapi.ResourceSlice }

// MakeSlice is the one slice of a node's pool of a driver.
func MakeSlice(node, driver string) *SliceWrapper {
	s := &SliceWrapper{}
	s.Name = node + "-" + driver
	s.Spec.Driver = driver
	s.Spec.NodeName = ptr.To(node)
	s.Spec.Pool = resourceapi.ResourcePool{Name: node, ResourceSliceCount: 1}
	return s
}

// Device adds a device with string attributes (name=value pairs).
func (s *SliceWrapper) Device(name string, attrs ...string) *SliceWrapper {
	d := resourceapi.Device{Name: name, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}}
	for i := 0; i+1 < len(attrs); i += 2 {
		d.Attributes[resourceapi.QualifiedName(attrs[i])] = resourceapi.DeviceAttribute{StringValue: ptr.To(attrs[i+1])}
	}
	s.Spec.Devices = append(s.Spec.Devices, d)
	return s
}

// Obj returns the slice.
func (s *SliceWrapper) Obj() *resourceapi.ResourceSlice { return &s.ResourceSlice }

// ClaimWrapper builds a ResourceClaim.
type ClaimWrapper struct{ resourceapi.ResourceClaim }

// MakeClaim is a claim in the default namespace.
func MakeClaim(name string) *ClaimWrapper {
	c := &ClaimWrapper{}
	c.Name, c.Namespace, c.UID = name, v1.NamespaceDefault, types.UID("claim-"+name)
	return c
}

// Request asks for count devices of a class (ExactCount), with optional
// CEL selectors.
func (c *ClaimWrapper) Request(name, class string, count int64, cel ...string) *ClaimWrapper {
	r := resourceapi.DeviceRequest{Name: name, Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class,
		AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}}
	for _, e := range cel {
		r.Exactly.Selectors = append(r.Exactly.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: e}})
	}
	c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, r)
	return c
}

// FirstAvailable asks for one device of the first class in the list that
// can be allocated (subrequests named after their classes).
func (c *ClaimWrapper) FirstAvailable(name string, classes ...string) *ClaimWrapper {
	r := resourceapi.DeviceRequest{Name: name}
	for _, cl := range classes {
		r.FirstAvailable = append(r.FirstAvailable, resourceapi.DeviceSubRequest{Name: cl, DeviceClassName: cl,
			AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1})
	}
	c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, r)
	return c
}

// AllocatedOn records an allocation of devices of a driver's pool on a
// node, for the claim's first request.
func (c *ClaimWrapper) AllocatedOn(node, driver string, devices ...string) *ClaimWrapper {
	a := &resourceapi.AllocationResult{NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	req := ""
	if len(c.Spec.Devices.Requests) > 0 {
		req = c.Spec.Devices.Requests[0].Name
	}
	for _, d := range devices {
		a.Devices.Results = append(a.Devices.Results, resourceapi.DeviceRequestAllocationResult{Request: req, Driver: driver, Pool: node, Device: d})
	}
	c.Status.Allocation = a
	return c
}

// ReservedFor adds a consumer pod.
func (c *ClaimWrapper) ReservedFor(pod *v1.Pod) *ClaimWrapper {
	c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID})
	return c
}

// Obj returns the claim.
func (c *ClaimWrapper) Obj() *resourceapi.ResourceClaim { return &c.ResourceClaim }

// Claim adds a pod claim that names a ResourceClaim.
func (p *PodWrapper) Claim(name, claimName string) *PodWrapper {
	p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: name, ResourceClaimName: ptr.To(claimName)})
	return p
}

// ClaimFromTemplate adds a pod claim from a template; generated, when not
// empty, is the claim's name in the pod's status (the controller made it).
func (p *PodWrapper) ClaimFromTemplate(name, template, generated string) *PodWrapper {
	p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: name, ResourceClaimTemplateName: ptr.To(template)})
	if generated != "" {
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: name, ResourceClaimName: ptr.To(generated)})
	}
	return p
}

// Memory is a quantity, for device capacities.
func Memory(q string) resource.Quantity { return resource.MustParse(q) }

// ClaimTemplate is a ResourceClaimTemplate in the default namespace asking
// for count devices of a class.
func ClaimTemplate(name, class string, count int64) *resourceapi.ResourceClaimTemplate {
	t := &resourceapi.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1.NamespaceDefault}}
	t.Spec.Spec = MakeClaim(name).Request("gpu", class, count).Spec
	return t
}
