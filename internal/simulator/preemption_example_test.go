package simulator

import (
	"context"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/pkg/plugins"
)

// TestThePreemptionExample: examples/preemption.yaml does what its header
// says: every web replica is placed by preempting batch pods, and the batch
// pods a PodDisruptionBudget protects are spared while others can go.
func TestThePreemptionExample(t *testing.T) {
	c, err := Load([]string{"../../examples/preemption.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWorld(context.Background(), c, defaultConfig(t), plugins.NewInTreeRegistry(), 1)
	if err != nil {
		t.Fatal(err)
	}
	w.Run(context.Background())
	if errs := w.CheckInvariants(); len(errs) > 0 {
		t.Fatalf("invariants: %v", errs)
	}
	rep := w.Report()
	if rep.Summary.Scheduled != 3 || rep.Summary.Unschedulable != 0 || rep.Summary.Preempted == 0 {
		t.Errorf("summary %+v, want 3 scheduled, 0 unschedulable, some preempted", rep.Summary)
	}
	for _, p := range rep.Pods {
		if p.Status == StatusPreempted && strings.HasPrefix(p.Name, "batch-b") {
			t.Errorf("%s was preempted although its PodDisruptionBudget allows no disruption and other victims exist", p.Name)
		}
		if p.Status == StatusPreempted && !strings.HasPrefix(p.Message, "preempted by default/web-") {
			t.Errorf("%s: %q, want it preempted by a web pod", p.Name, p.Message)
		}
	}
}
