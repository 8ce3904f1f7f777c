package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

func TestSchedulingSurvivesAnAPIServerRestart(t *testing.T) {
	cp := fw.StartControlPlane(t)
	c := cp.Client
	fw.CreateNode(t, c, "n1", "4", "8Gi", 110, nil)
	fw.CreateNode(t, c, "n2", "4", "8Gi", 110, nil)
	s := fw.StartScheduler(t, cp, fw.SchedulerConfig(t, sched, false))
	for i := 0; i < 10; i++ {
		fw.CreatePod(t, c, fw.PodSpec("default", fmt.Sprintf("before-%d", i), sched, "300m", ""))
	}
	fw.Eventually(t, 30*time.Second, "pods bound before the restart", func() (bool, error) { return allBound(c, "before-", 10) })
	cp.StopAPIServer()
	cp.StartAPIServer()
	for i := 0; i < 14; i++ {
		fw.CreatePod(t, c, fw.PodSpec("default", fmt.Sprintf("after-%d", i), sched, "300m", ""))
	}
	// 24 pods x 300m = 7.2 cpu of 8: all fit, none may overcommit.
	fw.Eventually(t, 90*time.Second, "pods bound after the restart", func() (bool, error) { return allBound(c, "after-", 14) })
	if bad, err := overcommitted(c); err != nil || len(bad) > 0 {
		t.Errorf("overcommitted nodes: %v (%v)", bad, err)
	}
	if s.Exited() {
		t.Error("kubesched exited during the restart")
	}
}

// TestDeletedPodsAndNodesLeaveNoPhantomUsage deletes pods right after
// creating them (so some are deleted while their binding is in flight) and
// a node with pods on it, then checks that exactly the capacity that is
// really free can be filled: any usage the scheduler still counted for a
// deleted pod would leave a pod pending.
func TestDeletedPodsAndNodesLeaveNoPhantomUsage(t *testing.T) {
	cp := fw.StartControlPlane(t)
	c := cp.Client
	ctx := context.Background()
	fw.CreateNode(t, c, "keep", "2", "8Gi", 110, nil)
	fw.CreateNode(t, c, "doomed", "2", "8Gi", 110, nil)
	s := fw.StartScheduler(t, cp, fw.SchedulerConfig(t, sched, false))
	for i := 0; i < 30; i++ {
		name := fmt.Sprintf("churn-%d", i)
		fw.CreatePod(t, c, fw.PodSpec("default", name, sched, "500m", ""))
		if err := c.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 4; i++ {
		fw.CreatePod(t, c, fw.PodSpec("default", fmt.Sprintf("on-doomed-%d", i), sched, "500m", ""))
	}
	fw.Eventually(t, 30*time.Second, "pods bound", func() (bool, error) { return allBound(c, "on-doomed-", 4) })
	if err := c.CoreV1().Nodes().Delete(ctx, "doomed", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Without kube-controller-manager nothing garbage-collects the pods of
	// a deleted node: delete them as the pod GC would.
	pods, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if err := c.CoreV1().Pods("default").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
	fw.Eventually(t, 30*time.Second, "all pods gone", func() (bool, error) {
		l, err := c.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, err
	})
	// "keep" has 2 cpu free: exactly four 500m pods fit.
	for i := 0; i < 4; i++ {
		fw.CreatePod(t, c, fw.PodSpec("default", fmt.Sprintf("fill-%d", i), sched, "500m", ""))
	}
	fw.Eventually(t, 30*time.Second, "the free capacity filled", func() (bool, error) { return allBound(c, "fill-", 4) })
	fw.Eventually(t, 10*time.Second, "an empty queue", func() (bool, error) {
		_, body, err := s.Get("/metrics")
		return err == nil && containsAll(body,
			`scheduler_pending_pods{queue="active"} 0`, `scheduler_pending_pods{queue="backoff"} 0`, `scheduler_pending_pods{queue="unschedulable"} 0`), err
	})
}
