package memory

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	st "github.com/kubesched/kubesched/internal/testing"
)

// affinityOf is a volume's node affinity as "key=value,key=value | ...",
// "" for none.
func affinityOf(pv *v1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	var terms []string
	for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		var exprs []string
		for _, e := range t.MatchExpressions {
			exprs = append(exprs, e.Key+"="+strings.Join(e.Values, ","))
		}
		terms = append(terms, strings.Join(exprs, ","))
	}
	return strings.Join(terms, " | ")
}

func TestAProvisionedVolumeHasTheTopologyItsProvisionerGives(t *testing.T) {
	wffc, immediate := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	nodes := []*v1.Node{zonalNode("n1", "zone-a"), zonalNode("n2", "zone-b"), zonalNode("n3", "zone-c")}
	annotated := func(sc *storagev1.StorageClass, reach string) *storagev1.StorageClass {
		sc.Annotations = map[string]string{VolumeTopologyAnnotation: reach}
		return sc
	}
	allowed := func(sc *storagev1.StorageClass, zones ...string) *storagev1.StorageClass {
		sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: v1.LabelTopologyZone, Values: zones}}}}
		return sc
	}
	tests := []struct {
		name  string
		class *storagev1.StorageClass
		nodes []*v1.Node
		objs  []interface{}
		// node is the selected node ("": provisioned at once).
		node string
		want string
	}{
		{name: "a cloud block disk is made in the selected node's zone",
			class: st.StorageClass("sc", wffc, "pd.csi.storage.gke.io"), node: "n2", want: "topology.kubernetes.io/zone=zone-b"},
		{name: "an in-tree cloud disk too",
			class: st.StorageClass("sc", wffc, "kubernetes.io/aws-ebs"), node: "n1", want: "topology.kubernetes.io/zone=zone-a"},
		{name: "a node with only the beta zone label pins the volume by it",
			class: st.StorageClass("sc", wffc, "ebs.csi.aws.com"), node: "old",
			nodes: []*v1.Node{st.MakeNode().Name("old").Label(v1.LabelFailureDomainBetaZone, "zone-z").Obj()},
			want:  "failure-domain.beta.kubernetes.io/zone=zone-z"},
		{name: "a node without a zone gives a zonal disk no topology",
			class: st.StorageClass("sc", wffc, "ebs.csi.aws.com"), node: "bare",
			nodes: []*v1.Node{st.MakeNode().Name("bare").Obj()}},
		{name: "the driver's topology keys in the node's CSINode are used",
			class: st.StorageClass("sc", wffc, "ebs.csi.aws.com"), node: "n2",
			nodes: []*v1.Node{st.MakeNode().Name("n2").Label(v1.LabelTopologyZone, "zone-b").Label("topology.ebs.csi.aws.com/zone", "use1-az2").Obj()},
			objs: []interface{}{func() *storagev1.CSINode {
				cn := st.CSINode("n2", "ebs.csi.aws.com", 25)
				cn.Spec.Drivers[0].TopologyKeys = []string{"topology.ebs.csi.aws.com/zone"}
				return cn
			}()},
			want: "topology.ebs.csi.aws.com/zone=use1-az2"},
		{name: "a CSINode listing the driver without keys leaves the provisioner's rule",
			class: st.StorageClass("sc", wffc, "ebs.csi.aws.com"), node: "n1",
			objs: []interface{}{st.CSINode("n1", "ebs.csi.aws.com", 25)},
			want: "topology.kubernetes.io/zone=zone-a"},
		{name: "a shared filesystem reaches every node",
			class: st.StorageClass("sc", wffc, "efs.csi.aws.com"), node: "n1"},
		{name: "an NFS provisioner, known by its name's word, reaches every node",
			class: st.StorageClass("sc", immediate, "k8s-sigs.io/nfs-subdir-external-provisioner")},
		{name: "a node-local volume is pinned to its node",
			class: st.StorageClass("sc", wffc, "rancher.io/local-path"), node: "n3", want: "kubernetes.io/hostname=n3"},
		{name: "an unknown provisioner's volume is taken as zonal",
			class: st.StorageClass("sc", wffc, "csi.example.com"), node: "n3", want: "topology.kubernetes.io/zone=zone-c"},
		{name: "the class's annotation says an unknown provisioner's volumes reach every node",
			class: annotated(st.StorageClass("sc", wffc, "csi.example.com"), "none"), node: "n3"},
		{name: "the class's annotation pins a volume to its node",
			class: annotated(st.StorageClass("sc", wffc, "csi.example.com"), "node"), node: "n3", want: "kubernetes.io/hostname=n3"},
		{name: "at once, a zonal disk is made in one of the allowedTopologies",
			class: allowed(st.StorageClass("sc", immediate, "ebs.csi.aws.com"), "zone-c"), want: "topology.kubernetes.io/zone=zone-c"},
		{name: "at once, a zonal disk is made in a zone of the nodes",
			class: st.StorageClass("sc", immediate, "ebs.csi.aws.com"), nodes: []*v1.Node{zonalNode("only", "zone-q")},
			want: "topology.kubernetes.io/zone=zone-q"},
		{name: "at once, on nodes without zones, a zonal disk has no topology",
			class: st.StorageClass("sc", immediate, "ebs.csi.aws.com"), nodes: []*v1.Node{st.MakeNode().Name("bare").Obj()}},
		{name: "under WaitForFirstConsumer the selected node's zone, within the allowedTopologies",
			class: allowed(st.StorageClass("sc", wffc, "ebs.csi.aws.com"), "zone-a", "zone-b"), node: "n2", want: "topology.kubernetes.io/zone=zone-b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := tt.nodes
			if ns == nil {
				ns = nodes
			}
			pvc := st.MakePVC("data", "5Gi").Class("sc")
			s, listers := newVolumeStore(t, ns, append([]interface{}{tt.class, pvc.DeepCopy()}, tt.objs...)...)
			if tt.node == "" {
				s.SyncVolumes()
			} else if _, err := s.UpdatePersistentVolumeClaim(context.Background(), pvc.SelectedNode(tt.node).Obj()); err != nil {
				t.Fatal(err)
			}
			pv, err := listers.PersistentVolumes.Get("pvc-uid-pvc-data")
			if err != nil {
				t.Fatalf("no volume provisioned: %v", err)
			}
			if got := affinityOf(pv); got != tt.want {
				t.Errorf("node affinity %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAStatefulSetsVolumesProvisionedAtOnceAreSpreadOverTheZones(t *testing.T) {
	sc := st.StorageClass("sc", storagev1.VolumeBindingImmediate, "ebs.csi.aws.com")
	objs := []interface{}{sc}
	names := []string{"data-db-0", "data-db-1", "data-db-2", "logs-db-0"}
	for _, n := range names {
		objs = append(objs, st.MakePVC(n, "1Gi").Class("sc").Obj())
	}
	s, listers := newVolumeStore(t, []*v1.Node{zonalNode("n1", "zone-a"), zonalNode("n2", "zone-b"), zonalNode("n3", "zone-c")}, objs...)
	s.SyncVolumes()
	zone := map[string]string{}
	for _, n := range names {
		pv, err := listers.PersistentVolumes.Get("pvc-uid-pvc-" + n)
		if err != nil {
			t.Fatalf("%s not provisioned: %v", n, err)
		}
		zone[n] = affinityOf(pv)
	}
	if zone["data-db-0"] == zone["data-db-1"] || zone["data-db-1"] == zone["data-db-2"] || zone["data-db-0"] == zone["data-db-2"] {
		t.Errorf("zones %v: want the three replicas' volumes in three zones", zone)
	}
	if zone["logs-db-0"] != zone["data-db-0"] {
		t.Errorf("zones %v: want one replica's two volumes in one zone", zone)
	}
}
