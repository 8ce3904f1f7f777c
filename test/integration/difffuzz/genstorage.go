package difffuzz

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Storage drivers and classes the storage objects share.
const (
	ebsDriver     = "ebs.csi.aws.com"
	topolvmDriver = "topolvm.io"
	noProvisioner = "kubernetes.io/no-provisioner"
	bindCompleted = "pv.kubernetes.io/bind-completed"
	selectedNode  = "volume.kubernetes.io/selected-node"
)

// claimRef is a PVC a pod may name, and what it is.
type claimRef struct {
	name  string
	bound bool // bound (bind-completed) to an existing PV
	rwop  bool // ReadWriteOncePod
}

// storageState is the storage part of the cluster being drawn.
type storageState struct {
	on      bool
	classes []string              // StorageClass names drawn
	pvcs    map[string][]claimRef // namespace -> claims
	pvSeq   int
	// attached are (driver, node) pairs with an attached CSI volume, for
	// VolumeAttachments.
	volSeq int
}

// drawStorage draws (in 40% of clusters) StorageClasses (WaitForFirstConsumer
// and Immediate, allowedTopologies, no-provisioner, a topolvm class with
// storage capacity), CSIDrivers, CSINodes with attach limits (some nodes
// without), CSIStorageCapacities, PersistentVolumes (zonal CSI, local with
// hostname affinity, static gcePersistentDisk with zone labels; Available,
// Bound, Released) and PersistentVolumeClaims (bound, pending, prebound,
// ReadWriteOncePod, selected-node), and VolumeAttachments.
func (g *Generator) drawStorage() []runtime.Object {
	g.st = storageState{pvcs: map[string][]claimRef{}}
	if !g.chance(0.4) {
		return nil
	}
	g.st.on = true
	var out []runtime.Object
	add := func(draw func() runtime.Object) runtime.Object {
		o := g.admit(draw)
		if o != nil {
			out = append(out, o)
		}
		return o
	}
	wffc, imm := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	classes := []struct {
		name, prov string
		mode       *storagev1.VolumeBindingMode
		zones      []string
	}{
		{"wffc", ebsDriver, &wffc, nil}, {"immediate", ebsDriver, pick(g, &imm, nil), nil},
		{"zonal", ebsDriver, &wffc, []string{"zone-a", "zone-b"}}, {"local", noProvisioner, &wffc, nil}, {"topolvm", topolvmDriver, &wffc, nil},
	}
	for _, c := range classes {
		if !g.chance(0.8) {
			continue
		}
		c := c
		if add(func() runtime.Object {
			sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: c.name}, Provisioner: c.prov, VolumeBindingMode: c.mode}
			if c.zones != nil {
				sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: v1.LabelTopologyZone, Values: c.zones}}}}
			}
			return sc
		}) != nil {
			g.st.classes = append(g.st.classes, c.name)
		}
	}
	add(func() runtime.Object {
		return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: ebsDriver}, Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(true)}}
	})
	if g.chance(0.8) {
		add(func() runtime.Object {
			return &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: topolvmDriver},
				Spec: storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), StorageCapacity: ptr.To(g.chance(0.8))}}
		})
	}
	for i, node := range g.nodes {
		if g.chance(0.75) {
			add(func() runtime.Object {
				cn := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}}
				d := storagev1.CSINodeDriver{Name: ebsDriver, NodeID: "i-" + node, TopologyKeys: []string{v1.LabelTopologyZone}}
				if g.chance(0.8) {
					d.Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(pick(g, int32(0), 1, 2, 3, 25))}
				}
				cn.Spec.Drivers = append(cn.Spec.Drivers, d)
				if g.chance(0.6) {
					cn.Spec.Drivers = append(cn.Spec.Drivers, storagev1.CSINodeDriver{Name: topolvmDriver, NodeID: node, TopologyKeys: []string{v1.LabelHostname}})
				}
				return cn
			})
		}
		if g.chance(0.5) {
			add(func() runtime.Object {
				c := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cap-%d", i), Namespace: "default"},
					NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelHostname: node}},
					StorageClassName: "topolvm", Capacity: ptr.To(resource.MustParse(pick(g, "0", "5Gi", "20Gi", "100Gi")))}
				if g.chance(0.3) {
					c.MaximumVolumeSize = ptr.To(resource.MustParse(pick(g, "1Gi", "10Gi")))
				}
				return c
			})
		}
	}
	// Free PVs (Available or Released), then claims (some bound to new PVs).
	for range g.intn(4) {
		add(func() runtime.Object {
			return g.pv(pick(g, v1.VolumeAvailable, v1.VolumeAvailable, v1.VolumeReleased), nil)
		})
	}
	var freePVs []string
	for _, o := range out {
		if pv, ok := o.(*v1.PersistentVolume); ok && pv.Status.Phase == v1.VolumeAvailable {
			freePVs = append(freePVs, pv.Name)
		}
	}
	for i := range 1 + g.intn(6) {
		ns := pick(g, g.namespaces...)
		name := fmt.Sprintf("c%d", i+1)
		kind := g.intn(6)
		rwop := g.chance(0.25)
		var pv *v1.PersistentVolume
		if kind <= 1 { // bound
			ref := &v1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: ns, Name: name, UID: types.UID("pvc-" + ns + "-" + name)}
			if o := add(func() runtime.Object { return g.pv(v1.VolumeBound, ref) }); o != nil {
				pv = o.(*v1.PersistentVolume)
			} else {
				kind = 2
			}
		}
		o := add(func() runtime.Object {
			pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("pvc-" + ns + "-" + name)},
				Spec: v1.PersistentVolumeClaimSpec{AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
					Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(pick(g, "1Gi", "10Gi", "50Gi"))}}}}
			if rwop {
				pvc.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod}
			}
			pvc.Status.Phase = v1.ClaimPending
			switch {
			case pv != nil:
				pvc.Spec.StorageClassName = ptr.To(pv.Spec.StorageClassName)
				pvc.Spec.VolumeName = pv.Name
				pvc.Annotations = map[string]string{bindCompleted: "yes"}
				pvc.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, AccessModes: pvc.Spec.AccessModes, Capacity: pv.Spec.Capacity}
			case kind == 2 && len(freePVs) > 0: // prebound: volumeName, no bind-completed
				pvc.Spec.VolumeName = pick(g, freePVs...)
				pvc.Spec.StorageClassName = ptr.To(pick(g, "", "wffc", "local"))
			default: // pending: WaitForFirstConsumer, Immediate, a missing class, none
				pvc.Spec.StorageClassName = ptr.To(pick(g, "wffc", "zonal", "local", "topolvm", "immediate", "missing-class"))
				if g.chance(0.1) {
					pvc.Spec.StorageClassName = nil
				}
				if g.chance(0.25) {
					pvc.Annotations = map[string]string{selectedNode: pick(g, g.nodes...)}
				}
			}
			return pvc
		})
		if o != nil {
			g.st.pvcs[ns] = append(g.st.pvcs[ns], claimRef{name: name, bound: pv != nil, rwop: rwop})
		}
	}
	// VolumeAttachments: some for bound CSI PVs on a node, some stale.
	for _, o := range out {
		pv, ok := o.(*v1.PersistentVolume)
		if !ok || pv.Spec.CSI == nil || !g.chance(0.4) {
			continue
		}
		name := pv.Name
		add(func() runtime.Object {
			return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-" + name},
				Spec:   storagev1.VolumeAttachmentSpec{Attacher: ebsDriver, NodeName: pick(g, g.nodes...), Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &name}},
				Status: storagev1.VolumeAttachmentStatus{Attached: g.chance(0.7)}}
		})
	}
	return out
}

