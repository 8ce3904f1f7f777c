package runtime_test

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/cache"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

// blockFilter is an equivalence plugin that rejects a node holding a pod
// labelled block=yes.
type blockFilter struct{ calls *int }

func (blockFilter) Name() string { return "Block" }
func (p blockFilter) Filter(_ context.Context, _ *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	*p.calls++
	for _, pi := range ni.Pods() {
		if pi.Pod.Labels["block"] == "yes" {
			return framework.NewStatus(framework.Unschedulable, "blocked by "+pi.Pod.Name)
		}
	}
	return nil
}
func (blockFilter) AppendPodSignature(b []byte, _ *framework.PodInfo) ([]byte, bool) { return b, true }

// fakeNominator holds nominations by node.
type fakeNominator struct {
	byNode  map[string][]*framework.PodInfo
	version uint64
}

func (n *fakeNominator) nominate(node string, pods ...*v1.Pod) {
	var pis []*framework.PodInfo
	for _, p := range pods {
		pis = append(pis, framework.NewPodInfo(p))
	}
	if len(pis) == 0 {
		delete(n.byNode, node)
	} else {
		n.byNode[node] = pis
	}
	n.version++
}
func (n *fakeNominator) HasNominatedPods() bool { return len(n.byNode) > 0 }
func (n *fakeNominator) NominatedPodsForNode(node string) []*framework.PodInfo {
	return n.byNode[node]
}
func (n *fakeNominator) DeleteNominatedPodIfExists(*v1.Pod) {}
func (n *fakeNominator) NominatedVersion() uint64           { return n.version }
func (n *fakeNominator) RangeNominated(fn func(node string)) {
	for node := range n.byNode {
		fn(node)
	}
}

func TestFilterCountsTheNominatedPodsOfEachNode(t *testing.T) {
	pod := st.MakePod().Name("p").UID("p").Priority(10).Obj()
	blocker := func(name string, prio int32) *v1.Pod {
		return st.MakePod().Name(name).UID(name).Priority(prio).Label("block", "yes").Obj()
	}
	harmless := func(name string, prio int32) *v1.Pod {
		return st.MakePod().Name(name).UID(name).Priority(prio).Obj()
	}
	type step struct {
		node string
		pods []*v1.Pod
	}
	tests := []struct {
		name string
		// steps change the nominations before each cycle; want is the
		// nodes rejected after each.
		steps [][]step
		want  [][]string
	}{
		{
			name:  "a nominated pod of higher priority is counted on its node only",
			steps: [][]step{{{"n1", []*v1.Pod{blocker("q", 20)}}}},
			want:  [][]string{{"n1"}},
		},
		{
			name:  "a nominated pod of equal priority is counted",
			steps: [][]step{{{"n2", []*v1.Pod{blocker("q", 10)}}}},
			want:  [][]string{{"n2"}},
		},
		{
			name:  "a nominated pod of lower priority is not counted",
			steps: [][]step{{{"n1", []*v1.Pod{blocker("q", 5)}}}},
			want:  [][]string{nil},
		},
		{
			name:  "the pod's own nomination is not counted",
			steps: [][]step{{{"n1", []*v1.Pod{st.MakePod().Name("p").UID("p").Priority(10).Label("block", "yes").Obj()}}}},
			want:  [][]string{nil},
		},
		{
			name: "a verdict is not reused when the node's nominated pods change, even to as many",
			steps: [][]step{
				{{"n1", []*v1.Pod{blocker("q", 20)}}},
				{{"n1", []*v1.Pod{harmless("r", 20)}}},
				{{"n1", []*v1.Pod{harmless("r", 20), blocker("s", 30)}}},
				{{"n1", nil}, {"n0", []*v1.Pod{blocker("t", 10)}}},
			},
			want: [][]string{{"n1"}, nil, {"n1"}, {"n0"}},
		},
	}
	for _, tt := range tests {
		for _, cached := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s (equivalence cache %v)", tt.name, cached), func(t *testing.T) {
				calls := 0
				registry := runtime.Registry{
					"Sort": func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) {
						return fixedSort{}, nil
					},
					"Block": func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) {
						return blockFilter{calls: &calls}, nil
					},
				}
				plugins := &configv1.Plugins{
					QueueSort: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Sort"}}},
					Bind:      configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Sort"}}},
					Filter:    configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Block"}}},
				}
				var infos []*framework.NodeInfo
				for i := 0; i < 3; i++ {
					infos = append(infos, st.NodeInfo(st.MakeNode().Name(fmt.Sprintf("n%d", i)).Obj()))
				}
				snap := cache.NewSnapshot(infos...)
				nom := &fakeNominator{byNode: map[string][]*framework.PodInfo{}}
				f, err := runtime.New(context.Background(), registry, &runtime.Profile{SchedulerName: "s", Plugins: plugins},
					runtime.Options{Snapshot: snap, EquivalenceCache: cached, Nominator: nom})
				if err != nil {
					t.Fatal(err)
				}
				nodes, _ := snap.List()
				ctx := context.Background()
				for i, steps := range tt.steps {
					for _, s := range steps {
						nom.nominate(s.node, s.pods...)
					}
					state := framework.NewCycleState()
					if _, s, _ := f.RunPreFilterPlugins(ctx, state, pod, nodes); !s.IsSuccess() {
						t.Fatal(s)
					}
					statuses := make([]*framework.Status, len(nodes))
					done := f.FilterCachedPrefix(ctx, state, pod, nodes, 0, len(nodes), statuses)
					for j := done; j < len(nodes); j++ {
						statuses[j] = f.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodes[j])
					}
					var rejected []string
					for j, s := range statuses {
						if !s.IsSuccess() {
							rejected = append(rejected, nodes[j].NodeName())
						}
						if again := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodes[j]); again.Code() != s.Code() {
							t.Errorf("cycle %d, node %s: %v in a pass, %v alone", i, nodes[j].NodeName(), s, again)
						}
					}
					if fmt.Sprint(rejected) != fmt.Sprint(tt.want[i]) {
						t.Errorf("cycle %d: rejected %v, want %v", i, rejected, tt.want[i])
					}
				}
			})
		}
	}
}
