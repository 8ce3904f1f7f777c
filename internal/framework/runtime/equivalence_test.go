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

// countingFilter is an equivalence plugin whose verdict depends on the
// node's name only; it counts its Filter calls.
type countingFilter struct {
	name   string
	reject string // the node it rejects
	calls  *int
}

func (p *countingFilter) Name() string { return p.name }
func (p *countingFilter) Filter(_ context.Context, _ *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	*p.calls++
	if ni.NodeName() == p.reject {
		return framework.NewStatus(framework.Unschedulable, "rejected by "+p.name)
	}
	return nil
}
func (p *countingFilter) AppendPodSignature(b []byte, _ *framework.PodInfo) ([]byte, bool) {
	return b, true
}

type fixedSort struct{}

func (fixedSort) Name() string                            { return "Sort" }
func (fixedSort) Less(_, _ *framework.QueuedPodInfo) bool { return false }
func (fixedSort) Bind(context.Context, *framework.CycleState, *v1.Pod, string) *framework.Status {
	return nil
}

func TestEquivalenceCacheServesEveryPluginOfALargeProfile(t *testing.T) {
	tests := []struct {
		name       string
		numPlugins int
	}{
		{name: "a profile of a few equivalence plugins is served from the cache", numPlugins: 3},
		{name: "a profile of more than 64 equivalence plugins is served from the cache", numPlugins: 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			registry := runtime.Registry{
				"Sort": func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) {
					return fixedSort{}, nil
				},
			}
			plugins := &configv1.Plugins{
				QueueSort: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Sort"}}},
				Bind:      configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Sort"}}},
			}
			for i := 0; i < tt.numPlugins; i++ {
				name := fmt.Sprintf("F%d", i)
				reject := ""
				if i == tt.numPlugins-1 {
					reject = "n1" // the last plugin rejects n1
				}
				registry[name] = func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) {
					return &countingFilter{name: name, reject: reject, calls: &calls}, nil
				}
				plugins.Filter.Enabled = append(plugins.Filter.Enabled, configv1.Plugin{Name: name})
			}
			var infos []*framework.NodeInfo
			for i := 0; i < 3; i++ {
				infos = append(infos, st.NodeInfo(st.MakeNode().Name(fmt.Sprintf("n%d", i)).Obj()))
			}
			snap := cache.NewSnapshot(infos...)
			f, err := runtime.New(context.Background(), registry, &runtime.Profile{SchedulerName: "s", Plugins: plugins},
				runtime.Options{Snapshot: snap, EquivalenceCache: true})
			if err != nil {
				t.Fatal(err)
			}
			nodes, _ := snap.List()
			pod := st.MakePod().Name("p").Obj()
			ctx := context.Background()
			cycle := func() []*framework.Status {
				state := framework.NewCycleState()
				if _, s, _ := f.RunPreFilterPlugins(ctx, state, pod, nodes); !s.IsSuccess() {
					t.Fatal(s)
				}
				statuses := make([]*framework.Status, len(nodes))
				if done := f.FilterCachedPrefix(ctx, state, pod, nodes, 0, len(nodes), statuses); done != len(nodes) {
					t.Fatalf("the cache evaluated %d of %d nodes", done, len(nodes))
				}
				return statuses
			}
			first := cycle()
			if calls == 0 {
				t.Fatal("the first cycle called no plugin")
			}
			calls = 0
			second := cycle()
			if calls != 0 {
				t.Errorf("the second cycle called plugins %d times, want every verdict from the cache", calls)
			}
			for i := range nodes {
				if first[i].Code() != second[i].Code() || first[i].Plugin() != second[i].Plugin() {
					t.Errorf("node %s: %v then %v", nodes[i].NodeName(), first[i], second[i])
				}
			}
			if second[1].IsSuccess() {
				t.Errorf("n1 passed, want the last plugin's rejection")
			}
		})
	}
}
