package cluster_test

import (
	"fmt"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	st "github.com/kubesched/kubesched/internal/testing"
)

// generated matches a name the API server generates: the prefix and five
// characters of its alphabet.
func generated(prefix string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(prefix) + "[bcdfghjklmnpqrstvwxz2456789]{5}$")
}

func podsOf(c *cluster.Cluster, workload string) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range c.Pods {
		if i, ok := c.WorkloadOf[cluster.PodKey(p)]; ok && c.Workloads[i].String() == workload {
			out = append(out, p)
		}
	}
	return out
}

func controllerOf(p metav1.Object) string {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil {
		return ""
	}
	return fmt.Sprintf("%s %s %s block=%v", ref.APIVersion, ref.Kind, ref.Name, ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion)
}

func TestWorkloadsCreateThePodsTheirControllersWould(t *testing.T) {
	web := st.MakePod().Label("app", "web").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
	node := func(name string) *v1.Node {
		return st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "16Gi"}).Obj()
	}
	two := int32(2)
	five := int32(5)
	tests := []struct {
		name    string
		objects []runtime.Object
		check   func(t *testing.T, c *cluster.Cluster)
	}{
		{
			name:    "a Deployment makes a ReplicaSet named by its template's hash, and the ReplicaSet makes the replicas",
			objects: []runtime.Object{node("n1"), st.MakeDeployment("web", 3, web)},
			check: func(t *testing.T, c *cluster.Cluster) {
				if len(c.ReplicaSets) != 1 {
					t.Fatalf("%d ReplicaSets, want 1", len(c.ReplicaSets))
				}
				rs := c.ReplicaSets[0]
				hash := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
				if hash == "" || rs.Name != "web-"+hash || rs.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
					t.Errorf("ReplicaSet %s, labels %v, selector %v: want web-<pod-template-hash> selecting the hash", rs.Name, rs.Labels, rs.Spec.Selector)
				}
				if got := controllerOf(rs); got != "apps/v1 Deployment web block=true" {
					t.Errorf("ReplicaSet controller %q", got)
				}
				pods := podsOf(c, "Deployment default/web")
				if len(pods) != 3 {
					t.Fatalf("%d pods, want 3", len(pods))
				}
				for _, p := range pods {
					if !generated(rs.Name+"-").MatchString(p.Name) || p.GenerateName != rs.Name+"-" {
						t.Errorf("pod name %q (generateName %q), want %s-xxxxx", p.Name, p.GenerateName, rs.Name)
					}
					if p.Labels["app"] != "web" || p.Labels[appsv1.DefaultDeploymentUniqueLabelKey] != hash {
						t.Errorf("pod labels %v", p.Labels)
					}
					if got := controllerOf(p); got != "apps/v1 ReplicaSet "+rs.Name+" block=true" {
						t.Errorf("pod controller %q", got)
					}
				}
			},
		},
		{
			name: "pods a ReplicaSet already controls count toward its replicas",
			objects: []runtime.Object{node("n1"), st.MakeReplicaSet("api", 3, web),
				st.MakePod().Image("x").Name("api-running").Label("app", "web").Node("n1").Owned("apps/v1", "ReplicaSet", "api").Obj(),
				st.MakePod().Image("x").Name("api-done").Label("app", "web").Node("n1").Phase(v1.PodSucceeded).Owned("apps/v1", "ReplicaSet", "api").Obj()},
			check: func(t *testing.T, c *cluster.Cluster) {
				var created int
				for _, p := range podsOf(c, "ReplicaSet default/api") {
					if p.Spec.NodeName == "" {
						created++
					}
				}
				if created != 2 {
					t.Errorf("%d pods created, want 2 (3 replicas, 1 running, the succeeded one not counted)", created)
				}
			},
		},
		{
			name:    "a ReplicationController's selector defaults to its template's labels",
			objects: []runtime.Object{node("n1"), st.MakeReplicationController("legacy", 2, web)},
			check: func(t *testing.T, c *cluster.Cluster) {
				if len(c.RCs) != 1 || c.RCs[0].Spec.Selector["app"] != "web" {
					t.Errorf("selector %v, want app=web", c.RCs[0].Spec.Selector)
				}
				pods := podsOf(c, "ReplicationController default/legacy")
				if len(pods) != 2 || controllerOf(pods[0]) != "v1 ReplicationController legacy block=true" || !generated("legacy-").MatchString(pods[0].Name) {
					t.Errorf("pods %v", pods)
				}
			},
		},
		{
			name: "an OrderedReady StatefulSet creates its first pod now and the others after it, each with its identity and claims",
			objects: []runtime.Object{node("n1"), st.MakeStatefulSet("db", 3, st.MakePod().Image("x").Label("app", "db")).
				ClaimTemplate("data", "1Gi", "fast").Obj()},
			check: func(t *testing.T, c *cluster.Cluster) {
				pods := podsOf(c, "StatefulSet default/db")
				if len(pods) != 1 || pods[0].Name != "db-0" {
					t.Fatalf("created %d pods (%v), want db-0 only", len(pods), pods)
				}
				if len(c.Ordered) != 1 || c.Ordered[0].After != "default/db-0" || len(c.Ordered[0].Waiting) != 2 || c.Ordered[0].Waiting[1].Name != "db-2" {
					t.Fatalf("ordered %+v, want db-1 and db-2 waiting after db-0", c.Ordered)
				}
				p := c.Ordered[0].Waiting[0]
				if p.Spec.Hostname != "db-1" || p.Spec.Subdomain != "db" || p.Labels[appsv1.StatefulSetPodNameLabel] != "db-1" ||
					p.Labels[appsv1.PodIndexLabel] != "1" || !strings.HasPrefix(p.Labels[appsv1.ControllerRevisionHashLabelKey], "db-") {
					t.Errorf("db-1 identity: hostname %q subdomain %q labels %v", p.Spec.Hostname, p.Spec.Subdomain, p.Labels)
				}
				if len(p.Spec.Volumes) != 1 || p.Spec.Volumes[0].Name != "data" || p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "data-db-1" {
					t.Errorf("db-1 volumes %+v, want data -> claim data-db-1", p.Spec.Volumes)
				}
				var claims []string
				for _, o := range c.Others {
					if pvc, ok := o.(*v1.PersistentVolumeClaim); ok {
						claims = append(claims, pvc.Name+" app="+pvc.Labels["app"]+" class="+*pvc.Spec.StorageClassName)
					}
				}
				if want := []string{"data-db-0 app=db class=fast", "data-db-1 app=db class=fast", "data-db-2 app=db class=fast"}; !slices.Equal(claims, want) {
					t.Errorf("claims %v, want %v", claims, want)
				}
			},
		},
		{
			name:    "a Parallel StatefulSet creates all its pods at once, from its start ordinal",
			objects: []runtime.Object{node("n1"), st.MakeStatefulSet("cache", 2, st.MakePod().Image("x").Label("app", "cache")).Parallel().StartOrdinal(5).Obj()},
			check: func(t *testing.T, c *cluster.Cluster) {
				var names []string
				for _, p := range podsOf(c, "StatefulSet default/cache") {
					names = append(names, p.Name)
				}
				if !slices.Equal(names, []string{"cache-5", "cache-6"}) || len(c.Ordered) != 0 {
					t.Errorf("pods %v, ordered %v; want cache-5 and cache-6 now", names, c.Ordered)
				}
			},
		},
		{
			name:    "an Indexed Job runs parallelism pods with the lowest indexes, named and labelled by index",
			objects: []runtime.Object{node("n1"), st.MakeJob("train", 2, &five, st.MakePod().Image("x")).Indexed().Obj()},
			check: func(t *testing.T, c *cluster.Cluster) {
				pods := podsOf(c, "Job default/train")
				if len(pods) != 2 {
					t.Fatalf("%d pods, want 2", len(pods))
				}
				for i, p := range pods {
					ix := fmt.Sprint(i)
					if !generated("train-"+ix+"-").MatchString(p.Name) || p.Spec.Hostname != "train-"+ix ||
						p.Annotations["batch.kubernetes.io/job-completion-index"] != ix || p.Labels["batch.kubernetes.io/job-completion-index"] != ix {
						t.Errorf("pod %d: name %q hostname %q annotations %v labels %v", i, p.Name, p.Spec.Hostname, p.Annotations, p.Labels)
					}
					if p.Labels["batch.kubernetes.io/job-name"] != "train" || p.Labels["job-name"] != "train" || p.Labels["batch.kubernetes.io/controller-uid"] == "" {
						t.Errorf("pod %d labels %v, want the Job's generated selector labels", i, p.Labels)
					}
					if !slices.Contains(p.Finalizers, "batch.kubernetes.io/job-tracking") || controllerOf(p) != "batch/v1 Job train block=true" {
						t.Errorf("pod %d finalizers %v controller %q", i, p.Finalizers, controllerOf(p))
					}
				}
			},
		},
		{
			name: "a Job runs no more pods than completions left, and a suspended Job none",
			objects: []runtime.Object{node("n1"), st.MakeJob("few", 5, &two, st.MakePod().Image("x")).Obj(),
				st.MakeJob("paused", 3, nil, st.MakePod().Image("x")).Suspended().Obj()},
			check: func(t *testing.T, c *cluster.Cluster) {
				if n := len(podsOf(c, "Job default/few")); n != 2 {
					t.Errorf("few: %d pods, want 2", n)
				}
				if n := len(podsOf(c, "Job default/paused")); n != 0 {
					t.Errorf("paused: %d pods, want 0", n)
				}
			},
		},
		{
			name: "a DaemonSet pins one pod to each node it should run on, with the daemon tolerations, before other workloads' pods",
			objects: []runtime.Object{node("plain"), st.MakeNode().Name("cordoned").Unschedulable().Obj(),
				st.MakeNode().Name("tainted").Taint("dedicated", "db", v1.TaintEffectNoSchedule).Obj(),
				st.MakeNode().Name("pressured").Taint(v1.TaintNodeMemoryPressure, "", v1.TaintEffectNoSchedule).Obj(),
				st.MakeNode().Name("other-pool").Label("pool", "gpu").Obj(),
				st.MakeDeployment("web", 1, web),
				st.MakeDaemonSet("agent", st.MakePod().Image("x").Label("app", "agent").RequiredNodeAffinityIn("pool", "gpu").Toleration("x", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule))},
			check: func(t *testing.T, c *cluster.Cluster) {
				if len(c.Workloads) == 0 || c.Workloads[0].Kind != "DaemonSet" || !strings.HasPrefix(c.Pods[0].Name, "agent-") {
					t.Errorf("workloads %v, first pod %s: want the DaemonSet's first", c.Workloads, c.Pods[0].Name)
				}
				var nodes []string
				for _, p := range podsOf(c, "DaemonSet default/agent") {
					nodes = append(nodes, cluster.DaemonPodNode(p))
					if !generated("agent-").MatchString(p.Name) {
						t.Errorf("name %q", p.Name)
					}
					var keys []string
					for _, tol := range p.Spec.Tolerations {
						keys = append(keys, tol.Key+":"+string(tol.Effect))
					}
					want := []string{"x:NoSchedule", "node.kubernetes.io/not-ready:NoExecute", "node.kubernetes.io/unreachable:NoExecute",
						"node.kubernetes.io/disk-pressure:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule",
						"node.kubernetes.io/pid-pressure:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"}
					if !slices.Equal(keys, want) {
						t.Errorf("tolerations %v, want %v", keys, want)
					}
					if terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms; len(terms) != 1 || len(terms[0].MatchExpressions) != 0 {
						t.Errorf("affinity terms %+v, want only the metadata.name field term", terms)
					}
				}
				// RequiredNodeAffinityIn("pool", "gpu") matches pool=gpu or pool=""?
				// No: "" is a value; nodes without the label do not match In.
				if want := []string{"other-pool"}; !slices.Equal(nodes, want) {
					t.Errorf("daemon pods on %v, want %v", nodes, want)
				}
			},
		},
		{
			name:    "a DaemonSet without selectors runs on cordoned and pressured nodes but not on a node whose taint it does not tolerate",
			objects: []runtime.Object{node("plain"), st.MakeNode().Name("cordoned").Unschedulable().Obj(), st.MakeNode().Name("tainted").Taint("dedicated", "db", v1.TaintEffectNoSchedule).Obj(), st.MakeNode().Name("pressured").Taint(v1.TaintNodeMemoryPressure, "", v1.TaintEffectNoSchedule).Obj(), st.MakeDaemonSet("agent", st.MakePod().Image("x").Label("app", "agent"))},
			check: func(t *testing.T, c *cluster.Cluster) {
				var nodes []string
				for _, p := range podsOf(c, "DaemonSet default/agent") {
					nodes = append(nodes, cluster.DaemonPodNode(p))
				}
				if want := []string{"plain", "cordoned", "pressured"}; !slices.Equal(nodes, want) {
					t.Errorf("daemon pods on %v, want %v", nodes, want)
				}
			},
		},
		{
			name: "a created pod's affinity terms get its matchLabelKeys and mismatchLabelKeys merged, as kube-apiserver admits it; a Pod in the input keeps its selector",
			objects: func() []runtime.Object {
				term := st.AffinityTerm(v1.LabelHostname, "web")
				term.MatchLabelKeys = []string{appsv1.DefaultDeploymentUniqueLabelKey, "absent"}
				term.MismatchLabelKeys = []string{"app"}
				return []runtime.Object{node("n1"),
					st.MakeDeployment("web", 1, st.MakePod().Image("x").Label("app", "web").PreferredPodAntiAffinity(10, term)),
					st.MakePod().Image("x").Name("bare").Label("app", "web").Label(appsv1.DefaultDeploymentUniqueLabelKey, "h").PodAntiAffinity(term).Obj()}
			}(),
			check: func(t *testing.T, c *cluster.Cluster) {
				pods := podsOf(c, "Deployment default/web")
				if len(pods) != 1 {
					t.Fatalf("%d pods, want 1", len(pods))
				}
				p := pods[0]
				hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
				want := []metav1.LabelSelectorRequirement{
					{Key: appsv1.DefaultDeploymentUniqueLabelKey, Operator: metav1.LabelSelectorOpIn, Values: []string{hash}},
					{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"web"}},
				}
				got := p.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchExpressions
				if !slices.EqualFunc(got, want, func(a, b metav1.LabelSelectorRequirement) bool {
					return a.Key == b.Key && a.Operator == b.Operator && slices.Equal(a.Values, b.Values)
				}) {
					t.Errorf("created pod's selector expressions %v, want %v", got, want)
				}
				for _, b := range c.Pods {
					if b.Name == "bare" {
						if got := b.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions; len(got) != 0 {
							t.Errorf("a Pod of the input got expressions %v, want its selector as given", got)
						}
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, simtest.LoadObjects(t, tt.objects))
		})
	}
}

