package simulator_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/testing/clustergen"
	"github.com/kubesched/kubesched/internal/testing/perfgen"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// simulateJSON runs simulate's core with the equivalence cache on or off
// and returns its JSON report.
func simulateJSON(t *testing.T, load func() *cluster.Cluster, cache bool) []byte {
	t.Helper()
	w, err := simulator.NewWorld(context.Background(), load(), simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1, scheduler.WithEquivalenceCache(cache))
	if err != nil {
		t.Fatal(err)
	}
	if err := timeline.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	return simtest.Render(t, w.Report(), "json")
}

func TestEquivalenceCacheGivesByteIdenticalSimulations(t *testing.T) {
	type input struct {
		name string
		load func(t *testing.T) *cluster.Cluster
	}
	var inputs []input
	examples, _ := filepath.Glob("../../examples/*.yaml")
	for _, path := range examples {
		switch filepath.Base(path) {
		case "scheduler-config.yaml", "pending-pod.yaml", "gpu-node.yaml", "node-types.yaml", "capacity-workload.yaml": // a config, a pod, node templates, a workload to size: no cluster
			continue
		}
		paths := []string{path}
		switch filepath.Base(path) {
		case "workloads.yaml":
			paths = []string{"../../examples/cluster.yaml", path} // workloads for that cluster
		case "scenario.yaml":
			paths = []string{"../../examples/cluster.yaml", "../../examples/workloads.yaml", path} // its timeline
		}
		inputs = append(inputs, input{"the example " + filepath.Base(path), func(t *testing.T) *cluster.Cluster {
			c, err := loading.Load(paths)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}})
	}
	for _, wl := range clustergen.Workloads {
		inputs = append(inputs, input{fmt.Sprintf("hack/bench's %q workload on 150 nodes", wl), func(t *testing.T) *cluster.Cluster {
			return clusterFromObjects(t, clustergen.Options{Nodes: 150, Pods: 900, RunningFraction: 0.2, Seed: 3, Workload: wl})
		}})
	}
	for _, w := range append(perfgen.All(), perfgen.DRA()...) {
		if w.Churn != nil {
			continue // wall-time churn: the real-cluster benchmark's
		}
		small := w.Scaled(40)
		inputs = append(inputs, input{"scheduler_perf's " + w.Name + " at 1/40 size", func(t *testing.T) *cluster.Cluster {
			return simtest.LoadObjects(t, small.Objects())
		}})
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			on := simulateJSON(t, func() *cluster.Cluster { return in.load(t) }, true)
			off := simulateJSON(t, func() *cluster.Cluster { return in.load(t) }, false)
			if !bytes.Equal(on, off) {
				t.Errorf("simulate -o json differs with the equivalence cache on (%d bytes) and off (%d bytes)", len(on), len(off))
			}
			if !bytes.Contains(on, []byte(`"node": "`)) {
				t.Errorf("nothing was placed: the comparison is vacuous")
			}
		})
	}
}

// twin is a pair of worlds fed the same steps, one with the equivalence
// cache and one without.
type twin struct{ on, off *simulator.World }

func (tw twin) both(fn func(w *simulator.World) error) error {
	if err := fn(tw.on); err != nil {
		return err
	}
	return fn(tw.off)
}

// placements lists every pod's node, nomination and, for a pod that fits
// nowhere, its PodScheduled condition (the FitError's message, with
// preemption's part).
func placements(w *simulator.World) map[string]string {
	out := map[string]string{}
	for _, p := range w.Store.Pods() {
		v := p.Spec.NodeName + "|" + p.Status.NominatedNodeName
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				v += "|" + c.Reason + ": " + c.Message
			}
		}
		out[p.Namespace+"/"+p.Name] = v
	}
	return out
}

// failuresSeen counts the pods a world left unschedulable with a FitError
// and those nominated, so the comparison is known to cover both.
func failuresSeen(w *simulator.World) (fitErrors, nominated int) {
	for _, p := range w.Store.Pods() {
		if p.Status.NominatedNodeName != "" {
			nominated++
		}
		for _, c := range p.Status.Conditions {
			if c.Type == v1.PodScheduled && c.Reason == v1.PodReasonUnschedulable && strings.Contains(c.Message, "nodes are available") {
				fitErrors++
			}
		}
	}
	return fitErrors, nominated
}

