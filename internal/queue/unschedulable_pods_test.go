package queue

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestAnEventWakesExactlyThePodsWhosePluginsRegisteredIt(t *testing.T) {
	// Each pod is rejected by its plugins; pods of equal plugins share a
	// group that the event skips or looks into whole.
	rejections := map[string][]string{
		"fit-1":    {"NodeResourcesFit"},
		"fit-2":    {"NodeResourcesFit"},
		"affinity": {"NodeAffinity"},
		"both":     {"NodeAffinity", "NodeResourcesFit"},
		"unknown":  {"Unknown"},
	}
	tests := []struct {
		name  string
		event framework.ClusterEvent
		woken []string
	}{
		{name: "a pod deletion wakes the pods rejected for resources",
			event: podDeletion, woken: []string{"both", "fit-1", "fit-2"}},
		{name: "a node label change wakes the pods rejected by node affinity",
			event: nodeLabel, woken: []string{"affinity", "both"}},
		{name: "an event no plugin registered wakes nobody",
			event: nodeCondition, woken: nil},
		{name: "the flush's wildcard wakes every pod",
			event: framework.EventUnschedulableTimeout, woken: []string{"affinity", "both", "fit-1", "fit-2", "unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(Options{})
			pods := map[string]*v1.Pod{}
			for _, name := range []string{"affinity", "both", "fit-1", "fit-2", "unknown"} {
				pods[name] = st.MakePod().Name(name).UID(name).Obj()
				q.Add(pods[name])
				failOnce(t, q, rejections[name]...)
			}
			clk.Step(time.Minute) // past backoff
			q.MoveAllToActiveOrBackoffQueue(tt.event, nil, nil, nil)
			var woken []string
			for _, name := range []string{"affinity", "both", "fit-1", "fit-2", "unknown"} {
				if where(q, pods[name]) != "unschedulable" {
					woken = append(woken, name)
				}
			}
			if fmt.Sprint(woken) != fmt.Sprint(tt.woken) {
				t.Errorf("woken %v, want %v", woken, tt.woken)
			}
		})
	}
}

func TestAPodRejectedAgainByOtherPluginsWaitsForTheirEvents(t *testing.T) {
	q, clk := newQueue(Options{})
	pod := st.MakePod().Name("p").UID("p").Obj()
	q.Add(pod)
	failOnce(t, q, "NodeAffinity")
	clk.Step(time.Minute)
	q.MoveAllToActiveOrBackoffQueue(nodeLabel, nil, nil, nil)
	if got := where(q, pod); got != "active" {
		t.Fatalf("after a node label change the pod is in %s, want active", got)
	}
	failOnce(t, q, "NodeResourcesFit")
	clk.Step(time.Minute)
	q.MoveAllToActiveOrBackoffQueue(nodeLabel, nil, nil, nil)
	if got := where(q, pod); got != "unschedulable" {
		t.Errorf("rejected now for resources, the pod is in %s after a node label change, want unschedulable", got)
	}
	q.MoveAllToActiveOrBackoffQueue(podDeletion, nil, nil, nil)
	if got := where(q, pod); got != "active" {
		t.Errorf("after a pod deletion the pod is in %s, want active", got)
	}
	q.lock.Lock()
	defer q.lock.Unlock()
	if n := len(q.unschedulable.groups); n != 0 {
		t.Errorf("%d groups left with no pod in unschedulablePods", n)
	}
}
