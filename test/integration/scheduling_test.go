package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

const sched = "kubesched"

func podScheduledCondition(p *v1.Pod) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == v1.PodScheduled {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func getPod(c kubernetes.Interface, ns, name string) (*v1.Pod, error) {
	return c.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
}

func TestPodsAreBoundAndAnUnschedulablePodWaitsForANode(t *testing.T) {
	cp := fw.StartControlPlane(t)
	c := cp.Client
	fw.CreateNamespace(t, c, "apps")
	fw.CreateNode(t, c, "small-1", "2", "4Gi", 110, nil)
	fw.CreateNode(t, c, "small-2", "2", "4Gi", 110, nil)
	s := fw.StartScheduler(t, cp, fw.SchedulerConfig(t, sched, false))

	for i := 0; i < 6; i++ {
		fw.CreatePod(t, c, fw.PodSpec("apps", fmt.Sprintf("web-%d", i), sched, "500m", "512Mi"))
	}
	fw.CreatePod(t, c, fw.PodSpec("apps", "big", sched, "3", "1Gi"))
	other := fw.CreatePod(t, c, fw.PodSpec("apps", "other", "default-scheduler", "100m", ""))

	fw.Eventually(t, 30*time.Second, "six pods bound", func() (bool, error) {
		for i := 0; i < 6; i++ {
			p, err := getPod(c, "apps", fmt.Sprintf("web-%d", i))
			if err != nil || p.Spec.NodeName == "" {
				return false, err
			}
		}
		return true, nil
	})
	var cond *v1.PodCondition
	fw.Eventually(t, 30*time.Second, "the big pod's PodScheduled=False condition", func() (bool, error) {
		p, err := getPod(c, "apps", "big")
		if err != nil {
			return false, err
		}
		cond = podScheduledCondition(p)
		return cond != nil && cond.Status == v1.ConditionFalse, nil
	})
	// 3 cpus fit no 2-cpu node whatever is evicted: preemption cannot help.
	want := "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
	if cond.Reason != v1.PodReasonUnschedulable || cond.Message != want {
		t.Errorf("condition = %s/%q, want Unschedulable/%q", cond.Reason, cond.Message, want)
	}
	fw.Eventually(t, 30*time.Second, "a FailedScheduling event for the big pod", func() (bool, error) {
		evs, err := c.EventsV1().Events("apps").List(context.Background(), metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("regarding.name", "big").String()})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == "FailedScheduling" && e.Note == want && e.ReportingController == sched {
				return true, nil
			}
		}
		return false, nil
	})
	fw.Eventually(t, 30*time.Second, "Scheduled events", func() (bool, error) {
		evs, err := c.EventsV1().Events("apps").List(context.Background(), metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("regarding.name", "web-0").String()})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Reason == "Scheduled" && strings.HasPrefix(e.Note, "Successfully assigned apps/web-0 to small-") {
				return true, nil
			}
		}
		return false, nil
	})

	// A node that fits arrives: the pod is requeued by the node event, well
	// before the 5-minute flush.
	added := time.Now()
	fw.CreateNode(t, c, "large", "8", "16Gi", 110, nil)
	fw.Eventually(t, 30*time.Second, "the big pod bound to the new node", func() (bool, error) {
		p, err := getPod(c, "apps", "big")
		return err == nil && p.Spec.NodeName == "large", err
	})
	if d := time.Since(added); d > time.Minute {
		t.Errorf("the pod waited %s after the node appeared, want the node event to requeue it", d)
	}
	if p, _ := getPod(c, "apps", other.Name); p.Spec.NodeName != "" {
		t.Errorf("a pod of another scheduler was bound to %s", p.Spec.NodeName)
	}
	if s.Exited() {
		t.Error("kubesched exited")
	}

	// The cache debugger: the cache and queue agree with a fresh LIST, at
	// /debug/cache and in the log on SIGUSR2.
	code, report, err := s.Get("/debug/cache")
	if err != nil || code != 200 || !strings.Contains(report, "differences from the API: 0") || !strings.Contains(report, "node large:") {
		t.Errorf("/debug/cache = %d, %v:\n%s", code, err, report)
	}
	s.Signal(syscall.SIGUSR2)
	fw.Eventually(t, 10*time.Second, "the cache comparison in the log", func() (bool, error) {
		b, err := os.ReadFile(s.LogPath)
		return strings.Contains(string(b), "Cache comparison: no differences from the API"), err
	})
}

