package runtime

import (
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubesched/kubesched/pkg/framework"
)

// waitingPods holds pods that a Permit plugin asked to wait.
type waitingPods struct {
	mu   sync.RWMutex
	pods map[types.UID]*waitingPod
}

func newWaitingPods() *waitingPods { return &waitingPods{pods: map[types.UID]*waitingPod{}} }

func (w *waitingPods) add(p *waitingPod) {
	w.mu.Lock()
	w.pods[p.pod.UID] = p
	w.mu.Unlock()
}

func (w *waitingPods) remove(uid types.UID) {
	w.mu.Lock()
	delete(w.pods, uid)
	w.mu.Unlock()
}

func (w *waitingPods) get(uid types.UID) *waitingPod {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.pods[uid]
}

func (w *waitingPods) iterate(fn func(framework.WaitingPod)) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	for _, p := range w.pods {
		fn(p)
	}
}

// waitingPod is one pod at Permit, with a timer per plugin that made it wait.
type waitingPod struct {
	pod     *v1.Pod
	mu      sync.Mutex
	pending map[string]clock.Timer
	done    chan *framework.Status
	// finished: the wait's outcome was sent (allowed by all, rejected or
	// preempted); later calls change nothing.
	finished bool
}

var _ framework.WaitingPod = &waitingPod{}

func newWaitingPod(clk clock.WithTickerAndDelayedExecution, pod *v1.Pod, plugins map[string]time.Duration) *waitingPod {
	wp := &waitingPod{pod: pod, pending: map[string]clock.Timer{}, done: make(chan *framework.Status, 1)}
	wp.mu.Lock()
	defer wp.mu.Unlock()
	for name, d := range plugins {
		name := name
		// Reject in a goroutine of its own: a fake clock runs AfterFunc
		// callbacks under its lock, and Reject stops the other timers.
		wp.pending[name] = clk.AfterFunc(d, func() {
			go wp.Reject(name, fmt.Sprintf("rejected due to timeout after waiting %v at plugin %v", d, name))
		})
	}
	return wp
}

func (w *waitingPod) GetPod() *v1.Pod { return w.pod }

func (w *waitingPod) GetPendingPlugins() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.pending))
	for k := range w.pending {
		out = append(out, k)
	}
	return out
}

func (w *waitingPod) Allow(plugin string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.pending[plugin]; ok {
		t.Stop()
		delete(w.pending, plugin)
	}
	if len(w.pending) != 0 || w.finished {
		return
	}
	w.finished = true
	w.done <- nil
}

func (w *waitingPod) Reject(plugin, msg string) {
	w.stop(framework.NewStatus(framework.Unschedulable, msg).WithPlugin(plugin))
}

// Preempt ends the wait with an Error, not a rejection, as upstream's
// waitingPod.Preempt: the preempted pod is retried after its backoff
// rather than parked until an event. False when the wait had already
// ended (the pod was allowed): the preemptor deletes it through the API.
func (w *waitingPod) Preempt(plugin, msg string) bool {
	return w.stop(framework.NewStatus(framework.Error, msg).WithPlugin(plugin))
}

func (w *waitingPod) stop(st *framework.Status) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.pending {
		t.Stop()
	}
	if w.finished {
		return false
	}
	w.finished = true
	w.done <- st
	return true
}
