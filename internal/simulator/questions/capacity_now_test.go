package questions_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	st "github.com/kubesched/kubesched/internal/testing"
)

// The copies (and a workload's new replicas) are placed on the cluster as
// it is: a pending pod that fits nowhere neither changes the answer nor
// makes each copy wait for its 5-minute flush (which, copy after copy,
// used to run the world into its 24-hour limit and stop the count); a
// pending pod that fits takes its room before the copies.
func TestCapacityIsNotChangedByPodsThatFitNowhere(t *testing.T) {
	cpu := func(n string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: n} }
	node := st.MakeNode().Name("huge").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1000", v1.ResourceMemory: "4000Gi", v1.ResourcePods: "5000"}).Obj()
	fitsNowhere := st.MakePod().Name("fits-nowhere").Req(cpu("2000")).Obj()
	fits := st.MakePod().Name("fits").Req(cpu("300")).Obj()
	// Pending until a pod labelled app=small runs: a copy's binding wakes
	// it (InterPodAffinity's hint for an assigned pod added).
	nextToCopies := st.MakePod().Name("next-to-copies").Req(cpu("300")).PodAffinity(v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "small"}}, TopologyKey: v1.LabelHostname}).Obj()
	tests := []struct {
		name     string
		pending  []runtime.Object
		wantFits int
		wantNext string // substring of the next copy's message; "" when --max stops the count
	}{
		{name: "with nothing pending the count stops at the max", wantFits: 1000},
		{name: "a pending pod that fits nowhere leaves the count at the max", pending: []runtime.Object{fitsNowhere}, wantFits: 1000},
		{name: "a pending pod that fits takes its room before the copies", pending: []runtime.Object{fits}, wantFits: 700, wantNext: "Insufficient cpu"},
		{name: "a pod that fits nowhere beside one that fits changes nothing", pending: []runtime.Object{fitsNowhere, fits}, wantFits: 700, wantNext: "Insufficient cpu"},
		{name: "a pending pod that the first copy wakes takes its room then", pending: []runtime.Object{fitsNowhere, nextToCopies}, wantFits: 700, wantNext: "Insufficient cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			small := func() *st.PodWrapper { return st.MakePod().Name("small").Label("app", "small").Req(cpu("1")) }
			answers := map[string]func() (*questions.CapacityResult, error){
				"--pod": func() (*questions.CapacityResult, error) {
					c := simtest.LoadObjects(t, append([]runtime.Object{node}, tt.pending...))
					return questions.Capacity(context.Background(), c, worldMaker(t), small().Obj(), 1000)
				},
				"--workload": func() (*questions.CapacityResult, error) {
					c := simtest.LoadObjects(t, append([]runtime.Object{node, st.MakeDeployment("small", 0, small())}, tt.pending...))
					w, err := worldMaker(t)(c)
					if err != nil {
						return nil, err
					}
					return questions.WorkloadCapacity(context.Background(), w, "Deployment", "", "small", 1000)
				},
			}
			for question, answer := range answers {
				res, err := answer()
				if err != nil {
					t.Fatalf("%s: %v", question, err)
				}
				if res.Fits != tt.wantFits {
					t.Errorf("%s: %d copies fit, want %d", question, res.Fits, tt.wantFits)
				}
				switch {
				case tt.wantNext == "" && res.Next != nil:
					t.Errorf("%s: next copy %q, want none (the max)", question, res.Next.Message)
				case tt.wantNext != "" && (res.Next == nil || !strings.Contains(res.Next.Message, tt.wantNext)):
					t.Errorf("%s: next copy %+v, want a message with %q", question, res.Next, tt.wantNext)
				}
			}
		})
	}
}

// The next copy's FitError keeps the node counts but says that copies do
// not preempt, instead of the preemptionPolicy the user never set.
func TestCapacitySaysCopiesDoNotPreempt(t *testing.T) {
	pod := st.MakePod().Name("web").Req(map[v1.ResourceName]string{v1.ResourceCPU: "9"}).Obj()
	res, err := questions.Capacity(context.Background(), simtest.LoadObjects(t, capacityCluster()), worldMaker(t), pod, 10)
	if err != nil {
		t.Fatal(err)
	}
	if res.Next == nil || res.Next.Explain == nil {
		t.Fatalf("next %+v, want an explained copy", res.Next)
	}
	for what, msg := range map[string]string{"message": res.Next.Message, "explanation": res.Next.Explain.Message} {
		if strings.Contains(msg, "preemptionPolicy") || !strings.Contains(msg, "3 Insufficient cpu") || !strings.HasSuffix(msg, "capacity's copies do not preempt.") {
			t.Errorf("%s %q: want the node counts, then that copies do not preempt", what, msg)
		}
	}
}

