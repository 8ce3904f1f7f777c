package report_test

import (
	"bytes"
	"context"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// traceOf simulates the objects with --trace and returns its lines.
func traceOf(t *testing.T, objs []runtime.Object) []report.TraceLine {
	t.Helper()
	w, err := simulator.NewWorld(context.Background(), simtest.LoadObjects(t, objs), simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w.TraceTo(&out)
	w.Run(context.Background())
	if err := w.FlushTrace(); err != nil {
		t.Fatal(err)
	}
	return simtest.DecodeTrace(t, out.String())
}

func TestTheTraceListsEveryAttemptInTheSchedulersOrder(t *testing.T) {
	cpu := func(n string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: n} }
	tests := []struct {
		name string
		objs []runtime.Object
		want []report.TraceLine
	}{
		{
			name: "pods that fit are scheduled in priority order at the start",
			objs: []runtime.Object{
				st.MakeNode().Name("n").Capacity(cpu("4")).Obj(),
				st.MakePod().Name("second").Req(cpu("1")).Obj(),
				st.MakePod().Name("first").Priority(10).Req(cpu("1")).Obj(),
			},
			want: []report.TraceLine{
				{T: "2026-01-01T00:00:00Z", Pod: "default/first", Attempt: 1, Result: report.TraceScheduled, Node: "n", Victims: []string{}},
				{T: "2026-01-01T00:00:00Z", Pod: "default/second", Attempt: 1, Result: report.TraceScheduled, Node: "n", Victims: []string{}},
			},
		},
		{
			name: "a pod no node can hold is unschedulable with the FitError and retried only by the flush",
			objs: []runtime.Object{
				st.MakeNode().Name("n").Capacity(cpu("1")).Obj(),
				st.MakePod().Name("big").Req(cpu("2")).Obj(),
			},
			want: []report.TraceLine{
				{T: "2026-01-01T00:00:00Z", Pod: "default/big", Attempt: 1, Result: report.TraceUnschedulable, Victims: []string{},
					Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
				{T: "2026-01-01T00:05:00Z", Pod: "default/big", Attempt: 2, Result: report.TraceUnschedulable, Victims: []string{},
					Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."},
			},
		},
		{
			name: "a preemptor names its node and victims, then is scheduled there at once (an idle activeQ pops the backoffQ)",
			objs: []runtime.Object{
				st.MakeNode().Name("n").Capacity(cpu("2")).Obj(),
				st.MakePod().Name("low").Node("n").Req(cpu("2")).Obj(),
				st.MakePod().Name("high").Priority(100).Req(cpu("2")).Obj(),
			},
			want: []report.TraceLine{
				{T: "2026-01-01T00:00:00Z", Pod: "default/high", Attempt: 1, Result: report.TracePreempted, Node: "n", Victims: []string{"default/low"},
					Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node n, preempting 1 victims"},
				{T: "2026-01-01T00:00:00Z", Pod: "default/high", Attempt: 2, Result: report.TraceScheduled, Node: "n", Victims: []string{}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, traceOf(t, tt.objs)); diff != "" {
				t.Errorf("trace (-want,+got):\n%s", diff)
			}
		})
	}
}
