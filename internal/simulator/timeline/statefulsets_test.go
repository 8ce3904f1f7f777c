package timeline_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
	st "github.com/kubesched/kubesched/internal/testing"
)

// smallNode fits one pod of 1 cpu.
func smallNode(name string) *v1.Node {
	return st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj()
}

// dbPods is the StatefulSet db's pods in the report, by name: the node,
// or the status and node when not scheduled; each name once, or the test
// fails.
func dbPods(t *testing.T, r *report.Report) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range r.Pods {
		if !strings.HasPrefix(p.Name, "db-") {
			continue
		}
		v := p.Node
		if p.Status != report.StatusScheduled {
			v = p.Status + "@" + p.Node
		}
		if prev, twice := out[p.Name]; twice {
			t.Errorf("pod %s reported twice: %s and %s", p.Name, prev, v)
		}
		out[p.Name] = v
	}
	return out
}

// bindings are the trace's bindings of the db pods: "T pod".
func dbBindings(trace []report.TraceLine) []string {
	var out []string
	for _, l := range trace {
		if l.Result == report.TraceScheduled && strings.HasPrefix(l.Pod, "default/db-") {
			out = append(out, strings.TrimPrefix(l.T, "2026-01-01T")+" "+strings.TrimPrefix(l.Pod, "default/"))
		}
	}
	return out
}

func dbWorkload(t *testing.T, r *report.Report) report.WorkloadResult {
	t.Helper()
	for _, wl := range r.Workloads {
		if wl.Kind == "StatefulSet" && wl.Name == "db" {
			return wl
		}
	}
	t.Fatalf("no StatefulSet db in %+v", r.Workloads)
	return report.WorkloadResult{}
}

// oneByOne adds b at 10s and c at 20s to a cluster of node a, so that an
// OrderedReady StatefulSet of 3 small pods puts db-0 on a, db-1 on b and
// db-2 on c, each as its node comes; then come the steps.
func oneByOne(steps ...cluster.Step) []cluster.Step {
	return append([]cluster.Step{
		{At: 10 * time.Second, Name: "add b", Create: []runtime.Object{smallNode("b")}},
		{At: 20 * time.Second, Name: "add c", Create: []runtime.Object{smallNode("c")}},
	}, steps...)
}

var first3 = []string{"00:00:00Z db-0", "00:00:10Z db-1", "00:00:20Z db-2"}

