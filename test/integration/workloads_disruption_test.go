package integration

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	ptrs "k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/simulator"
	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
	"github.com/kubesched/kubesched/test/integration/framework"
)

// TestWorkloadsAfterADrainAndANodeDeletionMatchKubeControllerManager runs
// workloads with upstream's kube-controller-manager (v1.37.2) on a real
// API server, the test playing the scheduler and the kubelets (it binds
// each pod and reports it Running and Ready, and confirms the deletion of
// a pod being deleted), until every pod runs. The simulator is given that
// cluster as it runs. Then, on both sides, the nodes left are cordoned, a
// node is drained (each pod but the DaemonSet's evicted through the
// Eviction API) and another deleted (the test plays the pod garbage
// collector: its orphan quarantine is 40 s): the controllers replace what
// went, with nowhere to run it; then a node is added and the replacements
// run there, an OrderedReady StatefulSet's one at a time. The pods each
// side runs in the end must have the same shapes (shapeOf), per workload:
// a StatefulSet's names, a ReplicaSet's and a Job's counts and owners, a
// DaemonSet's pod per node; each side must have replaced as many, and the
// simulator's report must count as many pods per workload.
func TestWorkloadsAfterADrainAndANodeDeletionMatchKubeControllerManager(t *testing.T) {
	began := time.Now()
	cp := framework.StartControlPlane(t)
	framework.StartControllerManager(t, cp, "deployment,replicaset,statefulset,job,daemonset")
	c := cp.Client
	ctx := context.Background()
	const ns = "disrupt"
	framework.CreateNamespace(t, c, ns)
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		framework.CreateNode(t, c, n, "8", "16Gi", 110, nil)
	}
	pod := func(app string) *st.PodWrapper {
		return st.MakePod().Namespace(ns).Label("app", app).Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
	}
	for _, o := range []runtime.Object{
		st.MakeDeployment("web", 3, pod("web")),
		st.MakeStatefulSet("db", 3, pod("db")).Obj(),
		st.MakeStatefulSet("cache", 2, pod("cache")).Parallel().Obj(),
		st.MakeJob("batch", 2, nil, pod("batch")).Obj(),
		st.MakeDaemonSet("agent", pod("agent")),
	} {
		createWorkload(t, c, ns, o)
	}
	k := &fakeKubelets{t: t, c: c, ns: ns}
	k.settle(true, map[string]int{"Deployment web": 3, "StatefulSet db": 3, "StatefulSet cache": 2, "Job batch": 2, "DaemonSet agent": 4})
	// A StatefulSet's ordinal N runs on node N+1 (fakeKubelets.place):
	// the drain takes db-0 and cache-0, the deletion db-1 and cache-1; a
	// Job's pods are on n1 and n4.
	cluster := loadManifest(t, storedItems(t, c, ns, false, true), loading.Options{})
	before := map[string]bool{}
	for _, p := range cluster.Pods {
		before[string(p.UID)] = true
	}

	k.cordon("n3")
	k.cordon("n4")
	k.drain("n1")
	k.deleteNode("n2")
	// Nowhere to run: db-0 is created again and waits, db-1 waits for it.
	k.settle(false, map[string]int{"Deployment web": 3, "StatefulSet db": 2, "StatefulSet cache": 2, "Job batch": 2, "DaemonSet agent": 3})
	framework.CreateNode(t, c, "n5", "8", "16Gi", 110, nil)
	k.settle(true, map[string]int{"Deployment web": 3, "StatefulSet db": 3, "StatefulSet cache": 2, "Job batch": 2, "DaemonSet agent": 4})
	real, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	must(t, err)
	theirs, theirNew := map[string][]string{}, map[string]int{}
	for i := range real.Items {
		p := &real.Items[i]
		wl := workloadOf(t, c, p)
		theirs[wl] = append(theirs[wl], shapeOf(p))
		if !before[string(p.UID)] {
			theirNew[wl]++
		}
	}

	n5 := st.MakeNode().Name("n5").Label(v1.LabelHostname, "n5").
		Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "16Gi", v1.ResourcePods: "110"}).Obj()
	cluster.Scenario = &simcluster.Scenario{Name: "disruption", Source: "test", Steps: []simcluster.Step{
		{At: time.Minute, Name: "lose n1 and n2", Cordon: []string{"n3", "n4"}, Drain: []string{"n1"}, DeleteNodes: []string{"n2"}},
		{At: 2 * time.Minute, Name: "add n5", Create: []runtime.Object{n5}}}}
	w, err := simulator.NewWorld(ctx, cluster, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	must(t, err)
	must(t, timeline.Run(ctx, w))
	ours, ourNew := map[string][]string{}, map[string]int{}
	for _, p := range w.Store.Pods() {
		if p.Namespace != ns {
			continue
		}
		if p.Spec.NodeName == "" {
			t.Errorf("simulated pod %s left pending", p.Name)
		}
		wl := simWorkloadOf(cluster, p)
		ours[wl] = append(ours[wl], shapeOf(p))
		if !before[string(p.UID)] {
			ourNew[wl]++
		}
	}
	for _, m := range []map[string][]string{ours, theirs} {
		for _, v := range m {
			sort.Strings(v)
		}
	}
	for _, wl := range unionKeys(theirs, ours) {
		if a, b := strings.Join(theirs[wl], "\n"), strings.Join(ours[wl], "\n"); a != b {
			t.Errorf("%s after the disruption: kube-controller-manager runs\n%s\nkubesched simulate runs\n%s", wl, a, b)
		}
	}
	if fmt.Sprint(theirNew) != fmt.Sprint(ourNew) {
		t.Errorf("pods created again, per workload: kube-controller-manager %v, kubesched simulate %v", theirNew, ourNew)
	}
	for _, r := range w.Report().Workloads {
		if wl := r.Kind + " " + r.Name; r.Pods != len(theirs[wl]) || r.Scheduled != r.Pods {
			t.Errorf("report: %s has %d pods, %d scheduled; kube-controller-manager runs %d", wl, r.Pods, r.Scheduled, len(theirs[wl]))
		}
	}
	t.Logf("pods created again: %v; took %s", theirNew, time.Since(began).Round(time.Second))
}

