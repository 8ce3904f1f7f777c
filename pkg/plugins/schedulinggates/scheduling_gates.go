// Package schedulinggates holds SchedulingGates: a pod with
// spec.schedulingGates is not scheduled until they are removed.
package schedulinggates

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "SchedulingGates"

// SchedulingGates is a PreEnqueue plugin.
type SchedulingGates struct{}

var (
	_ framework.PreEnqueuePlugin  = &SchedulingGates{}
	_ framework.EnqueueExtensions = &SchedulingGates{}
)

// New builds the plugin.
func New(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
	return &SchedulingGates{}, nil
}

// Name implements framework.Plugin.
func (*SchedulingGates) Name() string { return Name }

// PreEnqueue holds a gated pod with upstream's message.
func (*SchedulingGates) PreEnqueue(_ context.Context, p *v1.Pod) *framework.Status {
	if len(p.Spec.SchedulingGates) == 0 {
		return nil
	}
	gates := make([]string, 0, len(p.Spec.SchedulingGates))
	for _, g := range p.Spec.SchedulingGates {
		gates = append(gates, g.Name)
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for scheduling gates: %v", gates))
}

// EventsToRegister: only the removal of the gates helps.
func (*SchedulingGates) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return framework.Events(framework.ClusterEvent{Resource: framework.Pod, ActionType: framework.UpdatePodSchedulingGatesEliminated}), nil
}
