package memory

import (
	"context"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/kubesched/kubesched/internal/cluster"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Upstream's annotations of a binding (the PV controller's).
const (
	annBindCompleted     = "pv.kubernetes.io/bind-completed"
	annBoundByController = "pv.kubernetes.io/bound-by-controller"
	annProvisionedBy     = "pv.kubernetes.io/provisioned-by"
	annSelectedNode      = "volume.kubernetes.io/selected-node"
)

// SetVolumes gives the store the plugins' listers of PersistentVolumes and
// PersistentVolumeClaims and the function that publishes a changed object
// to them (the simulation's informer cache). Without it the store's volume
// writes change nothing.
func (s *Store) SetVolumes(listers framework.Listers, publish func(obj interface{}) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.volumeListers, s.publishVolume = listers, publish
}

// UpdatePersistentVolume implements framework.VolumeWriter. The store plays
// the PV controller at once: a volume given a claim (VolumeBinding's
// PreBind) is bound to it, and the claim to the volume, so the plugin's
// wait for the controller ends at its first look.
func (s *Store) UpdatePersistentVolume(_ context.Context, pv *v1.PersistentVolume) (*v1.PersistentVolume, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.publishVolume == nil || s.volumeListers.PersistentVolumes == nil {
		return pv, nil
	}
	pv = pv.DeepCopy()
	ref := pv.Spec.ClaimRef
	if ref == nil {
		return pv, s.putVolumeLocked(pv, nil)
	}
	cur, err := s.volumeListers.PersistentVolumeClaims.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
	if err != nil {
		return nil, err
	}
	pvc := cur.DeepCopy()
	pv.Status.Phase = v1.VolumeBound
	bind(pvc, pv)
	return pv, s.putVolumeLocked(pv, pvc)
}

// UpdatePersistentVolumeClaim implements framework.VolumeWriter. A claim
// given a selected node (VolumeBinding's PreBind, WaitForFirstConsumer) is
// provisioned at once, as its provisioner and the PV controller would: a
// volume of the claim's class and size, pinned where the provisioner
// would pin it on that node (topology.go), bound to the claim.
func (s *Store) UpdatePersistentVolumeClaim(_ context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.publishVolume == nil || s.volumeListers.PersistentVolumes == nil {
		return pvc, nil
	}
	pvc = pvc.DeepCopy()
	selected := pvc.Annotations[annSelectedNode]
	if selected == "" || pvc.Spec.VolumeName != "" {
		return pvc, s.putVolumeLocked(nil, pvc)
	}
	sc := s.classLocked(storagehelpers.GetPersistentVolumeClaimClass(pvc))
	pv, claim, err := s.provisionLocked(pvc, sc, s.nodes[selected], false)
	if err != nil {
		return nil, err
	}
	return claim, s.putVolumeLocked(pv, claim)
}

// bind completes a claim's binding to pv as the PV controller does.
func bind(pvc *v1.PersistentVolumeClaim, pv *v1.PersistentVolume) {
	pvc.Spec.VolumeName = pv.Name
	metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, annBindCompleted, "yes")
	if metav1.HasAnnotation(pv.ObjectMeta, annBoundByController) {
		metav1.SetMetaDataAnnotation(&pvc.ObjectMeta, annBoundByController, "yes")
	}
	pvc.Status.Phase = v1.ClaimBound
	pvc.Status.AccessModes = pv.Spec.AccessModes
	pvc.Status.Capacity = pv.Spec.Capacity
}

// putVolumeLocked gives the objects (either may be nil) the next resource
// versions, publishes them to the listers and tells the scheduler, as an
// informer would, at the next Flush.
func (s *Store) putVolumeLocked(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) error {
	if pv != nil {
		old, _ := s.volumeListers.PersistentVolumes.Get(pv.Name)
		s.journalVolumeLocked(pv, old, nil, nil)
		s.volumeVersion++
		pv.ResourceVersion = strconv.FormatInt(s.volumeVersion, 10)
		if err := s.publishVolume(pv); err != nil {
			return err
		}
		ev := framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Update}
		var oldObj interface{} = old
		if old == nil {
			ev.ActionType, oldObj = framework.Add, nil
		}
		s.notify(func(h cluster.EventHandler) { h.OnClusterEvent(ev, oldObj, pv) })
	}
	if pvc != nil {
		old, _ := s.volumeListers.PersistentVolumeClaims.PersistentVolumeClaims(pvc.Namespace).Get(pvc.Name)
		s.journalVolumeLocked(nil, nil, pvc, old)
		s.volumeVersion++
		pvc.ResourceVersion = strconv.FormatInt(s.volumeVersion, 10)
		if err := s.publishVolume(pvc); err != nil {
			return err
		}
		ev := framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Update}
		s.notify(func(h cluster.EventHandler) { h.OnClusterEvent(ev, old, pvc) })
	}
	return nil
}

// Volumes are the PersistentVolumes and PersistentVolumeClaims as the
// store's writes left them (bound, provisioned), sorted by
// namespace/name; nil without SetVolumes.
func (s *Store) Volumes() ([]*v1.PersistentVolume, []*v1.PersistentVolumeClaim) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.volumeListers.PersistentVolumes == nil || s.volumeListers.PersistentVolumeClaims == nil {
		return nil, nil
	}
	pvs, _ := s.volumeListers.PersistentVolumes.List(labels.Everything())
	pvcs, _ := s.volumeListers.PersistentVolumeClaims.List(labels.Everything())
	slices.SortFunc(pvs, func(a, b *v1.PersistentVolume) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(pvcs, func(a, b *v1.PersistentVolumeClaim) int { return compareKeys(a.Namespace, a.Name, b.Namespace, b.Name) })
	return pvs, pvcs
}
