package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// The differential scenarios: one script of API steps and observations,
// run once against upstream's kube-scheduler v1.37.2 and once against
// kubesched, each on a fresh control plane. Expected values are what the
// oracle did; kubesched must agree exactly where upstream is deterministic
// (placements, conditions, messages, events, victims' conditions) and
// within the stated bounds where it is not (times to bind, attempts).

// observation is what one run of a scenario saw.
type observation struct {
	// exact must be equal between the two runs.
	exact map[string]string
	// latency: ours may be at most max(2 x upstream's, upstream's + 1 s,
	// the scenario's noise floor for it).
	latency map[string]time.Duration
	// noise is a latency's floor where the script cannot pin the
	// schedulers' own timing (races between a retry and the events that
	// follow it): both were seen anywhere below it.
	noise map[string]time.Duration
	// tight: ours may be at most upstream's + 300 ms.
	tight map[string]time.Duration
	// atMost: ours may be at most upstream's (attempts that must not grow).
	atMost map[string]float64
	// proxy is the scenario's proxy, if it asked for one.
	proxy *fw.FaultProxy
	// impl is the scheduler of the run.
	impl fw.Implementation
	// raced, set by a run of the oracle, names a race of upstream's own
	// that its log shows and that left the script nothing to observe:
	// the oracle's run is repeated on a fresh control plane.
	raced string
}

func newObservation() *observation {
	return &observation{exact: map[string]string{}, latency: map[string]time.Duration{}, noise: map[string]time.Duration{}, tight: map[string]time.Duration{}, atMost: map[string]float64{}}
}

// scenario is a script: it sets the cluster up, then runs with the
// scheduler started, and records what it saw.
type scenario struct {
	name string
	// proxy: the scheduler talks to the API through a FaultProxy (no
	// faults) that pauses the pod watches at the first Binding.
	proxy bool
	// setup runs before the scheduler starts (nodes, bound pods).
	setup func(t *testing.T, c kubernetes.Interface)
	// controllers, if set, are kube-controller-manager's controllers to
	// run beside the scheduler (a --controllers list), started after setup.
	controllers string
	// config, if set, returns extra top-level configuration for both
	// schedulers (extenders), started per run with the run's client;
	// every occurrence of hide in the exact observations is replaced by
	// "<hidden>" (an extender's URL differs between the runs).
	config func(t *testing.T, c kubernetes.Interface) (extra, hide string)
	// podGroups: the API server serves scheduling.k8s.io/v1beta1 and both
	// schedulers run with --feature-gates=GenericWorkload=true.
	podGroups bool
	// placements: podGroups with TopologyAwareWorkloadScheduling too (on
	// the API server, which keeps PodGroups' schedulingConstraints only
	// then, and on both schedulers).
	placements bool
	run        func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation)
}

func TestDifferentialAgainstKubeScheduler(t *testing.T) {
	for _, sc := range slices.Concat(differentialScenarios(), storageScenarios(), draScenarios(), extenderScenarios(), podGroupScenarios(), placementScenarios()) {
		sc := sc
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			want := runScenario(t, sc, fw.Upstream)
			for attempt := 2; want.raced != "" && attempt <= oracleAttempts; attempt++ {
				t.Logf("kube-scheduler's run %d: %s; running it again", attempt-1, want.raced)
				want = runScenario(t, sc, fw.Upstream)
			}
			if want.raced != "" {
				t.Fatalf("kube-scheduler raced in all %d runs: %s", oracleAttempts, want.raced)
			}
			got := runScenario(t, sc, fw.Kubesched)
			compareObservations(t, want, got)
		})
	}
}

// oracleAttempts bounds the runs of the oracle when its log shows one of
// its own races (observation.raced).
const oracleAttempts = 3

