package simulator_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/component-helpers/storage/volume"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// corpusObject is an object of the corpus as the test reads it itself,
// without the loader: a List's items are objects.
type corpusObject struct {
	kind, ns, name, where string
	// helmTest: annotated helm.sh/hook: test (helm install skips it).
	helmTest bool
}

func (o corpusObject) key() string { return o.kind + " " + o.ns + "/" + o.name }

// clusterScoped are the corpus' kinds without a namespace.
var clusterScoped = map[string]bool{"Namespace": true, "Node": true, "PersistentVolume": true, "StorageClass": true,
	"CustomResourceDefinition": true, "ClusterRole": true, "ClusterRoleBinding": true, "IngressClass": true,
	"ValidatingWebhookConfiguration": true, "PriorityClass": true}

// readCorpus reads every object of the files under dir, in the loader's
// file order, with the namespace an unnamespaced namespaced object gets
// (namespace, else default).
func readCorpus(t *testing.T, dir, namespace string) []corpusObject {
	t.Helper()
	if namespace == "" {
		namespace = v1.NamespaceDefault
	}
	var files []string
	if err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var out []corpusObject
	add := func(m map[string]interface{}, where string) {
		meta, _ := m["metadata"].(map[string]interface{})
		o := corpusObject{kind: fmt.Sprint(m["kind"]), where: where}
		o.name, _ = meta["name"].(string)
		o.ns, _ = meta["namespace"].(string)
		if o.ns == "" && !clusterScoped[o.kind] {
			o.ns = namespace
		}
		ann, _ := meta["annotations"].(map[string]interface{})
		hook, _ := ann["helm.sh/hook"].(string)
		o.helmTest = strings.Contains(hook, "test")
		out = append(out, o)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for doc := 1; ; doc++ {
			raw, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var m map[string]interface{}
			if err := yaml.Unmarshal(raw, &m); err != nil {
				t.Fatalf("%s: document %d: %v", f, doc, err)
			}
			if m == nil {
				doc--
				continue
			}
			where := fmt.Sprintf("%s: document %d", f, doc)
			if items, ok := m["items"].([]interface{}); ok && strings.HasSuffix(fmt.Sprint(m["kind"]), "List") {
				for _, it := range items {
					add(it.(map[string]interface{}), where)
				}
				continue
			}
			add(m, where)
		}
	}
	return out
}

// loadedKeys are the objects of a loaded cluster, "Kind namespace/name",
// for the kinds the simulator reads.
func loadedKeys(c *cluster.Cluster) map[string]bool {
	keys := map[string]bool{}
	put := func(obj interface{}) {
		m, err := metaOf(obj)
		if err != nil {
			return
		}
		ro, ok := obj.(runtime.Object)
		if !ok {
			return
		}
		kind := ro.GetObjectKind().GroupVersionKind().Kind
		keys[kind+" "+m.GetNamespace()+"/"+m.GetName()] = true
	}
	for _, o := range c.Nodes {
		put(o)
	}
	for _, o := range c.Pods {
		put(o)
	}
	for _, o := range c.Objects() {
		put(o)
	}
	for _, o := range c.Deployments {
		put(o)
	}
	for _, o := range c.DaemonSets {
		put(o)
	}
	for _, o := range c.Jobs {
		put(o)
	}
	for _, o := range c.HPAs {
		put(o)
	}
	for _, o := range c.CronJobs {
		put(o)
	}
	for _, o := range c.PriorityClasses {
		put(o)
	}
	return keys
}

func metaOf(obj interface{}) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}

// corpusNodes writes n nodes in three zones, as a cloud's node pool.
func corpusNodes(t *testing.T, n int) string {
	t.Helper()
	var objs []runtime.Object
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%03d", i)
		objs = append(objs, st.MakeNode().Name(name).
			Label(v1.LabelHostname, name).Label(v1.LabelTopologyZone, fmt.Sprintf("zone-%c", 'a'+i%3)).Label(v1.LabelOSStable, "linux").
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "32Gi", v1.ResourcePods: "110"}).Obj())
	}
	return simtest.WriteFile(t, fmt.Sprintf("nodes-%d.yaml", n), simtest.Manifest(t, objs...))
}

