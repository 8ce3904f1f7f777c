package difffuzz

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// DRA drivers, classes and the extended resource a DeviceClass provides.
const (
	gpuDriver   = "gpu.example.com"
	nicDriver   = "nic.example.com"
	draExtended = v1.ResourceName("example.com/gpu")
)

// draState is the DRA part of the cluster being drawn.
type draState struct {
	on bool
	// free are each node's unallocated devices (driver/device), in slice
	// order; pools are named after their node.
	free map[string][]devRef
	// claims are the unallocated (and shared allocated) claims by
	// namespace; templates the ResourceClaimTemplates by namespace.
	claims, templates map[string][]string
	extended          bool // a DeviceClass provides example.com/gpu
	seq               int
}

type devRef struct{ driver, device string }

// drawDRA draws (in 30% of clusters) DeviceClasses with CEL selectors (one
// with extendedResourceName), ResourceSlices per node (GPUs with model,
// index, driverVersion, pcieRoot and memory; RDMA NICs; some nodes
// without), unallocated ResourceClaims (ExactCount, All, CEL selectors,
// firstAvailable, matchAttribute, a missing class) and templates.
// Allocated claims are drawn with the assigned pods that use them.
func (g *Generator) drawDRA() []runtime.Object {
	g.dra = draState{free: map[string][]devRef{}, claims: map[string][]string{}, templates: map[string][]string{}}
	if !g.chance(0.3) {
		return nil
	}
	g.dra.on = true
	var out []runtime.Object
	add := func(draw func() runtime.Object) runtime.Object {
		o := g.admit(draw)
		if o != nil {
			out = append(out, o)
		}
		return o
	}
	classes := map[string][]string{
		"gpu.example.com":     {`device.driver == "gpu.example.com"`},
		"big.gpu.example.com": {`device.driver == "gpu.example.com"`, `device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`},
		"a.gpu.example.com":   {`device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "A"`},
		"nic.example.com":     {`device.driver == "nic.example.com" && device.attributes["nic.example.com"].rdma`},
	}
	for _, name := range []string{"gpu.example.com", "big.gpu.example.com", "a.gpu.example.com", "nic.example.com"} {
		if !g.chance(0.85) {
			continue
		}
		add(func() runtime.Object {
			dc := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
			for _, e := range classes[name] {
				dc.Spec.Selectors = append(dc.Spec.Selectors, resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: e}})
			}
			return dc
		})
	}
	if g.chance(0.5) {
		if add(func() runtime.Object {
			return &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "ext.gpu.example.com"}, Spec: resourceapi.DeviceClassSpec{
				Selectors:            []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}},
				ExtendedResourceName: ptr.To(string(draExtended))}}
		}) != nil {
			g.dra.extended = true
		}
	}
	for _, node := range g.nodes {
		if g.chance(0.5) {
			n := 1 + g.intn(4)
			model, mem := pick(g, "A", "B"), pick(g, "16Gi", "80Gi")
			o := add(func() runtime.Object {
				s := g.slice(node, gpuDriver)
				for i := range n {
					s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i),
						Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
							"model": {StringValue: ptr.To(model)}, "index": {IntValue: ptr.To(int64(i))},
							"driverVersion": {VersionValue: ptr.To(pick(g, "1.2.3", "2.0.0"))}, "resource.kubernetes.io/pcieRoot": {StringValue: ptr.To(fmt.Sprintf("pci%d", i/2))}},
						Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse(mem)}}})
				}
				return s
			})
			if o != nil {
				for _, d := range o.(*resourceapi.ResourceSlice).Spec.Devices {
					g.dra.free[node] = append(g.dra.free[node], devRef{gpuDriver, d.Name})
				}
			}
		}
		if g.chance(0.25) {
			o := add(func() runtime.Object {
				s := g.slice(node, nicDriver)
				for i := range 1 + g.intn(2) {
					s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: fmt.Sprintf("nic-%d", i),
						Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"rdma": {BoolValue: ptr.To(g.chance(0.8))},
							"resource.kubernetes.io/pcieRoot": {StringValue: ptr.To(fmt.Sprintf("pci%d", i))}}})
				}
				return s
			})
			if o != nil {
				for _, d := range o.(*resourceapi.ResourceSlice).Spec.Devices {
					g.dra.free[node] = append(g.dra.free[node], devRef{nicDriver, d.Name})
				}
			}
		}
	}
	for i := range g.intn(4) {
		ns := pick(g, g.namespaces...)
		name := fmt.Sprintf("claim%d", i+1)
		if add(func() runtime.Object {
			return &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("claim-" + ns + "-" + name)}, Spec: g.claimSpec()}
		}) != nil {
			g.dra.claims[ns] = append(g.dra.claims[ns], name)
		}
	}
	for i := range g.intn(3) {
		ns := pick(g, g.namespaces...)
		name := fmt.Sprintf("tmpl%d", i+1)
		if add(func() runtime.Object {
			return &resourceapi.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Spec: resourceapi.ResourceClaimTemplateSpec{Spec: g.claimSpec()}}
		}) != nil {
			g.dra.templates[ns] = append(g.dra.templates[ns], name)
		}
	}
	return out
}

