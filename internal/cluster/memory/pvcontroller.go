package memory

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	storagehelpers "k8s.io/component-helpers/storage/volume"
)

// The store plays kube-controller-manager's PV controller (v1.37
// pkg/controller/volume/persistentvolume, syncUnboundClaim) and the
// external provisioners at once, on the claims not bound yet:
//
//   - a claim naming a volume (spec.volumeName) is bound to it if the
//     volume is free or pre-bound to it (claimRef) and satisfies it
//     (capacity, class, volume mode, access modes); otherwise it waits;
//   - any other claim takes the volume component-helpers'
//     FindMatchingVolume finds among the PersistentVolumes of each set of
//     access modes holding the claim's, fewest modes first, as the
//     controller's index searches them: one pre-bound to the claim, else
//     the smallest Available one of the claim's class (no class matches
//     only no class) that satisfies its size, volume mode and selector;
//     node affinity is no criterion here. A claim of a
//     WaitForFirstConsumer class takes only a pre-bound one: the
//     scheduler chooses its volume (VolumeBinding);
//   - a claim without a class that found nothing is given the default
//     class (the retroactive default StorageClass assignment) and synced
//     again;
//   - a claim of an Immediate class, and one of a WaitForFirstConsumer
//     class the scheduler gave a selected node, is provisioned if its
//     class exists and has a provisioner (not kubernetes.io/no-provisioner):
//     a volume of the claim's size with the node affinity its provisioner
//     would give it (topology.go), bound to it;
//   - anything else waits, as in a cluster: a claim without a class and
//     without a default class, one whose class is missing.
//
// The claims are synced in namespace/name order, so which claim takes a
// contested volume does not depend on the input's order.

// The annotations of provisioning and of the default class.
const (
	annStorageProvisioner        = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner    = "volume.beta.kubernetes.io/storage-provisioner"
	IsDefaultClassAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaIsDefaultClassAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
	noProvisioner                = storagehelpers.NotSupportedProvisioner
)

// IsDefaultClass: the class is annotated the default (the GA or the beta
// annotation "true").
func IsDefaultClass(sc *storagev1.StorageClass) bool {
	return sc.Annotations[IsDefaultClassAnnotation] == "true" || sc.Annotations[betaIsDefaultClassAnnotation] == "true"
}

// DefaultStorageClass is the class the DefaultStorageClass admission
// plugin gives a claim without one: of the classes annotated the default,
// the newest (creationTimestamp), then the first by name; nil when none
// is.
func DefaultStorageClass(classes []*storagev1.StorageClass) *storagev1.StorageClass {
	var best *storagev1.StorageClass
	for _, sc := range classes {
		if !IsDefaultClass(sc) {
			continue
		}
		if best == nil {
			best = sc
			continue
		}
		a, b := sc.CreationTimestamp.UnixNano(), best.CreationTimestamp.UnixNano()
		if a > b || (a == b && sc.Name < best.Name) {
			best = sc
		}
	}
	return best
}

// AdmitClaim is the DefaultStorageClass admission plugin on a claim being
// created: one that asks for no class (spec.storageClassName nil, no beta
// annotation; "" asks for no class) gets the default class, if there is
// one. It changes pvc, which is not stored yet, and reports whether it
// did.
func (s *Store) AdmitClaim(pvc *v1.PersistentVolumeClaim) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if storagehelpers.PersistentVolumeClaimHasClass(pvc) {
		return false
	}
	def := s.defaultClassLocked()
	if def == nil {
		return false
	}
	pvc.Spec.StorageClassName = ptr.To(def.Name)
	return true
}

func (s *Store) defaultClassLocked() *storagev1.StorageClass {
	if s.volumeListers.StorageClasses == nil {
		return nil
	}
	classes, _ := s.volumeListers.StorageClasses.List(labels.Everything())
	return DefaultStorageClass(classes)
}

