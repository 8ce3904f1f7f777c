package simulator

import (
	"container/heap"
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubesched/kubesched/internal/queue"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// The world runs on virtual time: the scheduler places pods until
// nothing more can happen or a deadline comes; pods with a duration
// finish that long after they are bound, and the workloads' controllers
// replace the pods that go (a Job starts its next pods).

// runState is the run's own state.
type runState struct {
	// limit is the latest virtual time the world runs to; renewed, when
	// RenewLimit last counted it again from then.
	limit, renewed time.Time
	// lastFlushBindings is the bindings when unschedulable pods were last
	// flushed back to the queue (-1: never).
	lastFlushBindings int
	// evictedReplaced is the evictions the controllers have replaced (in
	// a world with a Scenario).
	evictedReplaced int
	finishes        finishQueue
	// drains are the nodes whose evictions a PodDisruptionBudget refused,
	// asked again (drain.go).
	drains []drain
	// err is the first error of the controllers' creations.
	err error
	// stopped is set when the world reached its limit with pods still to
	// place; it runs no more.
	stopped *LimitError
	// groupRetryVersion is the store's version when pod groups rejected
	// and backing off were last let retry (groupsSettled); 0: never.
	groupRetryVersion uint64
	// cronJobs is how the CronJobs run (startCronJobs).
	cronJobs cluster.CronJobRun
}

// groupsSettled: what backs off is only pod groups whose last attempt was
// rejected, and nothing changed in the world since they were last
// retried. kube-scheduler retries such a group after each backoff
// forever (no event wakes it); here its next attempt would fail the same
// way, so the world does not wait for it: the group stays pending, as in
// a cluster, and the run can end.
//
// A cluster with no node at all is settled the same way: every pod fails
// with "no nodes available to schedule pods" (an error's backoff, no
// plugin to wake it), and only a node's arrival changes that.
func (w *World) groupsSettled() bool {
	return w.onlyHopelessBackingOff() && w.Store.Version() == w.run.groupRetryVersion
}

func (w *World) onlyHopelessBackingOff() bool {
	if w.Scheduler.Queue.OnlyRejectedGroupsBackingOff() {
		return true
	}
	active, backoff, _ := w.Scheduler.Queue.Counts()
	nodes, _ := w.Scheduler.Cache.Counts()
	return nodes == 0 && active == 0 && backoff > 0
}

// Gone is why a pod left the world: its report status and message, and
// the node it was on.
type Gone struct {
	Status, Message, Node string
}

// finish is a bound pod's end, due at t.
type finish struct {
	t   time.Time
	key string
	uid string
	seq int
}

// finishQueue holds the bound pods' ends, earliest first, then in the
// order they were scheduled.
type finishQueue struct {
	heap finishHeap
	seq  int
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

// PodDuration is a pod's DurationAnnotation, 0 when it has none.
func PodDuration(p *v1.Pod) (time.Duration, error) {
	s, ok := p.Annotations[cluster.DurationAnnotation]
	if !ok {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("metadata.annotations[%s]: Invalid value: %q: a positive duration such as 90s or 10m", cluster.DurationAnnotation, s)
	}
	return d, nil
}

// scheduleFinish notes when a pod bound now (or running at the start)
// finishes, if it has a duration.
func (w *World) scheduleFinish(p *v1.Pod) {
	d, err := PodDuration(p)
	if err != nil || d == 0 {
		return
	}
	f := &w.run.finishes
	f.seq++
	heap.Push(&f.heap, finish{t: w.Clock.Now().Add(d), key: cluster.PodKey(p), uid: string(p.UID), seq: f.seq})
}

// finishDue ends the pods whose time has come, reporting whether any did.
func (w *World) finishDue() bool {
	now := w.Clock.Now()
	any := false
	f := &w.run.finishes
	for len(f.heap) > 0 && !f.heap[0].t.After(now) {
		due := heap.Pop(&f.heap).(finish)
		ns, name, _ := strings.Cut(due.key, "/")
		p, ok := w.Store.GetPod(ns, name)
		if !ok || string(p.UID) != due.uid || p.Spec.NodeName == "" {
			continue
		}
		d, _ := PodDuration(p)
		w.Remove(p, Gone{Status: report.StatusFinished, Node: p.Spec.NodeName, Message: fmt.Sprintf("finished %s after it was bound", d)})
		w.Cluster.JobSucceeded(p)
		any = true
	}
	if any {
		w.reconcile()
	}
	return any
}

// Remove deletes a pod from the world and remembers why.
func (w *World) Remove(p *v1.Pod, why Gone) {
	k := cluster.PodKey(p)
	if err := w.Store.DeletePod(p.Namespace, p.Name); err != nil {
		return
	}
	if w.book.gone == nil {
		w.book.gone = map[string]Gone{}
	}
	if why.Node == "" {
		why.Node = p.Spec.NodeName
	}
	if why.Status == report.StatusDeleted {
		w.book.deletions++
	}
	w.book.gone[k] = why
}

// Restored forgets why the pods (namespace/name) left the world: an undo
// of the store put them back. Their results are theirs again, and a
// later eviction of one counts as a preemption.
func (w *World) Restored(keys []string) {
	for _, k := range keys {
		if g, ok := w.book.gone[k]; ok {
			if g.Status == report.StatusDeleted {
				w.book.deletions--
			}
			delete(w.book.gone, k)
		}
	}
}

// reconcile runs the controllers and adds the pods they create; an
// error stays in w.run.err, which the next step reports.
func (w *World) reconcile() {
	w.Change(nil)
}

// Change makes a change to the world (a step's creations and deletions),
// then runs the workloads' controllers and brings into the world what
// they created: pods, ReplicaSets and claims (for the listers). It
// returns how many pods were created (a StatefulSet's pods waiting their
// turn are not, yet) and deleted, and the first error of the change or of
// the controllers' creations. A nil change only runs the controllers.
func (w *World) Change(change func() error) (created, deleted int, err error) {
	c := w.Cluster
	w.startControllers()
	pods, rs, others := len(c.Pods), len(c.ReplicaSets), len(c.Others)
	deletions := w.book.deletions
	if change != nil {
		if err := change(); err != nil {
			return 0, 0, err
		}
	}
	groups, refused := len(c.PodGroups), len(c.ControllerErrors)
	c.Reconcile()
	if len(c.ControllerErrors) > refused {
		return 0, 0, c.ControllerErrors[refused]
	}
	if err := w.adoptPodGroups(c.PodGroups[groups:]); err != nil {
		return 0, 0, err
	}
	w.adopt(pods, rs, others)
	if w.run.err != nil {
		return 0, 0, w.run.err
	}
	return len(c.Pods) - pods, w.book.deletions - deletions, nil
}

// runControllers runs some of the controllers (reconcile: the
// StatefulSets waiting for a pod) and brings into the world what they
// created, returning how many pods they created and deleted; an error
// stays in w.run.err.
func (w *World) runControllers(reconcile func()) (created, deleted int) {
	c := w.Cluster
	w.startControllers()
	pods, rs, others := len(c.Pods), len(c.ReplicaSets), len(c.Others)
	deletions := w.book.deletions
	reconcile()
	w.adopt(pods, rs, others)
	return len(c.Pods) - pods, w.book.deletions - deletions
}

// startControllers gives the controllers the world's hooks.
func (w *World) startControllers() {
	w.Cluster.StartControllers(cluster.Hooks{
		Live: w.Live, Removals: w.Store.Removals, Now: w.Clock.Now,
		Remove:   func(p *v1.Pod, why string) { w.Remove(p, Gone{Status: report.StatusDeleted, Message: why}) },
		CronJobs: w.run.cronJobs,
	})
}

// startCronJobs has the CronJobs run, when the world first runs: at their
// schedule's times up to the Scenario's last step when a timeline
// watches the world, else once each at once (their peak).
func (w *World) startCronJobs() {
	c := w.Cluster
	w.run.cronJobs.Started = true
	if sc := c.Scenario; sc != nil && w.timeline != nil {
		// Epoch itself, for a Scenario of no step: no schedule time is
		// at the start (each is after the CronJob's creation).
		w.run.cronJobs.Until = Epoch
		if n := len(sc.Steps); n > 0 {
			w.run.cronJobs.Until = Epoch.Add(sc.Steps[n-1].At)
		}
	}
	if len(c.CronJobs) > 0 {
		w.reconcile()
		w.Store.Flush()
	}
}

// cronJobsDue: a CronJob has a Job to create now.
func (w *World) cronJobsDue() bool {
	t, ok := w.Cluster.NextCronJob()
	return ok && !t.After(w.Clock.Now())
}

// adoptPodGroups brings into the world the PodGroups the controllers made
// (a Job's, with WorkloadWithJob), before their pods.
func (w *World) adoptPodGroups(groups []*schedulingv1beta1.PodGroup) error {
	if len(groups) == 0 {
		return nil
	}
	if err := loading.DefaultPodGroups(w.Cluster, groups); err != nil {
		return err
	}
	if !w.Scheduler.Cache.PodGroupsEnabled() {
		return nil
	}
	for _, pg := range groups {
		if err := w.Store.AddPodGroup(pg); err != nil {
			return fmt.Errorf("create PodGroup %s/%s: %w", pg.Namespace, pg.Name, err)
		}
	}
	return nil
}

// adopt brings into the world what the controllers created since the
// counts given: pods, ReplicaSets and claims (for the listers).
func (w *World) adopt(pods, rs, others int) {
	c := w.Cluster
	for _, r := range c.ReplicaSets[rs:] {
		w.AddObject(r)
	}
	for _, o := range c.Others[others:] {
		w.AddObject(o)
	}
	fresh := c.Pods[pods:]
	if err := loading.DefaultPods(c, fresh); err != nil {
		w.run.err = err
		return
	}
	for _, p := range c.Pods[pods:] {
		if err := w.AddPending(p); err != nil && w.run.err == nil {
			w.run.err = err
		}
	}
}

// Live is the controllers' view of a pod in the world: its current
// state, nil once it is gone (deleted, finished, evicted); a pod not
// created yet (an ordered StatefulSet pod) is itself.
func (w *World) Live(p *v1.Pod) *v1.Pod {
	if cur, ok := w.Store.GetPod(p.Namespace, p.Name); ok {
		if cur.UID == p.UID {
			return cur
		}
		return nil
	}
	if _, ok := w.book.gone[cluster.PodKey(p)]; ok {
		return nil
	}
	if _, evicted := w.Store.Evicted[cluster.PodKey(p)]; evicted {
		return nil
	}
	return p
}

// AddObject gives the plugins' listers an object created on the way.
func (w *World) AddObject(o interface{}) {
	if w.objects.addListed != nil {
		if err := w.objects.addListed(o); err != nil && w.run.err == nil {
			w.run.err = err
		}
	}
}

// Limit is the latest virtual time the world runs to.
func (w *World) Limit() time.Time { return w.run.limit }

// RenewLimit gives a world that is changed and run again, each change a
// question of its own (consolidate's drains, tried one after another in
// one world), its limit of virtual time again, counted from now. A world
// that stopped at its limit stays stopped.
func (w *World) RenewLimit() {
	if w.run.stopped == nil {
		w.run.limit = w.Clock.Now().Add(w.run.limit.Sub(w.run.since()))
		w.run.renewed = w.Clock.Now()
	}
}

// since is when the limit counts from: the start, or its last renewal.
func (r *runState) since() time.Time {
	if r.renewed.IsZero() {
		return Epoch
	}
	return r.renewed
}

// Advance moves virtual time, the timeline told first.
func (w *World) Advance(t time.Time) {
	if w.timeline != nil {
		w.timeline.Advancing()
	}
	w.Clock.SetTime(t)
}

// RunUntil schedules until virtual time reaches deadline or nothing more
// can happen: it drains activeQ (each binding finished and delivered
// before the next pod, for determinism), ends the pods whose duration is
// over, steps time to the next backoff expiry, and, when only
// unschedulable pods remain, lets the 5-minute flush retry them as long
// as the round before it placed something. Time never passes deadline.
// In a world with a Scenario, the controllers replace the pods
// preemption evicts. It returns a *LimitError when the world reaches its
// limit (Limit) with pods still to place: what it holds then is not an
// answer. The world does not run again after that.
func (w *World) RunUntil(ctx context.Context, deadline time.Time) error {
	return w.runLoop(ctx, deadline, true)
}

// ScheduleNow schedules what the scheduling queue holds now — a pod just
// created, and the pods its binding wakes — on the cluster as it is, as
// kube-scheduler attempts a new pod at once: the pods already found
// unschedulable are retried only if an event wakes them (their plugins'
// queueing hints decide), never by waiting for the 5-minute flush, and
// virtual time moves only for the backoff of pods that failed with an
// error (and the pods that finish meanwhile). It returns a *LimitError
// as RunUntil does.
func (w *World) ScheduleNow(ctx context.Context) error {
	return w.runLoop(ctx, w.Clock.Now(), false)
}

// runLoop is RunUntil's loop; with wait false it is ScheduleNow's: no
// flush, and time moves only to the next backoff expiry.
func (w *World) runLoop(ctx context.Context, deadline time.Time, wait bool) error {
	if w.run.stopped != nil {
		return w.run.stopped
	}
	sched, store := w.Scheduler, w.Store
	replace := w.Cluster.Scenario != nil
	finishes := &w.run.finishes.heap
	if !w.run.cronJobs.Started {
		// As the world first runs: the PV controller's pass over the
		// claims read (Immediate ones, static and pre-bound volumes),
		// then the CronJobs' first Jobs.
		w.SyncVolumes()
		w.startCronJobs()
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !w.Clock.Now().Before(w.run.limit) {
			if w.stillBusy() {
				return w.stopAtLimit()
			}
			return nil
		}
		for sched.TryScheduleOne(ctx) {
			sched.WaitForBindings()
			store.Flush()
			if len(w.Cluster.Ordered) > 0 && w.createOrdered() {
				store.Flush()
			}
		}
		store.Flush()
		if replace && len(store.Evicted) != w.run.evictedReplaced {
			// The victims' controllers replace them.
			w.run.evictedReplaced = len(store.Evicted)
			w.reconcile()
			store.Flush()
			continue
		}
		if len(*finishes) > 0 && w.finishDue() {
			store.Flush()
			continue
		}
		if len(w.run.drains) > 0 && wait && w.drainsDue() {
			store.Flush()
			continue
		}
		if wait && w.cronJobsDue() {
			w.reconcile()
			store.Flush()
			continue
		}
		next := deadline
		if !wait {
			t, ok := sched.Queue.NextBackoffExpiry()
			if !ok || w.groupsSettled() {
				return nil
			}
			next = t
			if next.After(w.run.limit) {
				next = w.run.limit
			}
		}
		if len(*finishes) > 0 && (*finishes)[0].t.Before(next) {
			next = (*finishes)[0].t
		}
		if t, ok := w.nextDrain(); ok && wait && t.Before(next) {
			next = t
		}
		if t, ok := w.Cluster.NextCronJob(); ok && wait && t.Before(next) {
			next = t
		}
		if t, ok := sched.Queue.NextBackoffExpiry(); ok && !t.After(next) && !w.groupsSettled() {
			if w.onlyHopelessBackingOff() {
				w.run.groupRetryVersion = store.Version()
			}
			if t.After(w.Clock.Now()) {
				w.Advance(t)
			}
			sched.Queue.FlushBackoffQCompleted()
			continue
		}
		flushAt := w.Clock.Now().Add(queue.DefaultPodMaxInUnschedulablePodsDuration)
		if _, _, u := sched.Queue.Counts(); wait && u > 0 && store.Bindings != w.run.lastFlushBindings && !flushAt.After(next) {
			w.run.lastFlushBindings = store.Bindings
			w.Advance(flushAt)
			sched.Queue.FlushUnschedulablePodsLeftover()
			continue
		}
		if next.Equal(w.run.limit) {
			if w.stillBusy() {
				return w.stopAtLimit()
			}
			return nil
		}
		w.Advance(next)
		if wait && next.Equal(deadline) {
			return nil
		}
	}
}

// stillBusy: the scheduler would still act on pods to place — one waits
// in activeQ or backs off, or unschedulable pods wait for a flush that
// bindings since the last one make due, or for a pod to finish.
func (w *World) stillBusy() bool {
	active, backoff, unschedulable := w.Scheduler.Queue.Counts()
	if active+backoff > 0 && !(active == 0 && w.groupsSettled()) {
		return true
	}
	if unschedulable == 0 {
		return false
	}
	return w.Store.Bindings != w.run.lastFlushBindings || len(w.run.finishes.heap) > 0
}

// LimitError is a run that reached the world's limit of virtual time
// with pods still to place: the state it stopped in answers nothing.
type LimitError struct {
	// Limit is the virtual time the world may run, from the start: 24
	// hours, after the Scenario's last step if there is one (LastStep).
	Limit, LastStep time.Duration
	// Pending counts the pods this scheduler was still to place; Example
	// names one of them.
	Pending int
	Example string
}

func (e *LimitError) Error() string {
	after := ""
	if e.LastStep > 0 {
		after = fmt.Sprintf(" (%s after the scenario's last step)", e.Limit-e.LastStep)
	}
	return fmt.Sprintf("the simulation stopped at its limit of %s of virtual time%s with %d pod(s) still to place (e.g. %s); no answer is given from a world that stopped early",
		e.Limit, after, e.Pending, e.Example)
}

// stopAtLimit records and returns the LimitError of a world that reached
// its limit.
func (w *World) stopAtLimit() error {
	e := &LimitError{Limit: w.run.limit.Sub(w.run.since()), LastStep: w.run.limit.Sub(w.run.since()) - maxVirtualTime}
	for _, p := range w.Pending {
		if cur, ok := w.Store.GetPod(p.Namespace, p.Name); ok && cur.Spec.NodeName == "" {
			if e.Pending == 0 {
				e.Example = cluster.PodKey(p)
			}
			e.Pending++
		}
	}
	w.run.stopped = e
	return e
}

// Stopped is the LimitError of a world that reached its limit, nil
// otherwise.
func (w *World) Stopped() error {
	if w.run.stopped == nil {
		return nil
	}
	return w.run.stopped
}