// simWorkloadOf is workloadOf for a simulated pod: its controller, or the
// Deployment controlling its ReplicaSet.
func simWorkloadOf(c *simcluster.Cluster, p *v1.Pod) string {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return "none"
	}
	if ref.Kind == "ReplicaSet" {
		for _, rs := range c.ReplicaSets {
			if rs.Namespace == p.Namespace && rs.Name == ref.Name {
				if d := metav1.GetControllerOf(rs); d != nil {
					return d.Kind + " " + d.Name
				}
			}
		}
	}
	return ref.Kind + " " + ref.Name
}

func unionKeys(a, b map[string][]string) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// fakeKubelets play the scheduler and the kubelets of a cluster without
// either, one pass at a time: a pod pending is bound (place), a pod bound
// is reported Running and Ready, and a pod being deleted is deleted at
// once (its containers stopped).
type fakeKubelets struct {
	t  *testing.T
	c  kubernetes.Interface
	ns string
	// jobPods counts the Jobs' pods bound.
	jobPods int
}

// pass does one round over the pods and returns them as they were.
func (k *fakeKubelets) pass() ([]v1.Pod, error) {
	ctx := context.Background()
	nodes, err := k.c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	exists := map[string]bool{}
	var schedulable []string
	for _, n := range nodes.Items {
		exists[n.Name] = true
		if !n.Spec.Unschedulable {
			schedulable = append(schedulable, n.Name)
		}
	}
	slices.Sort(schedulable)
	pods, err := k.c.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	load := map[string]int{}
	for _, p := range pods.Items {
		load[p.Spec.NodeName]++
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		switch {
		case p.DeletionTimestamp != nil:
			err = k.c.CoreV1().Pods(k.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptrs.To(int64(0))})
		case p.Spec.NodeName == "":
			node := k.place(p, schedulable, load)
			if node == "" || !exists[node] {
				continue
			}
			load[node]++
			err = k.c.CoreV1().Pods(k.ns).Bind(ctx, &v1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: k.ns},
				Target: v1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
		case exists[p.Spec.NodeName] && !framework.RunningAndReady(p):
			now := metav1.Now()
			p.Status.Phase, p.Status.StartTime = v1.PodRunning, &now
			p.Status.Conditions = nil
			for _, c := range []v1.PodConditionType{v1.PodScheduled, v1.PodInitialized, v1.ContainersReady, v1.PodReady} {
				p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: c, Status: v1.ConditionTrue, LastTransitionTime: now})
			}
			_, err = k.c.CoreV1().Pods(k.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
		if err != nil {
			// A pod changed meanwhile: the next pass sees it again.
			k.t.Logf("fake kubelets: pod %s: %v", p.Name, err)
		}
	}
	return pods.Items, nil
}