// pv draws a PersistentVolume in a phase, bound to ref when given: a zonal
// EBS CSI volume (zone node affinity), a local volume (hostname
// affinity, class local), or a gcePersistentDisk with a zone label.
func (g *Generator) pv(phase v1.PersistentVolumePhase, ref *v1.ObjectReference) *v1.PersistentVolume {
	g.st.pvSeq++
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv%d", g.st.pvSeq)},
		Spec: v1.PersistentVolumeSpec{Capacity: v1.ResourceList{v1.ResourceStorage: resource.MustParse(pick(g, "1Gi", "10Gi", "100Gi"))},
			AccessModes: []v1.PersistentVolumeAccessMode{pick(g, v1.ReadWriteOnce, v1.ReadWriteOncePod)}, ClaimRef: ref},
		Status: v1.PersistentVolumeStatus{Phase: phase}}
	affinity := func(key, value string) *v1.VolumeNodeAffinity {
		return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}}}}}}
	}
	switch g.intn(3) {
	case 0:
		g.st.volSeq++
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: ebsDriver, VolumeHandle: fmt.Sprintf("vol-%d", g.st.volSeq), FSType: "ext4"}
		pv.Spec.StorageClassName = pick(g, "wffc", "zonal", "")
		pv.Spec.NodeAffinity = affinity(v1.LabelTopologyZone, pick(g, zones...))
	case 1:
		pv.Spec.Local = &v1.LocalVolumeSource{Path: "/mnt/disks/ssd1"}
		pv.Spec.StorageClassName = "local"
		pv.Spec.NodeAffinity = affinity(v1.LabelHostname, pick(g, g.nodes...))
	default:
		g.st.volSeq++
		pv.Spec.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: fmt.Sprintf("pd-%d", g.st.volSeq)}
		pv.Labels = map[string]string{v1.LabelTopologyZone: pick(g, zones...)}
		if g.chance(0.3) {
			pv.Labels[v1.LabelTopologyRegion] = "region-1"
		}
	}
	return pv
}

