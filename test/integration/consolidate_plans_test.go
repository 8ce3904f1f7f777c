package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/kubesched/kubesched/internal/simulator"
	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
	"github.com/kubesched/kubesched/test/integration/framework"
)

// consolidatePlan is a cluster consolidate is asked about, and the plan
// it must answer.
type consolidatePlan struct {
	name  string
	rules questions.Rules
	nodes []planNode
	// objects are created in order once the nodes exist: bare pods,
	// workloads, PodDisruptionBudgets (namespace default unless set).
	objects []runtime.Object
	// pending is how many pods find no room (before and after the plan).
	pending int
	// wantRemove is the plan, in order.
	wantRemove []string
	// wantKept, if set, is in the reason a kept node gives.
	wantKept string
	// refused: a budget refuses an eviction (429) on the way, asked
	// again until the replacement runs (a node with two of its pods).
	refused bool
}

// planNode is a node of 4 CPUs and 8Gi.
type planNode struct {
	name, price string
	labels      map[string]string
}

// pricedNodes are n1..nk, n1 the dearest (consolidate drains the dearest
// first): nk costs 1, n1 k.
func pricedNodes(k int, labels func(i int) map[string]string) []planNode {
	var out []planNode
	for i := 1; i <= k; i++ {
		n := planNode{name: fmt.Sprintf("n%d", i), price: fmt.Sprint(k + 1 - i)}
		if labels != nil {
			n.labels = labels(i)
		}
		out = append(out, n)
	}
	return out
}

// appPod is a pod labelled app requesting cpu.
func appPod(app, cpu string) *st.PodWrapper {
	return st.MakePod().Label("app", app).Req(map[v1.ResourceName]string{v1.ResourceCPU: cpu})
}

// budget is a PodDisruptionBudget of namespace default; minAvailable and
// maxUnavailable are "" (unset), a count or a percentage.
func budget(name string, sel *metav1.LabelSelector, minAvailable, maxUnavailable string) *policyv1.PodDisruptionBudget {
	b := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}}
	if minAvailable != "" {
		v := intstr.Parse(minAvailable)
		b.Spec.MinAvailable = &v
	}
	if maxUnavailable != "" {
		v := intstr.Parse(maxUnavailable)
		b.Spec.MaxUnavailable = &v
	}
	return b
}