func runScenario(t *testing.T, sc scenario, impl fw.Implementation) *observation {
	t.Helper()
	o := newObservation()
	o.impl = impl
	t.Run(string(impl), func(t *testing.T) {
		var apiArgs, flags []string
		switch {
		case sc.placements:
			apiArgs = []string{"--runtime-config=scheduling.k8s.io/v1beta1=true", "--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true"}
			flags = []string{"--feature-gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true"}
		case sc.podGroups:
			apiArgs = []string{"--runtime-config=scheduling.k8s.io/v1beta1=true", "--feature-gates=GenericWorkload=true"}
			flags = []string{"--feature-gates=GenericWorkload=true"}
		}
		cp := fw.StartControlPlaneWith(t, apiArgs...)
		if sc.setup != nil {
			sc.setup(t, cp.Client)
		}
		if sc.controllers != "" {
			fw.StartControllerManager(t, cp, sc.controllers)
		}
		kubeconfig := ""
		if sc.proxy {
			fp := fw.StartFaultProxy(t, cp, 0, 1)
			fp.PauseWatchesOnBinding = true
			t.Cleanup(fp.ResumeWatches)
			kubeconfig = fp.Kubeconfig(t, cp)
			o.proxy = fp
		}
		extra, hide := "", ""
		if sc.config != nil {
			extra, hide = sc.config(t, cp.Client)
		}
		s := fw.StartImplementationFlags(t, cp, impl, kubeconfig, extra, flags...)
		sc.run(t, cp.Client, s, o)
		if hide != "" {
			for k, v := range o.exact {
				o.exact[k] = strings.ReplaceAll(v, hide, "<hidden>")
			}
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", impl, s.Log())
		}
	})
	return o
}

