package simulator

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/pkg/framework"
)

// GenerateClaims does for a new pod what the resourceclaim controller does
// in a cluster: each claim of the pod from a template that the pod's
// status does not name yet is created from the template (the pod its
// controlling owner, the pod's claim name in an annotation, a name made of
// the pod's and the claim's with a suffix) and named in the pod's
// status.resourceClaimStatuses. A template that does not exist leaves
// the claim ungenerated: the pod waits for it (DynamicResources'
// PreEnqueue), as it would in a cluster.
func (w *World) GenerateClaims(p *v1.Pod) error {
	for _, pc := range p.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName == nil || cluster.ClaimGenerated(p, pc.Name) {
			continue
		}
		t := w.objects.templates[p.Namespace+"/"+*pc.ResourceClaimTemplateName]
		if t == nil {
			continue
		}
		claim := cluster.NewClaim(p, pc.Name, t)
		if err := w.Store.AddClaim(claim); err != nil {
			return fmt.Errorf("Pod %s: generating ResourceClaim %s: %w", cluster.PodKey(p), claim.Name, err)
		}
		p.Status.ResourceClaimStatuses = append(p.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: ptr.To(claim.Name)})
	}
	return nil
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

// CreateDRA creates an object of dynamic resource allocation in a
// timeline step as the API server would, with the event an informer would
// deliver: a claim goes to the store (defaulted), a template is known to
// the next pods, a slice or a class reaches the listers and wakes the pods
// waiting for devices.
func (w *World) CreateDRA(obj runtime.Object) error {
	switch o := obj.(type) {
	case *resourceapi.ResourceClaim:
		loading.DefaultClaim(o)
		if err := w.Store.AddClaim(o); err != nil {
			return fmt.Errorf("create ResourceClaim %s/%s: %w", o.Namespace, o.Name, err)
		}
	case *resourceapi.ResourceClaimTemplate:
		loading.DefaultClaimTemplate(o)
		if w.objects.templates == nil {
			w.objects.templates = map[string]*resourceapi.ResourceClaimTemplate{}
		}
		w.objects.templates[o.Namespace+"/"+o.Name] = o
	case *resourceapi.ResourceSlice:
		w.AddObject(o)
		w.Store.NotifyAdded(framework.ResourceSlice, o)
	case *resourceapi.DeviceClass:
		w.AddObject(o)
		w.Store.NotifyAdded(framework.DeviceClass, o)
	case *resourceapi.DeviceTaintRule:
		// As kube-scheduler's slice tracker: the slices it taints change.
		w.AddObject(o)
		w.Store.NotifyAdded(framework.ResourceSlice, o)
	}
	return nil
}

// OthersNow are the cluster's other objects with the ResourceClaims,
// PersistentVolumes and PersistentVolumeClaims as the store has them now
// (allocated, reserved, generated for pods on the way; bound and
// provisioned), for a throwaway world that explains a pod against this
// one's state.
func (w *World) OthersNow() []interface{} {
	pvs, pvcs := w.Store.Volumes()
	volumes := pvs != nil || pvcs != nil
	out := make([]interface{}, 0, len(w.Cluster.Others))
	for _, o := range w.Cluster.Others {
		switch o.(type) {
		case *resourceapi.ResourceClaim:
			continue
		case *v1.PersistentVolume, *v1.PersistentVolumeClaim:
			if volumes {
				continue
			}
		}
		out = append(out, o)
	}
	for _, c := range w.Store.Claims() {
		out = append(out, c.DeepCopy())
	}
	for _, pv := range pvs {
		out = append(out, pv.DeepCopy())
	}
	for _, pvc := range pvcs {
		out = append(out, pvc.DeepCopy())
	}
	return out
}