// SyncVolumes is a pass of the PV controller over the world's volumes: the
// PersistentVolumes without a phase, or Pending, that are free or only
// pre-bound become Available (syncVolume), then every claim not bound is
// synced as the package says. It reports whether it changed anything; the
// scheduler hears of the changes at the next Flush.
func (s *Store) SyncVolumes() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.volumeListers
	if s.publishVolume == nil || l.PersistentVolumes == nil || l.PersistentVolumeClaims == nil {
		return false
	}
	changed := false
	pvs, _ := l.PersistentVolumes.List(labels.Everything())
	slices.SortFunc(pvs, func(a, b *v1.PersistentVolume) int { return strings.Compare(a.Name, b.Name) })
	for i, pv := range pvs {
		if (pv.Status.Phase == "" || pv.Status.Phase == v1.VolumePending) && (pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "") {
			pv = pv.DeepCopy()
			pv.Status.Phase = v1.VolumeAvailable
			if err := s.putVolumeLocked(pv, nil); err != nil {
				continue
			}
			pvs[i], changed = pv, true
		}
	}
	pvcs, _ := l.PersistentVolumeClaims.List(labels.Everything())
	slices.SortFunc(pvcs, func(a, b *v1.PersistentVolumeClaim) int { return compareKeys(a.Namespace, a.Name, b.Namespace, b.Name) })
	idx := newVolumeIndex(pvs)
	for _, pvc := range pvcs {
		if s.syncClaimLocked(pvc, idx) {
			changed = true
		}
	}
	return changed
}

// SyncClaim is the PV controller on claim namespace/name, just created:
// it reports whether the claim changed (bound, provisioned, given the
// default class).
func (s *Store) SyncClaim(namespace, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.volumeListers
	if s.publishVolume == nil || l.PersistentVolumes == nil || l.PersistentVolumeClaims == nil {
		return false
	}
	pvc, err := l.PersistentVolumeClaims.PersistentVolumeClaims(namespace).Get(name)
	if err != nil {
		return false
	}
	pvs, _ := l.PersistentVolumes.List(labels.Everything())
	slices.SortFunc(pvs, func(a, b *v1.PersistentVolume) int { return strings.Compare(a.Name, b.Name) })
	return s.syncClaimLocked(pvc, newVolumeIndex(pvs))
}

// syncClaimLocked syncs one claim (syncUnboundClaim), reporting whether
// it changed it; idx holds the volumes, kept up to date as it binds.
func (s *Store) syncClaimLocked(pvc *v1.PersistentVolumeClaim, idx *volumeIndex) bool {
	if pvc.DeletionTimestamp != nil {
		return false
	}
	if pvc.Spec.VolumeName != "" {
		if metav1.HasAnnotation(pvc.ObjectMeta, annBindCompleted) {
			return false // bound
		}
		pv, err := s.volumeListers.PersistentVolumes.Get(pvc.Spec.VolumeName)
		switch {
		case err != nil:
			return false // waits for the volume named
		case pv.Spec.ClaimRef == nil && !satisfies(pv, pvc):
			return false // VolumeMismatch: waits
		case pv.Spec.ClaimRef != nil && !storagehelpers.IsVolumeBoundToClaim(pv, pvc):
			return false // bound to another claim
		}
		return s.bindLocked(pv, pvc, idx)
	}
	delay := s.delayBindingLocked(pvc)
	if pv := idx.find(pvc, delay); pv != nil {
		return s.bindLocked(pv, pvc, idx)
	}
	if !storagehelpers.PersistentVolumeClaimHasClass(pvc) {
		def := s.defaultClassLocked()
		if def == nil {
			return false // no volume, no class, no default class: waits
		}
		pvc = pvc.DeepCopy()
		pvc.Spec.StorageClassName = ptr.To(def.Name)
		if s.putVolumeLocked(nil, pvc) != nil {
			return false
		}
		s.syncClaimLocked(pvc, idx)
		return true
	}
	var node *v1.Node
	if delay {
		selected, ok := pvc.Annotations[annSelectedNode]
		if !ok {
			return false // the scheduler chooses
		}
		if node = s.nodes[selected]; node == nil {
			return false
		}
	}
	sc := s.classLocked(storagehelpers.GetPersistentVolumeClaimClass(pvc))
	if sc == nil || sc.Provisioner == "" || sc.Provisioner == noProvisioner {
		return false // ProvisioningFailed: waits
	}
	pv, claim, err := s.provisionLocked(pvc.DeepCopy(), sc, node, !delay)
	if err != nil {
		return false
	}
	return s.putVolumeLocked(pv, claim) == nil
}