func TestWorkloadPodsAreScheduledAndCountedUnderTheirWorkload(t *testing.T) {
	small := st.MakeNode().Name("n1").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "4Gi"}).Obj()
	c := simtest.LoadObjects(t, []runtime.Object{small,
		st.MakeDeployment("web", 3, st.MakePod().Label("app", "web").Req(map[v1.ResourceName]string{v1.ResourceCPU: "500m"})),
		st.MakeStatefulSet("db", 3, st.MakePod().Label("app", "db").Req(map[v1.ResourceName]string{v1.ResourceCPU: "200m"})).Obj(),
		st.MakeStatefulSet("big", 2, st.MakePod().Label("app", "big").Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"})).Obj(),
	})
	_, r := simtest.Simulate(t, c, 1)
	got := map[string]string{}
	for _, w := range r.Workloads {
		var why []string
		for _, re := range w.Reasons {
			why = append(why, fmt.Sprintf("%d %s", re.Pods, re.Message))
		}
		got[w.Kind+" "+w.Name] = fmt.Sprintf("%d/%d/%d %s", w.Pods, w.Scheduled, w.Pending, strings.Join(why, "; "))
	}
	want := map[string]string{
		// 3x500m + 3x200m = 2100m > 2: the last db pod does not fit.
		"Deployment web": "3/3/0 ",
		"StatefulSet db": "3/2/1 1 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
		// 4 cpus on a 2-cpu node: unresolvable (fit.go), so preemption
		// is not tried.
		"StatefulSet big": "2/0/2 1 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.; 1 not created: StatefulSet default/big creates its pods in order and waits for default/big-0 to run",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	if r.Summary.NotCreated != 1 {
		t.Errorf("summary %+v, want 1 not created", r.Summary)
	}
}

func TestLoadReadsStdinOnce(t *testing.T) {
	manifest := "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"
	tests := []struct {
		name    string
		paths   []string
		wantErr string
	}{
		{name: "- reads the manifests from stdin", paths: []string{"-"}},
		{name: "- twice is an error", paths: []string{"-", "-"}, wantErr: "the standard input can be read only once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loading.LoadFrom(tt.paths, strings.NewReader(manifest))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Nodes) != 1 || c.Skipped["ConfigMap"] != 1 {
				t.Errorf("nodes %d, skipped %v: want the node read and the ConfigMap listed as skipped", len(c.Nodes), c.Skipped)
			}
		})
	}
}
