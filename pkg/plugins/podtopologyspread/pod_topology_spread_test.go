package podtopologyspread

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

const zone = v1.LabelTopologyZone

var (
	unresolvable = framework.UnschedulableAndUnresolvable.String() + ": " + ErrReasonNodeLabelNotMatch
	skewed       = framework.Unschedulable.String() + ": " + ErrReasonConstraintsNotMatch
)

func node(name, z string) *st.NodeWrapper {
	n := st.MakeNode().Name(name)
	if z != "" {
		n.Label(zone, z)
	}
	return n
}

func web(name, nodeName string) *v1.Pod {
	return st.MakePod().Name(name).Label("app", "web").Node(nodeName).Obj()
}

func newPlugin(t *testing.T, args *configv1.PodTopologySpreadArgs, nodes []*framework.NodeInfo, objs ...interface{}) *PodTopologySpread {
	t.Helper()
	h := st.FakeHandle{Lister: cache.NewSnapshot(nodes...), Objects: objs}
	pl, err := New(context.Background(), args, h)
	if err != nil {
		t.Fatal(err)
	}
	return pl.(*PodTopologySpread)
}

func TestFilter(t *testing.T) {
	honor, ignore := v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore
	three := int32(3)
	fourNodes := []*v1.Node{node("a1", "a").Obj(), node("a2", "a").Obj(), node("b1", "b").Obj(), node("nokey", "").Obj()}
	tests := []struct {
		name  string
		nodes []*v1.Node
		pods  []*v1.Pod
		pod   *v1.Pod
		want  map[string]string
	}{
		{
			name:  "a node in the fuller zone is rejected and a node without the zone key is unresolvable",
			nodes: fourNodes,
			pods:  []*v1.Pod{web("w1", "a1"), web("w2", "a1"), web("w3", "nokey")},
			pod:   st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(),
			want:  map[string]string{"a1": skewed, "a2": skewed, "b1": "", "nokey": unresolvable},
		},
		{
			name:  "pods in another namespace do not count",
			nodes: fourNodes,
			pods:  []*v1.Pod{st.MakePod().Name("w1").Namespace("other").Label("app", "web").Node("a1").Obj()},
			pod:   st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(),
			want:  map[string]string{"a1": "", "a2": "", "b1": "", "nokey": unresolvable},
		},
		{
			name:  "a pod its own selector does not match adds no self count",
			nodes: fourNodes,
			pods:  []*v1.Pod{web("w1", "a1"), web("w2", "a1")},
			pod:   st.MakePod().Name("p").Label("app", "api").SpreadConstraint(2, zone, v1.DoNotSchedule, "web").Obj(),
			want:  map[string]string{"a1": "", "a2": "", "b1": "", "nokey": unresolvable},
		},
		{
			name:  "with as many domains as minDomains the global minimum is the emptiest domain",
			nodes: fourNodes[:3],
			pods:  []*v1.Pod{web("w1", "a1"), web("w2", "b1")},
			pod:   st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(),
			want:  map[string]string{"a1": "", "a2": "", "b1": ""},
		},
		{
			name:  "with fewer domains than minDomains the global minimum is 0",
			nodes: fourNodes[:3],
			pods:  []*v1.Pod{web("w1", "a1"), web("w2", "b1")},
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web")
				p.LastSpreadConstraint().MinDomains = &three
				return p.Obj()
			}(),
			want: map[string]string{"a1": skewed, "a2": skewed, "b1": skewed},
		},
		{
			name:  "nodeTaintsPolicy Ignore (the default) counts a tainted node's empty domain",
			nodes: []*v1.Node{node("a1", "a").Obj(), node("b1", "b").Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj()},
			pods:  []*v1.Pod{web("w1", "a1")},
			pod:   st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(),
			want:  map[string]string{"a1": skewed, "b1": ""},
		},
		{
			name:  "nodeTaintsPolicy Honor leaves out the domain of a node whose taint the pod does not tolerate",
			nodes: []*v1.Node{node("a1", "a").Obj(), node("b1", "b").Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj()},
			pods:  []*v1.Pod{web("w1", "a1")},
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web")
				p.LastSpreadConstraint().NodeTaintsPolicy = &honor
				return p.Obj()
			}(),
			want: map[string]string{"a1": "", "b1": ""},
		},
		{
			name:  "nodeAffinityPolicy Honor (the default) leaves out domains the pod's nodeSelector excludes",
			nodes: fourNodes[:3],
			pods:  []*v1.Pod{web("w1", "a1"), web("w2", "a2")},
			pod:   st.MakePod().Name("p").Label("app", "web").NodeSelector(zone, "a").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(),
			want:  map[string]string{"a1": "", "a2": "", "b1": ""},
		},
		{
			name:  "nodeAffinityPolicy Ignore counts every domain",
			nodes: fourNodes[:3],
			pods:  []*v1.Pod{web("w1", "a1"), web("w2", "a2")},
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Label("app", "web").NodeSelector(zone, "a").SpreadConstraint(1, zone, v1.DoNotSchedule, "web")
				p.LastSpreadConstraint().NodeAffinityPolicy = &ignore
				return p.Obj()
			}(),
			want: map[string]string{"a1": skewed, "a2": skewed, "b1": ""},
		},
		{
			name:  "matchLabelKeys narrows the count to pods with the pod's own value of the key",
			nodes: fourNodes[:3],
			pods: []*v1.Pod{st.MakePod().Name("old1").Label("app", "web").Label("rev", "1").Node("a1").Obj(),
				st.MakePod().Name("old2").Label("app", "web").Label("rev", "1").Node("a2").Obj()},
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Label("app", "web").Label("rev", "2").SpreadConstraint(1, zone, v1.DoNotSchedule, "web")
				p.LastSpreadConstraint().MatchLabelKeys = []string{"rev"}
				return p.Obj()
			}(),
			want: map[string]string{"a1": "", "a2": "", "b1": ""},
		},
		{
			name:  "an empty labelSelector counts no existing pod, though it matches the pod itself",
			nodes: fourNodes[:3],
			pods:  []*v1.Pod{web("w1", "a1"), web("w2", "a1")},
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web")
				p.LastSpreadConstraint().LabelSelector = &metav1.LabelSelector{}
				return p.Obj()
			}(),
			want: map[string]string{"a1": "", "a2": "", "b1": ""},
		},
		{
			name:  "a constraint without labelSelector selects nothing, even with matchLabelKeys",
			nodes: fourNodes[:3],
			pods: []*v1.Pod{st.MakePod().Name("w1").Label("rev", "2").Node("a1").Obj(),
				st.MakePod().Name("w2").Label("rev", "2").Node("a1").Obj()},
			pod: func() *v1.Pod {
				p := st.MakePod().Name("p").Label("rev", "2").SpreadConstraint(1, zone, v1.DoNotSchedule, "web")
				p.LastSpreadConstraint().LabelSelector = nil
				p.LastSpreadConstraint().MatchLabelKeys = []string{"rev"}
				return p.Obj()
			}(),
			want: map[string]string{"a1": "", "a2": "", "b1": ""},
		},
		{
			name:  "ScheduleAnyway constraints filter nothing",
			nodes: fourNodes,
			pods:  []*v1.Pod{web("w1", "a1"), web("w2", "a1")},
			pod:   st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.ScheduleAnyway, "web").Obj(),
			want:  map[string]string{"a1": "", "a2": "", "b1": "", "nokey": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(tt.nodes, tt.pods)
			pl := newPlugin(t, nil, nis)
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, tt.pod, nis...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestScore(t *testing.T) {
	nodes := []*v1.Node{node("a1", "a").Obj(), node("a2", "a").Obj(), node("b1", "b").Obj(), node("nokey", "").Obj()}
	pods := []*v1.Pod{web("w1", "a1"), web("w2", "a1"), web("w3", "b1")}
	service := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}}
	otherNS := service.DeepCopy()
	otherNS.Namespace = "other"
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	tests := []struct {
		name string
		pod  *v1.Pod
		args *configv1.PodTopologySpreadArgs
		objs []interface{}
		// want are normalized scores; nil when PreScore skips.
		want map[string]int64
	}{
		{
			// weights log(2+2); raw a=round(2*1.386)=3, b=round(1.386)=1; 100*(3+1-s)/3.
			name: "a zone constraint prefers the emptier zone and scores a node without the key 0",
			pod:  st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.ScheduleAnyway, "web").Obj(),
			want: map[string]int64{"a1": 33, "a2": 33, "b1": 100, "nokey": 0},
		},
		{
			// weight log(4+2)=1.79; raw a1=4, a2=0, b1=2, nokey=0; 100*(4+0-s)/4.
			name: "a hostname constraint counts each node's own pods",
			pod:  st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, v1.LabelHostname, v1.ScheduleAnyway, "web").Obj(),
			want: map[string]int64{"a1": 0, "a2": 100, "b1": 50, "nokey": 100},
		},
		{
			name: "a pod without constraints and without a Service or controller is not scored",
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			want: nil,
		},
		{
			name: "a Service in another namespace does not select the pod",
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			objs: []interface{}{otherNS},
			want: nil,
		},
		{
			// hostname maxSkew 3 (w log 6), zone maxSkew 5 (w log 5: a, b and
			// nokey's "" domain); raw a1 round(5.58+7.22)=13, a2 round(2+7.22)=9,
			// b1 round(3.79+5.61)=9, nokey 2 (hostname only); 100*(15-s)/13.
			name: "system default spreading applies to a pod a Service selects, and nodes without a zone still spread by hostname",
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			objs: []interface{}{service},
			want: map[string]int64{"a1": 15, "a2": 46, "b1": 46, "nokey": 100},
		},
		{
			name: "system default spreading also follows the pod's controlling ReplicaSet",
			pod:  st.MakePod().Name("p").Label("app", "web").OwnedBy("apps/v1", "ReplicaSet", "web-1").Obj(),
			objs: []interface{}{rs},
			want: map[string]int64{"a1": 15, "a2": 46, "b1": 46, "nokey": 100},
		},
		{
			name: "defaultingType List with no default constraints does not spread",
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			args: &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting},
			objs: []interface{}{service},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes, pods)
			pl := newPlugin(t, tt.args, nis, tt.objs...)
			got, status := st.RunScore(pl, tt.pod, nis...)
			if tt.want == nil {
				if !status.IsSkip() {
					t.Fatalf("PreScore = %v, want Skip", status)
				}
				return
			}
			if !status.IsSuccess() {
				t.Fatal(status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestFilterAndScoreDoNotAllocate(t *testing.T) {
	nodes := []*v1.Node{node("a1", "a").Obj(), node("b1", "b").Obj()}
	nis := st.NodeInfos(nodes, []*v1.Pod{web("w1", "a1")})
	pl := newPlugin(t, nil, nis)
	pod := st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").
		SpreadConstraint(1, v1.LabelHostname, v1.ScheduleAnyway, "web").Obj()
	ctx := context.Background()
	state := framework.NewCycleState()
	if _, s := pl.PreFilter(ctx, state, pod, nis); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := pl.PreScore(ctx, state, pod, nis); !s.IsSuccess() {
		t.Fatal(s)
	}
	allocs := testing.AllocsPerRun(100, func() {
		pl.Filter(ctx, state, pod, nis[1])
		pl.Score(ctx, state, pod, nis[0])
	})
	if allocs != 0 {
		t.Errorf("Filter+Score allocate %v times per node, want 0", allocs)
	}
}