// delayBindingLocked: the claim's class binds on first consumer (a
// missing class, or one without a mode, binds at once: the API's
// default is Immediate).
func (s *Store) delayBindingLocked(pvc *v1.PersistentVolumeClaim) bool {
	sc := s.classLocked(storagehelpers.GetPersistentVolumeClaimClass(pvc))
	return sc != nil && sc.VolumeBindingMode != nil && *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer
}

// classLocked is the StorageClass name, nil when there is none.
func (s *Store) classLocked(name string) *storagev1.StorageClass {
	if name == "" || s.volumeListers.StorageClasses == nil {
		return nil
	}
	sc, err := s.volumeListers.StorageClasses.Get(name)
	if err != nil {
		return nil
	}
	return sc
}

// satisfies is the PV controller's checkVolumeSatisfyClaim for a claim
// naming a volume: not being deleted, big enough, the same class and
// volume attributes class, volume mode and the claim's access modes.
func satisfies(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) bool {
	want := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	have := pv.Spec.Capacity[v1.ResourceStorage]
	return pv.DeletionTimestamp == nil && have.Value() >= want.Value() &&
		storagehelpers.GetPersistentVolumeClass(pv) == storagehelpers.GetPersistentVolumeClaimClass(pvc) &&
		ptr.Deref(pv.Spec.VolumeAttributesClassName, "") == ptr.Deref(pvc.Spec.VolumeAttributesClassName, "") &&
		!storagehelpers.CheckVolumeModeMismatches(&pvc.Spec, &pv.Spec) &&
		storagehelpers.CheckAccessModes(pvc, pv)
}

// bindLocked binds pv and pvc to each other as the PV controller's bind
// does: the volume's claimRef (bound-by-controller when it was not
// pre-bound) and phase, the claim's volumeName (bound-by-controller when
// it named none), bind-completed, phase, capacity and access modes.
func (s *Store) bindLocked(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim, idx *volumeIndex) bool {
	bound, _, err := storagehelpers.GetBindVolumeToClaim(pv, pvc)
	if err != nil {
		return false
	}
	bound.Status.Phase = v1.VolumeBound
	claim := pvc.DeepCopy()
	if claim.Spec.VolumeName != bound.Name {
		claim.Spec.VolumeName = bound.Name
		if !metav1.HasAnnotation(claim.ObjectMeta, annBoundByController) {
			metav1.SetMetaDataAnnotation(&claim.ObjectMeta, annBoundByController, "yes")
		}
	}
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, annBindCompleted, "yes")
	claim.Status.Phase = v1.ClaimBound
	claim.Status.AccessModes = bound.Spec.AccessModes
	claim.Status.Capacity = bound.Spec.Capacity
	if err := s.putVolumeLocked(bound, claim); err != nil {
		return false
	}
	idx.replace(bound)
	return true
}

