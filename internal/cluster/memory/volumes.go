package memory

import (
	"context"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

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
// given a selected node is provisioned at once, as a provisioner and the
// PV controller would: a volume of the claim's class and size, named as
// the external provisioners name theirs (pvc-<uid>), bound to the claim.
// The simulation does not know the provisioner's topology: the volume
// has no node affinity.
func (s *Store) UpdatePersistentVolumeClaim(_ context.Context, pvc *v1.PersistentVolumeClaim) (*v1.PersistentVolumeClaim, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.publishVolume == nil || s.volumeListers.PersistentVolumes == nil {
		return pvc, nil
	}
	pvc = pvc.DeepCopy()
	if pvc.Annotations[annSelectedNode] == "" || pvc.Spec.VolumeName != "" {
		return pvc, s.putVolumeLocked(nil, pvc)
	}
	name := "pvc-" + string(pvc.UID)
	if pvc.UID == "" {
		name = "pvc-" + pvc.Namespace + "-" + pvc.Name
	}
	if _, err := s.volumeListers.PersistentVolumes.Get(name); err == nil {
		return nil, apierrors.NewAlreadyExists(v1.Resource("persistentvolumes"), name)
	}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: s.provisioner(class)}},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName: class,
			Capacity:         v1.ResourceList{v1.ResourceStorage: pvc.Spec.Resources.Requests[v1.ResourceStorage]},
			AccessModes:      pvc.Spec.AccessModes,
			VolumeMode:       pvc.Spec.VolumeMode,
			ClaimRef: &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name,
				UID: pvc.UID},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeBound},
	}
	bind(pvc, pv)
	return pvc, s.putVolumeLocked(pv, pvc)
}

// provisioner is the class's provisioner, "" when the class is unknown.
func (s *Store) provisioner(class string) string {
	if s.volumeListers.StorageClasses == nil {
		return ""
	}
	sc, err := s.volumeListers.StorageClasses.Get(class)
	if err != nil {
		return ""
	}
	return sc.Provisioner
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
