package loading_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
)

const (
	storageNode = "- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {topology.kubernetes.io/zone: zone-a}}, status: {capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}}\n"
	gp3Default  = "- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: gp3, creationTimestamp: \"2025-01-01T00:00:00Z\", annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}}, provisioner: ebs.csi.aws.com, volumeBindingMode: WaitForFirstConsumer}\n"
	newDefault  = "- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: zz-new, creationTimestamp: \"2025-06-01T00:00:00Z\", annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}}, provisioner: ebs.csi.aws.com}\n"
	io2         = "- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: io2}, provisioner: ebs.csi.aws.com}\n"
	classless   = "- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: default}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}\n"
	emptyClass  = "- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: default}, spec: {storageClassName: \"\", accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}\n"
	namesGP2    = "- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: default}, spec: {storageClassName: gp2, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}\n"
	boundNoCls  = "- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: default, annotations: {pv.kubernetes.io/bind-completed: \"yes\"}}, spec: {volumeName: old, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}\n"
	usesData    = "- {apiVersion: v1, kind: Pod, metadata: {name: app, namespace: default}, spec: {containers: [{name: c, image: x}], volumes: [{name: v, persistentVolumeClaim: {claimName: data}}]}}\n"
	staticNoCls = "- {apiVersion: v1, kind: PersistentVolume, metadata: {name: nfs-1}, spec: {capacity: {storage: 5Gi}, accessModes: [ReadWriteOnce], nfs: {server: nfs, path: /x}}}\n"
	cassandra   = `- apiVersion: apps/v1
  kind: StatefulSet
  metadata: {name: cassandra, namespace: default}
  spec:
    replicas: 3
    podManagementPolicy: Parallel
    serviceName: cassandra
    selector: {matchLabels: {app: cassandra}}
    template:
      metadata: {labels: {app: cassandra}}
      spec: {containers: [{name: c, image: cassandra:5, resources: {requests: {cpu: 100m}}}]}
    volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`
)