func compareObservations(t *testing.T, want, got *observation) {
	t.Helper()
	for _, k := range sortedKeys(want.exact) {
		if got.exact[k] != want.exact[k] {
			t.Errorf("%s: kubesched %q, kube-scheduler %q", k, got.exact[k], want.exact[k])
		} else {
			t.Logf("%s: %q (both)", k, want.exact[k])
		}
	}
	for k := range got.exact {
		if _, ok := want.exact[k]; !ok {
			t.Errorf("%s: kubesched observed %q, kube-scheduler nothing", k, got.exact[k])
		}
	}
	for _, k := range sortedKeys(want.latency) {
		w, g := want.latency[k], got.latency[k]
		bound := max(2*w, w+time.Second, want.noise[k])
		if g > bound {
			t.Errorf("%s: kubesched %v, kube-scheduler %v (bound %v)", k, g, w, bound)
		}
		t.Logf("%s: kubesched %v, kube-scheduler %v", k, g.Round(time.Millisecond), w.Round(time.Millisecond))
	}
	for _, k := range sortedKeys(want.tight) {
		w, g := want.tight[k], got.tight[k]
		if g > w+300*time.Millisecond {
			t.Errorf("%s: kubesched %v, kube-scheduler %v (bound +300ms)", k, g, w)
		}
		t.Logf("%s: kubesched %v, kube-scheduler %v", k, g.Round(time.Millisecond), w.Round(time.Millisecond))
	}
	for _, k := range sortedKeys(want.atMost) {
		if got.atMost[k] > want.atMost[k] {
			t.Errorf("%s: kubesched %v, kube-scheduler %v (at most)", k, got.atMost[k], want.atMost[k])
		}
		t.Logf("%s: kubesched %v, kube-scheduler %v", k, got.atMost[k], want.atMost[k])
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// ---- the scenarios ----

func differentialScenarios() []scenario {
	return []scenario{
		{
			// Item 2: a pod blocked by zone spreading is woken by the
			// deletion of the node that held the emptiest zone.
			name: "a pod blocked by zone spreading binds when the third zone's node is deleted",
			setup: func(t *testing.T, c kubernetes.Interface) {
				for _, z := range []string{"a", "b", "c"} {
					cpu := "4"
					if z == "c" {
						cpu = "1" // zone c exists but has no room
					}
					fw.CreateNode(t, c, "node-"+z, cpu, "8Gi", 110, map[string]string{v1.LabelTopologyZone: "zone-" + z})
				}
				createBound(t, c, withLabels(pod("web-a1", "500m"), "app", "web"), "node-a")
				createBound(t, c, withLabels(pod("web-a2", "500m"), "app", "web"), "node-a")
				createBound(t, c, withLabels(pod("web-b1", "500m"), "app", "web"), "node-b")
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				p := withLabels(pod("web-new", "2"), "app", "web")
				p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone,
					WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
				fw.CreatePod(t, c, p)
				cond := waitCondition(t, c, "web-new")
				o.exact["pending condition"] = cond
				// The wake-up is the event's: the pod is parked in
				// unschedulablePods, where nothing but a cluster event moves
				// it, and the scheduler has handled every pod event so far
				// (its own status write included) with nothing left to try.
				syncPodEvents(t, c, s, "sync", 3*time.Second)
				deleted := time.Now()
				if err := c.CoreV1().Nodes().Delete(context.Background(), "node-c", metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
				node, at, ok := waitBoundWithin(c, "web-new", 60*time.Second)
				if !ok && o.impl == fw.Upstream && triedBeforeNodeLeftCache(s.WholeLog(), "default/web-new", "node-c") {
					o.raced = "web-new was tried again before node-c left the cache, and nothing woke it after"
					return
				}
				if !ok {
					t.Fatalf("web-new not bound within %v", 60*time.Second)
				}
				o.exact["node"] = node
				o.latency["bind after the node deletion"] = at.Sub(deleted)
			},
		},
		{
			// A pod waiting for room binds right after a filler is force-deleted.
			name: "a pod waiting for room binds when the filler is force-deleted",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-1", "2", "8Gi", 110, nil)
				createBound(t, c, pod("filler", "2"), "node-1")
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, pod("waiting", "1"))
				o.exact["pending condition"] = waitCondition(t, c, "waiting")
				// Parked in unschedulablePods: the wake-up is the event's.
				syncPodEvents(t, c, s, "sync", 3*time.Second)
				deleted := time.Now()
				forceDelete(t, c, "filler")
				node, at := waitBound(t, c, "waiting", 60*time.Second)
				o.exact["node"] = node
				o.latency["bind after the force delete"] = at.Sub(deleted)
				o.atMost["attempts"] = attempts(t, s)
			},
		},
		{
			// Item 5: a pod woken during its backoff, with nothing else to
			// do, is popped from backoffQ at once (SchedulerPopFromBackoffQ).
			name: "a pod woken during its backoff binds at once when the scheduler is idle",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-1", "2", "8Gi", 110, nil)
				createBound(t, c, pod("filler", "2"), "node-1")
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, pod("waiting", "1"))
				waitCondition(t, c, "waiting")
				deleted := time.Now() // well within its first backoff (1-2 s)
				forceDelete(t, c, "filler")
				node, at := waitBound(t, c, "waiting", 60*time.Second)
				o.exact["node"] = node
				o.tight["bind after the delete, during the backoff"] = at.Sub(deleted)
			},
		},
		{
			// Item 3: preemption with a terminating victim and a bystander.
			name: "preemption marks one terminating victim, spares the bystander and binds when the victim goes",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-1", "1", "8Gi", 110, nil)
				fw.CreateNode(t, c, "node-2", "1", "8Gi", 110, nil)
				victim := withPriority(pod("victim", "1"), 1)
				grace := int64(30)
				victim.Spec.TerminationGracePeriodSeconds = &grace
				createBound(t, c, victim, "node-1")
				createBound(t, c, withPriority(pod("bystander", "1"), 5), "node-2")
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, withPriority(pod("preemptor", "1"), 10))
				fw.Eventually(t, 30*time.Second, "the victim terminating", func() (bool, error) {
					p, err := getPod(c, "default", "victim")
					return err == nil && p.DeletionTimestamp != nil, err
				})
				fw.Eventually(t, 30*time.Second, "the preemptor nominated", func() (bool, error) {
					p, err := getPod(c, "default", "preemptor")
					return err == nil && p.Status.NominatedNodeName != "", err
				})
				// The preemptor must not preempt again while the victim
				// terminates: the preemption has run to its end (its
				// goroutine ended, the victim marked and deleted), and the
				// scheduler has handled every pod event since (the victim's
				// updates included) and parked the preemptor, with nothing
				// left to try until the victim goes.
				deadline := time.Now().Add(5 * time.Second)
				waitMetricAbove(t, s, time.Until(deadline), 0, "scheduler_preemption_goroutines_execution_total")
				syncPodEvents(t, c, s, "sync", time.Until(deadline))
				v, err := getPod(c, "default", "victim")
				if err != nil {
					t.Fatal(err)
				}
				o.exact["victim DisruptionTarget"] = conditionString(v, v1.DisruptionTarget, true)
				p, _ := getPod(c, "default", "preemptor")
				o.exact["preemptor nominated node"] = p.Status.NominatedNodeName
				o.exact["preemptor condition"] = conditionString(p, v1.PodScheduled, false)
				o.exact["Preempted events on the victim"] = eventSummary(t, c, "victim", "Preempted")
				o.exact["Preempted events on the bystander"] = eventSummaryNow(t, c, "bystander", "Preempted")
				o.exact["preemption attempts"] = fmt.Sprint(fw.MetricSum(metrics(t, s), "scheduler_preemption_attempts_total"))
				// SchedulerAsyncPreemption (on by default): the victims were
				// deleted by one goroutine, which has ended.
				o.exact["preemption goroutines ended"] = fmt.Sprint(fw.MetricSum(metrics(t, s), "scheduler_preemption_goroutines_execution_total"))
				by, err := getPod(c, "default", "bystander")
				o.exact["bystander terminating"] = fmt.Sprint(err == nil && by.DeletionTimestamp != nil)
				deleted := time.Now()
				forceDelete(t, c, "victim")
				node, at := waitBound(t, c, "preemptor", 60*time.Second)
				o.exact["preemptor node"] = node
				o.latency["bind after the victim went"] = at.Sub(deleted)
			},
		},
		{
			// Item 4: kubelet-like status patches on a bound pod, and node
			// heartbeats, do not retry an unschedulable pod.
			name: "status patches and node heartbeats do not retry an unschedulable pod",
			setup: func(t *testing.T, c kubernetes.Interface) {
				fw.CreateNode(t, c, "node-1", "1", "8Gi", 110, nil)
				createBound(t, c, pod("running", "100m"), "node-1")
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, pod("too-big", "2"))
				o.exact["pending condition"] = waitCondition(t, c, "too-big")
				// 25 rounds of a kubelet's writes, as fast as they go.
				for i := 0; i < 25; i++ {
					p, err := getPod(c, "default", "running")
					if err != nil {
						t.Fatal(err)
					}
					ready := v1.ConditionTrue
					if i%2 == 1 {
						ready = v1.ConditionFalse
					}
					p.Status.Phase = v1.PodRunning
					p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: ready, LastTransitionTime: metav1.Now()}}
					if _, err := c.CoreV1().Pods("default").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
					// And the node's heartbeat, as a kubelet renews it.
					n, err := c.CoreV1().Nodes().Get(context.Background(), "node-1", metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					for j := range n.Status.Conditions {
						n.Status.Conditions[j].LastHeartbeatTime = metav1.Now()
					}
					if _, err := c.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				// The scheduler has handled every one of them (the sync node
				// and pod come after them on its watches) and has nothing left
				// to try: had one moved the pod, it would have been tried
				// again (and counted) before the scheduler is idle.
				deadline := time.Now().Add(25 * time.Second)
				syncNodeEvents(t, c, s, "sync", time.Until(deadline))
				syncPodEvents(t, c, s, "sync", time.Until(deadline))
				o.atMost["attempts of the unschedulable pod"] = attempts(t, s)
				p, _ := getPod(c, "default", "too-big")
				o.exact["still pending"] = fmt.Sprint(p.Spec.NodeName == "")
			},
		},
		{
			// Item 1: an assumed pod stays counted while the watch lags
			// behind its Binding, past the 30 s an assumed pod once lived.
			name:  "a bound pod stays counted while the watch lags behind its binding",
			proxy: true,
			setup: func(t *testing.T, c kubernetes.Interface) {
				n := fw.CreateNode(t, c, "node-1", "2", "8Gi", 110, nil)
				n.Spec.Unschedulable = true
				if _, err := c.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, withPriority(pod("second", "1"), 1))
				fw.CreatePod(t, c, withPriority(pod("first", "1500m"), 10))
				waitCondition(t, c, "second")
				waitCondition(t, c, "first")
				// Let both backoffs (1 s, aligned to 1 s windows) run out, so the
				// uncordon moves both pods to activeQ together and the higher
				// priority pops first. Without it, the two pods' backoffs can end in
				// different windows and "second" pops from backoffQ first, in
				// either scheduler: the script would depend on timing.
				waitBackoffOver(t, c, s, []string{"second", "first"}, 3*time.Second)
				editNode(t, c, "node-1", func(n *v1.Node) { n.Spec.Unschedulable = false })
				node, _ := waitBound(t, c, "first", 30*time.Second) // the pod watch pauses at this Binding
				o.exact["first"] = node
				// Past the 30 s an assumed pod once lived: this is the
				// scenario's precondition, time elapsed, which nothing but
				// the clock shows. It proves nothing by itself: the retry
				// below does, counted before "second" is read.
				time.Sleep(35 * time.Second)
				// A node event the rejecting plugin (NodeResourcesFit) registered: the
				// second pod is retried while the first is still only assumed.
				tried := fw.MetricSum(metrics(t, s), "scheduler_schedule_attempts_total", `result="unschedulable"`)
				n, err := c.CoreV1().Nodes().Get(context.Background(), "node-1", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				// 100m more cpu: NodeResourcesFit's hint queues the pod (a
				// requested resource grew); 1500m + 1 cpu still exceed 2100m.
				n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("2100m")
				if _, err := c.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				// The retry ended unschedulable (counted), the watch still
				// paused.
				waitMetricAbove(t, s, 5*time.Second, tried, "scheduler_schedule_attempts_total", `result="unschedulable"`)
				o.proxy.ResumeWatches()
				// The scheduler has caught up with the watch (the first pod's
				// binding, then the sync pod) and has nothing left to try.
				syncPodEvents(t, c, s, "sync", 3*time.Second)
				p, err := getPod(c, "default", "second")
				if err != nil {
					t.Fatal(err)
				}
				o.exact["second"] = p.Spec.NodeName
				over, err := overcommitted(c)
				if err != nil {
					t.Fatal(err)
				}
				o.exact["overcommitted"] = strings.Join(over, ",")
			},
		},
		{
			// Item 7: the FitError message when preemption cannot help.
			name: "a pod that fits no node whatever is evicted gets upstream's message",
			setup: func(t *testing.T, c kubernetes.Interface) {
				for i := 1; i <= 3; i++ {
					fw.CreateNode(t, c, fmt.Sprintf("node-%d", i), "2", "8Gi", 110, nil)
				}
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, pod("huge", "3"))
				o.exact["condition"] = waitCondition(t, c, "huge")
				o.exact["FailedScheduling events"] = eventSummary(t, c, "huge", "FailedScheduling")
			},
		},
		{
			// Item 7: no nodes at all, then one arrives.
			name: "a pod in a cluster with no nodes is unschedulable, then binds when a node arrives",
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				fw.CreatePod(t, c, pod("early", "100m"))
				o.exact["condition"] = waitCondition(t, c, "early")
				fw.CreateNode(t, c, "node-1", "2", "8Gi", 110, nil)
				node, _ := waitBound(t, c, "early", 60*time.Second)
				o.exact["node"] = node
			},
		},
		{
			// Past 100 nodes a pod's search evaluates only part of the
			// list, from where the last one stopped: which part depends on
			// the order of upstream's node tree, where a node added while
			// the scheduler runs goes last (not in its place by name). The
			// big node, named first but added last, is the best node for
			// the pod; neither scheduler evaluates it (600 nodes: 276
			// feasible ones are enough, far from the list's end even with
			// kube-scheduler's 16 workers racing over chunks of 24).
			name: "a node added while the scheduler runs goes last in the node list, whatever its name",
			setup: func(t *testing.T, c kubernetes.Interface) {
				for i := 1; i <= 600; i++ {
					fw.CreateNode(t, c, fmt.Sprintf("n-%03d", i), "4", "16Gi", 110, nil)
				}
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				// The 600 nodes are in the scheduler's cache first: on a
				// loaded machine the informer's initial list can come after
				// the next node's creation, which then joins the list in
				// its place by name, first (kube-scheduler bound p1 to it
				// in a CI run beside a benchmark).
				waitCachedNodes(t, s, 600, 30*time.Second)
				fw.CreateNode(t, c, "a-big", "32", "128Gi", 110, nil)
				// The node's watch event reaches the scheduler before the
				// pod's (no order holds between two watches): its cache
				// counts the node.
				waitCachedNodes(t, s, 601, 30*time.Second)
				fw.CreatePod(t, c, pod("p1", "1"))
				node, _ := waitBound(t, c, "p1", 60*time.Second)
				o.exact["p1 bound to the node added last"] = fmt.Sprint(node == "a-big")
			},
		},
		{
			// Item 6: equal pods are tried in creation order.
			name: "equal pods waiting for a node are placed in creation order",
			setup: func(t *testing.T, c kubernetes.Interface) {
				n := fw.CreateNode(t, c, "node-1", "4", "8Gi", 110, nil)
				n.Spec.Unschedulable = true
				if _, err := c.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			},
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				var names []string
				for i := 0; i < 6; i++ {
					cpu := "1"
					if i%2 == 1 {
						cpu = "2"
					}
					name := fmt.Sprintf("p%d-%s", i, cpu)
					fw.CreatePod(t, c, pod(name, cpu))
					names = append(names, name)
					// The scheduler has seen (and tried) it before the next one exists.
					waitCondition(t, c, name)
				}
				n, err := c.CoreV1().Nodes().Get(context.Background(), "node-1", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				n.Spec.Unschedulable = false
				if _, err := c.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
				// The node's 4 cpus fill up: wait until pods requesting 4 cpus
				// are bound (then no other fits).
				fw.Eventually(t, 60*time.Second, "the node full", func() (bool, error) {
					cpus := 0
					for i, name := range names {
						p, err := getPod(c, "default", name)
						if err != nil {
							return false, err
						}
						if p.Spec.NodeName != "" {
							cpus += 1 + i%2
						}
					}
					return cpus == 4, nil
				})
				var bound []string
				for _, name := range names {
					if p, err := getPod(c, "default", name); err == nil && p.Spec.NodeName != "" {
						bound = append(bound, name)
					}
				}
				o.exact["bound"] = strings.Join(bound, ",")
			},
		},
	}
}

