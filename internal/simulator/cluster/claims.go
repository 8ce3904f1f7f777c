package cluster

import (
	"hash/fnv"
	"maps"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// NewClaim is the ResourceClaim the resourceclaim controller creates for
// the pod's claim podClaim from template t: the pod its controlling
// owner, the pod's claim name in an annotation, a name made of the pod's
// and the claim's with a suffix.
func NewClaim(p *v1.Pod, podClaim string, t *resourceapi.ResourceClaimTemplate) *resourceapi.ResourceClaim {
	annotations := maps.Clone(t.Spec.ObjectMeta.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[resourceapi.PodResourceClaimAnnotation] = podClaim
	claim := &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:      generateClaimName(p, podClaim),
			Namespace: p.Namespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID,
				Controller: ptr.To(true)}},
			Annotations: annotations,
			Labels:      maps.Clone(t.Spec.ObjectMeta.Labels),
		},
		Spec: *t.Spec.Spec.DeepCopy(),
	}
	claim.UID = types.UID("resourceclaim-" + claim.Namespace + "-" + claim.Name)
	return claim
}

// ClaimGenerated: the pod's status names the claim made for its claim
// name.
func ClaimGenerated(p *v1.Pod, name string) bool {
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

// NeedsClaims: the pod has a claim from a template its status does not
// name yet.
func NeedsClaims(p *v1.Pod) bool {
	for _, pc := range p.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName != nil && !ClaimGenerated(p, pc.Name) {
			return true
		}
	}
	return false
}
