package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// Waits on the schedulers' own state instead of sleeps. A scenario that
// asserts that something did not happen (a gang stays unbound, no second
// preemption, a pod stays pending) first waits for a sign that the
// scheduler has already looked and decided: an attempt counted, every
// pending pod parked in its queue, an event handled. Each run of a
// differential scenario waits on its own scheduler, so kube-scheduler and
// kubesched are both proven to have reached the point before the negative
// is asserted. The timeouts are the durations of the sleeps these waits
// replaced: the point is normally reached well within them.

// pollInterval: kubesched's /debug/cache lists the cluster through the
// scheduler's own client (a dozen LISTs), whose rate limit (100 qps in
// these tests) its bindings and status writes share; five polls a second
// leave them room.
const pollInterval = 200 * time.Millisecond

// eventually polls cond every pollInterval until it holds or timeout
// passes; cond's error (or description) is reported on a timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		ok, err := cond()
		if ok {
			t.Logf("%s: after %v (bound %v)", what, time.Since(start).Round(time.Millisecond), timeout.Round(time.Millisecond))
			return
		}
		if !time.Now().Before(deadline) {
			t.Fatalf("timed out after %v waiting for %s (last: %v)", timeout, what, err)
		}
		<-time.After(min(pollInterval, time.Until(deadline)))
	}
}

// queueIdle reports whether the scheduler has nothing left to try: no pod
// in activeQ or backoffQ, none in flight, and every pending pod of its
// (in the API) parked until a cluster event: unschedulable after an
// attempt, gated, or a pod-group member waiting for its group. state
// says what was seen.
//
// kubesched: its /debug/cache report, whose counts are read under the
// queue's lock ("queue: A active, B backoff, U unschedulable, F in
// flight"), status 200 when every pending pod of its is in the queue or in
// flight and its cache agrees with the API. (Its scheduler_pending_pods
// gauge is refreshed every second only, and does not count the members
// that wait for their group.)
//
// kube-scheduler: its scheduler_pending_pods gauges, which move with the
// pods: none active or backing off, and as many parked (unschedulable,
// gated, incomplete, pending) as the API has pending pods, so none is in
// flight.
func queueIdle(c kubernetes.Interface, s fw.Running) (idle bool, state string, err error) {
	if k, ok := s.(*fw.Scheduler); ok {
		code, body, err := k.Get("/debug/cache")
		if err != nil {
			return false, "", err
		}
		var active, backoff, unschedulable, inFlight int
		line := lineWithPrefix(body, "queue: ")
		if _, err := fmt.Sscanf(line, "queue: %d active, %d backoff, %d unschedulable, %d in flight", &active, &backoff, &unschedulable, &inFlight); err != nil {
			return false, "", fmt.Errorf("/debug/cache %d: %q: %v", code, line, err)
		}
		state = fmt.Sprintf("/debug/cache %d, %s", code, line)
		if i := strings.Index(body, "differences from the API"); code != 200 && i >= 0 {
			state += "; " + strings.Join(strings.Split(strings.TrimSpace(body[i:]), "\n"), "; ")
		}
		return code == 200 && active == 0 && backoff == 0 && inFlight == 0, state, nil
	}
	m, err := s.Metrics()
	if err != nil {
		return false, "", err
	}
	pending, err := pendingOfOurs(c)
	if err != nil {
		return false, "", err
	}
	q := func(name string) float64 { return fw.MetricSum(m, "scheduler_pending_pods", `queue="`+name+`"`) }
	active, backoff := q("active"), q("backoff")
	parked := q("unschedulable") + q("gated") + q("incomplete") + q("pending")
	state = fmt.Sprintf("scheduler_pending_pods: %v active, %v backoff, %v parked; %d pending in the API", active, backoff, parked, pending)
	return active == 0 && backoff == 0 && parked == float64(pending), state, nil
}

// waitIdle waits until queueIdle holds: the scheduler has tried (or
// gated) every pending pod and waits for a cluster event.
func waitIdle(t *testing.T, c kubernetes.Interface, s fw.Running, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "the scheduler idle, every pending pod parked", func() (bool, error) {
		idle, state, err := queueIdle(c, s)
		if err != nil {
			return false, err
		}
		return idle, fmt.Errorf("%s", state)
	})
}

// pendingOfOurs counts the pods in default that wait for the default
// scheduler: not bound, not terminating.
func pendingOfOurs(c kubernetes.Interface) (int, error) {
	pods, err := c.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range pods.Items {
		if p.Spec.SchedulerName == "default-scheduler" && p.Spec.NodeName == "" && p.DeletionTimestamp == nil &&
			p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			n++
		}
	}
	return n, nil
}

func lineWithPrefix(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// waitMetricAbove waits until the sum of a metric's samples (with these
// labels) exceeds floor, and returns it.
func waitMetricAbove(t *testing.T, s fw.Running, timeout time.Duration, floor float64, name string, labels ...string) float64 {
	t.Helper()
	var v float64
	eventually(t, timeout, fmt.Sprintf("%s{%s} above %v", name, strings.Join(labels, ","), floor), func() (bool, error) {
		m, err := s.Metrics()
		if err != nil {
			return false, err
		}
		v = fw.MetricSum(m, name, labels...)
		return v > floor, fmt.Errorf("%v", v)
	})
	return v
}

// createSyncPod creates a pod held by a scheduling gate: the scheduler
// parks it (gated) without trying it; it takes no room and wakes no other
// pod, and stays. Its creation comes after every pod event so far on the
// scheduler's one pod watch, so once the scheduler has it in its queue it
// has handled them all, a bound pod's updates included, which leave no
// trace of their own.
func createSyncPod(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	p := pod(name, "")
	p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "kubesched.test/sync"}}
	fw.CreatePod(t, c, p)
}