// ---- helpers ----

func pod(name, cpu string) *v1.Pod {
	return fw.PodSpec("default", name, "default-scheduler", cpu, "")
}

func withLabels(p *v1.Pod, kv ...string) *v1.Pod {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Labels[kv[i]] = kv[i+1]
	}
	return p
}

func withPriority(p *v1.Pod, prio int32) *v1.Pod {
	p.Spec.Priority = &prio
	return p
}

// createBound creates a pod already bound to node (as if another
// scheduler had placed it).
func createBound(t *testing.T, c kubernetes.Interface, p *v1.Pod, node string) {
	t.Helper()
	p.Spec.NodeName = node
	fw.CreatePod(t, c, p)
}

// forceDelete deletes a pod with no grace period (kubectl delete --force
// --grace-period=0).
func forceDelete(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	zero := int64(0)
	if err := c.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
}

// waitCondition waits for the pod's PodScheduled=False condition and
// returns it as "Reason: message".
func waitCondition(t *testing.T, c kubernetes.Interface, name string) string {
	t.Helper()
	var out string
	fw.Eventually(t, 30*time.Second, name+"'s PodScheduled=False condition", func() (bool, error) {
		p, err := getPod(c, "default", name)
		if err != nil {
			return false, err
		}
		cond := podScheduledCondition(p)
		if cond == nil || cond.Status != v1.ConditionFalse {
			return false, nil
		}
		out = conditionString(p, v1.PodScheduled, true)
		return true, nil
	})
	return out
}

