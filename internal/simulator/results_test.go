package simulator_test

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/testing/clustergen"
)

// PodResultsFor lists, for the pods it is given, exactly what PodResults
// lists for them, and every preempted pod PodResults lists, in the same
// order.
func TestPodResultsForIsPodResultsOfItsPodsAndThePreempted(t *testing.T) {
	gen := func(seed int64) []runtime.Object {
		return clustergen.Generate(clustergen.Options{Nodes: 40, Pods: 900, RunningFraction: 0.5, Seed: seed})
	}
	for _, tc := range []struct {
		name string
		objs []runtime.Object
	}{
		{"a generated cluster under pressure, with preemptions", gen(5)},
		{"another seed", gen(11)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := simtest.Simulate(t, simtest.LoadObjects(t, tc.objs), 1)
			all := w.PodResults()
			preempted := 0
			for _, p := range all {
				if p.Status == report.StatusPreempted {
					preempted++
				}
			}
			if preempted == 0 {
				t.Fatal("no pod was preempted: the case does not hold what it is for")
			}
			for _, n := range []int{0, 1, len(w.Pending) / 3, len(w.Pending)} {
				some := w.Pending[:n]
				keys := map[string]bool{}
				for _, p := range some {
					keys[p.Namespace+"/"+p.Name] = true
				}
				var want []report.PodResult
				for _, p := range all {
					if keys[p.Namespace+"/"+p.Name] || p.Status == report.StatusPreempted {
						want = append(want, p)
					}
				}
				got := w.PodResultsFor(append(some, some...)) // a pod given twice is listed once
				if !reflect.DeepEqual(got, want) {
					t.Errorf("for the first %d pending pods: %d results, want %d", n, len(got), len(want))
				}
			}
		})
	}
}
