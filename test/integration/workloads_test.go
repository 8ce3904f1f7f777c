package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/test/integration/framework"
)

// TestWorkloadExpansionMatchesKubeControllerManager creates workloads of
// every kind simulate expands on a real API server with upstream's
// kube-controller-manager (v1.37.2) running their controllers, then loads
// the same workloads, as the API server stored them, into the simulator,
// and compares the pods each side created: names (the generated suffix
// aside), labels, annotations, owners, finalizers, hostname, subdomain,
// node selector, affinity, tolerations and claims. No kubelet runs, so an
// OrderedReady StatefulSet stops at its first pod on both sides.
func TestWorkloadExpansionMatchesKubeControllerManager(t *testing.T) {
	cp := framework.StartControlPlane(t)
	framework.StartControllerManager(t, cp, "deployment,replicaset,replicationcontroller,statefulset,job,daemonset")
	c := cp.Client
	ctx := context.Background()
	const ns = "wl"
	framework.CreateNamespace(t, c, ns)
	framework.CreateNode(t, c, "plain", "8", "16Gi", 110, nil)
	framework.CreateNode(t, c, "gpu", "8", "16Gi", 110, map[string]string{"pool": "gpu"})
	for name, change := range map[string]func(*v1.Node){
		"cordoned": func(n *v1.Node) { n.Spec.Unschedulable = true },
		"tainted": func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "db", Effect: v1.TaintEffectNoSchedule}}
		},
		"pressured": func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: v1.TaintNodeMemoryPressure, Effect: v1.TaintEffectNoSchedule}}
		},
	} {
		n := framework.CreateNode(t, c, name, "8", "16Gi", 110, nil)
		change(n)
		if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(app string) *st.PodWrapper {
		return st.MakePod().Namespace(ns).Label("app", app).
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
	}
	five, two := int32(5), int32(2)
	objs := []runtime.Object{
		st.MakeDeployment("web", 3, pod("web").Toleration("spot", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule).NodeSelector("pool", "gpu")),
		st.MakeReplicaSet("api", 2, pod("api")),
		st.MakeReplicationController("legacy", 2, pod("legacy")),
		st.MakeStatefulSet("db", 3, pod("db")).ClaimTemplate("data", "1Gi", "fast").Obj(),
		st.MakeStatefulSet("cache", 2, pod("cache")).Parallel().StartOrdinal(5).ClaimTemplate("scratch", "2Gi", "").Obj(),
		st.MakeJob("train", 2, &five, pod("train")).Indexed().Obj(),
		st.MakeJob("few", 5, &two, pod("few")).Obj(),
		st.MakeDaemonSet("agent", pod("agent").Toleration("x", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)),
		st.MakeDaemonSet("gpu-agent", pod("gpu-agent").RequiredNodeAffinityIn("pool", "gpu")),
	}
	for _, o := range objs {
		createWorkload(t, c, ns, o)
	}
	// web 3, api 2, legacy 2, db 1 (db-1 waits for db-0 to be Ready),
	// cache 2, train 2, few 2, agent 4 (every node but the tainted one),
	// gpu-agent 1.
	const want = 3 + 2 + 2 + 1 + 2 + 2 + 2 + 4 + 1
	var real []v1.Pod
	framework.Eventually(t, 90*time.Second, fmt.Sprintf("kube-controller-manager creates %d pods", want), func() (bool, error) {
		l, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		real = l.Items
		return len(real) >= want, nil
	})
	if len(real) != want {
		t.Fatalf("kube-controller-manager created %d pods, want %d", len(real), want)
	}

	cluster := loadStored(t, c, ns)
	ours := map[string][]string{}
	for _, p := range cluster.Pods {
		if p.Namespace == ns {
			i := cluster.WorkloadOf[p.Namespace+"/"+p.Name]
			ours[cluster.Workloads[i].Kind+" "+cluster.Workloads[i].Name] = append(ours[cluster.Workloads[i].Kind+" "+cluster.Workloads[i].Name], shapeOf(p))
		}
	}
	theirs := map[string][]string{}
	for i := range real {
		p := &real[i]
		theirs[workloadOf(t, c, p)] = append(theirs[workloadOf(t, c, p)], shapeOf(p))
	}
	for _, m := range []map[string][]string{ours, theirs} {
		for _, v := range m {
			sort.Strings(v)
		}
	}
	for w, shapes := range theirs {
		if strings.Join(shapes, "\n") != strings.Join(ours[w], "\n") {
			t.Errorf("%s: kube-controller-manager created\n%s\nkubesched simulate created\n%s", w, strings.Join(shapes, "\n"), strings.Join(ours[w], "\n"))
		}
	}
	for w := range ours {
		if _, ok := theirs[w]; !ok {
			t.Errorf("%s: kubesched created pods kube-controller-manager did not: %v", w, ours[w])
		}
	}

	// Claims: those of the pods created on both sides (kubesched creates
	// the claims of pods still waiting too; they bind nothing).
	realClaims, err := c.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var theirClaims, ourClaims []string
	for i := range realClaims.Items {
		theirClaims = append(theirClaims, claimShape(&realClaims.Items[i]))
	}
	used := map[string]bool{}
	for _, p := range cluster.Pods {
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				used[v.PersistentVolumeClaim.ClaimName] = true
			}
		}
	}
	for _, o := range cluster.Others {
		if pvc, ok := o.(*v1.PersistentVolumeClaim); ok && used[pvc.Name] {
			ourClaims = append(ourClaims, claimShape(pvc))
		}
	}
	sort.Strings(theirClaims)
	sort.Strings(ourClaims)
	if strings.Join(theirClaims, "\n") != strings.Join(ourClaims, "\n") {
		t.Errorf("claims: kube-controller-manager\n%s\nkubesched\n%s", strings.Join(theirClaims, "\n"), strings.Join(ourClaims, "\n"))
	}
}

