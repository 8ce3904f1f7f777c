package timeline_test

import (
	"context"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	"k8s.io/utils/ptr"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// replay loads the objects, replays the steps on them and returns the
// world, its report and the trace.
func replay(t *testing.T, objs []runtime.Object, steps ...cluster.Step) (*simulator.World, *report.Report, []report.TraceLine) {
	t.Helper()
	c := simtest.LoadObjects(t, objs)
	c.Scenario = &cluster.Scenario{Name: "test", Source: "scenario.yaml: document 1", Steps: steps}
	w, err := simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	w.TraceTo(&out)
	if err := timeline.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushTrace(); err != nil {
		t.Fatal(err)
	}
	for _, err := range w.CheckInvariants() {
		t.Errorf("invariant broken: %v", err)
	}
	return w, w.Report(), simtest.DecodeTrace(t, out.String())
}

// placement maps the pods of the report to node (or status when not
// scheduled), by name prefix.
func placementsByPrefix(r *report.Report, prefix string) map[string]string {
	out := map[string]string{}
	for _, p := range r.Pods {
		if strings.HasPrefix(p.Name, prefix) {
			v := p.Node
			if p.Status != report.StatusScheduled {
				v = p.Status + "@" + p.Node
			}
			out[p.Name] = v
		}
	}
	return out
}

// webBudget is a PodDisruptionBudget of the web pods with minAvailable.
func webBudget(minAvailable int32) *policyv1.PodDisruptionBudget {
	v := intstr.FromInt32(minAvailable)
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &v, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
}

var cpu = func(n string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: n} }