// provisionLocked makes the volume sc's provisioner would make for pvc
// (a copy it changes), at once (immediate) or on node under
// WaitForFirstConsumer (a node not known, or sc nil, a class not known:
// no topology): named as the
// external provisioners name theirs (pvc-<uid>), of the claim's size,
// access modes, volume mode and volume attributes class, the class's
// reclaim policy and mount options, a CSI source of the provisioner (so
// that node volume limits count it), the node affinity of topology.go,
// pre-bound to the claim; and the claim bound to it.
func (s *Store) provisionLocked(pvc *v1.PersistentVolumeClaim, sc *storagev1.StorageClass, node *v1.Node, immediate bool) (*v1.PersistentVolume, *v1.PersistentVolumeClaim, error) {
	name := "pvc-" + string(pvc.UID)
	if pvc.UID == "" {
		name = "pvc-" + pvc.Namespace + "-" + pvc.Name
	}
	if _, err := s.volumeListers.PersistentVolumes.Get(name); err == nil {
		return nil, nil, apierrors.NewAlreadyExists(v1.Resource("persistentvolumes"), name)
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName:          storagehelpers.GetPersistentVolumeClaimClass(pvc),
			Capacity:                  v1.ResourceList{v1.ResourceStorage: pvc.Spec.Resources.Requests[v1.ResourceStorage]},
			AccessModes:               pvc.Spec.AccessModes,
			VolumeMode:                pvc.Spec.VolumeMode,
			VolumeAttributesClassName: pvc.Spec.VolumeAttributesClassName,
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name,
				UID: pvc.UID},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	if sc != nil {
		pv.Annotations[annProvisionedBy] = sc.Provisioner
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, annStorageProvisioner, sc.Provisioner)
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, annBetaStorageProvisioner, sc.Provisioner)
		if sc.ReclaimPolicy != nil {
			pv.Spec.PersistentVolumeReclaimPolicy = *sc.ReclaimPolicy
		}
		pv.Spec.MountOptions = sc.MountOptions
		if !strings.HasPrefix(sc.Provisioner, "kubernetes.io/") {
			pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: sc.Provisioner, VolumeHandle: name}
		}
		if immediate || node != nil {
			pv.Spec.NodeAffinity = s.provisionedAffinityLocked(sc, pvc, node)
		}
	}
	claim := pvc
	claim.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, annBoundByController, "yes")
	metav1.SetMetaDataAnnotation(&claim.ObjectMeta, annBindCompleted, "yes")
	claim.Status.Phase = v1.ClaimBound
	claim.Status.AccessModes = pv.Spec.AccessModes
	claim.Status.Capacity = pv.Spec.Capacity
	return pv, claim, nil
}

// volumeIndex is the PV controller's index of volumes by their access
// modes.
type volumeIndex struct {
	byModes map[string][]*v1.PersistentVolume
	// modes are each key's access modes.
	modes map[string][]v1.PersistentVolumeAccessMode
}

func modesKey(modes []v1.PersistentVolumeAccessMode) string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	slices.Sort(s)
	return strings.Join(slices.Compact(s), ",")
}

func newVolumeIndex(pvs []*v1.PersistentVolume) *volumeIndex {
	idx := &volumeIndex{byModes: map[string][]*v1.PersistentVolume{}, modes: map[string][]v1.PersistentVolumeAccessMode{}}
	for _, pv := range pvs {
		k := modesKey(pv.Spec.AccessModes)
		idx.byModes[k] = append(idx.byModes[k], pv)
		idx.modes[k] = pv.Spec.AccessModes
	}
	return idx
}

// FindBestMatch is the volume of pvs the PV controller binds pvc to (see
// find), nil when none matches; delay: the claim's class binds on first
// consumer.
func FindBestMatch(pvc *v1.PersistentVolumeClaim, pvs []*v1.PersistentVolume, delay bool) *v1.PersistentVolume {
	return newVolumeIndex(pvs).find(pvc, delay)
}

// find is the PV controller's findBestMatchForClaim: FindMatchingVolume
// (no node) over each set of access modes that holds the claim's, the
// sets of fewest modes first (then by name, where upstream's order is
// not defined).
func (idx *volumeIndex) find(pvc *v1.PersistentVolumeClaim, delay bool) *v1.PersistentVolume {
	var keys []string
	for k, modes := range idx.modes {
		if holdsAll(modes, pvc.Spec.AccessModes) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int {
		if na, nb := strings.Count(a, ","), strings.Count(b, ","); na != nb {
			return na - nb
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		pv, err := storagehelpers.FindMatchingVolume(pvc, idx.byModes[k], nil, nil, delay, true)
		if err == nil && pv != nil {
			return pv
		}
	}
	return nil
}

func holdsAll(have, want []v1.PersistentVolumeAccessMode) bool {
	for _, m := range want {
		if !slices.Contains(have, m) {
			return false
		}
	}
	return true
}

// replace puts a volume's new version in the index.
func (idx *volumeIndex) replace(pv *v1.PersistentVolume) {
	k := modesKey(pv.Spec.AccessModes)
	for i, cur := range idx.byModes[k] {
		if cur.Name == pv.Name {
			idx.byModes[k][i] = pv
			return
		}
	}
}