func createWorkload(t *testing.T, c kubernetes.Interface, ns string, o runtime.Object) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch o := o.(type) {
	case *appsv1.Deployment:
		o.Namespace = ns
		_, err = c.AppsV1().Deployments(ns).Create(ctx, o, metav1.CreateOptions{})
	case *appsv1.ReplicaSet:
		o.Namespace = ns
		_, err = c.AppsV1().ReplicaSets(ns).Create(ctx, o, metav1.CreateOptions{})
	case *v1.ReplicationController:
		o.Namespace = ns
		_, err = c.CoreV1().ReplicationControllers(ns).Create(ctx, o, metav1.CreateOptions{})
	case *appsv1.StatefulSet:
		o.Namespace = ns
		_, err = c.AppsV1().StatefulSets(ns).Create(ctx, o, metav1.CreateOptions{})
	case *batchv1.Job:
		o.Namespace = ns
		_, err = c.BatchV1().Jobs(ns).Create(ctx, o, metav1.CreateOptions{})
	case *appsv1.DaemonSet:
		o.Namespace = ns
		_, err = c.AppsV1().DaemonSets(ns).Create(ctx, o, metav1.CreateOptions{})
	default:
		t.Fatalf("create: %T", o)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// loadStored writes the nodes and the workloads as the API server stores
// them (defaulted; the ReplicaSets its Deployments made left out) to a
// manifest and loads it as simulate does.
func loadStored(t *testing.T, c kubernetes.Interface, ns string) *simcluster.Cluster {
	t.Helper()
	return loadStoredWith(t, c, ns, loading.Options{}, false)
}

// loadStoredWith is loadStored with the loader's options; fresh drops the
// Jobs' status (the simulator then sees Jobs that never started, as the
// Job controller saw them when it made their pods).
func loadStoredWith(t *testing.T, c kubernetes.Interface, ns string, opts loading.Options, fresh bool) *simcluster.Cluster {
	t.Helper()
	return loadManifest(t, storedItems(t, c, ns, fresh, false), opts)
}

// storedItems are the nodes and the workloads of ns as the API server
// stores them, as manifest items; with running, the ReplicaSets the
// Deployments made and the pods too (the cluster as it runs).
func storedItems(t *testing.T, c kubernetes.Interface, ns string, fresh, running bool) []interface{} {
	t.Helper()
	ctx := context.Background()
	var items []interface{}
	add := func(apiVersion, kind string, m *metav1.ObjectMeta, obj interface{}) {
		m.ManagedFields, m.ResourceVersion = nil, ""
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		var u map[string]interface{}
		if err := json.Unmarshal(b, &u); err != nil {
			t.Fatal(err)
		}
		u["apiVersion"], u["kind"] = apiVersion, kind
		items = append(items, u)
	}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range nodes.Items {
		add("v1", "Node", &nodes.Items[i].ObjectMeta, &nodes.Items[i])
	}
	ds, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range ds.Items {
		add("apps/v1", "Deployment", &ds.Items[i].ObjectMeta, &ds.Items[i])
	}
	rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range rss.Items {
		if running || metav1.GetControllerOf(&rss.Items[i]) == nil {
			add("apps/v1", "ReplicaSet", &rss.Items[i].ObjectMeta, &rss.Items[i])
		}
	}
	rcs, err := c.CoreV1().ReplicationControllers(ns).List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range rcs.Items {
		add("v1", "ReplicationController", &rcs.Items[i].ObjectMeta, &rcs.Items[i])
	}
	sts, err := c.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range sts.Items {
		add("apps/v1", "StatefulSet", &sts.Items[i].ObjectMeta, &sts.Items[i])
	}
	jobs, err := c.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range jobs.Items {
		if fresh {
			jobs.Items[i].Status = batchv1.JobStatus{}
		}
		add("batch/v1", "Job", &jobs.Items[i].ObjectMeta, &jobs.Items[i])
	}
	dss, err := c.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{})
	must(t, err)
	for i := range dss.Items {
		add("apps/v1", "DaemonSet", &dss.Items[i].ObjectMeta, &dss.Items[i])
	}
	if running {
		pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		must(t, err)
		for i := range pods.Items {
			add("v1", "Pod", &pods.Items[i].ObjectMeta, &pods.Items[i])
		}
	}
	return items
}