// conditionString renders a condition as "Status Reason: message
// (observedGeneration N)"; withGeneration false leaves the generation out.
func conditionString(p *v1.Pod, typ v1.PodConditionType, withGeneration bool) string {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			s := fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)
			if withGeneration {
				s += fmt.Sprintf(" (observedGeneration %d)", c.ObservedGeneration)
			}
			return s
		}
	}
	return "none"
}

// waitBound watches the pod until it is bound; it returns the node and
// when the binding was seen (as the watch event arrived).
func waitBound(t *testing.T, c kubernetes.Interface, name string, timeout time.Duration) (string, time.Time) {
	t.Helper()
	node, at, ok := waitBoundWithin(c, name, timeout)
	if !ok {
		t.Fatalf("%s not bound within %v", name, timeout)
	}
	return node, at
}

// waitBoundWithin is waitBound that reports a timeout instead of failing.
func waitBoundWithin(c kubernetes.Interface, name string, timeout time.Duration) (string, time.Time, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for ctx.Err() == nil {
		list, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		if err != nil {
			continue
		}
		if len(list.Items) == 1 && list.Items[0].Spec.NodeName != "" {
			return list.Items[0].Spec.NodeName, time.Now(), true
		}
		w, err := c.CoreV1().Pods("default").Watch(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: list.ResourceVersion})
		if err != nil {
			continue
		}
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*v1.Pod); ok && p.Spec.NodeName != "" {
				w.Stop()
				return p.Spec.NodeName, time.Now(), true
			}
		}
		w.Stop() // the watch ended (server timeout): list and watch again
	}
	return "", time.Time{}, false
}

