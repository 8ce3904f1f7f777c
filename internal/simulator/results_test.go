package simulator_test

import (
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
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

// A workload whose pods name a scheduler no profile has is listed with
// its pods, pending for that reason, not as a workload of no pods.
func TestPodsForAnotherSchedulerAreCountedUnderTheirWorkloadAsLeftToIt(t *testing.T) {
	pod := func(app, scheduler string) *st.PodWrapper {
		p := st.MakePod().Label("app", app).Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
		if scheduler != "" {
			p = p.SchedulerName(scheduler)
		}
		return p
	}
	c := simtest.LoadObjects(t, []runtime.Object{
		simtest.Node("n1"),
		st.MakeDeployment("web", 3, pod("web", "volcano")),
		st.MakeDeployment("api", 2, pod("api", "")),
	})
	w, r := simtest.Simulate(t, c, 1)
	if len(w.Foreign) != 3 {
		t.Fatalf("%d pods for other schedulers, want the 3 of web", len(w.Foreign))
	}
	want := map[string][3]int{"web": {3, 0, 3}, "api": {2, 2, 0}}
	for _, wl := range r.Workloads {
		got := [3]int{wl.Pods, wl.Scheduled, wl.Pending}
		if got != want[wl.Name] {
			t.Errorf("%s: pods, scheduled, pending %v, want %v", wl.Name, got, want[wl.Name])
		}
		if wl.Name == "web" && (len(wl.Reasons) != 1 || !strings.Contains(wl.Reasons[0].Message, `left to scheduler "volcano"`)) {
			t.Errorf("web's reasons %+v, want the pods left to volcano", wl.Reasons)
		}
	}
	if r.Summary.OtherScheduler != 3 || r.Summary.Unschedulable != 0 {
		t.Errorf("summary %+v, want 3 for other schedulers and none unschedulable", r.Summary)
	}
	for _, p := range r.Pods {
		if strings.HasPrefix(p.Name, "web-") && p.Status != report.StatusOtherScheduler {
			t.Errorf("pod %s is %s, want %s", p.Name, p.Status, report.StatusOtherScheduler)
		}
	}
}
