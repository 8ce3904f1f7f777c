package simulator

import (
	"container/heap"
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/queue"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"strings"
)

// A timeline is a Scenario replayed on virtual time: the world runs the
// scheduler up to each step, applies it, and runs on; pods with a
// duration finish that long after they are bound, and the workloads'
// controllers replace the pods that go (a Job starts its next pods).

// gone is why a pod left the world.
type gone struct {
	status, message, node string
}

// finish is a bound pod's end, due at t.
type finish struct {
	t   time.Time
	key string
	uid string
	seq int
}

type finishHeap []finish

func (h finishHeap) Len() int { return len(h) }
func (h finishHeap) Less(i, j int) bool {
	return h[i].t.Before(h[j].t) || (h[i].t.Equal(h[j].t) && h[i].seq < h[j].seq)
}
func (h finishHeap) Swap(i, j int)       { h[i], h[j] = h[j], h[i] }
func (h *finishHeap) Push(x interface{}) { *h = append(*h, x.(finish)) }
func (h *finishHeap) Pop() interface{} {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// podDuration is a pod's DurationAnnotation, 0 when it has none.
func podDuration(p *v1.Pod) (time.Duration, error) {
	s, ok := p.Annotations[DurationAnnotation]
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("metadata.annotations[%s]: Invalid value: %q: a positive duration such as 90s or 10m", DurationAnnotation, s)
	}
	return d, nil
}

// scheduleFinish notes when a pod bound now (or running at the start)
// finishes, if it has a duration.
func (w *World) scheduleFinish(p *v1.Pod) {
	d, err := podDuration(p)
	if err != nil || d == 0 {
		return
	}
	w.finishSeq++
	heap.Push(&w.finishes, finish{t: w.Clock.Now().Add(d), key: podKey(p), uid: string(p.UID), seq: w.finishSeq})
}

// finishDue ends the pods whose time has come, reporting whether any did.
func (w *World) finishDue() bool {
	now := w.Clock.Now()
	any := false
	for len(w.finishes) > 0 && !w.finishes[0].t.After(now) {
		f := heap.Pop(&w.finishes).(finish)
		ns, name, _ := strings.Cut(f.key, "/")
		p, ok := w.Store.GetPod(ns, name)
		if !ok || string(p.UID) != f.uid || p.Spec.NodeName == "" {
			continue
		}
		d, _ := podDuration(p)
		w.removePod(p, gone{status: StatusFinished, node: p.Spec.NodeName, message: fmt.Sprintf("finished %s after it was bound", d)})
		w.jobSucceeded(p)
		any = true
	}
	if any {
		w.reconcile()
	}
	return any
}

// removePod deletes a pod from the world and remembers why.
func (w *World) removePod(p *v1.Pod, why gone) {
	k := podKey(p)
	if err := w.Store.DeletePod(p.Namespace, p.Name); err != nil {
		return
	}
	if w.gone == nil {
		w.gone = map[string]gone{}
	}
	if why.node == "" {
		why.node = p.Spec.NodeName
	}
	if why.status == StatusDeleted {
		w.deletions++
	}
	w.gone[k] = why
}

// jobSucceeded counts a finished pod toward its Job's completions.
func (w *World) jobSucceeded(p *v1.Pod) {
	c := w.cluster
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "Job" || c.expander == nil {
		return
	}
	for _, in := range c.workloads {
		if job, ok := in.obj.(*batchv1.Job); ok && job.Name == ref.Name && job.Namespace == p.Namespace {
			job.Status.Succeeded++
			if ix, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
				k := ownerKey("Job", job.Namespace, job.Name)
				if c.expander.done[k] == nil {
					c.expander.done[k] = map[string]bool{}
				}
				c.expander.done[k][ix] = true
			}
			return
		}
	}
}