func TestAStatefulSetThroughATimelineKeepsOnePodPerOrdinal(t *testing.T) {
	db := st.MakePod().Label("app", "db").Req(cpu("1"))
	ordered := []runtime.Object{smallNode("a"), st.MakeStatefulSet("db", 3, db).Obj()}
	tests := []struct {
		name  string
		objs  []runtime.Object
		steps []cluster.Step
		// want are the db pods at the end (node, or status@node);
		// bindings, the db pods' bindings in the trace, in order.
		want     map[string]string
		bindings []string
		// step is the step checked: its index and its pods created and
		// deleted.
		step             int
		created, deleted int
		// pods and scheduled are the StatefulSet's in the workloads
		// table.
		pods, scheduled int
	}{
		{
			name: "two of three nodes deleted, then two added: each lost ordinal is created once again, in order, when the one before it runs",
			objs: ordered,
			steps: oneByOne(
				cluster.Step{At: time.Minute, Name: "lose b and c", DeleteNodes: []string{"b", "c"}},
				cluster.Step{At: 2 * time.Minute, Name: "add d", Create: []runtime.Object{smallNode("d")}},
				cluster.Step{At: 3 * time.Minute, Name: "add e", Create: []runtime.Object{smallNode("e")}},
			),
			want:     map[string]string{"db-0": "a", "db-1": "d", "db-2": "e"},
			bindings: append(first3, "00:02:00Z db-1", "00:03:00Z db-2"),
			// db-1 at once (db-0 runs); db-2 once db-1 runs again.
			step: 2, created: 1, deleted: 2,
			pods: 3, scheduled: 3,
		},
		{
			name: "the node of ordinal 0 deleted with another: ordinal 0 comes back first, the next waits for it, the one still running stays",
			objs: ordered,
			steps: oneByOne(
				cluster.Step{At: time.Minute, Name: "lose a and b", DeleteNodes: []string{"a", "b"}},
				cluster.Step{At: 2 * time.Minute, Name: "add d", Create: []runtime.Object{smallNode("d")}},
				cluster.Step{At: 3 * time.Minute, Name: "add e", Create: []runtime.Object{smallNode("e")}},
			),
			want:     map[string]string{"db-0": "d", "db-1": "e", "db-2": "c"},
			bindings: append(first3, "00:02:00Z db-0", "00:03:00Z db-1"),
			step:     2, created: 1, deleted: 2,
			pods: 3, scheduled: 3,
		},
		{
			name: "a node added while ordinals wait: the one waiting is created when the one before it runs, not before",
			objs: ordered,
			steps: oneByOne(
				cluster.Step{At: time.Minute, Name: "lose a, b and c", DeleteNodes: []string{"a", "b", "c"}},
				cluster.Step{At: 2 * time.Minute, Name: "add d", Create: []runtime.Object{smallNode("d")}},
			),
			// db-0 runs on d; db-1 is created then, and has no room.
			want:     map[string]string{"db-0": "d", "db-1": report.StatusUnschedulable + "@", "db-2": report.StatusNotCreated + "@"},
			bindings: append(first3, "00:02:00Z db-0"),
			step:     2, created: 1, deleted: 3,
			pods: 3, scheduled: 1,
		},
		{
			name: "a Parallel StatefulSet creates every lost ordinal again at once",
			objs: []runtime.Object{smallNode("a"), smallNode("b"), smallNode("c"), st.MakeStatefulSet("db", 3, db).Parallel().Obj()},
			steps: []cluster.Step{
				{At: time.Minute, Name: "lose a and b", DeleteNodes: []string{"a", "b"}},
				{At: 2 * time.Minute, Name: "add d", Create: []runtime.Object{smallNode("d")}},
				{At: 3 * time.Minute, Name: "add e", Create: []runtime.Object{smallNode("e")}},
			},
			step: 0, created: 2, deleted: 2,
			pods: 3, scheduled: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r, trace := replay(t, tt.objs, tt.steps...)
			got := dbPods(t, r)
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("db pods (-want,+got):\n%s", diff)
				}
			} else if len(got) != 3 {
				t.Errorf("db pods %v, want db-0, db-1 and db-2", got)
			}
			if tt.bindings != nil {
				if diff := cmp.Diff(tt.bindings, dbBindings(trace)); diff != "" {
					t.Errorf("db bindings (-want,+got):\n%s", diff)
				}
			}
			if s := r.Timeline.Steps[tt.step]; s.Created != tt.created || s.Deleted != tt.deleted {
				t.Errorf("step %s = %+v, want %d created and %d deleted", s.Name, s, tt.created, tt.deleted)
			}
			if got := dbWorkload(t, r); got.Pods != tt.pods || got.Scheduled != tt.scheduled {
				t.Errorf("StatefulSet db = %+v, want %d pods, %d scheduled", got, tt.pods, tt.scheduled)
			}
		})
	}
}

