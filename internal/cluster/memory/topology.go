package memory

import (
	"cmp"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Where a provisioned volume can be used: the node affinity its
// provisioner gives it. A CSI driver says it in CreateVolume's
// accessible_topology, from the requirement the external-provisioner
// builds (kubernetes-csi/external-provisioner pkg/controller/topology.go,
// GenerateAccessibilityRequirements): under WaitForFirstConsumer the
// selected node's values of the driver's topology keys (its CSINode's
// spec.drivers[].topologyKeys) come first, and a zonal disk is made
// there; under Immediate the requisite segments (the class's
// allowedTopologies, else every node's segment) are rotated by a hash of
// the claim's name, the StatefulSet spreading of the in-tree
// provisioners, and the disk is made in the first one.
//
// The simulation does not run the driver: it gives the volume the
// segment the driver would pick, over the keys found, in this order:
//
//  1. the class's simulation.kubesched.io/volume-topology annotation:
//     "zone", "node" or "none", for a provisioner the rules below get
//     wrong (a replicated disk such as a GCE regional-pd or an Azure ZRS
//     disk is taken as zonal: mark its class "none");
//  2. the driver's topologyKeys in the input's CSINodes (the selected
//     node's, under WaitForFirstConsumer; the first CSINode by name that
//     lists the driver with keys, under Immediate);
//  3. the provisioner's name: the cloud block disks (EBS, GCE PD, Azure
//     Disk, Cinder, ...) are zonal (topology.kubernetes.io/zone, or the
//     beta failure-domain key on nodes that have only it); the shared
//     filesystems and network storage (EFS, Filestore, Azure Files, NFS,
//     CephFS and RBD, Longhorn, ...) reach every node; the node-local
//     provisioners (local-path, hostpath, TopoLVM, OpenEBS local, LVM)
//     reach their node (kubernetes.io/hostname);
//  4. any other provisioner is taken as zonal: what a zone's loss does
//     to a StatefulSet is then the pessimistic answer, not a pod moving
//     to a zone its disk could never follow.
//
// A node without a value for the keys gives the volume no topology.
const VolumeTopologyAnnotation = "simulation.kubesched.io/volume-topology"

// The reaches a provisioner's volumes have.
const (
	reachZone = "zone"
	reachNode = "node"
	reachNone = "none"
)

// SimulatedProvisioner provisions the class --default-storage-class
// stands in when the input has none of that name: a zonal disk, like
// the managed clouds' default classes (gp3, standard-rwo, managed-csi).
const SimulatedProvisioner = "simulation.kubesched.io/zonal-disk"

// provisionerReaches are the provisioners known by name.
var provisionerReaches = map[string]string{
	SimulatedProvisioner: reachZone,
	// Cloud block disks: one zone.
	"ebs.csi.aws.com":                 reachZone,
	"kubernetes.io/aws-ebs":           reachZone,
	"pd.csi.storage.gke.io":           reachZone,
	"kubernetes.io/gce-pd":            reachZone,
	"disk.csi.azure.com":              reachZone,
	"kubernetes.io/azure-disk":        reachZone,
	"cinder.csi.openstack.org":        reachZone,
	"kubernetes.io/cinder":            reachZone,
	"diskplugin.csi.alibabacloud.com": reachZone,
	"vpc.block.csi.ibm.io":            reachZone,
	"blockvolume.csi.oraclecloud.com": reachZone,
	// Shared filesystems, object storage and network storage: every node.
	"efs.csi.aws.com":               reachNone,
	"fsx.csi.aws.com":               reachNone,
	"s3.csi.aws.com":                reachNone,
	"filestore.csi.storage.gke.io":  reachNone,
	"gcsfuse.csi.storage.gke.io":    reachNone,
	"file.csi.azure.com":            reachNone,
	"kubernetes.io/azure-file":      reachNone,
	"blob.csi.azure.com":            reachNone,
	"nfs.csi.k8s.io":                reachNone,
	"smb.csi.k8s.io":                reachNone,
	"cephfs.csi.ceph.com":           reachNone,
	"rbd.csi.ceph.com":              reachNone,
	"kubernetes.io/rbd":             reachNone,
	"kubernetes.io/cephfs":          reachNone,
	"kubernetes.io/glusterfs":       reachNone,
	"driver.longhorn.io":            reachNone,
	"pxd.portworx.com":              reachNone,
	"kubernetes.io/portworx-volume": reachNone,
	"csi.trident.netapp.io":         reachNone,
	// Node-local volumes: their node.
	"rancher.io/local-path":    reachNode,
	"k8s.io/minikube-hostpath": reachNode,
	"microk8s.io/hostpath":     reachNode,
	"docker.io/hostpath":       reachNode,
	"hostpath.csi.k8s.io":      reachNode,
	"kubernetes.io/host-path":  reachNode,
	"topolvm.io":               reachNode,
	"topolvm.cybozu.com":       reachNode,
	"openebs.io/local":         reachNode,
	"local.csi.openebs.io":     reachNode,
	"zfs.csi.openebs.io":       reachNode,
	"lvm.csi.metal-stack.io":   reachNode,
}

// provisionerReach is how far a provisioner's volumes reach: by its name,
// then by the words provisioners of a kind share (an NFS provisioner's
// name holds "nfs", a local one's "local-path", "hostpath" or "lvm");
// "" for one not known.
func provisionerReach(name string) string {
	if r, ok := provisionerReaches[name]; ok {
		return r
	}
	lower := strings.ToLower(name)
	for _, w := range []string{"nfs", "cephfs", "glusterfs", "smb", "efs"} {
		if strings.Contains(lower, w) {
			return reachNone
		}
	}
	for _, w := range []string{"local-path", "localpath", "hostpath", "lvm", "localpv"} {
		if strings.Contains(lower, w) {
			return reachNode
		}
	}
	return ""
}

// topologyKeys are the node labels a class's volumes are pinned by, nil
// for none: the annotation's reach, the driver's keys in csiKeys (nil:
// not listed), the provisioner's reach; zoneKey is the zone label to use
// for a zonal reach.
func topologyKeys(sc *storagev1.StorageClass, csiKeys []string, zoneKey string) []string {
	reach := sc.Annotations[VolumeTopologyAnnotation]
	if reach == "" && len(csiKeys) > 0 {
		return csiKeys
	}
	if reach == "" {
		reach = provisionerReach(sc.Provisioner)
	}
	switch reach {
	case reachNone:
		return nil
	case reachNode:
		return []string{v1.LabelHostname}
	}
	if zoneKey == "" {
		return nil
	}
	return []string{zoneKey}
}

// zoneKeyOf is the zone label a node has: the GA one, else the beta one,
// else "".
func zoneKeyOf(l map[string]string) string {
	for _, k := range []string{v1.LabelTopologyZone, v1.LabelFailureDomainBetaZone} {
		if _, ok := l[k]; ok {
			return k
		}
	}
	return ""
}

// segment is one topology term: key=value pairs, sorted by key.
type segment []v1.NodeSelectorRequirement

// nodeSegment is node's values for keys, nil when it lacks one (the
// hostname key falls back to the node's name, as the kubelet labels it).
func nodeSegment(node *v1.Node, keys []string) segment {
	out := make(segment, 0, len(keys))
	for _, k := range keys {
		v, ok := node.Labels[k]
		if !ok && k == v1.LabelHostname {
			v, ok = node.Name, true
		}
		if !ok {
			return nil
		}
		out = append(out, v1.NodeSelectorRequirement{Key: k, Operator: v1.NodeSelectorOpIn, Values: []string{v}})
	}
	slices.SortFunc(out, func(a, b v1.NodeSelectorRequirement) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func compareSegments(a, b segment) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	for i := range a {
		if c := strings.Compare(a[i].Key, b[i].Key); c != 0 {
			return c
		}
		if c := strings.Compare(a[i].Values[0], b[i].Values[0]); c != 0 {
			return c
		}
	}
	return 0
}

// allowedSegments are a class's allowedTopologies as segments: each term's
// values distributed over its keys (zone in {a, b} and rack in {1} is
// a/1 or b/1), as the external-provisioner makes its requisite.
func allowedSegments(terms []v1.TopologySelectorTerm) []segment {
	var out []segment
	for _, t := range terms {
		partial := []segment{{}}
		for _, e := range t.MatchLabelExpressions {
			var next []segment
			for _, v := range e.Values {
				for _, p := range partial {
					s := append(slices.Clone(p), v1.NodeSelectorRequirement{Key: e.Key, Operator: v1.NodeSelectorOpIn, Values: []string{v}})
					next = append(next, s)
				}
			}
			partial = next
		}
		for _, s := range partial {
			if len(s) > 0 {
				slices.SortFunc(s, func(a, b v1.NodeSelectorRequirement) int { return strings.Compare(a.Key, b.Key) })
				out = append(out, s)
			}
		}
	}
	return out
}

// spreadIndex picks one of n segments for a claim provisioned at once, as
// the provisioners spread a StatefulSet's volumes: the hash (FNV-32) of
// the claim's name, of its StatefulSet's part only for a name
// <claim>-<set>-<ordinal>, plus the ordinal.
func spreadIndex(claim string, n int) int {
	base, offset := claim, uint32(0)
	if i := strings.LastIndexByte(claim, '-'); i >= 0 {
		if ord, err := strconv.ParseUint(claim[i+1:], 10, 32); err == nil {
			offset, base = uint32(ord), claim[:i]
			if j := strings.LastIndexByte(base, '-'); j >= 0 {
				base = base[j+1:]
			}
		}
	}
	h := fnv.New32()
	_, _ = h.Write([]byte(base))
	return int((h.Sum32() + offset) % uint32(n))
}

// provisionedAffinityLocked is the node affinity of the volume a class's
// provisioner makes for pvc: on node under WaitForFirstConsumer (node
// nil: Immediate). nil for a volume every node reaches.
func (s *Store) provisionedAffinityLocked(sc *storagev1.StorageClass, pvc *v1.PersistentVolumeClaim, node *v1.Node) *v1.VolumeNodeAffinity {
	var seg segment
	if node != nil {
		keys := topologyKeys(sc, s.csiKeysLocked(sc.Provisioner, node.Name), zoneKeyOf(node.Labels))
		if len(keys) == 0 {
			return nil
		}
		seg = nodeSegment(node, keys)
	} else {
		seg = s.immediateSegmentLocked(sc, pvc)
	}
	if len(seg) == 0 {
		return nil
	}
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: seg}}}}
}

