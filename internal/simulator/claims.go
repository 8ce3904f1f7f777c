package simulator

import (
	"fmt"
	"hash/fnv"
	"maps"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/pkg/framework"
)

// claimsOf returns the cluster's ResourceClaims and its
// ResourceClaimTemplates by namespace/name.
func claimsOf(c *Cluster) ([]*resourceapi.ResourceClaim, map[string]*resourceapi.ResourceClaimTemplate) {
	var claims []*resourceapi.ResourceClaim
	templates := map[string]*resourceapi.ResourceClaimTemplate{}
	for _, o := range c.Others {
		switch t := o.(type) {
		case *resourceapi.ResourceClaim:
			defaultClaim(t)
			claims = append(claims, t)
		case *resourceapi.ResourceClaimTemplate:
			defaultClaimTemplate(t)
			templates[t.Namespace+"/"+t.Name] = t
		}
	}
	return claims, templates
}

// defaultClaim gives a claim of the manifests the namespace, a UID and
// the API server's defaults.
func defaultClaim(c *resourceapi.ResourceClaim) {
	if c.Namespace == "" {
		c.Namespace = v1.NamespaceDefault
	}
	if c.UID == "" {
		c.UID = types.UID("resourceclaim-" + c.Namespace + "-" + c.Name)
	}
	defaultDeviceClaim(&c.Spec.Devices)
}

// defaultClaimTemplate gives a template the namespace and the API
// server's defaults.
func defaultClaimTemplate(t *resourceapi.ResourceClaimTemplate) {
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

// generateClaims does for a new pod what the resourceclaim controller does
// in a cluster: each claim of the pod from a template that the pod's
// status does not name yet is created from the template (the pod its
// controlling owner, the pod's claim name in an annotation, a name made of
// the pod's and the claim's with a suffix) and named in the pod's
// status.resourceClaimStatuses. A template that does not exist leaves
// the claim ungenerated: the pod waits for it (DynamicResources'
// PreEnqueue), as it would in a cluster.
func (w *World) generateClaims(p *v1.Pod) error {
	for _, pc := range p.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName == nil || claimGenerated(p, pc.Name) {
			continue
		}
		t := w.templates[p.Namespace+"/"+*pc.ResourceClaimTemplateName]
		if t == nil {
			continue
		}
		annotations := maps.Clone(t.Spec.ObjectMeta.Annotations)
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[resourceapi.PodResourceClaimAnnotation] = pc.Name
		claim := &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{
				Name:      generateClaimName(p, pc.Name),
				Namespace: p.Namespace,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
					Controller: ptr.To(true)}},
				Annotations: annotations,
				Labels:      maps.Clone(t.Spec.ObjectMeta.Labels),
			},
			Spec: *t.Spec.Spec.DeepCopy(),
		}
		claim.UID = types.UID("resourceclaim-" + claim.Namespace + "-" + claim.Name)
		if err := w.Store.AddClaim(claim); err != nil {
			return fmt.Errorf("Pod %s: generating ResourceClaim %s: %w", podKey(p), claim.Name, err)
		}
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: ptr.To(claim.Name)})
	}
	return nil
}

func claimGenerated(p *v1.Pod, name string) bool {
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.Name == name {
			return true
		}
	}
	return false
}

// generateClaimName is the controller's generateName (<pod>-<claim>-, both
// cut in proportion past 57 characters, then without the last hyphen, as
// upstream's) with the API server's five-character suffix, drawn here from
// a hash of the pod's UID and claim name so that a run is reproducible.
func generateClaimName(p *v1.Pod, claim string) string {
	base := p.Name + "-" + claim + "-"
	const maxBaseLen = 57
	if len(base) > maxBaseLen {
		base = p.Name[0:len(p.Name)*maxBaseLen/len(base)] + "-" + claim[0:len(claim)*maxBaseLen/len(base)]
	}
	h := fnv.New64a()
	h.Write([]byte(string(p.UID) + "/" + claim))
	sum := h.Sum64()
	// The API server's alphabet for generated names (no vowels, no
	// look-alike digits).
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	suffix := make([]byte, 5)
	for i := range suffix {
		suffix[i] = alphabet[sum%uint64(len(alphabet))]
		sum /= uint64(len(alphabet))
	}
	return base + string(suffix)
}