// Capacity's answer on the example cluster equals a brute-force count
// that shares nothing with capacity's loop: for k = 1, 2, ..., a fresh
// world of the example cluster plus k plain copies of the example pod
// (which, as capacity's, do not preempt) is simulated whole, until a copy
// stays pending. The copies are created by a Scenario step hours in, as
// the question is how many fit once the cluster's pending pods are
// placed: created with them, they would take the room of the pending pods
// of lower priority (the batch pods), which capacity places first.
func TestCapacityOfTheExampleEqualsABruteForceCount(t *testing.T) {
	const clusterFile, podFile = "../../../examples/cluster.yaml", "../../../examples/pending-pod.yaml"
	c, err := loading.Load([]string{clusterFile})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := loading.LoadPod(c, podFile, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := questions.Capacity(context.Background(), c, worldMaker(t), pod, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if res.Next == nil {
		t.Fatalf("%d copies fit and the max stopped the count; the example should run out of room", res.Fits)
	}

	raw, err := os.ReadFile(podFile)
	if err != nil {
		t.Fatal(err)
	}
	// copyPending simulates the cluster with k copies created at 6h and
	// says whether one of them is left pending.
	copyPending := func(k int) bool {
		var create []interface{}
		for i := 1; i <= k; i++ {
			var p map[string]interface{}
			if err := yaml.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			p["metadata"].(map[string]interface{})["name"] = fmt.Sprintf("brute-%d", i)
			p["spec"].(map[string]interface{})["preemptionPolicy"] = "Never"
			create = append(create, p)
		}
		scenario, err := yaml.Marshal(map[string]interface{}{
			"apiVersion": "simulation.kubesched.io/v1alpha1", "kind": "Scenario", "metadata": map[string]string{"name": "copies"},
			"spec": map[string]interface{}{"steps": []interface{}{map[string]interface{}{"at": "6h", "name": "copies", "create": create}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		copies := filepath.Join(t.TempDir(), "copies.yaml")
		if err := os.WriteFile(copies, scenario, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := loading.Load([]string{clusterFile, copies})
		if err != nil {
			t.Fatal(err)
		}
		w := simtest.NewWorld(t, c, 1)
		if err := timeline.Run(context.Background(), w); err != nil {
			t.Fatal(err)
		}
		if errs := w.CheckInvariants(); len(errs) > 0 {
			t.Fatalf("invariants: %v", errs)
		}
		for _, p := range w.Report().Pods {
			if strings.HasPrefix(p.Name, "brute-") && p.Status != report.StatusScheduled {
				return true
			}
		}
		return false
	}
	brute := 0
	for brute <= res.Fits+5 && !copyPending(brute+1) {
		brute++
	}
	if brute != res.Fits {
		t.Errorf("capacity says %d copies fit; simulating the cluster with k copies leaves one pending first at k = %d", res.Fits, brute+1)
	}
}

// A world that reaches its limit of virtual time with pods still to place
// answers nothing: Run returns a LimitError naming the limit, and the
// questions return it instead of an answer.
func TestAWorldAtItsLimitAnswersNothing(t *testing.T) {
	// One node runs one hour-long pod at a time: 30 of them need 30 hours,
	// past the 24-hour limit.
	objs := []runtime.Object{st.MakeNode().Name("n").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj()}
	for i := 0; i < 30; i++ {
		objs = append(objs, st.MakePod().Name(fmt.Sprintf("hour-%02d", i)).Annotation("simulation.kubesched.io/duration", "1h").
			Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj())
	}
	wantErr := func(t *testing.T, err error) {
		t.Helper()
		var limit *simulator.LimitError
		if !errors.As(err, &limit) || !strings.Contains(err.Error(), "limit of 24h0m0s of virtual time") || !strings.Contains(err.Error(), "6 pod(s) still to place (e.g. default/hour-24)") {
			t.Fatalf("error %v, want the limit of 24h0m0s with 6 pods still to place", err)
		}
	}
	tests := []struct {
		name string
		ask  func(t *testing.T) error
	}{
		{name: "Run says the world stopped at its limit", ask: func(t *testing.T) error {
			w, err := worldMaker(t)(simtest.LoadObjects(t, objs))
			if err != nil {
				t.Fatal(err)
			}
			err = w.Run(context.Background())
			if w.Stopped() != err {
				t.Errorf("Stopped() = %v, want Run's error", w.Stopped())
			}
			return err
		}},
		{name: "capacity gives no count", ask: func(t *testing.T) error {
			_, err := questions.Capacity(context.Background(), simtest.LoadObjects(t, objs), worldMaker(t), st.MakePod().Name("copy").Obj(), 10)
			return err
		}},
		{name: "capacity --add-nodes gives no node count", ask: func(t *testing.T) error {
			load := func() (*cluster.Cluster, error) { return simtest.LoadObjects(t, objs), nil }
			_, err := questions.AddNodes(context.Background(), load, worldMaker(t), st.MakeNode().Name("extra").Obj(), 4)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErr(t, tt.ask(t)) })
	}
}