// loadStorage loads the List of items with --default-storage-class flag.
func loadStorage(t *testing.T, content, flag string) *cluster.Cluster {
	t.Helper()
	c, err := loading.LoadWith([]string{simtest.WriteFile(t, "m.yaml", "apiVersion: v1\nkind: List\nitems:\n"+content)}, nil, loading.Options{DefaultStorageClass: flag})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func deref[T any](p *T, none T) T {
	if p == nil {
		return none
	}
	return *p
}

func claimClasses(c *cluster.Cluster) map[string]string {
	out := map[string]string{}
	for _, o := range c.Others {
		if pvc, ok := o.(*v1.PersistentVolumeClaim); ok {
			out[pvc.Name] = deref(pvc.Spec.StorageClassName, "<none>")
		}
	}
	return out
}

func TestTheClaimsReadGetTheDefaultStorageClassAsAdmissionGivesIt(t *testing.T) {
	tests := []struct {
		name    string
		content string
		flag    string
		want    map[string]string
	}{
		{name: "a claim without a class gets the input's default class",
			content: storageNode + gp3Default + io2 + classless, want: map[string]string{"data": "gp3"}},
		{name: "of two default classes, the newest",
			content: storageNode + gp3Default + newDefault + classless, want: map[string]string{"data": "zz-new"}},
		{name: "a claim asking for no class keeps none",
			content: storageNode + gp3Default + emptyClass, want: map[string]string{"data": ""}},
		{name: "a claim already bound is left as it was admitted",
			content: storageNode + gp3Default + boundNoCls, want: map[string]string{"data": "<none>"}},
		{name: "a StatefulSet's claims get the default class",
			content: storageNode + gp3Default + cassandra,
			want:    map[string]string{"data-cassandra-0": "gp3", "data-cassandra-1": "gp3", "data-cassandra-2": "gp3"}},
		{name: "without a default class, --default-storage-class names the class of the input that is",
			content: storageNode + io2 + classless, flag: "io2", want: map[string]string{"data": "io2"}},
		{name: "without a class of that name, --default-storage-class stands one in",
			content: storageNode + cassandra, flag: "standard-rwo",
			want: map[string]string{"data-cassandra-0": "standard-rwo", "data-cassandra-1": "standard-rwo", "data-cassandra-2": "standard-rwo"}},
		{name: "the input's default class stays the default over --default-storage-class",
			content: storageNode + gp3Default + classless, flag: "other", want: map[string]string{"data": "gp3"}},
		{name: "without a default class and without the flag, a claim without a class keeps none",
			content: storageNode + io2 + classless, want: map[string]string{"data": "<none>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loadStorage(t, tt.content, tt.flag)
			if diff := cmp.Diff(tt.want, claimClasses(c)); diff != "" {
				t.Errorf("claims' classes (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestTheStandInClassIsAZonalWaitForFirstConsumerDefault(t *testing.T) {
	c := loadStorage(t, storageNode+classless, "gp3")
	var got *storagev1.StorageClass
	for _, o := range c.Others {
		if sc, ok := o.(*storagev1.StorageClass); ok {
			got = sc
		}
	}
	if got == nil || got.Name != "gp3" || got.Provisioner != "simulation.kubesched.io/zonal-disk" ||
		deref(got.VolumeBindingMode, "") != storagev1.VolumeBindingWaitForFirstConsumer ||
		got.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" ||
		got.Annotations["simulation.kubesched.io/volume-topology"] != "zone" {
		t.Errorf("stand-in class %+v, want gp3, zonal, WaitForFirstConsumer, the default", got)
	}
	if len(c.Warnings) > 0 {
		t.Errorf("warnings %q, want none", c.Warnings)
	}
}

func TestClaimsThatStayPendingForWantOfAClassAreNamedInAWarning(t *testing.T) {
	noDefault := `: no storageClassName, and the input has no default StorageClass: pending, as in a cluster without a default class; ` +
		`pass --default-storage-class NAME (a WaitForFirstConsumer zonal class of that name, unless the input has one), ` +
		`or annotate a StorageClass of the input storageclass.kubernetes.io/is-default-class: "true"`
	tests := []struct {
		name    string
		content string
		flag    string
		want    []string
	}{
		{name: "a claim without a class and no default class",
			content: storageNode + io2 + classless + usesData, want: []string{"PersistentVolumeClaim default/data" + noDefault}},
		{name: "a claim no pod uses keeps no pod pending: no warning",
			content: storageNode + io2 + classless},
		{name: "a StatefulSet's claims without a class, named by its template",
			content: storageNode + cassandra, want: []string{"StatefulSet default/cassandra's volumeClaimTemplates data" + noDefault}},
		{name: "a claim naming a class the input does not hold",
			content: storageNode + namesGP2 + usesData,
			want: []string{`PersistentVolumeClaim default/data: StorageClass "gp2" is not in the input: pending, as the PV controller cannot provision without it; ` +
				`add the StorageClass to the input, or pass --default-storage-class gp2 to stand in a WaitForFirstConsumer zonal class of that name`}},
		{name: "--default-storage-class stands the missing class in: no warning",
			content: storageNode + namesGP2 + usesData, flag: "gp2"},
		{name: "a claim without a class that a volume without a class matches: no warning",
			content: storageNode + staticNoCls + classless + usesData},
		{name: "a claim with the default class: no warning",
			content: storageNode + gp3Default + classless + usesData},
		{name: "--default-storage-class when the input marks another default says which is",
			content: storageNode + gp3Default + classless, flag: "other",
			want: []string{`--default-storage-class other: not the default class: the input marks StorageClass gp3 the default (storageclass.kubernetes.io/is-default-class: "true"), which claims without a class get`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loadStorage(t, tt.content, tt.flag)
			var got []string
			for _, w := range c.Warnings {
				if strings.Contains(w, "StorageClass") || strings.Contains(w, "storage-class") {
					got = append(got, w)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("warnings (-want,+got):\n%s", diff)
			}
		})
	}
}