// podDevices lists the devices allocated to a pod's claims,
// "claim/request: driver/pool/device", in the pod's order of claims, then
// those of the claim made for its extended resources backed by DRA.
func (w *World) podDevices(p *v1.Pod) []string {
	ext := p.Status.ExtendedResourceClaimStatus
	if len(p.Spec.ResourceClaims) == 0 && ext == nil {
		return nil
	}
	names := make([]string, 0, len(p.Spec.ResourceClaims)+1)
	for _, pc := range p.Spec.ResourceClaims {
		name := ""
		switch {
		case pc.ResourceClaimName != nil:
			name = *pc.ResourceClaimName
		default:
			for _, s := range p.Status.ResourceClaimStatuses {
				if s.Name == pc.Name && s.ResourceClaimName != nil {
					name = *s.ResourceClaimName
				}
			}
		}
		names = append(names, name)
	}
	// The claim the scheduler made for extended resources backed by DRA.
	if ext != nil {
		names = append(names, ext.ResourceClaimName)
	}
	var out []string
	for _, name := range names {
		c, ok := w.Store.Claim(p.Namespace, name)
		if !ok || c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			out = append(out, fmt.Sprintf("%s/%s: %s/%s/%s", name, r.Request, r.Driver, r.Pool, r.Device))
		}
	}
	return out
}

// needsClaims: the pod has a claim from a template its status does not
// name yet.
func needsClaims(p *v1.Pod) bool {
	for _, pc := range p.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName != nil && !claimGenerated(p, pc.Name) {
			return true
		}
	}
	return false
}

// createDRA creates an object of dynamic resource allocation in a
// timeline step as the API server would, with the event an informer would
// deliver: a claim goes to the store (defaulted), a template is known to
// the next pods, a slice or a class reaches the listers and wakes the pods
// waiting for devices.
func (w *World) createDRA(obj runtime.Object) error {
	switch o := obj.(type) {
	case *resourceapi.ResourceClaim:
		defaultClaim(o)
		if err := w.Store.AddClaim(o); err != nil {
			return fmt.Errorf("create ResourceClaim %s/%s: %w", o.Namespace, o.Name, err)
		}
	case *resourceapi.ResourceClaimTemplate:
		defaultClaimTemplate(o)
		if w.templates == nil {
			w.templates = map[string]*resourceapi.ResourceClaimTemplate{}
		}
		w.templates[o.Namespace+"/"+o.Name] = o
	case *resourceapi.ResourceSlice:
		w.addObject(o)
		w.Store.NotifyAdded(framework.ResourceSlice, o)
	case *resourceapi.DeviceClass:
		w.addObject(o)
		w.Store.NotifyAdded(framework.DeviceClass, o)
	case *resourceapi.DeviceTaintRule:
		// As kube-scheduler's slice tracker: the slices it taints change.
		w.addObject(o)
		w.Store.NotifyAdded(framework.ResourceSlice, o)
	}
	return nil
}

// othersNow are the cluster's other objects with the ResourceClaims as the
// store has them now (allocated, reserved, generated for pods on the way),
// for a throwaway world that explains a pod against this one's state.
func (w *World) othersNow() []interface{} {
	out := make([]interface{}, 0, len(w.cluster.Others))
	for _, o := range w.cluster.Others {
		if _, isClaim := o.(*resourceapi.ResourceClaim); !isClaim {
			out = append(out, o)
		}
	}
	for _, c := range w.Store.Claims() {
		out = append(out, c.DeepCopy())
	}
	return out
}