// triedBeforeNodeLeftCache reports, from kube-scheduler's log, upstream's
// race on a node's deletion: deleteNodeFromCache (eventhandlers.go) moves
// the unschedulable pods before it removes the node from the cache, and
// with SchedulerPopFromBackoffQ a woken pod can be popped at once, tried
// against a snapshot that still holds the node, and fail as before, with
// no event left to wake it until the 5-minute flush. The log shows it as
// a failed attempt of the pod after its first one, logged before the
// node's "Removed node from NodeTree", or logged after it but still
// counting the node ("0/N nodes" as the first attempt counted them: its
// snapshot was taken before the removal, its failure written after).
// kubesched removes the node first (internal/scheduler/eventhandlers.go,
// OnNodeDelete).
func triedBeforeNodeLeftCache(log, pod, node string) bool {
	attempts, removed := 0, false
	counted := "" // "0/N nodes" of the first attempt
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.Contains(line, `"Unable to schedule pod; no fit; waiting" pod="`+pod+`"`):
			attempts++
			_, rest, _ := strings.Cut(line, `err="`)
			nodes, _, _ := strings.Cut(rest, " are available")
			if attempts == 1 {
				counted = nodes
			} else if removed && counted != "" && nodes == counted {
				return true
			}
		case strings.Contains(line, `"Removed node from NodeTree" node="`+node+`"`):
			if attempts >= 2 {
				return true
			}
			removed = true
		}
	}
	return false
}

