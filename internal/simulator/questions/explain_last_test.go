package questions_test

import (
	"context"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
)

func TestSimulateExplainsAPodAsItsLastAttemptSawTheCluster(t *testing.T) {
	oneCPU := map[v1.ResourceName]string{v1.ResourceCPU: "1"}
	tests := []struct {
		name        string
		objs        []runtime.Object
		pod         string
		wantFeas    int
		wantAttempt report.LastAttempt
		wantMessage string
		wantErr     string
	}{
		{
			name: "a pod that fit the empty cluster is explained as unschedulable after a higher-priority pod took the room",
			objs: []runtime.Object{simtest.Node("a"),
				st.MakePod().Name("filler").Priority(10).Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj(),
				st.MakePod().Name("late").Req(oneCPU).Obj()},
			pod:         "default/late",
			wantFeas:    0,
			wantAttempt: report.LastAttempt{T: "2026-01-01T00:05:00Z", Attempt: 2, Result: report.TraceUnschedulable},
			wantMessage: "0/1 nodes are available: 1 Insufficient cpu.",
		},
		{
			name: "a pod whose Immediate claim the simulation bound is explained with the claim bound",
			objs: []runtime.Object{simtest.Node("a"),
				st.StorageClass("fast", storagev1.VolumeBindingImmediate, "pd.csi.storage.gke.io"),
				st.MakePVC("data", "1Gi").Class("fast").Obj(),
				st.MakePod().Name("filler").Priority(10).Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj(),
				st.MakePod().Name("late").Req(oneCPU).Volume("data").Obj()},
			pod:         "default/late",
			wantFeas:    0,
			wantAttempt: report.LastAttempt{T: "2026-01-01T00:05:00Z", Attempt: 2, Result: report.TraceUnschedulable},
			wantMessage: "0/1 nodes are available: 1 Insufficient cpu.",
		},
		{
			name:        "a bound pod is explained without itself on its node",
			objs:        []runtime.Object{simtest.Node("a"), st.MakePod().Name("p").Req(map[v1.ResourceName]string{v1.ResourceCPU: "4"}).Obj()},
			pod:         "default/p",
			wantFeas:    1,
			wantAttempt: report.LastAttempt{T: "2026-01-01T00:00:00Z", Attempt: 1, Result: report.TraceScheduled, Node: "a"},
		},
		{
			name:    "a gated pod was never attempted and the error says so",
			objs:    []runtime.Object{simtest.Node("a"), st.MakePod().Name("g").SchedulingGates("wait").Req(oneCPU).Obj()},
			pod:     "default/g",
			wantErr: "--explain default/g: the scheduler never attempted the pod: it never left the queue",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := simulator.NewWorld(context.Background(), simtest.LoadObjects(t, tt.objs), simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
			if err != nil {
				t.Fatal(err)
			}
			w.WatchPod(tt.pod)
			w.Run(context.Background())
			r, err := questions.ExplainLastAttempt(context.Background(), w)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.FeasibleCount != tt.wantFeas || *r.LastAttempt != tt.wantAttempt || !strings.HasPrefix(r.Message, tt.wantMessage) {
				t.Errorf("explained %d feasible, attempt %+v, message %q; want %d, %+v, %q", r.FeasibleCount, *r.LastAttempt, r.Message, tt.wantFeas, tt.wantAttempt, tt.wantMessage)
			}
		})
	}
}