func selectApp(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

// inKubeSystem moves the object to namespace kube-system.
func inKubeSystem[T metav1.Object](o T) T {
	o.SetNamespace(metav1.NamespaceSystem)
	return o
}

// consolidatePlans are the scenarios. kube-scheduler spreads like pods
// evenly over like nodes (its default scores prefer the least
// allocated), so each plan follows from the CPUs alone.
func consolidatePlans() []consolidatePlan {
	ca, karpenter := questions.RulesClusterAutoscaler, questions.RulesKarpenter
	tier := func(app string) *st.PodWrapper { return appPod(app, "1").Label("tier", "front") }
	pools := func(i int) map[string]string {
		if i <= 2 {
			return map[string]string{"pool": "a"}
		}
		return map[string]string{"pool": "b"}
	}
	// A kube-system pod on n1 (preferred there), a bare pod on n2, two
	// small replicas anywhere: 3 CPUs in all.
	systemAndBare := func() []runtime.Object {
		return []runtime.Object{
			appPod("solo", "1").Name("solo").Node("n2").Obj(),
			inKubeSystem(st.MakeDeployment("dns", 1, appPod("dns", "1").PreferredNodeAffinityIn(100, v1.LabelHostname, "n1"))),
			st.MakeDeployment("web", 2, appPod("web", "500m")),
		}
	}
	return []consolidatePlan{
		{name: "a Deployment spread thin under a maxUnavailable 1 budget is packed onto two of four nodes",
			rules: ca, nodes: pricedNodes(4, nil),
			objects: []runtime.Object{
				st.MakeDeployment("web", 8, appPod("web", "1")),
				budget("web", selectApp("web"), "", "1"),
			},
			// Two pods a node: 8 CPUs fill two nodes. Each drain's
			// second eviction waits for the first's replacement.
			wantRemove: []string{"n1", "n2"}, refused: true},
		{name: "a budget with an empty selector guards every pod of its namespace and lets them go one at a time",
			rules: ca, nodes: pricedNodes(3, nil),
			objects: []runtime.Object{
				st.MakeDeployment("front", 3, appPod("front", "1")),
				st.MakeDeployment("back", 3, appPod("back", "1")),
				// 6 pods selected, 5 desired: one disruption allowed.
				budget("all", &metav1.LabelSelector{}, "5", ""),
			},
			wantRemove: []string{"n1"}, refused: true},
		{name: "a replica left pending counts in a budget's expected pods, so minAvailable 80% allows no disruption and every node stays",
			rules: ca, nodes: pricedNodes(4, nil),
			objects: []runtime.Object{
				st.MakeDeployment("web", 4, tier("web")),
				// Too big for any node: 5 pods expected, 4 desired, 4 healthy.
				st.MakeDeployment("big", 1, tier("big").Req(map[v1.ResourceName]string{v1.ResourceCPU: "16"})),
				budget("front", &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}, "80%", ""),
			},
			pending: 1,
			// Without the budget, 4 CPUs would fit on one node.
			wantRemove: []string{}, wantKept: "PodDisruptionBudget default/front allows no disruption"},
		{name: "a StatefulSet's pods move to the node left and come back under their names",
			rules: ca, nodes: pricedNodes(3, nil),
			objects: []runtime.Object{
				st.MakeStatefulSet("db", 3, appPod("db", "1")).Obj(),
				budget("db", selectApp("db"), "", "1"),
			},
			// A pod a node; 3 CPUs fit on one.
			wantRemove: []string{"n1", "n2"}},
		{name: "a Job's pods under a maxUnavailable budget keep their nodes, having no scale, and another Job's pods without one move",
			rules: ca, nodes: pricedNodes(5, pools),
			objects: []runtime.Object{
				st.MakeJob("guarded", 2, nil, appPod("guarded", "1").NodeSelector("pool", "a")).Obj(),
				st.MakeJob("batch", 3, nil, appPod("batch", "1").NodeSelector("pool", "b")).Obj(),
				budget("guarded", selectApp("guarded"), "", "1"),
			},
			// Pool b's three pods fit on its cheapest node.
			wantRemove: []string{"n3", "n4"}, wantKept: "the disruption controller cannot count it"},
		{name: "DaemonSet pods go with their nodes while a Deployment's pods move",
			rules: ca, nodes: pricedNodes(4, nil),
			objects: []runtime.Object{
				st.MakeDaemonSet("agent", appPod("agent", "100m")),
				st.MakeDeployment("web", 4, appPod("web", "1")),
				budget("web", selectApp("web"), "", "1"),
			},
			// One node would hold 4.1 CPUs.
			wantRemove: []string{"n1", "n2"}},
		{name: "under cluster-autoscaler's rules a kube-system pod without a budget and a bare pod keep their nodes",
			rules: ca, nodes: pricedNodes(4, nil), objects: systemAndBare(),
			// n1 and n2 stay; the replicas on n3 and n4 fit beside them.
			wantRemove: []string{"n3", "n4"}, wantKept: "non-pdb-assigned kube-system pod present: dns-"},
		{name: "under Karpenter's rules a kube-system pod moves and a bare pod is evicted for good",
			rules: karpenter, nodes: pricedNodes(4, nil), objects: systemAndBare(),
			// Every pod may go: the 3 CPUs (the bare pod's counted, as
			// Karpenter asks room for it) fit on the cheapest node.
			wantRemove: []string{"n1", "n2", "n3"}},
	}
}

// TestConsolidatePlansHoldWhenDrainedOnARealCluster asks consolidate
// about a cluster that runs on a real API server, with upstream's
// kube-controller-manager (its workload and disruption controllers) and
// kube-scheduler v1.37.2, the test playing the kubelets; then it carries
// the plan out as a drain tool does: every node of the plan cordoned,
// then one node after another, its pods (but the DaemonSets') evicted
// through the Eviction API, a refusal (429) asked again every second for
// up to a minute, the replacements waited for, the node deleted. The
// plan holds when every eviction goes through, every workload runs as
// many pods as before on the nodes kept, the pods of the nodes kept are
// the same, and no PodDisruptionBudget ever has fewer healthy pods than
// it desires.
func TestConsolidatePlansHoldWhenDrainedOnARealCluster(t *testing.T) {
	for _, sc := range consolidatePlans() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			runConsolidatePlan(t, sc)
		})
	}
}

