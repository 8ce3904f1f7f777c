package simulator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
)

// Storage as a cluster provisions it, through the simulation: the
// manifests as a user gives them, loaded and run as simulate does.

// zoneNodes are nodes of 4 cpus, one per zone given ("node-<zone>").
func zoneNodes(zones ...string) string {
	var b strings.Builder
	for _, z := range zones {
		fmt.Fprintf(&b, "- {apiVersion: v1, kind: Node, metadata: {name: node-%s, labels: {kubernetes.io/hostname: node-%s, topology.kubernetes.io/zone: %s}}, status: {capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}}\n", z, z, z)
	}
	return b.String()
}

// statefulSet is a StatefulSet of replicas pods of 1 cpu with a 1Gi claim
// template data of class (none when "").
func statefulSet(name string, replicas int, class string) string {
	cls := ""
	if class != "" {
		cls = "storageClassName: " + class + ", "
	}
	return fmt.Sprintf(`- apiVersion: apps/v1
  kind: StatefulSet
  metadata: {name: %[1]s, namespace: default}
  spec:
    replicas: %[2]d
    serviceName: %[1]s
    selector: {matchLabels: {app: %[1]s}}
    template:
      metadata: {labels: {app: %[1]s}}
      spec: {containers: [{name: c, image: db:1, resources: {requests: {cpu: "1"}}}]}
    volumeClaimTemplates:
    - metadata: {name: data}
      spec: {%[3]saccessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`, name, replicas, cls)
}

func class(name, provisioner, mode string, extra string) string {
	return fmt.Sprintf("- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: %s%s}, provisioner: %s, volumeBindingMode: %s}\n",
		name, extra, provisioner, mode)
}

func staticPV(name, size, class string) string {
	return fmt.Sprintf("- {apiVersion: v1, kind: PersistentVolume, metadata: {name: %s}, spec: {capacity: {storage: %s}, accessModes: [ReadWriteOnce], storageClassName: %q, nfs: {server: nfs, path: /%s}}}\n",
		name, size, class, name)
}

func claimPod(name, claim string) string {
	return fmt.Sprintf("- {apiVersion: v1, kind: Pod, metadata: {name: %s, namespace: default}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}], volumes: [{name: v, persistentVolumeClaim: {claimName: %s}}]}}\n", name, claim)
}

// loadItems loads a List of items, then a Scenario of steps if any, with
// --default-storage-class flag.
func loadItems(t *testing.T, items, steps, flag string) *cluster.Cluster {
	t.Helper()
	content := "apiVersion: v1\nkind: List\nitems:\n" + items
	if steps != "" {
		content += "---\napiVersion: simulation.kubesched.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  steps:\n" + steps
	}
	path := simtest.WriteFile(t, "cluster.yaml", content)
	c, err := loading.LoadWith([]string{path}, nil, loading.Options{DefaultStorageClass: flag})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runStorage runs the cluster, its timeline if it has one, and checks the
// invariants.
func runStorage(t *testing.T, c *cluster.Cluster) (*simulator.World, map[string]report.PodResult) {
	t.Helper()
	w := simtest.NewWorld(t, c, 1) // the run's start plays the PV controller's pass
	if err := timeline.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	for _, err := range w.CheckInvariants() {
		t.Errorf("invariant broken: %v", err)
	}
	pods := map[string]report.PodResult{}
	for _, p := range w.Report().Pods {
		pods[p.Name] = p
	}
	return w, pods
}

// volumeOf is the volume claim default/name is bound to, nil if none.
func volumeOf(w *simulator.World, claim string) (*v1.PersistentVolumeClaim, *v1.PersistentVolume) {
	pvs, pvcs := w.Store.Volumes()
	for _, pvc := range pvcs {
		if pvc.Namespace != "default" || pvc.Name != claim {
			continue
		}
		for _, pv := range pvs {
			if pv.Name == pvc.Spec.VolumeName && pvc.Status.Phase == v1.ClaimBound {
				return pvc, pv
			}
		}
		return pvc, nil
	}
	return nil, nil
}

// zoneOf is the zone a volume's node affinity pins it to, "" for none.
func zoneOf(pv *v1.PersistentVolume) string {
	if pv == nil || pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, e := range t.MatchExpressions {
			if e.Key == v1.LabelTopologyZone && len(e.Values) == 1 {
				return e.Values[0]
			}
		}
	}
	return ""
}

