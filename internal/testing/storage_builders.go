package testing

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Volume adds a volume backed by the named claim.
func (p *PodWrapper) Volume(claim string) *PodWrapper {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "v-" + claim,
		VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	return p
}

// ImageVolume adds an image volume (an OCI image mounted as a volume).
func (p *PodWrapper) ImageVolume(name, reference string) *PodWrapper {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: name,
		VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: reference}}})
	return p
}

// PVCWrapper builds a PersistentVolumeClaim.
type PVCWrapper struct{ v1.PersistentVolumeClaim }

// MakePVC starts a ReadWriteOnce claim of size in namespace default.
func MakePVC(name, size string) *PVCWrapper {
	return &PVCWrapper{v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1.NamespaceDefault, UID: types.UID("uid-pvc-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}}},
	}}
}

// Obj returns the claim.
func (c *PVCWrapper) Obj() *v1.PersistentVolumeClaim { return &c.PersistentVolumeClaim }

// Class sets the storage class.
func (c *PVCWrapper) Class(name string) *PVCWrapper { c.Spec.StorageClassName = &name; return c }

// BoundTo binds the claim to a PV, as the PV controller leaves it
// (spec.volumeName and the bind-completed annotation).
func (c *PVCWrapper) BoundTo(pv string) *PVCWrapper {
	c.Spec.VolumeName = pv
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations["pv.kubernetes.io/bind-completed"] = "yes"
	return c
}

// PreboundTo names a PV in the claim without the binding being completed.
func (c *PVCWrapper) PreboundTo(pv string) *PVCWrapper { c.Spec.VolumeName = pv; return c }

// SelectedNode sets the volume.kubernetes.io/selected-node annotation.
func (c *PVCWrapper) SelectedNode(node string) *PVCWrapper {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations["volume.kubernetes.io/selected-node"] = node
	return c
}

// AccessModes sets the access modes.
func (c *PVCWrapper) AccessModes(m ...v1.PersistentVolumeAccessMode) *PVCWrapper {
	c.Spec.AccessModes = m
	return c
}

// PVWrapper builds a PersistentVolume.
type PVWrapper struct{ v1.PersistentVolume }

// MakePV starts a ReadWriteOnce PV of size in class.
func MakePV(name, size, class string) *PVWrapper {
	return &PVWrapper{v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, StorageClassName: class},
		// Available, as the PV controller leaves a new volume.
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}}
}

// Pending leaves the PV without the PV controller's Available phase.
func (v *PVWrapper) Pending() *PVWrapper { v.Status.Phase = v1.VolumePending; return v }

// Obj returns the PV.
func (p *PVWrapper) Obj() *v1.PersistentVolume { return &p.PersistentVolume }

// Label adds a label.
func (p *PVWrapper) Label(k, v string) *PVWrapper {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

// NodeAffinityIn requires nodes whose label key is one of values.
func (p *PVWrapper) NodeAffinityIn(key string, values ...string) *PVWrapper {
	p.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
		{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}}}}
	return p
}

// CSI makes it a CSI volume of driver with handle.
func (p *PVWrapper) CSI(driver, handle string) *PVWrapper {
	p.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}
	return p
}

// ClaimedBy pre-binds the PV to a claim.
func (p *PVWrapper) ClaimedBy(ns, name string) *PVWrapper {
	p.Spec.ClaimRef = &v1.ObjectReference{Namespace: ns, Name: name}
	return p
}

// StorageClass builds a class with a binding mode and a provisioner
// ("" for kubernetes.io/no-provisioner).
func StorageClass(name string, mode storagev1.VolumeBindingMode, provisioner string) *storagev1.StorageClass {
	if provisioner == "" {
		provisioner = "kubernetes.io/no-provisioner"
	}
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

// CSINode says node can attach count volumes of driver.
func CSINode(node, driver string, count int32) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: driver, NodeID: node, Allocatable: &storagev1.VolumeNodeResources{Count: &count}}}}}
}