// TestTheCorpusIsReadWholeAsTheAPIServerWouldTakeIt loads the corpus
// (manifests in the shape of what people install) and accounts for every
// object the test reads itself: loaded under its namespace, skipped by
// kind, or left out with a warning that names it (a duplicate, a Helm
// test hook). Nothing is lost.
func TestTheCorpusIsReadWholeAsTheAPIServerWouldTakeIt(t *testing.T) {
	tests := []struct {
		name, dir, namespace string
	}{
		{name: "the whole corpus, applied without a namespace", dir: "testdata/corpus"},
		{name: "the GitOps install, applied with -n argocd", dir: "testdata/corpus/gitops", namespace: "argocd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := readCorpus(t, tt.dir, tt.namespace)
			c, err := loading.LoadWith([]string{corpusNodes(t, 6), tt.dir}, nil, loading.Options{Namespace: tt.namespace})
			if err != nil {
				t.Fatal(err)
			}
			keys := loadedKeys(c)
			warned := func(o corpusObject) bool {
				for _, w := range c.Warnings {
					if strings.Contains(w, o.kind) && strings.Contains(w, o.name) {
						return true
					}
				}
				return false
			}
			skipped := map[string]int{}
			seen := map[string]corpusObject{}
			for _, o := range objs {
				switch first, dup := seen[o.key()]; {
				case o.helmTest:
					if !warned(o) || keys[o.key()] {
						t.Errorf("%s (%s) is a Helm test hook: want it left out with a warning", o.key(), o.where)
					}
				case dup:
					if !warned(o) {
						t.Errorf("%s at %s repeats %s: want a warning naming both", o.key(), o.where, first.where)
					}
				case keys[o.key()]:
				default:
					skipped[o.kind]++
				}
				seen[o.key()] = o
			}
			for kind, n := range skipped {
				if c.Skipped[kind] != n {
					t.Errorf("%d %s neither loaded nor left out with a warning, but %d named as skipped", n, kind, c.Skipped[kind])
				}
			}
			for kind, n := range c.Skipped {
				if skipped[kind] != n {
					t.Errorf("%d %s named as skipped, want %d", n, kind, skipped[kind])
				}
			}
		})
	}
}

// TestTheCorpusSimulatesWithEveryPodAccountedFor simulates the corpus on
// a small and a large cluster: every workload has the pods its
// controller and its HPA give it, each scheduled or pending with a
// reason, and on the large cluster all of them run, each StatefulSet pod
// on its volume's zone.
func TestTheCorpusSimulatesWithEveryPodAccountedFor(t *testing.T) {
	want := map[string]int{
		"Deployment default/frontend":                      3, // the HPA's minReplicas; the Deployment names none
		"Deployment default/cartservice":                   2, // an autoscaling/v1 HPA's minReplicas
		"Deployment default/productcatalogservice":         1,
		"Deployment default/redis-master":                  2, // the second of two files stands
		"Deployment default/tf-serving":                    2,
		"Deployment batch/queue-worker":                    2, // from a DeploymentList
		"StatefulSet data/postgres":                        3,
		"StatefulSet default/cassandra":                    3,
		"StatefulSet default/argocd-redis-ha-server":       3,
		"Deployment default/argocd-redis-ha-haproxy":       3,
		"Job batch/migrate":                                3,
		"Job ingress-nginx/ingress-nginx-admission-create": 1,
		"Job ingress-nginx/ingress-nginx-admission-patch":  1, // a post-install hook: helm install runs it
		"CronJob kube-system/descheduler-cronjob":          1, // its next Job
		"CronJob batch/nightly-report":                     2, // its Job's parallelism
		"CronJob batch/paused-cleanup":                     0, // suspended
	}
	tests := []struct {
		name  string
		nodes int
		// allRun: every pod is scheduled.
		allRun bool
	}{
		{name: "on 6 nodes some pods wait, each for a reason", nodes: 6},
		{name: "on 1,000 nodes every pod runs", nodes: 1000, allRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loading.LoadWith([]string{corpusNodes(t, tt.nodes), "testdata/corpus"}, nil, loading.Options{})
			if err != nil {
				t.Fatal(err)
			}
			w, r := simtest.Simulate(t, c, 1)
			byName := map[string]report.WorkloadResult{}
			for _, wl := range r.Workloads {
				k := wl.Kind + " " + wl.Namespace + "/" + wl.Name
				byName[k] = wl
				if wl.Scheduled+wl.Pending != wl.Pods {
					t.Errorf("%s: %d scheduled and %d pending of %d pods", k, wl.Scheduled, wl.Pending, wl.Pods)
				}
			}
			for k, n := range want {
				if got := byName[k].Pods; got != n {
					t.Errorf("%s has %d pods, want %d", k, got, n)
				}
			}
			if ds := byName["DaemonSet monitoring/node-exporter"]; ds.Pods != tt.nodes {
				t.Errorf("node-exporter has %d pods, want one per node (%d)", ds.Pods, tt.nodes)
			}
			for _, p := range r.Pods {
				if p.Status != report.StatusScheduled && p.Message == "" {
					t.Errorf("pod %s/%s is %s without a reason", p.Namespace, p.Name, p.Status)
				}
				if tt.allRun && p.Status != report.StatusScheduled {
					t.Errorf("pod %s/%s is %s: %s", p.Namespace, p.Name, p.Status, p.Message)
				}
			}
			if tt.allRun {
				checkVolumeZones(t, w)
			}
		})
	}
}