// podVolume draws one pod volume over the storage objects: a claim of
// the namespace (bound, pending, prebound, ReadWriteOncePod), a missing
// claim, a generic ephemeral volume (its claim created, or not yet), an
// inline awsElasticBlockStore, gcePersistentDisk, iscsi or CSI volume.
// Assigned pods use bound claims and inline disks only. extra collects the
// objects the volume needs (an ephemeral volume's claim).
func (g *Generator) podVolume(p *v1.Pod, i int, assigned bool) (v v1.Volume, extra []runtime.Object) {
	v.Name = fmt.Sprintf("s%d", i)
	var bound []claimRef
	for _, c := range g.st.pvcs[p.Namespace] {
		if c.bound {
			bound = append(bound, c)
		}
	}
	switch k := g.intn(8); {
	case k <= 2 && len(g.st.pvcs[p.Namespace]) > 0 && (!assigned || len(bound) > 0):
		c := pick(g, g.st.pvcs[p.Namespace]...)
		if assigned {
			c = pick(g, bound...)
		}
		v.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ClaimName: c.name, ReadOnly: g.chance(0.1)}
	case k == 3 && !assigned:
		v.Ephemeral = &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: v1.PersistentVolumeClaimSpec{
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName: ptr.To(pick(g, "wffc", "local", "topolvm", "missing-class")),
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(pick(g, "1Gi", "30Gi"))}}}}}
		if g.chance(0.8) {
			t := v.Ephemeral.VolumeClaimTemplate.Spec
			name := p.Name + "-" + v.Name
			extra = append(extra, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace, UID: types.UID("pvc-" + p.Namespace + "-" + name),
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: types.UID("pod-" + p.Namespace + "-" + p.Name),
					Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
				Spec: t, Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending}})
		}
	case k == 4:
		g.st.volSeq++
		v.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: pick(g, "vol-1", "vol-2", fmt.Sprintf("vol-x%d", g.st.volSeq)), FSType: "ext4", ReadOnly: g.chance(0.2)}
	case k == 5:
		v.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: pick(g, "pd-1", "pd-2", "pd-shared"), ReadOnly: g.chance(0.4)}
	case k == 6:
		v.ISCSI = &v1.ISCSIVolumeSource{TargetPortal: "10.0.0.1:3260", IQN: "iqn.2001-04.com.example:storage", Lun: pick(g, int32(0), 1), ReadOnly: g.chance(0.4)}
	default:
		v.CSI = &v1.CSIVolumeSource{Driver: pick(g, ebsDriver, topolvmDriver, "inline.example.com")}
	}
	return v, extra
}