func TestAScenarioReplaysItsStepsOnVirtualTime(t *testing.T) {
	web := st.MakePod().Label("app", "web").Req(cpu("1"))
	tests := []struct {
		name  string
		objs  []runtime.Object
		steps []cluster.Step
		check func(t *testing.T, w *simulator.World, r *report.Report, trace []report.TraceLine)
	}{
		{
			name:  "a drained node's Deployment pods are recreated on the other node",
			objs:  []runtime.Object{simtest.Node("a"), st.MakeDeployment("web", 2, web)},
			steps: []cluster.Step{{At: time.Minute, Name: "drain a", Drain: []string{"a"}}},
			check: func(t *testing.T, w *simulator.World, r *report.Report, _ []report.TraceLine) {
				// Both pods start on a (the only node); a is drained and
				// they come back pending, with nowhere to go but a, cordoned.
				if got := r.Timeline.Steps[0]; got.Deleted != 2 || got.Created != 2 || got.Pending != 2 {
					t.Errorf("step = %+v, want 2 deleted, 2 created, 2 pending", got)
				}
				if r.Summary.Deleted != 2 || r.Summary.Unschedulable != 2 {
					t.Errorf("summary = %+v, want 2 deleted and 2 unschedulable", r.Summary)
				}
			},
		},
		{
			name:  "a drain evicts a budget's pods one at a time, each when the one before runs again elsewhere",
			objs:  []runtime.Object{simtest.Node("a"), st.MakeDeployment("web", 3, web), webBudget(2)},
			steps: []cluster.Step{{At: time.Minute, Name: "add b, drain a", Create: []runtime.Object{simtest.Node("b")}, Drain: []string{"a"}}},
			check: func(t *testing.T, w *simulator.World, r *report.Report, trace []report.TraceLine) {
				// The budget allows one disruption at a time: each eviction
				// waits for the last one's replacement to run on b, and
				// the drain asks again every 5 s.
				var onB []string
				for _, l := range trace {
					if l.Result == report.TraceScheduled && l.Node == "b" {
						onB = append(onB, l.T)
					}
				}
				want := []string{"2026-01-01T00:01:00Z", "2026-01-01T00:01:05Z", "2026-01-01T00:01:10Z"}
				if diff := cmp.Diff(want, onB); diff != "" {
					t.Errorf("bindings to b (-want,+got):\n%s", diff)
				}
				if r.Summary.Deleted != 3 {
					t.Errorf("summary = %+v, want the 3 pods of a deleted", r.Summary)
				}
			},
		},
		{
			name:  "a drain leaves a mirror pod on its node, as kubectl drain does",
			objs:  []runtime.Object{simtest.Node("a"), st.MakePod().Name("etcd-a").Node("a").Annotation(v1.MirrorPodAnnotationKey, "hash").Req(cpu("1")).Obj()},
			steps: []cluster.Step{{At: time.Minute, Name: "drain a", Drain: []string{"a"}}},
			check: func(t *testing.T, w *simulator.World, r *report.Report, _ []report.TraceLine) {
				if r.Summary.Deleted != 0 || r.Summary.Running != 1 {
					t.Errorf("summary %+v; want etcd-a still running on a, nothing deleted", r.Summary)
				}
			},
		},
		{
			name:  "a drain whose budget allows no eviction leaves the pods on the cordoned node",
			objs:  []runtime.Object{simtest.Node("a"), st.MakeDeployment("web", 3, web), webBudget(3)},
			steps: []cluster.Step{{At: time.Minute, Name: "add b, drain a", Create: []runtime.Object{simtest.Node("b")}, Drain: []string{"a"}}},
			check: func(t *testing.T, w *simulator.World, r *report.Report, _ []report.TraceLine) {
				for name, where := range placementsByPrefix(r, "web-") {
					if where != "a" {
						t.Errorf("pod %s: %s, want still on a", name, where)
					}
				}
				if r.Summary.Deleted != 0 {
					t.Errorf("summary = %+v, want nothing deleted", r.Summary)
				}
			},
		},
		{
			name: "pods drained from one node land on the node a later step adds",
			objs: []runtime.Object{simtest.Node("a"), st.MakeDeployment("web", 2, web)},
			steps: []cluster.Step{
				{At: time.Minute, Name: "drain a", Drain: []string{"a"}},
				{At: 2 * time.Minute, Name: "add b", Create: []runtime.Object{simtest.Node("b")}},
			},
			check: func(t *testing.T, w *simulator.World, r *report.Report, trace []report.TraceLine) {
				for name, where := range placementsByPrefix(r, "web-") {
					if where != "b" && !strings.HasPrefix(where, report.StatusDeleted+"@a") {
						t.Errorf("pod %s: %s, want on b or deleted from a", name, where)
					}
				}
				last := trace[len(trace)-1]
				if last.T != "2026-01-01T00:02:00Z" || last.Result != report.TraceScheduled || last.Node != "b" {
					t.Errorf("last attempt = %+v, want a binding to b at 2m, when b was added", last)
				}
			},
		},
		{
			name: "a Job runs its completions one after another as its pods finish",
			objs: []runtime.Object{simtest.Node("a"),
				st.MakeJob("batch", 1, ptr.To(int32(3)), st.MakePod().Req(cpu("1")).Annotation(cluster.DurationAnnotation, "10m")).Obj()},
			check: func(t *testing.T, w *simulator.World, r *report.Report, trace []report.TraceLine) {
				var binds []string
				for _, l := range trace {
					if l.Result == report.TraceScheduled {
						binds = append(binds, l.T)
					}
				}
				want := []string{"2026-01-01T00:00:00Z", "2026-01-01T00:10:00Z", "2026-01-01T00:20:00Z"}
				if diff := cmp.Diff(want, binds); diff != "" {
					t.Errorf("binding times (-want,+got):\n%s", diff)
				}
				if r.Summary.Finished != 3 {
					t.Errorf("summary = %+v, want 3 finished", r.Summary)
				}
				if got := r.Workloads[0]; got.Completions != "3/3" || got.Pods != 0 {
					t.Errorf("Job = %+v, want no pod left and completions 3/3, as kubectl get jobs shows them", got)
				}
			},
		},
		{
			name: "a Job without completions is done once its pod succeeds: no pod starts after it",
			objs: []runtime.Object{simtest.Node("a"),
				st.MakeJob("once", 1, nil, st.MakePod().Req(cpu("1")).Annotation(cluster.DurationAnnotation, "10m")).Obj()},
			steps: []cluster.Step{{At: time.Hour, Name: "end"}},
			check: func(t *testing.T, w *simulator.World, r *report.Report, trace []report.TraceLine) {
				if len(trace) != 1 || r.Summary.Finished != 1 {
					t.Errorf("trace %+v, summary %+v: want one pod, bound once and finished", trace, r.Summary)
				}
				if got := r.Workloads[0]; got.Completions != "1/1" || got.Pods != 0 {
					t.Errorf("Job = %+v, want completions 1/1 and no pod left", got)
				}
			},
		},
		{
			name: "scaling down deletes the newest pods first",
			objs: []runtime.Object{simtest.Node("a"), st.MakeDeployment("web", 1, web)},
			steps: []cluster.Step{
				{At: time.Minute, Name: "up", Scale: []cluster.ScaleRef{{Kind: "Deployment", Name: "web", Replicas: 3}}},
				{At: 2 * time.Minute, Name: "down", Scale: []cluster.ScaleRef{{Kind: "Deployment", Name: "web", Replicas: 1}}},
			},
			check: func(t *testing.T, w *simulator.World, r *report.Report, trace []report.TraceLine) {
				first := trace[0].Pod
				running := 0
				for _, p := range r.Pods {
					if p.Status == report.StatusScheduled {
						running++
						if "default/"+p.Name != first {
							t.Errorf("%s still runs, want only the first pod %s", p.Name, first)
						}
					}
				}
				if running != 1 || r.Timeline.Steps[1].Deleted != 2 {
					t.Errorf("%d running, step down deleted %d; want 1 and 2", running, r.Timeline.Steps[1].Deleted)
				}
			},
		},
		{
			name: "after a node goes, a Deployment replaces its pods and scaling down counts the replacements, not the pods gone",
			objs: []runtime.Object{simtest.Node("a"), simtest.Node("b"), st.MakeDeployment("web", 3, web)},
			steps: []cluster.Step{
				{At: time.Minute, Name: "up", Scale: []cluster.ScaleRef{{Kind: "Deployment", Name: "web", Replicas: 4}}},
				{At: 2 * time.Minute, Name: "lose a", DeleteNodes: []string{"a"}},
				{At: 3 * time.Minute, Name: "down", Scale: []cluster.ScaleRef{{Kind: "Deployment", Name: "web", Replicas: 2}}},
			},
			check: func(t *testing.T, w *simulator.World, r *report.Report, _ []report.TraceLine) {
				lost := r.Timeline.Steps[1]
				if lost.Deleted == 0 || lost.Created != lost.Deleted {
					t.Errorf("step lose a = %+v, want each pod deleted with a replaced", lost)
				}
				running := 0
				for _, where := range placementsByPrefix(r, "web-") {
					if where == "b" {
						running++
					}
				}
				if running != 2 || r.Timeline.Steps[2].Deleted != 2 {
					t.Errorf("%d running on b, step down deleted %d; want 2 and 2", running, r.Timeline.Steps[2].Deleted)
				}
			},
		},
		{
			name:  "a node added by a step gets its DaemonSet pod",
			objs:  []runtime.Object{simtest.Node("a"), st.MakeDaemonSet("agent", st.MakePod().Label("app", "agent").Req(cpu("100m")))},
			steps: []cluster.Step{{At: time.Minute, Name: "add b", Create: []runtime.Object{simtest.Node("b")}}},
			check: func(t *testing.T, w *simulator.World, r *report.Report, trace []report.TraceLine) {
				if got := r.Workloads[0]; got.Pods != 2 || got.Scheduled != 2 {
					t.Errorf("DaemonSet = %+v, want 2 pods scheduled", got)
				}
				if got := r.Timeline.Steps[0].Created; got != 1 {
					t.Errorf("step created %d pods, want the new node's daemon pod", got)
				}
			},
		},
		{
			name:  "a step that creates a bare Pod counts it as created",
			objs:  []runtime.Object{simtest.Node("a")},
			steps: []cluster.Step{{At: time.Minute, Name: "create", Create: []runtime.Object{st.MakePod().Name("p").Req(cpu("1")).Obj(), st.MakePod().Name("q").Req(cpu("1")).Obj()}}},
			check: func(t *testing.T, w *simulator.World, r *report.Report, _ []report.TraceLine) {
				if got := r.Timeline.Steps[0]; got.Created != 2 || got.Scheduled != 2 {
					t.Errorf("step = %+v, want 2 created and 2 scheduled", got)
				}
			},
		},
		{
			name: "a cordoned or tainted node takes no new pod",
			objs: []runtime.Object{simtest.Node("a"), simtest.Node("b"), simtest.Node("c")},
			steps: []cluster.Step{
				{At: 0, Name: "fence", Cordon: []string{"a"}, Taint: []cluster.NodeTaint{{Node: "b", Key: "k", Effect: v1.TaintEffectNoSchedule}}},
				{At: time.Minute, Name: "create", Create: []runtime.Object{st.MakePod().Name("p").Req(cpu("1")).Obj()}},
			},
			check: func(t *testing.T, w *simulator.World, r *report.Report, _ []report.TraceLine) {
				if got := placementsByPrefix(r, "p"); got["p"] != "c" {
					t.Errorf("p placed %v, want on c", got)
				}
			},
		},
		{
			name: "deleting a node deletes its pods and the StatefulSet recreates its pod under the same name",
			// a, twice b's size, is where db-0 lands first (the most room).
			objs: []runtime.Object{st.MakeNode().Name("a").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj(),
				simtest.Node("b"), st.MakeStatefulSet("db", 1, st.MakePod().Label("app", "db").Req(cpu("1"))).Obj()},
			steps: []cluster.Step{{At: time.Minute, Name: "lose a node", DeleteNodes: []string{"a"}}},
			check: func(t *testing.T, w *simulator.World, r *report.Report, trace []report.TraceLine) {
				first := trace[0].Node
				if first != "a" {
					t.Fatalf("db-0 first on %s, want a, the node the step deletes", first)
				}
				last := trace[len(trace)-1]
				if last.Pod != "default/db-0" || last.Result != report.TraceScheduled || last.Node == first || last.T != "2026-01-01T00:01:00Z" {
					t.Errorf("trace = %+v, want db-0 bound again at 1m, away from %s", trace, first)
				}
				if got := placementsByPrefix(r, "db-"); len(got) != 1 || got["db-0"] == first {
					t.Errorf("db pods = %v, want db-0 scheduled on the other node", got)
				}
				if got := r.Timeline.Steps[0]; got.Deleted != 1 || got.Created != 1 {
					t.Errorf("step = %+v, want 1 deleted and 1 created (db-0 again)", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, r, trace := replay(t, tt.objs, tt.steps...)
			if r.Timeline == nil || len(r.Timeline.Steps) != len(tt.steps) {
				t.Fatalf("timeline = %+v, want %d steps", r.Timeline, len(tt.steps))
			}
			tt.check(t, w, r, trace)
		})
	}
}