// runConsolidatePlan runs one scenario on its own control plane.
func runConsolidatePlan(t *testing.T, sc consolidatePlan) {
	began := time.Now()
	ctx := context.Background()
	cp := framework.StartControlPlane(t)
	framework.StartControllerManager(t, cp, "deployment,replicaset,statefulset,job,daemonset,disruption")
	framework.StartKubeScheduler(t, cp, cp.Kubeconfig)
	framework.StartKubelets(t, cp.Client, time.Second)
	c := cp.Client
	for _, n := range sc.nodes {
		framework.CreateNode(t, c, n.name, "4", "8Gi", 110, n.labels)
		node, err := c.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		must(t, err)
		node.Annotations = map[string]string{questions.HourlyCostAnnotation: n.price}
		_, err = c.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		must(t, err)
	}
	bare := map[string]int{}
	for _, o := range sc.objects {
		createPlanObject(t, c, o)
		if p, ok := o.(*v1.Pod); ok {
			bare[p.Namespace+"/none"]++
		}
	}
	want := desiredPods(t, c, bare)
	before := settlePlan(t, c, sc, want, nil, nil)
	settled := time.Since(began)

	cluster := loadManifest(t, planSnapshot(t, c), loading.Options{})
	newWorld := func(c *simcluster.Cluster) (*simulator.World, error) {
		return simulator.NewWorld(ctx, c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	}
	res, err := questions.Consolidate(ctx, func() (*simcluster.Cluster, error) { return cluster, nil }, newWorld, questions.ConsolidateOptions{Rules: sc.rules}, nil)
	must(t, err)
	var kept []string
	reasons := ""
	for _, k := range res.Keep {
		kept = append(kept, k.Node)
		reasons += fmt.Sprintf("\n  %s (%s): %s", k.Node, k.Pod, k.Reason)
	}
	t.Logf("pods per node: %s; consolidate (%s) removes %v; keeps:%s", before.layout(), sc.rules, res.Remove, reasons)
	if !slices.Equal(res.Remove, sc.wantRemove) {
		t.Errorf("consolidate removes %v, want %v", res.Remove, sc.wantRemove)
	}
	if sc.wantKept != "" && !strings.Contains(reasons, sc.wantKept) {
		t.Errorf("no kept node says %q", sc.wantKept)
	}
	all := append(slices.Clone(res.Remove), kept...)
	sort.Strings(all)
	var names []string
	for _, n := range sc.nodes {
		names = append(names, n.name)
	}
	if !slices.Equal(all, names) {
		t.Fatalf("the plan removes %v and keeps %v: not every node once (%v)", res.Remove, kept, names)
	}

	var violations []string
	refusals, done := executePlan(t, c, sc, res.Remove, want, &violations)
	if done {
		checkPlanHeld(t, c, kept, before)
	}
	if sc.refused && refusals == 0 {
		t.Errorf("no eviction was refused: the budget's check on the way went untried")
	}
	if len(violations) > 0 {
		t.Errorf("PodDisruptionBudgets below their desired healthy pods:\n%s", strings.Join(violations, "\n"))
	}
	t.Logf("plan carried out, %d evictions refused (429) on the way; settled in %s, took %s",
		refusals, settled.Round(time.Second), time.Since(began).Round(time.Second))
}

// createPlanObject creates a pod, a PodDisruptionBudget or a workload in
// its namespace.
func createPlanObject(t *testing.T, c kubernetes.Interface, o runtime.Object) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch o := o.(type) {
	case *v1.Pod:
		_, err = c.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *policyv1.PodDisruptionBudget:
		_, err = c.PolicyV1().PodDisruptionBudgets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	default:
		m, merr := apimeta.Accessor(o)
		must(t, merr)
		createWorkload(t, c, m.GetNamespace(), o)
	}
	must(t, err)
}

// desiredPods is, per workload (planState.workload), the pods its spec
// asks for: a Deployment's or StatefulSet's replicas, a Job's
// parallelism, a DaemonSet's pod per node, and the bare pods created.
func desiredPods(t *testing.T, c kubernetes.Interface, bare map[string]int) map[string]int {
	t.Helper()
	ctx := context.Background()
	want := map[string]int{}
	for k, n := range bare {
		want[k] = n
	}
	ds, err := c.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	must(t, err)
	for _, d := range ds.Items {
		want[d.Namespace+"/Deployment "+d.Name] = int(*d.Spec.Replicas)
	}
	ss, err := c.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{})
	must(t, err)
	for _, s := range ss.Items {
		want[s.Namespace+"/StatefulSet "+s.Name] = int(*s.Spec.Replicas)
	}
	jobs, err := c.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	must(t, err)
	for _, j := range jobs.Items {
		want[j.Namespace+"/Job "+j.Name] = int(*j.Spec.Parallelism)
	}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	must(t, err)
	dss, err := c.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{})
	must(t, err)
	for _, d := range dss.Items {
		want[d.Namespace+"/DaemonSet "+d.Name] = len(nodes.Items)
	}
	return want
}