// syncPodEvents: the scheduler has handled every pod event so far
// (createSyncPod) and is idle (waitIdle).
func syncPodEvents(t *testing.T, c kubernetes.Interface, s fw.Running, name string, timeout time.Duration) {
	t.Helper()
	createSyncPod(t, c, name)
	waitIdle(t, c, s, timeout)
}

// syncNodeEvents: the scheduler has handled every node event so far,
// heartbeats included, which leave no trace of their own. It creates a
// node after them on the scheduler's one node watch, with no capacity (it
// fits no pod, so it wakes none; it stays), and waits until the
// scheduler's cache counts it.
func syncNodeEvents(t *testing.T, c kubernetes.Interface, s fw.Running, name string, timeout time.Duration) {
	t.Helper()
	nodes, err := c.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Nodes().Create(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCachedNodes(t, s, len(nodes.Items)+1, timeout)
}

// waitCachedNodes waits until the scheduler's cache holds n nodes.
func waitCachedNodes(t *testing.T, s fw.Running, n int, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("%d nodes in the scheduler's cache", n), func() (bool, error) {
		got, err := cachedNodes(s)
		if err != nil {
			return false, err
		}
		return got == n, fmt.Errorf("%d", got)
	})
}

// cachedNodes is the number of nodes in the scheduler's cache: kubesched's
// /debug/cache report ("cache: N nodes"), kube-scheduler's node additions
// less deletions handled (scheduler_event_handling_duration_seconds, each
// observed once its handler has updated the cache; the informer's initial
// list counts as additions).
func cachedNodes(s fw.Running) (int, error) {
	if k, ok := s.(*fw.Scheduler); ok {
		_, body, err := k.Get("/debug/cache")
		if err != nil {
			return 0, err
		}
		var n int
		line := lineWithPrefix(body, "cache: ")
		if _, err := fmt.Sscanf(line, "cache: %d nodes", &n); err != nil {
			return 0, fmt.Errorf("/debug/cache: %q: %v", line, err)
		}
		return n, nil
	}
	m, err := s.Metrics()
	if err != nil {
		return 0, err
	}
	added := fw.MetricSum(m, "scheduler_event_handling_duration_seconds_count", `event="NodeAdd"`)
	deleted := fw.MetricSum(m, "scheduler_event_handling_duration_seconds_count", `event="NodeDelete"`)
	return int(added - deleted), nil
}

// waitDecided waits until the scheduler has decided about each pod: bound,
// or tried and left with PodScheduled=False.
func waitDecided(t *testing.T, c kubernetes.Interface, names []string, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("each of %v bound or unschedulable", names), func() (bool, error) {
		for _, n := range names {
			p, err := getPod(c, "default", n)
			if err != nil {
				return false, err
			}
			if cond := podScheduledCondition(p); p.Spec.NodeName == "" && (cond == nil || cond.Status != v1.ConditionFalse) {
				return false, fmt.Errorf("%s neither bound nor unschedulable", n)
			}
		}
		return true, nil
	})
}

// waitEventObjects waits until the pod has at least n events of this
// reason (Event objects: a recurring event is one more object, then a
// series), which the scheduler writes asynchronously after its attempts.
func waitEventObjects(t *testing.T, c kubernetes.Interface, name, reason string, n int, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, fmt.Sprintf("%d %s events of %s", n, reason, name), func() (bool, error) {
		evs, err := podEvents(c, name, reason)
		return len(evs) >= n, fmt.Errorf("%d (%v)", len(evs), err)
	})
}

func podEvents(c kubernetes.Interface, name, reason string) ([]time.Time, error) {
	evs, err := c.EventsV1().Events("default").List(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("regarding.name", name).String()})
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for _, e := range evs.Items {
		if e.Reason == reason {
			out = append(out, e.EventTime.Time)
		}
	}
	return out, nil
}

// waitBackoffOver waits until the backoff of each of these pods, rejected
// once, has run out, so that the next cluster event moves them all to
// activeQ together (not some to backoffQ, which orders pods by when their
// backoff ends). First the scheduler is idle, each pod parked after its
// one unschedulable attempt. A backoff then is a timer with no trace of
// its own: its end is computed from the scheduler's record of the
// attempt, its FailedScheduling event's time (in microseconds), plus what
// kube-scheduler v1.37.2 and kubesched give a pod rejected once:
// podInitialBackoffSeconds (1 s by default), the end truncated to a 1 s
// ordering window that has to be over.
func waitBackoffOver(t *testing.T, c kubernetes.Interface, s fw.Running, names []string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tried := waitMetricAbove(t, s, time.Until(deadline), float64(len(names)-1), "scheduler_schedule_attempts_total", `result="unschedulable"`)
	waitIdle(t, c, s, time.Until(deadline))
	const initialBackoff, window, margin = time.Second, time.Second, 100 * time.Millisecond
	var end time.Time
	for _, n := range names {
		waitEventObjects(t, c, n, "FailedScheduling", 1, time.Until(deadline))
		evs, err := podEvents(c, n, "FailedScheduling")
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range evs {
			if e := at.Add(initialBackoff + window + margin); e.After(end) {
				end = e
			}
		}
	}
	if extra := int(tried) - len(names); extra > 0 {
		// A pod was tried again (an event came during its first attempt):
		// its backoff doubled, from a failure before now.
		end = time.Now().Add(initialBackoff<<extra + window + margin)
		t.Logf("%v unschedulable attempts of %d pods: waiting out a backoff of %v", tried, len(names), initialBackoff<<extra)
	}
	// Not a wait to see that nothing happens: the end of a known timer.
	time.Sleep(time.Until(end))
}
