package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/cluster/memory"
	"github.com/kubesched/kubesched/internal/config"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

func TestTheSearchStopsAtEnoughFeasibleNodesAndRotates(t *testing.T) {
	registry := plugins.NewInTreeRegistry()
	cfg := &configv1.KubeSchedulerConfiguration{PercentageOfNodesToScore: ptr.To[int32](50)}
	config.SetDefaults(cfg, Known(registry))
	clk := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store := memory.NewStore(clk)
	s, err := New(context.Background(), cfg, registry, store, WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	store.SetHandler(s)
	for i := 0; i < 300; i++ {
		if err := store.AddNode(st.MakeNode().Name(fmt.Sprintf("n%03d", i)).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()); err != nil {
			t.Fatal(err)
		}
	}
	store.Flush()
	fwk, _ := s.Profile("default-scheduler")
	pod := st.MakePod().Name("p").Obj()
	var starts []int
	for i := 0; i < 3; i++ {
		starts = append(starts, s.nextStartNodeIndex)
		res, err := s.SchedulePod(context.Background(), fwk, framework.NewCycleState(), pod)
		if err != nil {
			t.Fatal(err)
		}
		if res.FeasibleNodes != 150 || res.EvaluatedNodes != 150 {
			t.Fatalf("found %d feasible of %d evaluated, want 150 of 150 (50%% of 300)", res.FeasibleNodes, res.EvaluatedNodes)
		}
	}
	if fmt.Sprint(starts) != "[0 150 0]" {
		t.Errorf("search started at %v, want [0 150 0]: each cycle continues where the last stopped", starts)
	}
}
