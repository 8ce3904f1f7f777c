package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// attempts reads scheduler_schedule_attempts_total{result="scheduled"}.
func scheduledAttempts(s *fw.Scheduler) string {
	_, body, err := s.Get("/metrics")
	if err != nil {
		return "unreachable"
	}
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, `scheduler_schedule_attempts_total{profile="kubesched",result="scheduled"}`) {
			return strings.TrimSpace(l[strings.LastIndex(l, " "):])
		}
	}
	return "0"
}

func leaseHolder(t *testing.T, cp *fw.ControlPlane) string {
	l, err := cp.Client.CoordinationV1().Leases("default").Get(context.Background(), "kubesched-test", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func TestOnlyTheLeaderSchedulesAndTheOtherTakesOver(t *testing.T) {
	for _, stop := range []string{"SIGTERM", "SIGKILL"} {
		t.Run("after "+stop+" of the leader the other instance takes over", func(t *testing.T) {
			cp := fw.StartControlPlane(t)
			c := cp.Client
			fw.CreateNode(t, c, "n1", "64", "64Gi", 500, nil)
			cfg := fw.SchedulerConfig(t, sched, true)
			a := fw.StartScheduler(t, cp, cfg)
			fw.Eventually(t, 30*time.Second, "a leader", func() (bool, error) { return leaseHolder(t, cp) != "", nil })
			b := fw.StartScheduler(t, cp, cfg)
			fw.Eventually(t, 30*time.Second, "both ready", func() (bool, error) {
				ca, _, _ := a.Get("/readyz")
				cb, _, _ := b.Get("/readyz")
				return ca == 200 && cb == 200, nil
			})
			for i := 0; i < 10; i++ {
				fw.CreatePod(t, c, fw.PodSpec("default", fmt.Sprintf("first-%d", i), sched, "100m", ""))
			}
			fw.Eventually(t, 30*time.Second, "the first pods bound", func() (bool, error) { return allBound(c, "first-", 10) })
			leader, follower := a, b
			if scheduledAttempts(a) == "0" {
				leader, follower = b, a
			}
			if got := scheduledAttempts(follower); got != "0" {
				t.Fatalf("the follower scheduled %s pods; only the leader may bind", got)
			}
			holder := leaseHolder(t, cp)
			stopped := time.Now()
			if stop == "SIGTERM" {
				code, err := leader.Terminate(60 * time.Second)
				if err != nil || code != 0 {
					t.Fatalf("leader exit code %d, %v; want 0 after SIGTERM", code, err)
				}
			} else {
				leader.Kill()
			}
			for i := 0; i < 10; i++ {
				fw.CreatePod(t, c, fw.PodSpec("default", fmt.Sprintf("second-%d", i), sched, "100m", ""))
			}
			fw.Eventually(t, 30*time.Second, "the second pods bound by the new leader", func() (bool, error) { return allBound(c, "second-", 10) })
			if h := leaseHolder(t, cp); h == holder || h == "" {
				t.Errorf("lease holder is %q, want the other instance (was %q)", h, holder)
			}
			// Lease 4s: the hand-over takes at most about the lease duration plus retries.
			if d := time.Since(stopped); d > 15*time.Second {
				t.Errorf("hand-over took %s, want it within the lease duration (4s) plus retries", d)
			}
			// The attempt is counted after the binding call returns (as
			// upstream counts it), so a pod can be seen bound first.
			fw.Eventually(t, 10*time.Second, "the new leader's 10 scheduled attempts", func() (bool, error) {
				return scheduledAttempts(follower) == "10", nil
			})
			pods, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(pods.Items) != 20 {
				t.Errorf("%d pods exist, want 20 (none lost)", len(pods.Items))
			}
		})
	}
}
