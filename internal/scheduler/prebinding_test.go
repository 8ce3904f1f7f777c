package scheduler_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/scheduler"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// waiter's PreBind waits, for the pods named "wait-*", until the binding
// cycle is cancelled (as VolumeBinding waits for the PV controller).
type waiter struct {
	waiting, cancelled atomic.Int32
}

func (*waiter) Name() string { return "Waiter" }
func (w *waiter) PreBind(ctx context.Context, _ *framework.CycleState, pod *v1.Pod, _ string) *framework.Status {
	if !strings.HasPrefix(pod.Name, "wait-") {
		return nil
	}
	w.waiting.Add(1)
	<-ctx.Done()
	w.cancelled.Add(1)
	return framework.AsStatus(fmt.Errorf("binding volumes: %w", ctx.Err()))
}

// eventually spins (no sleep) until cond holds or ten seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestPodsWaitingInPreBindHoldNoOtherBindingAndEndWithTheirDeletion(t *testing.T) {
	tests := []struct {
		name    string
		waiting int
	}{
		{name: "one pod waiting in PreBind lets the next pod bind", waiting: 1},
		{name: "more pods waiting in PreBind than binding workers still let the next pod bind", waiting: scheduler.MaxConcurrentBindings + 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &waiter{}
			registry := plugins.NewInTreeRegistry()
			registry["Waiter"] = func(context.Context, k8sruntime.Object, framework.Handle) (framework.Plugin, error) { return w, nil }
			cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
				MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Waiter"}}}}}}}
			e := newEnv(t, registry, cfg)
			e.add(t, st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "1000", v1.ResourcePods: "1000"}).Obj())
			for i := 0; i < tt.waiting; i++ {
				e.add(t, st.MakePod().Name(fmt.Sprintf("wait-%d", i)).UID(fmt.Sprintf("uid-wait-%d", i)).Req(rl{v1.ResourceCPU: "1"}).Obj())
			}
			e.add(t, st.MakePod().Name("free").UID("uid-free").Req(rl{v1.ResourceCPU: "1"}).Obj())
			for e.sched.TryScheduleOne(context.Background()) {
			}
			eventually(t, "pod free to be bound", func() bool {
				p, ok := e.store.GetPod("default", "free")
				return ok && p.Spec.NodeName == "n"
			})
			eventually(t, "the pods to wait in PreBind", func() bool { return int(w.waiting.Load()) == tt.waiting })
			// The waiting pods are deleted: their PreBind is cancelled.
			for i := 0; i < tt.waiting; i++ {
				if err := e.store.DeletePod("default", fmt.Sprintf("wait-%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			e.store.Flush()
			eventually(t, "the deleted pods' PreBind to be cancelled", func() bool { return int(w.cancelled.Load()) == tt.waiting })
			e.sched.WaitForBindings()
			e.store.Flush()
			if a, b, u := e.sched.Queue.Counts(); a+b+u != 0 {
				t.Errorf("queue holds %d/%d/%d pods after the deletions, want none", a, b, u)
			}
			if _, pods := e.sched.Cache.Counts(); pods != 1 {
				t.Errorf("cache holds %d pods, want only pod free", pods)
			}
		})
	}
}