// immediateSegmentLocked is where a volume provisioned at once is made:
// one of the class's allowedTopologies, else of the nodes' segments,
// chosen by spreadIndex; nil when the class's volumes reach every node.
func (s *Store) immediateSegmentLocked(sc *storagev1.StorageClass, pvc *v1.PersistentVolumeClaim) segment {
	nodes := make([]*v1.Node, 0, len(s.nodes))
	for _, n := range s.nodes {
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	zoneKey := ""
	for _, n := range nodes {
		if k := zoneKeyOf(n.Labels); k != "" && zoneKey != v1.LabelTopologyZone {
			zoneKey = k
		}
	}
	keys := topologyKeys(sc, s.csiKeysLocked(sc.Provisioner, ""), zoneKey)
	if len(keys) == 0 {
		return nil
	}
	var segs []segment
	if len(sc.AllowedTopologies) > 0 {
		segs = allowedSegments(sc.AllowedTopologies)
	} else {
		for _, n := range nodes {
			if seg := nodeSegment(n, keys); seg != nil {
				segs = append(segs, seg)
			}
		}
	}
	if len(segs) == 0 {
		return nil
	}
	slices.SortFunc(segs, compareSegments)
	segs = slices.CompactFunc(segs, func(a, b segment) bool { return compareSegments(a, b) == 0 })
	return segs[spreadIndex(pvc.Name, len(segs))]
}

// csiKeysLocked are the driver's topology keys in node's CSINode (node
// "": the first CSINode by name that lists the driver with keys); nil
// when the input does not say.
func (s *Store) csiKeysLocked(driver, node string) []string {
	l := s.volumeListers.CSINodes
	if l == nil {
		return nil
	}
	var csiNodes []*storagev1.CSINode
	if node != "" {
		if cn, err := l.Get(node); err == nil {
			csiNodes = append(csiNodes, cn)
		}
	} else {
		csiNodes, _ = l.List(labels.Everything())
		slices.SortFunc(csiNodes, func(a, b *storagev1.CSINode) int { return strings.Compare(a.Name, b.Name) })
	}
	for _, cn := range csiNodes {
		for _, d := range cn.Spec.Drivers {
			if d.Name == driver && len(d.TopologyKeys) > 0 {
				return d.TopologyKeys
			}
		}
	}
	return nil
}
