package interpodaffinity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

const zone = v1.LabelTopologyZone

var (
	affinityMiss = framework.UnschedulableAndUnresolvable.String() + ": " + ErrReasonAffinityRulesNotMatch
	antiMiss     = framework.Unschedulable.String() + ": " + ErrReasonAntiAffinityRulesNotMatch
	existingMiss = framework.Unschedulable.String() + ": " + ErrReasonExistingAntiAffinityRulesNotMatch
)

func nodes() []*v1.Node {
	return []*v1.Node{
		st.MakeNode().Name("n1").Label(zone, "a").Obj(),
		st.MakeNode().Name("n2").Label(zone, "a").Obj(),
		st.MakeNode().Name("n3").Label(zone, "b").Obj(),
		st.MakeNode().Name("n4").Obj(),
	}
}

func namespace(name string, labels map[string]string) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func selectorTerm(key, app string, nsSelector map[string]string) v1.PodAffinityTerm {
	t := st.AffinityTerm(key, app)
	t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: nsSelector}
	return t
}

func newPlugin(t *testing.T, args *configv1.InterPodAffinityArgs, nis []*framework.NodeInfo, objs ...interface{}) framework.Plugin {
	t.Helper()
	pl, err := New(context.Background(), args, st.FakeHandle{Lister: cache.NewSnapshot(nis...), Objects: objs})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func TestFilter(t *testing.T) {
	withKeys := st.AffinityTerm(zone, "web")
	withKeys.MatchLabelKeys = []string{"rev"}
	tests := []struct {
		name string
		pods []*v1.Pod
		objs []interface{}
		pod  *v1.Pod
		want map[string]string
	}{
		{
			name: "the pod's anti-affinity rejects the zone of a matching pod but not a node without the key",
			pods: []*v1.Pod{st.MakePod().Name("w").Label("app", "web").Node("n1").Obj()},
			pod:  st.MakePod().Name("p").PodAntiAffinity(st.AffinityTerm(zone, "web")).Obj(),
			want: map[string]string{"n1": antiMiss, "n2": antiMiss, "n3": "", "n4": ""},
		},
		{
			name: "the pod's affinity admits only the zone of a matching pod, and never a node without the key",
			pods: []*v1.Pod{st.MakePod().Name("d").Label("app", "db").Node("n3").Obj()},
			pod:  st.MakePod().Name("p").PodAffinity(st.AffinityTerm(zone, "db")).Obj(),
			want: map[string]string{"n1": affinityMiss, "n2": affinityMiss, "n3": "", "n4": affinityMiss},
		},
		{
			name: "the first pod of a group with affinity to itself may go to any node with the key",
			pod:  st.MakePod().Name("p").Label("app", "web").PodAffinity(st.AffinityTerm(zone, "web")).Obj(),
			want: map[string]string{"n1": "", "n2": "", "n3": "", "n4": affinityMiss},
		},
		{
			name: "a pod with affinity to a group that does not exist yet, and not matching it itself, fits nowhere",
			pod:  st.MakePod().Name("p").Label("app", "api").PodAffinity(st.AffinityTerm(zone, "web")).Obj(),
			want: map[string]string{"n1": affinityMiss, "n2": affinityMiss, "n3": affinityMiss, "n4": affinityMiss},
		},
		{
			name: "an existing pod in another namespace repels the pod when its term names the pod's namespace",
			pods: []*v1.Pod{st.MakePod().Name("o").Namespace("other").Node("n1").PodAntiAffinity(st.AffinityTerm(zone, "web", "default")).Obj()},
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			want: map[string]string{"n1": existingMiss, "n2": existingMiss, "n3": "", "n4": ""},
		},
		{
			name: "an existing pod's term without namespaces covers only its own namespace",
			pods: []*v1.Pod{st.MakePod().Name("o").Namespace("other").Node("n1").PodAntiAffinity(st.AffinityTerm(zone, "web")).Obj()},
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			want: map[string]string{"n1": "", "n2": "", "n3": "", "n4": ""},
		},
		{
			name: "an existing pod's namespaceSelector is matched against the labels of the pod's namespace",
			pods: []*v1.Pod{st.MakePod().Name("o").Namespace("other").Node("n3").PodAntiAffinity(selectorTerm(zone, "web", map[string]string{"team": "a"})).Obj()},
			objs: []interface{}{namespace("team-a", map[string]string{"team": "a"})},
			pod:  st.MakePod().Name("p").Namespace("team-a").Label("app", "web").Obj(),
			want: map[string]string{"n1": "", "n2": "", "n3": existingMiss, "n4": ""},
		},
		{
			name: "the pod's namespaceSelector selects pods by their namespace's labels, and not its own namespace",
			pods: []*v1.Pod{
				st.MakePod().Name("w1").Namespace("team-a").Label("app", "web").Node("n3").Obj(),
				st.MakePod().Name("w2").Label("app", "web").Node("n1").Obj(),
			},
			objs: []interface{}{namespace("team-a", map[string]string{"team": "a"}), namespace("default", nil)},
			pod:  st.MakePod().Name("p").PodAntiAffinity(selectorTerm(zone, "web", map[string]string{"team": "a"})).Obj(),
			want: map[string]string{"n1": "", "n2": "", "n3": antiMiss, "n4": ""},
		},
		{
			name: "an empty namespaceSelector selects pods in every namespace",
			pods: []*v1.Pod{st.MakePod().Name("w1").Namespace("elsewhere").Label("app", "web").Node("n3").Obj()},
			pod:  st.MakePod().Name("p").PodAntiAffinity(selectorTerm(zone, "web", nil)).Obj(),
			want: map[string]string{"n1": "", "n2": "", "n3": antiMiss, "n4": ""},
		},
		{
			// kube-apiserver merges matchLabelKeys into the selector at
			// admission; the scheduler reads the selector alone.
			name: "matchLabelKeys is left to the API server: the selector as stored decides",
			pods: []*v1.Pod{st.MakePod().Name("old").Label("app", "web").Label("rev", "1").Node("n1").Obj()},
			pod:  st.MakePod().Name("p").Label("app", "web").Label("rev", "2").PodAntiAffinity(withKeys).Obj(),
			want: map[string]string{"n1": antiMiss, "n2": antiMiss, "n3": "", "n4": ""},
		},
		{
			name: "the pod's affinity is checked before anti-affinity",
			pods: []*v1.Pod{st.MakePod().Name("w").Label("app", "web").Node("n1").Obj()},
			pod:  st.MakePod().Name("p").PodAffinity(st.AffinityTerm(zone, "web")).PodAntiAffinity(st.AffinityTerm(zone, "web")).Obj(),
			want: map[string]string{"n1": antiMiss, "n2": antiMiss, "n3": affinityMiss, "n4": affinityMiss},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes(), tt.pods)
			pl := newPlugin(t, nil, nis, tt.objs...)
			if diff := cmp.Diff(tt.want, st.RunFilterAll(pl, tt.pod, nis...)); diff != "" {
				t.Errorf("verdicts (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestScore(t *testing.T) {
	db := st.MakePod().Name("d").Label("app", "db").Node("n1").Obj()
	tests := []struct {
		name string
		args *configv1.InterPodAffinityArgs
		pods []*v1.Pod
		pod  *v1.Pod
		// want are normalized scores; nil when PreScore skips.
		want map[string]int64
	}{
		{
			name: "preferred affinity favours the zone of a matching pod",
			pods: []*v1.Pod{db},
			pod:  st.MakePod().Name("p").PreferredPodAffinity(10, st.AffinityTerm(zone, "db")).Obj(),
			want: map[string]int64{"n1": 100, "n2": 100, "n3": 0, "n4": 0},
		},
		{
			name: "preferred anti-affinity disfavours the zone of a matching pod",
			pods: []*v1.Pod{db},
			pod:  st.MakePod().Name("p").PreferredPodAntiAffinity(10, st.AffinityTerm(zone, "db")).Obj(),
			want: map[string]int64{"n1": 0, "n2": 0, "n3": 100, "n4": 100},
		},
		{
			// zone a: +10 -5 = 5, zone b: -5; min-max over {5,5,-5,0}.
			name: "weights of several terms add up per domain and are scaled min to max",
			pods: []*v1.Pod{db, st.MakePod().Name("c").Label("app", "cache").Node("n3").Obj(), st.MakePod().Name("c2").Label("app", "cache").Node("n2").Obj()},
			pod:  st.MakePod().Name("p").PreferredPodAffinity(10, st.AffinityTerm(zone, "db")).PreferredPodAntiAffinity(5, st.AffinityTerm(zone, "cache")).Obj(),
			want: map[string]int64{"n1": 100, "n2": 100, "n3": 0, "n4": 50},
		},
		{
			name: "an existing pod's required affinity to the pod counts with hardPodAffinityWeight",
			pods: []*v1.Pod{st.MakePod().Name("e").Node("n3").PodAffinity(st.AffinityTerm(zone, "web")).Obj()},
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			want: map[string]int64{"n1": 0, "n2": 0, "n3": 100, "n4": 0},
		},
		{
			name: "hardPodAffinityWeight 0 ignores existing pods' required affinity",
			args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptr.To[int32](0)},
			pods: []*v1.Pod{st.MakePod().Name("e").Node("n3").PodAffinity(st.AffinityTerm(zone, "web")).Obj()},
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			want: nil,
		},
		{
			name: "an existing pod's preferred anti-affinity to the pod disfavours its zone",
			pods: []*v1.Pod{st.MakePod().Name("e").Node("n1").PreferredPodAntiAffinity(20, st.AffinityTerm(zone, "web")).Obj()},
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			want: map[string]int64{"n1": 0, "n2": 0, "n3": 100, "n4": 100},
		},
		{
			name: "ignorePreferredTermsOfExistingPods skips a pod without preferred terms",
			args: &configv1.InterPodAffinityArgs{IgnorePreferredTermsOfExistingPods: true},
			pods: []*v1.Pod{st.MakePod().Name("e").Node("n1").PreferredPodAntiAffinity(20, st.AffinityTerm(zone, "web")).Obj()},
			pod:  st.MakePod().Name("p").Label("app", "web").Obj(),
			want: nil,
		},
		{
			name: "preferred terms that match no pod skip scoring",
			pods: []*v1.Pod{db},
			pod:  st.MakePod().Name("p").PreferredPodAffinity(10, st.AffinityTerm(zone, "nothing")).Obj(),
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes(), tt.pods)
			pl := newPlugin(t, tt.args, nis)
			got, status := st.RunScore(pl, tt.pod, nis...)
			if tt.want == nil {
				if !status.IsSkip() {
					t.Fatalf("PreScore = %v (scores %v), want Skip", status, got)
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
	nis := st.NodeInfos(nodes(), []*v1.Pod{
		st.MakePod().Name("w").Label("app", "web").Node("n1").PodAntiAffinity(st.AffinityTerm(zone, "web")).Obj()})
	pl := newPlugin(t, nil, nis)
	pod := st.MakePod().Name("p").Label("app", "web").PodAntiAffinity(st.AffinityTerm(zone, "web")).
		PreferredPodAffinity(3, st.AffinityTerm(zone, "web")).Obj()
	ctx := context.Background()
	state := framework.NewCycleState()
	if _, s := pl.(framework.PreFilterPlugin).PreFilter(ctx, state, pod, nis); !s.IsSuccess() {
		t.Fatal(s)
	}
	if s := pl.(framework.PreScorePlugin).PreScore(ctx, state, pod, nis); !s.IsSuccess() {
		t.Fatal(s)
	}
	allocs := testing.AllocsPerRun(100, func() {
		pl.(framework.FilterPlugin).Filter(ctx, state, pod, nis[2])
		pl.(framework.ScorePlugin).Score(ctx, state, pod, nis[2])
	})
	if allocs != 0 {
		t.Errorf("Filter+Score allocate %v times per node, want 0", allocs)
	}
}

// The plugin keeps per-node counts across cycles, keyed by the terms.
// Selectors that print alike ("" for both labels.Nothing and
// labels.Everything) must not share them: a pod placed after another
// gets the verdicts a fresh plugin gives it.
func TestMemosKeepSelectorsThatPrintAlikeApart(t *testing.T) {
	noSelector := func(t v1.PodAffinityTerm) v1.PodAffinityTerm { t.LabelSelector = nil; return t }
	emptySelector := func(t v1.PodAffinityTerm) v1.PodAffinityTerm { t.LabelSelector = &metav1.LabelSelector{}; return t }
	allNamespaces := func(t v1.PodAffinityTerm) v1.PodAffinityTerm {
		t.NamespaceSelector = &metav1.LabelSelector{}
		return t
	}
	web := st.AffinityTerm(zone, "web", "default")
	tests := []struct {
		name          string
		existing      *v1.Pod
		first, second v1.PodAffinityTerm
	}{
		{name: "anti-affinity without labelSelector after one with an empty labelSelector",
			existing: st.MakePod().Name("w").Label("app", "web").Node("n1").Obj(), first: emptySelector(web), second: noSelector(web)},
		{name: "anti-affinity with an empty labelSelector after one without",
			existing: st.MakePod().Name("w").Label("app", "web").Node("n1").Obj(), first: noSelector(web), second: emptySelector(web)},
		{name: "anti-affinity in the listed namespaces after the same term with namespaceSelector {}",
			existing: st.MakePod().Name("w").Namespace("other").Label("app", "web").Node("n1").Obj(), first: allNamespaces(web), second: web},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nis := st.NodeInfos(nodes(), []*v1.Pod{tt.existing})
			objs := []interface{}{namespace("default", nil), namespace("other", nil)}
			second := st.MakePod().Name("second").PodAntiAffinity(tt.second).Obj()
			want := st.RunFilterAll(newPlugin(t, nil, nis, objs...), second, nis...)
			pl := newPlugin(t, nil, nis, objs...)
			st.RunFilterAll(pl, st.MakePod().Name("first").PodAntiAffinity(tt.first).Obj(), nis...)
			if diff := cmp.Diff(want, st.RunFilterAll(pl, second, nis...)); diff != "" {
				t.Errorf("the second pod's verdicts after the first's (-fresh plugin,+same plugin):\n%s", diff)
			}
		})
	}
}