func TestAStatefulSetScaledDownThroughATimelineDeletesItsHighestOrdinalsFirst(t *testing.T) {
	db := st.MakePod().Label("app", "db").Req(cpu("1"))
	tests := []struct {
		name  string
		set   *appsv1.StatefulSet
		steps []cluster.Step
		want  map[string]string
		// deletedAtScale is what the scale step deleted.
		deletedAtScale int
	}{
		{
			name: "OrderedReady deletes nothing while a pod it keeps does not run, then the highest ordinals once it runs",
			set:  st.MakeStatefulSet("db", 3, db).Obj(),
			steps: oneByOne(
				cluster.Step{At: time.Minute, Name: "lose a", DeleteNodes: []string{"a"}},
				cluster.Step{At: 2 * time.Minute, Name: "scale to 1", Scale: []cluster.ScaleRef{{Kind: "StatefulSet", Name: "db", Replicas: 1}}},
				cluster.Step{At: 3 * time.Minute, Name: "add d", Create: []runtime.Object{smallNode("d")}},
			),
			want: map[string]string{"db-0": "d", "db-1": report.StatusDeleted + "@b", "db-2": report.StatusDeleted + "@c"},
		},
		{
			name: "OrderedReady with every pod it keeps running deletes the highest ordinals at once",
			set:  st.MakeStatefulSet("db", 3, db).Obj(),
			steps: oneByOne(
				cluster.Step{At: time.Minute, Name: "scale to 1", Scale: []cluster.ScaleRef{{Kind: "StatefulSet", Name: "db", Replicas: 1}}},
			),
			want:           map[string]string{"db-0": "a", "db-1": report.StatusDeleted + "@b", "db-2": report.StatusDeleted + "@c"},
			deletedAtScale: 2,
		},
		{
			name: "Parallel deletes the pods past the replicas at once, a pod it keeps pending or not",
			set:  st.MakeStatefulSet("db", 3, db).Parallel().Obj(),
			steps: oneByOne(
				cluster.Step{At: time.Minute, Name: "lose a", DeleteNodes: []string{"a"}},
				cluster.Step{At: 2 * time.Minute, Name: "scale to 1", Scale: []cluster.ScaleRef{{Kind: "StatefulSet", Name: "db", Replicas: 1}}},
				cluster.Step{At: 3 * time.Minute, Name: "add d", Create: []runtime.Object{smallNode("d")}},
			),
			deletedAtScale: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r, _ := replay(t, []runtime.Object{smallNode("a"), tt.set}, tt.steps...)
			got := dbPods(t, r)
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("db pods (-want,+got):\n%s", diff)
				}
			}
			scaled := r.Timeline.Steps[len(r.Timeline.Steps)-1]
			for _, s := range r.Timeline.Steps {
				if strings.HasPrefix(s.Name, "scale") {
					scaled = s
				}
			}
			if scaled.Deleted != tt.deletedAtScale {
				t.Errorf("step %s = %+v, want %d deleted", scaled.Name, scaled, tt.deletedAtScale)
			}
			if wl := dbWorkload(t, r); wl.Pods != 1 || wl.Scheduled != 1 {
				t.Errorf("StatefulSet db = %+v, want its one pod left scheduled", wl)
			}
			for _, p := range r.Pods {
				if p.Name == "db-1" || p.Name == "db-2" {
					if p.Status != report.StatusDeleted || !strings.Contains(p.Message, "StatefulSet default/db: scaled down to 1") {
						t.Errorf("%s: %s %q, want deleted by its StatefulSet scaling down", p.Name, p.Status, p.Message)
					}
				}
			}
		})
	}
}

func TestAStatefulSetPodCreatedAgainKeepsItsClaimsAndIsAnotherPod(t *testing.T) {
	db := st.MakeStatefulSet("db", 2, st.MakePod().Label("app", "db").Req(cpu("1"))).ClaimTemplate("data", "1Gi", "net").Obj()
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	net := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "net"}, Provisioner: "net.example.com", VolumeBindingMode: &wait}
	w, _, _ := replay(t, []runtime.Object{smallNode("a"), net, db},
		cluster.Step{At: 10 * time.Second, Name: "add b", Create: []runtime.Object{smallNode("b")}},
		cluster.Step{At: time.Minute, Name: "lose b", DeleteNodes: []string{"b"}})
	// db-1 ran on b, deleted at 1m; its node gone, it is made again.
	p, ok := w.Store.GetPod("default", "db-1")
	if !ok {
		t.Fatal("db-1 not made again")
	}
	var claims []string
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			claims = append(claims, v.Name+"="+v.PersistentVolumeClaim.ClaimName)
		}
	}
	if diff := cmp.Diff([]string{"data=data-db-1"}, claims); diff != "" {
		t.Errorf("db-1's claims (-want,+got):\n%s", diff)
	}
	n := 0
	for _, o := range w.Cluster.Others {
		if pvc, ok := o.(*v1.PersistentVolumeClaim); ok && pvc.Name == "data-db-1" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d claims data-db-1, want the one made for the first db-1", n)
	}
	// Another pod under the same name: the one gone is not counted.
	var names []string
	for _, q := range w.Cluster.PodsOf("StatefulSet", "default", "db", w.Live) {
		names = append(names, q.Name+" "+q.Spec.NodeName)
	}
	if diff := cmp.Diff([]string{"db-0 a", "db-1 "}, names); diff != "" {
		t.Errorf("the StatefulSet's pods (-want,+got):\n%s", diff)
	}
}