func TestEquivalenceCacheDecidesEachPodAsWithout(t *testing.T) {
	type twinCase struct {
		name string
		seed int64
		opts clustergen.Options
		// underPressure: more pods than room, so that pods fit nowhere,
		// preempt and wait nominated; the case must show both.
		underPressure bool
	}
	var cases []twinCase
	for seed := int64(1); seed <= 12; seed++ {
		wl := clustergen.Workloads[int(seed)%len(clustergen.Workloads)]
		cases = append(cases, twinCase{
			name: fmt.Sprintf("seed %d, workload %q, with node updates and deletions and pod churn", seed, wl),
			seed: seed,
			opts: clustergen.Options{Nodes: 20 + int(seed)*7, Pods: 400, RunningFraction: 0.3, Seed: seed, Workload: wl},
		})
	}
	for seed := int64(13); seed <= 18; seed++ {
		cases = append(cases, twinCase{
			name:          fmt.Sprintf("seed %d, more pods than room: pods that fit nowhere, preemption and nominated pods, with churn", seed),
			seed:          seed,
			opts:          clustergen.Options{Nodes: 6 + int(seed)%4, Pods: 400, RunningFraction: 0.5, Seed: seed},
			underPressure: true,
		})
	}
	for _, tc := range cases {
		seed, opts := tc.seed, tc.opts
		t.Run(tc.name, func(t *testing.T) {
			mk := func(cache bool) *simulator.World {
				w, err := simulator.NewWorld(context.Background(), clusterFromObjects(t, opts), simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), seed, scheduler.WithEquivalenceCache(cache))
				if err != nil {
					t.Fatal(err)
				}
				return w
			}
			tw := twin{on: mk(true), off: mk(false)}
			r := rand.New(rand.NewSource(seed))
			decisions, fitErrors, nominated := 0, 0, 0
			for step := 0; step < 600; step++ {
				if r.Intn(4) == 0 {
					op := churn(r, tw.on)
					if err := tw.both(op); err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
				}
				var scheduled [2]bool
				for i, w := range []*simulator.World{tw.on, tw.off} {
					w.Store.Flush()
					scheduled[i] = w.Scheduler.TryScheduleOne(context.Background())
					w.Scheduler.WaitForBindings()
					w.Store.Flush()
				}
				if scheduled[0] != scheduled[1] {
					t.Fatalf("step %d: a pod was tried with the cache %v, without %v", step, scheduled[0], scheduled[1])
				}
				if !scheduled[0] {
					for _, w := range []*simulator.World{tw.on, tw.off} {
						w.Clock.Step(queue2s)
						w.Scheduler.Queue.FlushBackoffQCompleted()
						w.Scheduler.Queue.FlushUnschedulablePodsLeftover()
					}
					continue
				}
				decisions++
				a, b := placements(tw.on), placements(tw.off)
				for k, v := range b {
					if a[k] != v {
						t.Fatalf("step %d: pod %s is at %q with the cache, at %q without", step, k, a[k], v)
					}
				}
				if len(a) != len(b) {
					t.Fatalf("step %d: %d pods with the cache, %d without", step, len(a), len(b))
				}
				f, n := failuresSeen(tw.on)
				fitErrors, nominated = max(fitErrors, f), max(nominated, n)
			}
			if decisions < 100 {
				t.Errorf("only %d scheduling decisions were compared", decisions)
			}
			if tc.underPressure && (fitErrors == 0 || nominated == 0) {
				t.Errorf("%d pods fit nowhere and %d were nominated: the failing path was not compared", fitErrors, nominated)
			}
			if tc.underPressure && tw.on.Scheduler.ReplayedFailures() == 0 {
				t.Errorf("no failure was replayed from the memo: its reuse was not compared")
			}
			t.Logf("%d decisions; at most %d pods unschedulable and %d nominated at once; %d failures replayed", decisions, fitErrors, nominated, tw.on.Scheduler.ReplayedFailures())
		})
	}
}

// queue2s is long enough for a 1 s backoff window to pass.
const queue2s = 2_000_000_000

// churn picks a random change from what w holds and returns it as an
// operation that can be applied to either twin.
func churn(r *rand.Rand, w *simulator.World) func(*simulator.World) error {
	nodes, pods := w.Store.Nodes(), w.Store.Pods()
	switch k := r.Intn(6); {
	case k == 0 && len(nodes) > 3:
		name := nodes[r.Intn(len(nodes))].Name
		return func(w *simulator.World) error { return w.Store.DeleteNode(name) }
	case k <= 2 && len(nodes) > 0:
		n := nodes[r.Intn(len(nodes))]
		change := r.Intn(4)
		return func(w *simulator.World) error {
			cur := nodeNamed(w, n.Name)
			if cur == nil {
				return fmt.Errorf("node %s missing in one twin", n.Name)
			}
			up := cur.DeepCopy()
			switch change {
			case 0:
				up.Spec.Unschedulable = !up.Spec.Unschedulable
			case 1:
				up.Spec.Taints = append(up.Spec.Taints, v1.Taint{Key: "churn", Value: "x", Effect: v1.TaintEffectPreferNoSchedule})
			case 2:
				up.Labels["churn"] = "yes"
			default:
				q := up.Status.Allocatable[v1.ResourceCPU]
				q.Add(resource.MustParse("500m"))
				up.Status.Allocatable[v1.ResourceCPU] = q
			}
			return w.Store.UpdateNode(up)
		}
	case k <= 4 && len(pods) > 0:
		p := pods[r.Intn(len(pods))]
		return func(w *simulator.World) error { return w.Store.DeletePod(p.Namespace, p.Name) }
	default:
		if len(pods) == 0 {
			return func(*simulator.World) error { return nil }
		}
		p := pods[r.Intn(len(pods))]
		name := fmt.Sprintf("%s-copy-%d", p.Name, r.Int63())
		return func(w *simulator.World) error {
			cp := p.DeepCopy()
			cp.Name, cp.UID, cp.Spec.NodeName, cp.ResourceVersion = name, types.UID(name), "", ""
			cp.Status = v1.PodStatus{Phase: v1.PodPending}
			return w.Store.AddPod(cp)
		}
	}
}

func nodeNamed(w *simulator.World, name string) *v1.Node {
	for _, n := range w.Store.Nodes() {
		if n.Name == name {
			return n
		}
	}
	return nil
}
