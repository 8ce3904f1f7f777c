package questions_test

import (
	"bytes"
	"context"
	"github.com/google/go-cmp/cmp"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"os"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/scheduler"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// configFrom decodes, defaults and validates a KubeSchedulerConfiguration.
func configFrom(t *testing.T, yaml string) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg, err := config.Decode([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	known := scheduler.Known(plugins.NewInTreeRegistry())
	config.SetDefaults(cfg, known)
	if errs := config.Validate(cfg, known); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return cfg
}

func TestCompareShowsWhatAConfigurationChanges(t *testing.T) {
	objs := []runtime.Object{
		st.MakeNode().Name("busy").Label(v1.LabelTopologyZone, "a").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj(),
		st.MakeNode().Name("empty").Label(v1.LabelTopologyZone, "b").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj(),
		st.MakePod().Name("running").Node("busy").Req(map[v1.ResourceName]string{v1.ResourceCPU: "2", v1.ResourceMemory: "4Gi"}).Obj(),
		st.MakePod().Name("new").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj(),
	}
	binPacking, err := os.ReadFile("../../../examples/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defaults := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	tests := []struct {
		name      string
		b         string
		wantMoved []questions.Move
		wantNodes []questions.NodeUse
	}{
		{name: "bin-packing moves the new pod from the empty node to the busy one", b: string(binPacking),
			wantMoved: []questions.Move{{Namespace: "default", Name: "new", A: "empty", B: "busy", Group: "Pod default/new"}},
			wantNodes: []questions.NodeUse{{Node: "busy", PodsA: 1, PodsB: 2, CPUA: 50, CPUB: 75, MemoryA: 50, MemoryB: 62}, {Node: "empty", PodsA: 1, PodsB: 0, CPUA: 25, CPUB: 0, MemoryA: 12, MemoryB: 0}}},
		{name: "the same configuration moves nothing", b: defaults, wantMoved: []questions.Move{},
			wantNodes: []questions.NodeUse{{Node: "busy", PodsA: 1, PodsB: 1, CPUA: 50, CPUB: 50, MemoryA: 50, MemoryB: 50}, {Node: "empty", PodsA: 1, PodsB: 1, CPUA: 25, CPUB: 25, MemoryA: 12, MemoryB: 12}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			world := func(cfg *configv1.KubeSchedulerConfiguration) *simulator.World {
				w, err := simulator.NewWorld(context.Background(), simtest.LoadObjects(t, objs), cfg, plugins.NewInTreeRegistry(), 1)
				if err != nil {
					t.Fatal(err)
				}
				w.Run(context.Background())
				return w
			}
			c := questions.Compare(world(configFrom(t, defaults)), world(configFrom(t, tt.b)), "a.yaml", "b.yaml")
			if len(c.Moved) != len(tt.wantMoved) || (len(c.Moved) > 0 && c.Moved[0] != tt.wantMoved[0]) {
				t.Errorf("moved %+v, want %+v", c.Moved, tt.wantMoved)
			}
			if diff := cmp.Diff(tt.wantNodes, c.Nodes); diff != "" {
				t.Errorf("per-node use (-want,+got):\n%s", diff)
			}
			if c.A.Summary.Scheduled != 1 || c.B.Summary.Scheduled != 1 {
				t.Errorf("scheduled %d and %d, want 1 and 1", c.A.Summary.Scheduled, c.B.Summary.Scheduled)
			}
			var out bytes.Buffer
			if err := c.Write(&out, "table"); err != nil {
				t.Fatal(err)
			}
			if len(tt.wantMoved) > 0 && !strings.Contains(out.String(), "default/new  empty   busy") {
				t.Errorf("table misses the move:\n%s", out.String())
			}
		})
	}
}

func TestCompareMeasuresEachWorkloadsZoneSkew(t *testing.T) {
	node := func(name, zone string) runtime.Object {
		return st.MakeNode().Name(name).Label(v1.LabelTopologyZone, zone).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi"}).Obj()
	}
	pinned := st.MakePod().Label("app", "pinned").NodeSelector(v1.LabelTopologyZone, "a").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
	objs := []runtime.Object{node("a1", "a"), node("b1", "b"), node("c1", "c"), st.MakeDeployment("pinned", 2, pinned)}
	defaults := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	world := func() *simulator.World {
		w, err := simulator.NewWorld(context.Background(), simtest.LoadObjects(t, objs), configFrom(t, defaults), plugins.NewInTreeRegistry(), 1)
		if err != nil {
			t.Fatal(err)
		}
		w.Run(context.Background())
		return w
	}
	c := questions.Compare(world(), world(), "a.yaml", "b.yaml")
	// Both pods in zone a, none in b or c: skew 2.
	want := []questions.SpreadUse{{Workload: "Deployment default/pinned", SkewA: 2, SkewB: 2}}
	if diff := cmp.Diff(want, c.Spread); diff != "" {
		t.Errorf("spread (-want,+got):\n%s", diff)
	}
}