// planState is the cluster's pods and budgets at one moment.
type planState struct {
	pods []v1.Pod
	// workload is each pod's ("namespace/Kind name", the Deployment for
	// a ReplicaSet's pod, "namespace/none" without a controller).
	workload map[types.UID]string
	pdbs     []policyv1.PodDisruptionBudget
}

// observePlan reads the cluster's pods, ReplicaSets and budgets, in every
// namespace.
func observePlan(c kubernetes.Interface) (*planState, error) {
	ctx := context.Background()
	pods, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	rss, err := c.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pdbs, err := c.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	deployment := map[string]string{}
	for i := range rss.Items {
		if ref := metav1.GetControllerOf(&rss.Items[i]); ref != nil && ref.Kind == "Deployment" {
			deployment[rss.Items[i].Namespace+"/"+rss.Items[i].Name] = ref.Name
		}
	}
	s := &planState{pods: pods.Items, workload: map[types.UID]string{}, pdbs: pdbs.Items}
	for _, p := range pods.Items {
		wl := "none"
		if ref := metav1.GetControllerOf(&p); ref != nil {
			wl = ref.Kind + " " + ref.Name
			if d, ok := deployment[p.Namespace+"/"+ref.Name]; ok && ref.Kind == "ReplicaSet" {
				wl = "Deployment " + d
			}
		}
		s.workload[p.UID] = p.Namespace + "/" + wl
	}
	return s, nil
}

// layout is each node's pods, by name.
func (s *planState) layout() string {
	on := map[string][]string{}
	for _, p := range s.pods {
		node := p.Spec.NodeName
		if node == "" {
			node = "pending"
		}
		on[node] = append(on[node], p.Name)
	}
	var out []string
	for _, node := range slices.Sorted(maps.Keys(on)) {
		slices.Sort(on[node])
		out = append(out, node+" "+strings.Join(on[node], ","))
	}
	return strings.Join(out, "; ")
}

// counts are the pods of each workload not being deleted.
func (s *planState) counts() map[string]int {
	out := map[string]int{}
	for _, p := range s.pods {
		if p.DeletionTimestamp == nil {
			out[s.workload[p.UID]]++
		}
	}
	return out
}

// settled: every workload has want's pods, none is being deleted, every
// pod bound runs and is Ready, the pending ones (sc.pending) were found
// no room, none of gone is left, and every budget is counted: its status
// is the disruption controller's for this spec and these pods, or says
// it cannot count it.
func (s *planState) settled(sc consolidatePlan, want map[string]int, gone map[types.UID]bool) error {
	if got := s.counts(); fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("pods per workload %v, want %v", got, want)
	}
	pending := 0
	for _, p := range s.pods {
		switch {
		case gone[p.UID]:
			return fmt.Errorf("pod %s/%s (%s) is still there", p.Namespace, p.Name, p.UID)
		case p.DeletionTimestamp != nil:
			return fmt.Errorf("pod %s/%s is being deleted", p.Namespace, p.Name)
		case p.Spec.NodeName == "":
			if c := podCondition(&p, v1.PodScheduled); c == nil || c.Reason != v1.PodReasonUnschedulable {
				return fmt.Errorf("pod %s/%s is not yet found unschedulable", p.Namespace, p.Name)
			}
			pending++
		case !framework.RunningAndReady(&p):
			return fmt.Errorf("pod %s/%s on %s is not Running and Ready", p.Namespace, p.Name, p.Spec.NodeName)
		}
	}
	if pending != sc.pending {
		return fmt.Errorf("%d pods pending, want %d", pending, sc.pending)
	}
	for i := range s.pdbs {
		b := &s.pdbs[i]
		if syncFailed(b) {
			continue
		}
		healthy, err := healthySelected(b, s.pods)
		if err != nil {
			return err
		}
		if b.Status.ObservedGeneration != b.Generation || b.Status.CurrentHealthy != healthy {
			return fmt.Errorf("PodDisruptionBudget %s/%s: observed generation %d of %d, %d healthy of %d", b.Namespace, b.Name,
				b.Status.ObservedGeneration, b.Generation, b.Status.CurrentHealthy, healthy)
		}
	}
	return nil
}