// checkVolumeZones wants every claim the pods use bound, each volume the
// simulation provisioned for a zonal class pinned by node affinity, and
// each pod on a node its volumes' affinity admits.
func checkVolumeZones(t *testing.T, w *simulator.World) {
	t.Helper()
	pvs, pvcs := w.Store.Volumes()
	pvByName := map[string]*v1.PersistentVolume{}
	for _, pv := range pvs {
		pvByName[pv.Name] = pv
	}
	claims := map[string]*v1.PersistentVolumeClaim{}
	for _, c := range pvcs {
		claims[c.Namespace+"/"+c.Name] = c
	}
	nodes := map[string]*v1.Node{}
	for _, n := range w.Store.Nodes() {
		nodes[n.Name] = n
	}
	pinned := 0
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName == "" {
			continue // reported as not running
		}
		for _, vol := range p.Spec.Volumes {
			if vol.PersistentVolumeClaim == nil {
				continue
			}
			k := p.Namespace + "/" + vol.PersistentVolumeClaim.ClaimName
			claim := claims[k]
			if claim == nil || claim.Spec.VolumeName == "" {
				t.Errorf("pod %s/%s: claim %s is not bound", p.Namespace, p.Name, k)
				continue
			}
			pv := pvByName[claim.Spec.VolumeName]
			if pv == nil {
				t.Errorf("claim %s is bound to %s, which does not exist", k, claim.Spec.VolumeName)
				continue
			}
			if pv.Spec.CSI != nil || pv.Annotations["pv.kubernetes.io/provisioned-by"] == "pd.csi.storage.gke.io" {
				if pv.Spec.NodeAffinity == nil {
					t.Errorf("volume %s of a zonal provisioner has no node affinity", pv.Name)
					continue
				}
				pinned++
			}
			if n := nodes[p.Spec.NodeName]; n == nil || volume.CheckNodeAffinity(pv, n.Labels) != nil {
				t.Errorf("pod %s/%s runs on %s, which volume %s's node affinity does not admit", p.Namespace, p.Name, p.Spec.NodeName, pv.Name)
			}
		}
	}
	if pinned == 0 {
		t.Error("no pod runs on a zonal volume: the check holds nothing")
	}
}

// TestTheCorpusOfOldAPIVersionsIsRefusedAsTheAPIServerWould loads each
// manifest of an apiVersion v1.37 no longer serves: the load fails naming
// the file and the kind and version, as kubectl apply does.
func TestTheCorpusOfOldAPIVersionsIsRefusedAsTheAPIServerWould(t *testing.T) {
	files, err := filepath.Glob("testdata/corpus-refused/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no refused corpus: %v", err)
	}
	nodes := corpusNodes(t, 3)
	for _, f := range files {
		objs := readCorpus(t, f, "")
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := loading.LoadWith([]string{nodes, f}, nil, loading.Options{})
			if err == nil {
				t.Fatalf("loaded %s: want it refused", f)
			}
			data, _ := os.ReadFile(f)
			var head struct{ APIVersion string }
			if err := yaml.Unmarshal(data, &head); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("no matches for kind %q in version %q", objs[0].kind, head.APIVersion)
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), f) {
				t.Errorf("error %q, want it to name %s and say %s", err, f, want)
			}
		})
	}
}