func TestStorageIsBoundAndProvisionedAsAClusterWould(t *testing.T) {
	tests := []struct {
		name  string
		items string
		steps string
		flag  string
		check func(t *testing.T, w *simulator.World, pods map[string]report.PodResult)
	}{
		{
			name:  "an Immediate class's claims are provisioned at once and the StatefulSet's pods schedule in their volumes' zones",
			items: zoneNodes("zone-a", "zone-b", "zone-c") + class("fast", "pd.csi.storage.gke.io", "Immediate", "") + statefulSet("cassandra", 3, "fast"),
			check: func(t *testing.T, w *simulator.World, pods map[string]report.PodResult) {
				zones := map[string]bool{}
				for i := range 3 {
					p := pods[fmt.Sprintf("cassandra-%d", i)]
					_, pv := volumeOf(w, fmt.Sprintf("data-cassandra-%d", i))
					if p.Status != report.StatusScheduled || pv == nil || p.Node != "node-"+zoneOf(pv) {
						t.Errorf("%s: %s on %q, volume %v in %q: want scheduled in its volume's zone", p.Name, p.Status, p.Node, pv != nil, zoneOf(pv))
					}
					zones[zoneOf(pv)] = true
				}
				if len(zones) != 3 {
					t.Errorf("volumes in zones %v, want spread over the three", zones)
				}
			},
		},
		{
			name: "a claim naming a static volume is bound to it",
			items: zoneNodes("zone-a") + staticPV("pv-a", "5Gi", "") + staticPV("pv-b", "5Gi", "") + claimPod("app", "data") +
				"- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: default}, spec: {storageClassName: \"\", volumeName: pv-b, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}\n",
			check: func(t *testing.T, w *simulator.World, pods map[string]report.PodResult) {
				if _, pv := volumeOf(w, "data"); pv == nil || pv.Name != "pv-b" || pods["app"].Status != report.StatusScheduled {
					t.Errorf("claim bound to %v, pod %s: want pv-b, scheduled", pv, pods["app"].Status)
				}
			},
		},
		{
			name: "a claim is bound to the smallest static volume of its class that holds it",
			items: zoneNodes("zone-a") + class("manual", "kubernetes.io/no-provisioner", "Immediate", "") +
				staticPV("pv-1g", "1Gi", "manual") + staticPV("pv-10g", "10Gi", "manual") + staticPV("pv-4g", "4Gi", "manual") + staticPV("pv-3g-other", "3Gi", "other") +
				claimPod("app", "data") +
				"- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: default}, spec: {storageClassName: manual, accessModes: [ReadWriteOnce], resources: {requests: {storage: 3Gi}}}}\n",
			check: func(t *testing.T, w *simulator.World, pods map[string]report.PodResult) {
				if _, pv := volumeOf(w, "data"); pv == nil || pv.Name != "pv-4g" || pods["app"].Status != report.StatusScheduled {
					t.Errorf("claim bound to %v, pod %s: want pv-4g, scheduled", pv, pods["app"].Status)
				}
			},
		},
		{
			name: "a claim without a class gets the newest of two default classes, which provisions it",
			items: zoneNodes("zone-a") +
				class("old", "ebs.csi.aws.com", "WaitForFirstConsumer", `, creationTimestamp: "2024-01-01T00:00:00Z", annotations: {storageclass.kubernetes.io/is-default-class: "true"}`) +
				class("new", "ebs.csi.aws.com", "WaitForFirstConsumer", `, creationTimestamp: "2025-01-01T00:00:00Z", annotations: {storageclass.kubernetes.io/is-default-class: "true"}`) +
				statefulSet("db", 1, ""),
			check: func(t *testing.T, w *simulator.World, pods map[string]report.PodResult) {
				pvc, pv := volumeOf(w, "data-db-0")
				if pvc == nil || pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName != "new" || pv == nil || pv.Spec.StorageClassName != "new" {
					t.Errorf("claim %v, volume %v: want class new, provisioned", pvc, pv)
				}
				if pods["db-0"].Status != report.StatusScheduled {
					t.Errorf("db-0 %s: %s, want scheduled", pods["db-0"].Status, pods["db-0"].Message)
				}
			},
		},
		{
			name:  "without a default class or the flag, the claims stay pending and a warning names them",
			items: zoneNodes("zone-a") + statefulSet("db", 1, ""),
			check: func(t *testing.T, w *simulator.World, pods map[string]report.PodResult) {
				if p := pods["db-0"]; p.Status != report.StatusUnschedulable || !strings.Contains(p.Message, "pod has unbound immediate PersistentVolumeClaims") {
					t.Errorf("db-0 %s: %s, want pending on its unbound claim", p.Status, p.Message)
				}
				want := "StatefulSet default/db's volumeClaimTemplates data: no storageClassName, and the input has no default StorageClass"
				if len(w.Cluster.Warnings) != 1 || !strings.HasPrefix(w.Cluster.Warnings[0], want) {
					t.Errorf("warnings %q, want one beginning %q", w.Cluster.Warnings, want)
				}
			},
		},
		{
			name:  "--default-storage-class stands in a zonal class that provisions the claims without a class",
			items: zoneNodes("zone-a", "zone-b") + statefulSet("db", 2, ""),
			flag:  "standard-rwo",
			check: func(t *testing.T, w *simulator.World, pods map[string]report.PodResult) {
				for i := range 2 {
					p := pods[fmt.Sprintf("db-%d", i)]
					_, pv := volumeOf(w, fmt.Sprintf("data-db-%d", i))
					if p.Status != report.StatusScheduled || pv == nil || pv.Spec.StorageClassName != "standard-rwo" || "node-"+zoneOf(pv) != p.Node {
						t.Errorf("%s %s on %s, volume %v: want scheduled, its volume of standard-rwo in its zone", p.Name, p.Status, p.Node, pv)
					}
				}
				if len(w.Cluster.Warnings) != 0 {
					t.Errorf("warnings %q, want none", w.Cluster.Warnings)
				}
			},
		},
		{
			name:  "a WaitForFirstConsumer volume of a zonal provisioner is pinned to the selected node's zone",
			items: zoneNodes("zone-a", "zone-b") + class("gp3", "ebs.csi.aws.com", "WaitForFirstConsumer", "") + statefulSet("db", 1, "gp3"),
			check: func(t *testing.T, w *simulator.World, pods map[string]report.PodResult) {
				_, pv := volumeOf(w, "data-db-0")
				if p := pods["db-0"]; p.Status != report.StatusScheduled || pv == nil || "node-"+zoneOf(pv) != p.Node {
					t.Errorf("db-0 %s on %s, volume in zone %q: want its volume pinned to its node's zone", p.Status, p.Node, zoneOf(pv))
				}
			},
		},
		{
			name: "an Immediate class's allowedTopologies say where its volumes are made, and so its pods go",
			items: zoneNodes("zone-a", "zone-b", "zone-c") +
				"- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: fast}, provisioner: ebs.csi.aws.com, volumeBindingMode: Immediate, " +
				"allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone, values: [zone-c]}]}]}\n" +
				statefulSet("db", 2, "fast"),
			check: func(t *testing.T, w *simulator.World, pods map[string]report.PodResult) {
				for i := range 2 {
					p := pods[fmt.Sprintf("db-%d", i)]
					if _, pv := volumeOf(w, fmt.Sprintf("data-db-%d", i)); zoneOf(pv) != "zone-c" || p.Node != "node-zone-c" {
						t.Errorf("%s on %s, volume in %q: want both in zone-c", p.Name, p.Node, zoneOf(pv))
					}
				}
			},
		},
		{
			name: "a pod whose zonal volume's zone lost its node stays pending rather than moving zones",
			items: zoneNodes("zone-a") + "- {apiVersion: v1, kind: Node, metadata: {name: node-zone-b, labels: {kubernetes.io/hostname: node-zone-b, topology.kubernetes.io/zone: zone-b}}, spec: {unschedulable: true}, status: {capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}}\n" +
				class("gp3", "ebs.csi.aws.com", "WaitForFirstConsumer", "") + statefulSet("db", 1, "gp3"),
			steps: "  - {at: 1m, uncordon: [node-zone-b], deleteNodes: [node-zone-a]}\n",
			check: func(t *testing.T, w *simulator.World, pods map[string]report.PodResult) {
				_, pv := volumeOf(w, "data-db-0")
				if zoneOf(pv) != "zone-a" {
					t.Fatalf("data-db-0's volume in %q, want zone-a (where db-0 first ran)", zoneOf(pv))
				}
				if p := pods["db-0"]; p.Status != report.StatusUnschedulable {
					t.Errorf("db-0 %s on %q, want pending: its disk is in zone-a", p.Status, p.Node)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loadItems(t, tt.items, tt.steps, tt.flag)
			w, pods := runStorage(t, c)
			tt.check(t, w, pods)
		})
	}
}

func TestAClaimCreatedByAStepIsProvisionedAtOnce(t *testing.T) {
	items := zoneNodes("zone-a") + class("fast", "ebs.csi.aws.com", "Immediate", "")
	steps := "  - at: 1m\n    create:\n" +
		"    - {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: late, namespace: default}, spec: {storageClassName: fast, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}\n" +
		"    - {apiVersion: v1, kind: Pod, metadata: {name: app, namespace: default}, spec: {containers: [{name: c, image: x}], volumes: [{name: v, persistentVolumeClaim: {claimName: late}}]}}\n"
	w, pods := runStorage(t, loadItems(t, items, steps, ""))
	if _, pv := volumeOf(w, "late"); pv == nil || zoneOf(pv) != "zone-a" || pods["app"].Status != report.StatusScheduled {
		t.Errorf("claim's volume %v, app %s: want provisioned in zone-a, app scheduled", pv, pods["app"].Status)
	}
}