// place is the node a pending pod is bound to ("" for none): a
// DaemonSet's to its node, a StatefulSet's of ordinal N to the (N mod
// n)-th schedulable node, a Job's to the first and the last in turn, any
// other to the schedulable node with the fewest pods.
func (k *fakeKubelets) place(p *v1.Pod, schedulable []string, load map[string]int) string {
	if node := simcluster.DaemonPodNode(p); node != "" {
		return node
	}
	if len(schedulable) == 0 {
		return ""
	}
	switch ref := metav1.GetControllerOf(p); {
	case ref != nil && ref.Kind == "StatefulSet":
		var ord int
		if _, err := fmt.Sscanf(strings.TrimPrefix(p.Name, ref.Name+"-"), "%d", &ord); err == nil {
			return schedulable[ord%len(schedulable)]
		}
	case ref != nil && ref.Kind == "Job":
		// The first and the last node, in turn: a disruption of the
		// first fails one pod, and the Job controller's backoff before it
		// replaces it is 10 s (20 s for two).
		k.jobPods++
		if k.jobPods%2 == 0 {
			return schedulable[len(schedulable)-1]
		}
		return schedulable[0]
	}
	best := schedulable[0]
	for _, n := range schedulable[1:] {
		if load[n] < load[best] {
			best = n
		}
	}
	return best
}

// settle runs passes until the pods of each workload (workloadOf) are
// want's counts, none being deleted and, with running, every one bound,
// Running and Ready.
func (k *fakeKubelets) settle(running bool, want map[string]int) {
	k.t.Helper()
	var last map[string]int
	framework.Eventually(k.t, 30*time.Second, fmt.Sprintf("the pods %v (running: %v)", want, running), func() (bool, error) {
		pods, err := k.pass()
		if err != nil {
			return false, err
		}
		got := map[string]int{}
		done := true
		for i := range pods {
			p := &pods[i]
			got[workloadOf(k.t, k.c, p)]++
			if p.DeletionTimestamp != nil || (running && !framework.RunningAndReady(p)) {
				done = false
			}
		}
		last = got
		return done && fmt.Sprint(got) == fmt.Sprint(want), fmt.Errorf("pods %v", last)
	})
}

// cordon marks the node unschedulable.
func (k *fakeKubelets) cordon(node string) {
	k.t.Helper()
	ctx := context.Background()
	n, err := k.c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	must(k.t, err)
	n.Spec.Unschedulable = true
	_, err = k.c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	must(k.t, err)
}

// drain cordons the node and evicts its pods but the DaemonSets', as
// kubectl drain --ignore-daemonsets does.
func (k *fakeKubelets) drain(node string) {
	k.t.Helper()
	ctx := context.Background()
	k.cordon(node)
	for _, p := range k.podsOn(node) {
		if simcluster.IsDaemonSetPod(&p) {
			continue
		}
		must(k.t, k.c.PolicyV1().Evictions(k.ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: k.ns}}))
	}
}

// deleteNode deletes the node, then its pods, as the pod garbage
// collector does to the pods of a node that is gone.
func (k *fakeKubelets) deleteNode(node string) {
	k.t.Helper()
	ctx := context.Background()
	must(k.t, k.c.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}))
	for _, p := range k.podsOn(node) {
		must(k.t, k.c.CoreV1().Pods(k.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptrs.To(int64(0))}))
	}
}

func (k *fakeKubelets) podsOn(node string) []v1.Pod {
	k.t.Helper()
	pods, err := k.c.CoreV1().Pods(k.ns).List(context.Background(), metav1.ListOptions{})
	must(k.t, err)
	var out []v1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	return out
}
