package runtime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/cache"
	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// markedNames is the snapshot with the names it keeps beside its list
// marked: a pass that read them shows it in the names it returns.
type markedNames struct{ *cache.Snapshot }

func (m markedNames) Names() []string {
	var out []string
	for _, n := range m.Snapshot.Names() {
		out = append(out, "listed/"+n)
	}
	return out
}

// TestScorePassReadsTheSnapshotsArraysOnlyAtPositionsThatHold: given the
// positions of the feasible nodes in the snapshot's list, the cached score
// pass reads their generations and names from the arrays beside the list
// (here marked "listed/"), with the totals of a pass without them; given
// positions that do not hold for every node, it reads the NodeInfos.
func TestScorePassReadsTheSnapshotsArraysOnlyAtPositionsThatHold(t *testing.T) {
	c := cache.New(klog.Background())
	for i := 0; i < 6; i++ {
		n := st.MakeNode().Name(fmt.Sprintf("n%d", i)).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprint(2 + i), v1.ResourceMemory: "8Gi"}).Obj()
		c.AddNode(n)
		if err := c.AddPod(st.MakePod().Name(fmt.Sprintf("e%d", i)).Node(n.Name).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()); err != nil {
			t.Fatal(err)
		}
	}
	snap := cache.NewEmptySnapshot()
	c.UpdateSnapshot(snap)
	list, _ := snap.List()
	// The feasible nodes: every other one, in list order.
	var feasible []*framework.NodeInfo
	var positions []int32
	for i := 0; i < len(list); i += 2 {
		feasible, positions = append(feasible, list[i]), append(positions, int32(i))
	}
	shifted := make([]int32, len(positions))
	for i, p := range positions {
		shifted[i] = p + 1
	}
	registry := plugins.NewInTreeRegistry()
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{}}}
	config.SetDefaults(cfg, scheduler.Known(registry))
	prof := cfg.Profiles[0]
	f, err := runtime.New(context.Background(), registry, &runtime.Profile{SchedulerName: *prof.SchedulerName, Plugins: prof.Plugins},
		runtime.Options{Snapshot: snap, EquivalenceCache: true, NodeGenerations: markedNames{snap}})
	if err != nil {
		t.Fatal(err)
	}
	pod := st.MakePod().Name("p").Req(map[v1.ResourceName]string{v1.ResourceCPU: "500m", v1.ResourceMemory: "1Gi"}).Obj()
	pass := func(positions []int32) map[string]int64 {
		ctx, state := context.Background(), framework.NewCycleState()
		if _, s, _ := f.RunPreFilterPlugins(ctx, state, pod, list); !s.IsSuccess() {
			t.Fatal(s)
		}
		if s := f.RunPreScorePlugins(ctx, state, pod, feasible); !s.IsSuccess() {
			t.Fatal(s)
		}
		buf := runtime.ScoreBuffers{Positions: positions}
		scores, s := f.RunScorePluginsTotals(ctx, state, pod, feasible, &buf)
		if !s.IsSuccess() {
			t.Fatal(s)
		}
		out := map[string]int64{}
		for _, sc := range scores {
			out[sc.Name] = sc.TotalScore
		}
		return out
	}
	without := pass(nil)
	marked := map[string]int64{}
	for name, total := range without {
		marked["listed/"+name] = total
	}
	for _, tc := range []struct {
		name      string
		positions []int32
		want      map[string]int64
	}{
		{name: "the positions of the feasible nodes in the snapshot's list are read", positions: positions, want: marked},
		{name: "positions naming other nodes are not read", positions: shifted, want: without},
		{name: "fewer positions than nodes are not read", positions: positions[:1], want: without},
		{name: "no positions, the NodeInfos are read", positions: nil, want: without},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Twice: the second pass is served from the cache.
			for round := 0; round < 2; round++ {
				if diff := cmp.Diff(tc.want, pass(tc.positions)); diff != "" {
					t.Errorf("pass %d: totals by name (-want +got):\n%s", round+1, diff)
				}
			}
		})
	}
	distinct := map[int64]bool{}
	for _, total := range without {
		distinct[total] = true
	}
	if len(distinct) < 2 {
		t.Errorf("every feasible node has the total %v: the test tells no node from another", without)
	}
}