func TestReadyzAndMetrics(t *testing.T) {
	cp := fw.StartControlPlane(t)
	fw.CreateNode(t, cp.Client, "n1", "4", "8Gi", 110, nil)
	s := fw.StartScheduler(t, cp, fw.SchedulerConfig(t, sched, false))
	fw.Eventually(t, 30*time.Second, "/readyz ok", func() (bool, error) {
		code, body, err := s.Get("/readyz")
		return err == nil && code == 200 && body == "ok", err
	})
	fw.CreatePod(t, cp.Client, fw.PodSpec("default", "p", sched, "100m", ""))
	fw.Eventually(t, 30*time.Second, "the pod bound", func() (bool, error) {
		p, err := getPod(cp.Client, "default", "p")
		return err == nil && p.Spec.NodeName != "", err
	})
	var body string
	fw.Eventually(t, 10*time.Second, "metrics with the attempt", func() (bool, error) {
		code, b, err := s.Get("/metrics")
		body = b
		return err == nil && code == 200 && strings.Contains(b, `scheduler_schedule_attempts_total{profile="kubesched",result="scheduled"} 1`) &&
			strings.Contains(b, `scheduler_goroutines{operation="binding"} 0`), err
	})
	for _, name := range []string{
		"scheduler_schedule_attempts_total", "scheduler_scheduling_attempt_duration_seconds", "scheduler_pending_pods",
		"scheduler_queue_incoming_pods_total", "scheduler_framework_extension_point_duration_seconds",
		"scheduler_pod_scheduling_attempts", "scheduler_pod_scheduling_sli_duration_seconds", "scheduler_preemption_attempts_total",
		"scheduler_plugin_execution_duration_seconds",
	} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	for _, path := range []string{"/healthz", "/livez"} {
		if code, _, err := s.Get(path); err != nil || code != 200 {
			t.Errorf("%s = %d, %v; want 200", path, code, err)
		}
	}
}

func TestAHigherPriorityPodPreemptsALowerOne(t *testing.T) {
	tests := []struct {
		name string
		args []string
		// wantGoroutines is scheduler_preemption_goroutines_execution_total
		// {result="success"}: one goroutine ran the evictions, or none.
		wantGoroutines float64
	}{
		{name: "asynchronously, as kube-scheduler by default", wantGoroutines: 1},
		{name: "synchronously, with SchedulerAsyncPreemption off", args: []string{"--feature-gates=SchedulerAsyncPreemption=false"}, wantGoroutines: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			preemptOneOfTwo(t, tc.args, tc.wantGoroutines)
		})
	}
}

func preemptOneOfTwo(t *testing.T, args []string, wantGoroutines float64) {
	cp := fw.StartControlPlane(t)
	c := cp.Client
	fw.CreateNode(t, c, "only", "2", "4Gi", 110, nil)
	s := fw.StartScheduler(t, cp, fw.SchedulerConfig(t, sched, false), args...)
	for i := 0; i < 2; i++ {
		low := fw.PodSpec("default", fmt.Sprintf("low-%d", i), sched, "1", "256Mi")
		// No kubelet here: with no grace period the API server deletes a
		// bound pod at once instead of waiting for the node to confirm.
		zero := int64(0)
		low.Spec.TerminationGracePeriodSeconds = &zero
		fw.CreatePod(t, c, low)
	}
	fw.Eventually(t, 30*time.Second, "both low-priority pods bound", func() (bool, error) { return allBound(c, "low-", 2) })

	vip := fw.PodSpec("default", "vip", sched, "1", "256Mi")
	prio := int32(1000)
	vip.Spec.Priority = &prio
	fw.CreatePod(t, c, vip)
	fw.Eventually(t, 30*time.Second, "the high-priority pod bound to the node", func() (bool, error) {
		p, err := getPod(c, "default", "vip")
		return err == nil && p.Spec.NodeName == "only", err
	})
	pods, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var low []string
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, "low-") && p.DeletionTimestamp == nil {
			low = append(low, p.Name)
		}
	}
	if len(low) != 1 {
		t.Errorf("low-priority pods left: %v, want exactly one (one victim)", low)
	}
	fw.Eventually(t, 30*time.Second, "a Preempted event on the victim", func() (bool, error) {
		evs, err := c.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("reason", "Preempted").String()})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if strings.HasPrefix(e.Regarding.Name, "low-") && strings.Contains(e.Note, "on node only") {
				return true, nil
			}
		}
		return false, nil
	})
	if bad, err := overcommitted(c); err != nil || len(bad) > 0 {
		t.Errorf("overcommitted nodes: %v (%v)", bad, err)
	}
	_, body, err := s.Get("/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if got := fw.MetricSum(body, "scheduler_preemption_goroutines_execution_total", `result="success"`); got != wantGoroutines {
		t.Errorf("scheduler_preemption_goroutines_execution_total{result=\"success\"} = %v, want %v", got, wantGoroutines)
	}
}