// slice is a node's ResourceSlice of a driver, the pool named after the node.
func (g *Generator) slice(node, driver string) *resourceapi.ResourceSlice {
	return &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-" + driver},
		Spec: resourceapi.ResourceSliceSpec{Driver: driver, NodeName: ptr.To(node), Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
}

// claimSpec draws a claim's device requests: ExactCount (1-2) or All of a
// class (sometimes missing), CEL selectors, firstAvailable alternatives, a
// second request with a matchAttribute constraint.
func (g *Generator) claimSpec() resourceapi.ResourceClaimSpec {
	class := func() string {
		return pick(g, "gpu.example.com", "gpu.example.com", "big.gpu.example.com", "a.gpu.example.com", "nic.example.com", "missing.example.com")
	}
	exact := func() *resourceapi.ExactDeviceRequest {
		r := &resourceapi.ExactDeviceRequest{DeviceClassName: class(), AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: pick(g, int64(1), 1, 2)}
		if g.chance(0.1) {
			r.AllocationMode, r.Count = resourceapi.DeviceAllocationModeAll, 0
		}
		if g.chance(0.3) && r.DeviceClassName != "nic.example.com" {
			r.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
				Expression: pick(g, `device.attributes["gpu.example.com"].index < 2`, `device.attributes["gpu.example.com"].model != "B"`)}}}
		}
		return r
	}
	var spec resourceapi.ResourceClaimSpec
	req := resourceapi.DeviceRequest{Name: "gpu"}
	if g.chance(0.2) {
		for i := range 2 {
			e := exact()
			req.FirstAvailable = append(req.FirstAvailable, resourceapi.DeviceSubRequest{Name: fmt.Sprintf("alt%d", i), DeviceClassName: e.DeviceClassName,
				Selectors: e.Selectors, AllocationMode: e.AllocationMode, Count: e.Count})
		}
	} else {
		req.Exactly = exact()
	}
	spec.Devices.Requests = []resourceapi.DeviceRequest{req}
	if g.chance(0.15) {
		spec.Devices.Requests = append(spec.Devices.Requests, resourceapi.DeviceRequest{Name: "nic",
			Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "nic.example.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}})
		if g.chance(0.6) {
			spec.Devices.Constraints = []resourceapi.DeviceConstraint{{MatchAttribute: ptr.To(resourceapi.FullyQualifiedName("resource.kubernetes.io/pcieRoot"))}}
		}
	}
	return spec
}

// podClaims draws a pod's resourceClaims. A pending pod names an
// unallocated claim, a missing claim, or a template (existing or missing),
// whose generated claim (owned by the pod, named in
// status.resourceClaimStatuses) exists or not yet. An assigned pod on a
// node with free devices gets a claim allocated there (its own, or
// generated from a template) reserved for it. It returns the claim objects
// to create and the statuses to set after admission.
func (g *Generator) podClaims(p *v1.Pod, assigned bool) (extra []runtime.Object, statuses []v1.PodResourceClaimStatus) {
	ns := p.Namespace
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: types.UID("pod-" + ns + "-" + p.Name), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
	if assigned {
		free := g.dra.free[p.Spec.NodeName]
		if len(free) == 0 {
			return nil, nil
		}
		d := free[0]
		g.dra.free[p.Spec.NodeName] = free[1:]
		g.dra.seq++
		class := "gpu.example.com"
		if d.driver == nicDriver {
			class = "nic.example.com"
		}
		claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-dev%d", p.Name, g.dra.seq), Namespace: ns},
			Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "dev",
				Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}}}},
			Status: resourceapi.ResourceClaimStatus{
				Allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{
					Request: "dev", Driver: d.driver, Pool: p.Spec.NodeName, Device: d.device}}},
					NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{
						Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{p.Spec.NodeName}}}}}}},
				ReservedFor: []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: p.Name, UID: owner.UID}}}}
		claim.UID = types.UID("claim-" + ns + "-" + claim.Name)
		pc := v1.PodResourceClaim{Name: "dev", ResourceClaimName: ptr.To(claim.Name)}
		if g.chance(0.5) { // generated from a template
			pc = v1.PodResourceClaim{Name: "dev", ResourceClaimTemplateName: ptr.To("running-template")}
			claim.OwnerReferences = []metav1.OwnerReference{owner}
			claim.Annotations = map[string]string{"resource.kubernetes.io/pod-claim-name": "dev"}
			statuses = append(statuses, v1.PodResourceClaimStatus{Name: "dev", ResourceClaimName: ptr.To(claim.Name)})
		}
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, pc)
		p.Spec.Containers[0].Resources.Claims = append(p.Spec.Containers[0].Resources.Claims, v1.ResourceClaim{Name: "dev"})
		return []runtime.Object{claim}, statuses
	}
	for i := range 1 + g.intn(2) {
		pc := v1.PodResourceClaim{Name: fmt.Sprintf("rc%d", i)}
		switch k := g.intn(5); {
		case k <= 1 && len(g.dra.claims[ns]) > 0:
			pc.ResourceClaimName = ptr.To(pick(g, g.dra.claims[ns]...))
		case k == 2:
			pc.ResourceClaimName = ptr.To("missing-claim")
		default:
			tmpl := "missing-template"
			if len(g.dra.templates[ns]) > 0 && g.chance(0.85) {
				tmpl = pick(g, g.dra.templates[ns]...)
			}
			pc.ResourceClaimTemplateName = ptr.To(tmpl)
			if tmpl != "missing-template" && g.chance(0.85) {
				name := fmt.Sprintf("%s-%s-gen", p.Name, pc.Name)
				extra = append(extra, &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("claim-" + ns + "-" + name),
					OwnerReferences: []metav1.OwnerReference{owner}, Annotations: map[string]string{"resource.kubernetes.io/pod-claim-name": pc.Name}},
					Spec: g.templateSpec(ns, tmpl)})
				statuses = append(statuses, v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: ptr.To(name)})
			}
		}
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, pc)
		if g.chance(0.7) {
			p.Spec.Containers[0].Resources.Claims = append(p.Spec.Containers[0].Resources.Claims, v1.ResourceClaim{Name: pc.Name})
		}
	}
	return extra, statuses
}

// templateSpec returns the claim spec of a template drawn in the cluster.
func (g *Generator) templateSpec(ns, name string) resourceapi.ResourceClaimSpec {
	for _, o := range g.others {
		if t, ok := o.(*resourceapi.ResourceClaimTemplate); ok && t.Namespace == ns && t.Name == name {
			return *t.Spec.Spec.DeepCopy()
		}
	}
	return g.claimSpec()
}