// loadManifest loads manifest items as simulate does.
func loadManifest(t *testing.T, items []interface{}, opts loading.Options) *simcluster.Cluster {
	t.Helper()
	b, err := yaml.Marshal(map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": items})
	must(t, err)
	cluster, err := loading.LoadWith([]string{"-"}, bytes.NewReader(b), opts)
	if err != nil {
		t.Fatalf("loading the stored workloads: %v", err)
	}
	return cluster
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// workloadOf names the workload a real pod belongs to: its controller, or
// the Deployment controlling its ReplicaSet.
func workloadOf(t *testing.T, c kubernetes.Interface, p *v1.Pod) string {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return "none"
	}
	if ref.Kind == "ReplicaSet" {
		rs, err := c.AppsV1().ReplicaSets(p.Namespace).Get(context.Background(), ref.Name, metav1.GetOptions{})
		must(t, err)
		if d := metav1.GetControllerOf(rs); d != nil {
			return d.Kind + " " + d.Name
		}
	}
	return ref.Kind + " " + ref.Name
}

// shapeOf is what the comparison looks at in a pod, as JSON.
func shapeOf(p *v1.Pod) string {
	name := p.Name
	if p.GenerateName != "" && len(p.Name) == len(p.GenerateName)+5 && strings.HasPrefix(p.Name, p.GenerateName) {
		name = p.GenerateName + "*****" // the API server's random suffix
	}
	labels := map[string]string{}
	for k, v := range p.Labels {
		switch k {
		case appsv1.ControllerRevisionHashLabelKey:
			// StatefulSets and DaemonSets hash their ControllerRevision,
			// which the simulator does not build.
			v = "<revision>"
		case batchv1.ControllerUidLabel, "controller-uid":
			v = "<job uid>"
		}
		labels[k] = v
	}
	var owners []string
	for _, o := range p.OwnerReferences {
		owners = append(owners, fmt.Sprintf("%s %s %s controller=%v block=%v", o.APIVersion, o.Kind, o.Name,
			o.Controller != nil && *o.Controller, o.BlockOwnerDeletion != nil && *o.BlockOwnerDeletion))
	}
	var tolerations []v1.Toleration
	for _, tol := range p.Spec.Tolerations {
		// Added by the DefaultTolerationSeconds admission plugin.
		if (tol.Key == v1.TaintNodeNotReady || tol.Key == v1.TaintNodeUnreachable) && tol.TolerationSeconds != nil && *tol.TolerationSeconds == 300 {
			continue
		}
		tolerations = append(tolerations, tol)
	}
	var claims []string
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims = append(claims, v.Name+"="+v.PersistentVolumeClaim.ClaimName)
		}
	}
	b, _ := json.Marshal(map[string]interface{}{
		"name": name, "generateName": p.GenerateName, "labels": labels, "annotations": p.Annotations, "owners": owners, "finalizers": p.Finalizers,
		"hostname": p.Spec.Hostname, "subdomain": p.Spec.Subdomain, "nodeSelector": p.Spec.NodeSelector,
		"affinity": p.Spec.Affinity, "tolerations": tolerations, "claims": claims,
		"containers": len(p.Spec.Containers), "requests": p.Spec.Containers[0].Resources.Requests.Cpu().String(),
	})
	return string(b)
}

func claimShape(pvc *v1.PersistentVolumeClaim) string {
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	b, _ := json.Marshal(map[string]interface{}{"name": pvc.Name, "labels": pvc.Labels, "class": class,
		"size": pvc.Spec.Resources.Requests.Storage().String(), "accessModes": pvc.Spec.AccessModes})
	return string(b)
}
