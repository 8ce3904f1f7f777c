package simulator

import (
	"bytes"
	"context"
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
	binPacking, err := os.ReadFile("../../examples/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defaults := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
	tests := []struct {
		name      string
		b         string
		wantMoved []Move
	}{
		{name: "bin-packing moves the new pod from the empty node to the busy one", b: string(binPacking),
			wantMoved: []Move{{Namespace: "default", Name: "new", A: "empty", B: "busy"}}},
		{name: "the same configuration moves nothing", b: defaults, wantMoved: []Move{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			world := func(cfg *configv1.KubeSchedulerConfiguration) *World {
				w, err := NewWorld(context.Background(), loadObjects(t, objs), cfg, plugins.NewInTreeRegistry(), 1)
				if err != nil {
					t.Fatal(err)
				}
				w.Run(context.Background())
				return w
			}
			c := Compare(world(configFrom(t, defaults)), world(configFrom(t, tt.b)), "a.yaml", "b.yaml")
			if len(c.Moved) != len(tt.wantMoved) || (len(c.Moved) > 0 && c.Moved[0] != tt.wantMoved[0]) {
				t.Errorf("moved %+v, want %+v", c.Moved, tt.wantMoved)
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