// reconcile runs the controllers and adds the pods they create.
func (w *World) reconcile() {
	c := w.cluster
	if c.expander == nil {
		c.newExpander()
	}
	c.expander.live = w.live
	pods, ordered, rs, others := len(c.Pods), len(c.Ordered), len(c.ReplicaSets), len(c.Others)
	c.expander.reconcile()
	w.adopt(pods, ordered, rs, others)
}

// adopt brings into the world what the controllers created since the
// counts given: pods, ordered StatefulSet pods, ReplicaSets and claims
// (for the listers).
func (w *World) adopt(pods, ordered, rs, others int) {
	c := w.cluster
	w.Workloads = c.Workloads
	for _, r := range c.ReplicaSets[rs:] {
		w.addObject(r)
	}
	for _, o := range c.Others[others:] {
		w.addObject(o)
	}
	fresh := c.Pods[pods:]
	for _, o := range c.Ordered[ordered:] {
		cp := *o
		w.ordered = append(w.ordered, &cp)
		fresh = append(fresh[:len(fresh):len(fresh)], o.Waiting...)
	}
	if err := c.defaultPods(fresh); err != nil {
		w.stepErr = err
		return
	}
	for _, p := range c.Pods[pods:] {
		if err := w.addPending(p); err != nil && w.stepErr == nil {
			w.stepErr = err
		}
	}
}

// live is the expander's view of a pod in the world.
func (w *World) live(p *v1.Pod) *v1.Pod {
	if cur, ok := w.Store.GetPod(p.Namespace, p.Name); ok {
		if cur.UID == p.UID {
			return cur
		}
		return nil
	}
	if _, ok := w.gone[podKey(p)]; ok {
		return nil
	}
	if _, evicted := w.Store.Evicted[podKey(p)]; evicted {
		return nil
	}
	return p // not created yet (an ordered StatefulSet pod)
}

// addObject gives the plugins' listers an object created on the way.
func (w *World) addObject(o interface{}) {
	if w.addListed != nil {
		if err := w.addListed(o); err != nil && w.stepErr == nil {
			w.stepErr = err
		}
	}
}

// runUntil schedules until virtual time reaches deadline or nothing more
// can happen: it drains activeQ (each binding finished and delivered
// before the next pod, for determinism), ends the pods whose duration is
// over, steps time to the next backoff expiry, and, when only
// unschedulable pods remain, lets the 5-minute flush retry them as long
// as the round before it placed something. Time never passes deadline.
func (w *World) runUntil(ctx context.Context, deadline time.Time) {
	sched, store := w.Scheduler, w.Store
	for w.Clock.Now().Before(w.limit) && ctx.Err() == nil {
		for sched.TryScheduleOne(ctx) {
			sched.WaitForBindings()
			store.Flush()
			if len(w.ordered) > 0 && w.createOrdered() {
				store.Flush()
			}
		}
		store.Flush()
		if w.tl != nil && len(store.Evicted) != w.tl.evicted {
			// The victims' controllers replace them.
			w.tl.evicted = len(store.Evicted)
			w.reconcile()
			store.Flush()
			continue
		}
		if len(w.finishes) > 0 && w.finishDue() {
			store.Flush()
			continue
		}
		next := deadline
		if len(w.finishes) > 0 && w.finishes[0].t.Before(next) {
			next = w.finishes[0].t
		}
		if t, ok := sched.Queue.NextBackoffExpiry(); ok && !t.After(next) {
			if t.After(w.Clock.Now()) {
				w.advance(t)
			}
			sched.Queue.FlushBackoffQCompleted()
			continue
		}
		flushAt := w.Clock.Now().Add(queue.DefaultPodMaxInUnschedulablePodsDuration)
		if _, _, u := sched.Queue.Counts(); u > 0 && store.Bindings != w.lastFlushBindings && !flushAt.After(next) {
			w.lastFlushBindings = store.Bindings
			w.advance(flushAt)
			sched.Queue.FlushUnschedulablePodsLeftover()
			continue
		}
		if next.Equal(w.limit) {
			return
		}
		w.advance(next)
		if next.Equal(deadline) {
			return
		}
	}
}