// eventSummary lists the events of a reason about a pod as "count x note",
// sorted; a series counts its occurrences. Events are written
// asynchronously: it waits for the first of this reason.
func eventSummary(t *testing.T, c kubernetes.Interface, name, reason string) string {
	t.Helper()
	var out string
	fw.Eventually(t, 30*time.Second, reason+" events of "+name, func() (bool, error) {
		var err error
		out, err = listEvents(c, name, reason)
		return out != "", err
	})
	return out
}

// eventSummaryNow is eventSummary without waiting: for a pod that should
// have none, listed once the events it would have come with are seen.
func eventSummaryNow(t *testing.T, c kubernetes.Interface, name, reason string) string {
	t.Helper()
	out, err := listEvents(c, name, reason)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func listEvents(c kubernetes.Interface, name, reason string) (string, error) {
	evs, err := c.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("regarding.name", name).String()})
	if err != nil {
		return "", err
	}
	var out []string
	for _, e := range evs.Items {
		if e.Reason != reason {
			continue
		}
		n := int32(1)
		if e.Series != nil && e.Series.Count > n {
			n = e.Series.Count
		}
		// UIDs differ between the two control planes.
		out = append(out, fmt.Sprintf("%d x %s [%s, %s]", n, replaceUIDs(e.Note), e.ReportingController, e.Action))
	}
	sort.Strings(out)
	return strings.Join(out, "; "), nil
}

// replaceUIDs blanks the UID in "Preempted by pod <uid> on node ..." (or
// "by podgroup <uid>").
func replaceUIDs(s string) string {
	marker := "Preempted by pod "
	i := strings.Index(s, marker)
	if j := strings.Index(s, "Preempted by podgroup "); j >= 0 {
		marker, i = "Preempted by podgroup ", j
	}
	if i < 0 {
		return s
	}
	rest := s[i+len(marker):]
	j := strings.Index(rest, " ")
	if j < 0 {
		return s
	}
	return s[:i+len(marker)] + "<uid>" + rest[j:]
}

func metrics(t *testing.T, s fw.Running) string {
	t.Helper()
	m, err := s.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// attempts is the number of scheduling attempts of every result.
func attempts(t *testing.T, s fw.Running) float64 {
	return fw.MetricSum(metrics(t, s), "scheduler_schedule_attempts_total")
}