// podCondition is the pod's condition of type t, nil when it has none.
func podCondition(p *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// syncFailed: the disruption controller could not count the budget (a
// pod's controller has no scale) and allows no disruption (failSafe).
func syncFailed(b *policyv1.PodDisruptionBudget) bool {
	c := apimeta.FindStatusCondition(b.Status.Conditions, policyv1.DisruptionAllowedCondition)
	return c != nil && c.Reason == policyv1.SyncFailedReason
}

// healthySelected counts the budget's pods as the disruption controller
// counts healthy ones: Ready and not being deleted.
func healthySelected(b *policyv1.PodDisruptionBudget, pods []v1.Pod) (int32, error) {
	sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
	if err != nil {
		return 0, err
	}
	var n int32
	for i := range pods {
		p := &pods[i]
		if p.Namespace == b.Namespace && sel.Matches(labels.Set(p.Labels)) && p.DeletionTimestamp == nil && framework.RunningAndReady(p) {
			n++
		}
	}
	return n, nil
}

// budgetViolations: each budget the controller counted whose healthy
// pods (its own count, and the test's) are below its desired ones.
func (s *planState) budgetViolations(when string) []string {
	var out []string
	for i := range s.pdbs {
		b := &s.pdbs[i]
		if syncFailed(b) || b.Status.ObservedGeneration != b.Generation {
			continue
		}
		healthy, err := healthySelected(b, s.pods)
		if err != nil || healthy < b.Status.DesiredHealthy || b.Status.CurrentHealthy < b.Status.DesiredHealthy {
			out = append(out, fmt.Sprintf("%s: PodDisruptionBudget %s/%s has %d healthy pods (%d by its status), desires %d (%v)",
				when, b.Namespace, b.Name, healthy, b.Status.CurrentHealthy, b.Status.DesiredHealthy, err))
		}
	}
	return out
}

// settlePlan waits until the cluster is settled (planState.settled),
// sampling the budgets at each look into violations (unless nil: before
// the plan the pods start), and returns it.
func settlePlan(t *testing.T, c kubernetes.Interface, sc consolidatePlan, want map[string]int, gone map[types.UID]bool, violations *[]string) *planState {
	t.Helper()
	var last *planState
	framework.Eventually(t, 90*time.Second, fmt.Sprintf("pods per workload %v, running", want), func() (bool, error) {
		s, err := observePlan(c)
		if err != nil {
			return false, err
		}
		last = s
		if violations != nil {
			*violations = append(*violations, s.budgetViolations("while the replacements start")...)
		}
		err = s.settled(sc, want, gone)
		return err == nil, err
	})
	return last
}

// planSnapshot is the cluster as manifest items for the simulator: nodes,
// workloads, their ReplicaSets and pods, and budgets, of namespaces
// default and kube-system.
func planSnapshot(t *testing.T, c kubernetes.Interface) []interface{} {
	t.Helper()
	items := storedItems(t, c, metav1.NamespaceDefault, false, true)
	for _, it := range storedItems(t, c, metav1.NamespaceSystem, false, true) {
		if it.(map[string]interface{})["kind"] != "Node" {
			items = append(items, it)
		}
	}
	pdbs, err := c.PolicyV1().PodDisruptionBudgets("").List(context.Background(), metav1.ListOptions{})
	must(t, err)
	for i := range pdbs.Items {
		b := &pdbs.Items[i]
		b.ManagedFields, b.ResourceVersion = nil, ""
		raw, err := json.Marshal(b)
		must(t, err)
		var u map[string]interface{}
		must(t, json.Unmarshal(raw, &u))
		u["apiVersion"], u["kind"] = "policy/v1", "PodDisruptionBudget"
		items = append(items, u)
	}
	return items
}

// executePlan carries the plan out (see the test's comment) and returns
// the evictions refused on the way, and whether every drain was done (an
// eviction refused past a minute fails the test and stops the plan);
// want, the pods per workload, is updated as pods go for good (the bare
// pods evicted, the DaemonSets' pods of the nodes deleted).
func executePlan(t *testing.T, c kubernetes.Interface, sc consolidatePlan, remove []string, want map[string]int, violations *[]string) (int, bool) {
	t.Helper()
	ctx := context.Background()
	for _, n := range remove {
		framework.Cordon(t, c, n)
	}
	refusals := 0
	for _, node := range remove {
		s, err := observePlan(c)
		must(t, err)
		gone := map[types.UID]bool{}
		for _, p := range s.pods {
			if p.Spec.NodeName != node || simcluster.IsDaemonSetPod(&p) || p.Annotations[questions.MirrorPodAnnotation] != "" || p.DeletionTimestamp != nil {
				continue
			}
			if metav1.GetControllerOf(&p) == nil {
				if sc.rules != questions.RulesKarpenter && p.Annotations[questions.SafeToEvictAnnotation] != "true" {
					t.Errorf("the plan removes %s, where pod %s/%s has no controller: cluster-autoscaler keeps such a node", node, p.Namespace, p.Name)
				}
				lose(want, s.workload[p.UID])
				t.Logf("%s: pod %s/%s, without a controller, is evicted for good", node, p.Namespace, p.Name)
			}
			what := fmt.Sprintf("before evicting %s/%s from %s", p.Namespace, p.Name, node)
			n, err := framework.Evict(ctx, c, p.Namespace, p.Name, p.UID, time.Minute, func() {
				sample, err := observePlan(c)
				if err != nil {
					t.Logf("sampling the budgets: %v", err)
					return
				}
				*violations = append(*violations, sample.budgetViolations(what)...)
			})
			refusals += n
			t.Logf("%s: evicted %s/%s, refused %d times first", node, p.Namespace, p.Name, n)
			if err != nil {
				t.Errorf("draining %s: %v", node, err)
				return refusals, false
			}
			gone[p.UID] = true
		}
		// The evicted pods gone, their replacements run on the nodes kept.
		s = settlePlan(t, c, sc, want, gone, violations)
		for _, p := range s.pods {
			if p.Spec.NodeName != node {
				continue
			}
			if !simcluster.IsDaemonSetPod(&p) {
				t.Errorf("after the drain of %s, pod %s/%s is still on it", node, p.Namespace, p.Name)
			}
			lose(want, s.workload[p.UID])
		}
		framework.DeleteNode(t, c, node)
	}
	settlePlan(t, c, sc, want, nil, violations)
	return refusals, true
}

// lose takes a pod that goes for good off want's count of its workload.
func lose(want map[string]int, workload string) {
	if want[workload]--; want[workload] <= 0 {
		delete(want, workload)
	}
}

// checkPlanHeld: after the plan only the nodes kept are left, every pod
// bound is on one of them, the pods the nodes kept ran before the plan
// all still run there, and each StatefulSet runs the pods of the same
// names.
func checkPlanHeld(t *testing.T, c kubernetes.Interface, kept []string, before *planState) {
	t.Helper()
	ctx := context.Background()
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	must(t, err)
	var left []string
	for _, n := range nodes.Items {
		left = append(left, n.Name)
	}
	sort.Strings(left)
	if want := slices.Sorted(slices.Values(kept)); !slices.Equal(left, want) {
		t.Errorf("nodes left %v, want the kept %v", left, want)
	}
	after, err := observePlan(c)
	must(t, err)
	now := map[types.UID]*v1.Pod{}
	statefulAfter, statefulBefore := map[string][]string{}, map[string][]string{}
	for i := range after.pods {
		p := &after.pods[i]
		now[p.UID] = p
		if p.Spec.NodeName != "" && !slices.Contains(kept, p.Spec.NodeName) {
			t.Errorf("pod %s/%s is on %s, not a node kept", p.Namespace, p.Name, p.Spec.NodeName)
		}
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "StatefulSet" {
			statefulAfter[ref.Name] = append(statefulAfter[ref.Name], p.Name)
		}
	}
	for i := range before.pods {
		p := &before.pods[i]
		if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "StatefulSet" {
			statefulBefore[ref.Name] = append(statefulBefore[ref.Name], p.Name)
		}
		if !slices.Contains(kept, p.Spec.NodeName) {
			continue
		}
		if q := now[p.UID]; q == nil || q.DeletionTimestamp != nil || q.Spec.NodeName != p.Spec.NodeName {
			t.Errorf("pod %s/%s, on %s kept, was evicted or deleted", p.Namespace, p.Name, p.Spec.NodeName)
		}
	}
	for _, m := range []map[string][]string{statefulBefore, statefulAfter} {
		for _, v := range m {
			sort.Strings(v)
		}
	}
	if fmt.Sprint(statefulBefore) != fmt.Sprint(statefulAfter) {
		t.Errorf("StatefulSets' pods before the plan %v, after %v", statefulBefore, statefulAfter)
	}
}
