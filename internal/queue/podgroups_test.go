package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestAGroupDiscardedAtPopLeavesNoCycleForItsNextMembersToWaitFor(t *testing.T) {
	q, _ := newQueue(Options{PodGroups: true})
	q.AddPodGroup(st.MakePodGroup("g").Obj())
	first := st.MakePod().Name("a").UID("uid-a").InGroup("g").Obj()
	q.Add(first)
	// Its only member is already in flight (tracked twice): the popped
	// group is discarded, and no group cycle runs.
	q.lock.Lock()
	q.pushInFlight(first)
	q.lock.Unlock()
	if p, ok := q.TryPop(); ok {
		t.Fatalf("popped %v, want the group discarded", p.Pod.Name)
	}
	// A member arriving now starts a new entity at once, as none of its
	// group's cycles runs.
	q.Add(st.MakePod().Name("b").UID("uid-b").InGroup("g").Obj())
	p, ok := q.TryPop()
	if !ok || p.Group == nil || len(p.Group.Members) != 1 || p.Group.Members[0].Pod.Name != "b" {
		t.Fatalf("TryPop = %v, %v; want the group with member b", p, ok)
	}
}

// The pod groups in the queue as a specification: each case is a sequence
// of events and scheduler calls on a queue with pod groups on, and where
// each member, and its group's entity, are after them, as
// kube-scheduler v1.37.2's backend/queue keeps them (scheduling_queue.go
// addPodGroupMember, AddUnschedulablePodIfNotPresent,
// AddAttemptedPodGroupIfNeeded, Update, deletePodGroupMember,
// *PodGroup, Activate, moveEntitiesToActiveOrBackoffQueue;
// active_queue.go unlockedPop and unlockedMoveEntityToInFlight;
// backoff_queue.go; pod_group_member_pods.go; workload_forest.go;
// framework/types.go QueuedPodGroupInfo). Every expectation is read off
// upstream's code, cited by function next to the case.

// groupRun is a case's queue and what its steps remember.
type groupRun struct {
	t     *testing.T
	q     *PriorityQueue
	clk   *testingclock.FakeClock
	start time.Time
	// popped is the entity the last pop returned (nil: none).
	popped *framework.QueuedPodInfo
	// gated names the pods PreEnqueue holds back, with the plugin.
	gated map[string]string
}

type queueStep struct {
	name string
	run  func(r *groupRun)
}

// member is group g's pod name, with UID uid-<name>.
func member(name string) *v1.Pod { return st.MakePod().Name(name).InGroup("g").Obj() }

func qAddGroup(pg *schedulingv1beta1.PodGroup) queueStep {
	return queueStep{"AddPodGroup", func(r *groupRun) { r.q.AddPodGroup(pg) }}
}

func qUpdateGroup(pg *schedulingv1beta1.PodGroup) queueStep {
	return queueStep{"UpdatePodGroup", func(r *groupRun) { r.q.UpdatePodGroup(pg) }}
}

func qDeleteGroup(pg *schedulingv1beta1.PodGroup) queueStep {
	return queueStep{"DeletePodGroup", func(r *groupRun) { r.q.DeletePodGroup(pg) }}
}

func qAdd(pods ...*v1.Pod) queueStep {
	return queueStep{"Add", func(r *groupRun) {
		for _, p := range pods {
			r.q.Add(p)
		}
	}}
}

func qUpdate(oldPod, newPod *v1.Pod) queueStep {
	return queueStep{"Update " + newPod.Name, func(r *groupRun) { r.q.Update(oldPod, newPod) }}
}

func qDelete(p *v1.Pod) queueStep {
	return queueStep{"Delete " + p.Name, func(r *groupRun) { r.q.Delete(p) }}
}

// qPop pops without blocking; popped is nil when nothing came out.
func qPop() queueStep {
	return queueStep{"TryPop", func(r *groupRun) {
		r.popped = nil
		if p, ok := r.q.TryPop(); ok {
			r.popped = p
		}
	}}
}

// qFail returns the popped group's named members as the group's cycle
// fails them: rejected by plugin, or with an error when plugin is "".
func qFail(plugin string, names ...string) queueStep {
	return queueStep{"AddUnschedulableIfNotPresent", func(r *groupRun) {
		for _, name := range names {
			m := r.poppedMember(name)
			m.UnschedulablePlugins = nil
			if plugin != "" {
				m.UnschedulablePlugins = sets.New(plugin)
			}
			r.q.AddUnschedulableIfNotPresent(m, r.q.SchedulingCycle())
		}
	}}
}

// qDone ends the named members' attempts (bound, as a binding cycle does).
func qDone(names ...string) queueStep {
	return queueStep{"Done", func(r *groupRun) {
		for _, name := range names {
			r.q.Done(r.poppedMember(name).Pod)
		}
	}}
}

// qEnd ends the popped group's cycle with its status.
func qEnd(status *framework.Status) queueStep {
	return queueStep{"AddAttemptedPodGroupIfNeeded", func(r *groupRun) {
		if r.popped == nil {
			r.t.Fatal("no group was popped")
		}
		r.q.AddAttemptedPodGroupIfNeeded(r.popped, status)
	}}
}

// qRejectCycles pops the group n times and rejects every member each
// time, waiting an hour between cycles for its backoff to end.
func qRejectCycles(n int) queueStep {
	return queueStep{"rejected cycles", func(r *groupRun) {
		for i := 0; i < n; i++ {
			if i > 0 {
				qWait(time.Hour).run(r)
			}
			qPop().run(r)
			if r.popped == nil || r.popped.Group == nil {
				r.t.Fatalf("cycle %d: no group popped", i+1)
			}
			for _, m := range append([]*framework.QueuedPodInfo(nil), r.popped.Group.Members...) {
				qFail("NodeResourcesFit", m.Pod.Name).run(r)
			}
			qEnd(framework.NewStatus(framework.Unschedulable, "rejected")).run(r)
		}
	}}
}

func qActivate(p *v1.Pod) queueStep {
	return queueStep{"Activate " + p.Name, func(r *groupRun) { r.q.Activate(p) }}
}

func qMoveAll(event framework.ClusterEvent, newObj interface{}) queueStep {
	return queueStep{"MoveAllToActiveOrBackoffQueue " + event.String(), func(r *groupRun) {
		r.q.MoveAllToActiveOrBackoffQueue(event, nil, newObj, nil)
	}}
}

// qWait steps the fake clock and flushes the pods whose backoff ended, as
// the queue's loop does every second.
func qWait(d time.Duration) queueStep {
	return queueStep{"wait " + d.String(), func(r *groupRun) {
		r.clk.Step(d)
		r.q.FlushBackoffQCompleted()
	}}
}

// qUngate lets PreEnqueue admit the pod.
func qUngate(name string) queueStep {
	return queueStep{"ungate " + name, func(r *groupRun) { delete(r.gated, name) }}
}

// qTrackedTwice marks a member in flight as if a pop had taken it already.
func qTrackedTwice(p *v1.Pod) queueStep {
	return queueStep{"in flight " + p.Name, func(r *groupRun) {
		r.q.lock.Lock()
		defer r.q.lock.Unlock()
		r.q.pushInFlight(p)
	}}
}

func (r *groupRun) poppedMember(name string) *framework.QueuedPodInfo {
	r.t.Helper()
	if r.popped == nil || r.popped.Group == nil {
		r.t.Fatalf("member %s: no group was popped", name)
	}
	for _, m := range r.popped.Group.Members {
		if m.Pod.Name == name {
			return m
		}
	}
	r.t.Fatalf("member %s is not in the popped group", name)
	return nil
}

// memberPlace says where a member of group g waits: incomplete, pending,
// in its group's entity (active, backoff, errorBackoff, unschedulable), in
// flight, or absent.
func memberPlace(q *PriorityQueue, p *v1.Pod) string {
	q.lock.Lock()
	defer q.lock.Unlock()
	group, key := groupKeyOf(p), Key(p)
	if _, ok := q.groups.incomplete.get(group, key); ok {
		return "incomplete"
	}
	if _, ok := q.groups.pending.get(group, key); ok {
		return "pending"
	}
	if place, e := entityPlace(q); e != nil {
		if _, ok := e.Group.Get(p); ok {
			return place
		}
	}
	if _, ok := q.inFlightPods[p.UID]; ok {
		return "inflight"
	}
	return "absent"
}

// entityPlace finds group default/g's entity (the lock held).
func entityPlace(q *PriorityQueue) (string, *framework.QueuedPodInfo) {
	key := entityKey("default", "g")
	for _, h := range []struct {
		name string
		heap *keyedHeap[*framework.QueuedPodInfo]
	}{{"active", q.activeQ}, {"backoff", q.backoffQ}, {"errorBackoff", q.errorBackoffQ}} {
		if e, ok := h.heap.Get(key); ok {
			return h.name, e
		}
	}
	if e, ok := q.unschedulable.get(key); ok {
		return "unschedulable", e
	}
	return "none", nil
}

// entityWant is group g's entity after the steps.
type entityWant struct {
	// place: active, backoff, errorBackoff, unschedulable, or none.
	place string
	// members in the entity's order.
	members []string
	// counters, checked when set: attempts, rejections, errors in a row.
	counters *[3]int
	// stampedAt is the entity's timestamp as time since the case began
	// ("" unchecked).
	stampedAt string
}

func TestPodGroupsInTheQueueFollowUpstreamsRules(t *testing.T) {
	pg := st.MakePodGroup("g").Obj()
	a, b, c := member("a"), member("b"), member("c")
	labelled := func(p *v1.Pod) *v1.Pod {
		p = p.DeepCopy()
		p.Labels = map[string]string{"changed": "yes"}
		return p
	}
	withGate := st.MakePod().Name("a").InGroup("g").SchedulingGates("example.com/hold").Obj()
	okNode := st.MakeNode().Name("n").Label("ok", "true").Obj()
	notOkNode := st.MakeNode().Name("n").Label("ok", "false").Obj()
	rejected := framework.NewStatus(framework.Unschedulable, "rejected")
	counters := func(attempts, rejections, errors int) *[3]int { return &[3]int{attempts, rejections, errors} }

	// rejectedCycle: a and b popped and rejected together.
	rejectedCycle := []queueStep{qAddGroup(pg), qAdd(a, b), qPop(), qFail("NodeResourcesFit", "a", "b"), qEnd(rejected)}
	steps := func(parts ...[]queueStep) []queueStep {
		var out []queueStep
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name string
		// gated: pods PreEnqueue holds back at first, with the plugin.
		gated  map[string]string
		steps  []queueStep
		where  map[string]string
		entity entityWant
		// popped: the members of the last pop, "none" when it returned
		// nothing ("" unchecked).
		popped string
		skip   string
	}{
		// --- arrival (addPodGroupMember, AddPodGroup) ---
		{
			// addPodGroupMember: no root in the workload forest ->
			// incompletePodGroupPods.
			name:   "a member whose PodGroup was not observed waits in incomplete",
			steps:  []queueStep{qAdd(a)},
			where:  map[string]string{"a": "incomplete"},
			entity: entityWant{place: "none"},
		},
		{
			// AddPodGroup: clears incompletePodGroupPods into
			// addPodGroupMember; the first forms the entity in activeQ
			// (newQueuedPodGroupInfoFromRootLookup), the next join it
			// (addToPodGroupIfExists).
			name:   "observing its PodGroup moves the waiting members into one entity in activeQ",
			steps:  []queueStep{qAdd(b, a), qAddGroup(pg)},
			where:  map[string]string{"a": "active", "b": "active"},
			entity: entityWant{place: "active", members: []string{"a", "b"}},
		},
		{
			// QueuedPodGroupInfo.AddPod inserts by
			// PodGroupMemberPodsOrderingFunc: priority, attempts,
			// timestamp, then name.
			name:   "members are ordered by arrival, then by name among those that arrived at once",
			steps:  []queueStep{qAddGroup(pg), qAdd(c), qWait(time.Second), qAdd(b, a)},
			entity: entityWant{place: "active", members: []string{"c", "a", "b"}, stampedAt: "0s"},
		},
		{
			name:   "a member of higher priority comes first in its group",
			steps:  []queueStep{qAddGroup(pg), qAdd(a, st.MakePod().Name("b").InGroup("g").Priority(10).Obj())},
			entity: entityWant{place: "active", members: []string{"b", "a"}},
		},

		// --- the group's cycle (unlockedPop, addPodGroupMember, AddUnschedulablePodIfNotPresent) ---
		{
			// unlockedMoveEntityToInFlight: every member in flight, the
			// entity's and each member's attempts counted (IncAttempts).
			name:   "a popped group's members are all in flight",
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b), qPop()},
			where:  map[string]string{"a": "inflight", "b": "inflight"},
			entity: entityWant{place: "none"},
			popped: "a,b",
		},
		{
			// unlockedMoveEntityToInFlight drops a member already in
			// inFlightPods from the entity and keeps the rest.
			name:   "a popped group drops a member already in flight and keeps the others",
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b), qTrackedTwice(a), qPop()},
			where:  map[string]string{"a": "inflight", "b": "inflight"},
			popped: "b",
		},
		{
			// addPodGroupMember: isLastPoppedEntity -> pendingPodGroupPods.
			name:   "a member arriving while its group is in flight waits in pending until the cycle ends",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qPop(), qAdd(b)},
			where:  map[string]string{"a": "inflight", "b": "pending"},
			entity: entityWant{place: "none"},
		},
		{
			// AddUnschedulablePodIfNotPresent: Done, then
			// addUnschedulablePodGroupMember -> addPodGroupMember ->
			// pending, the group being the last popped.
			name:   "a member returned as unschedulable during its group's cycle waits in pending, no longer in flight",
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b), qPop(), qFail("NodeResourcesFit", "a")},
			where:  map[string]string{"a": "pending", "b": "inflight"},
			entity: entityWant{place: "none"},
		},

		// --- the cycle's end (AddAttemptedPodGroupIfNeeded) ---
		{
			// Success: requeueWithoutBackoff -> moveToActiveQ; the counts
			// reset; the timestamp is now, as no member of the cycle came
			// back (hasIntersection is false).
			name: "after a successful cycle the pending members are requeued at once, the group's rejections forgotten",
			steps: steps(rejectedCycle, []queueStep{qWait(time.Hour), qPop(), qAdd(c), qDone("a", "b"),
				qWait(3 * time.Second), qEnd(nil)}),
			where:  map[string]string{"a": "absent", "b": "absent", "c": "active"},
			entity: entityWant{place: "active", members: []string{"c"}, counters: counters(2, 0, 0), stampedAt: "1h0m3s"},
		},
		{
			// Success with a member of the cycle among the pending:
			// preserveTimestamp, so the group preempts next.
			name:   "after a successful cycle that left a member unschedulable the group keeps its timestamp",
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b), qPop(), qDone("a"), qFail("NodeResourcesFit", "b"), qWait(3 * time.Second), qEnd(nil)},
			where:  map[string]string{"a": "absent", "b": "active"},
			entity: entityWant{place: "active", members: []string{"b"}, counters: counters(1, 0, 0), stampedAt: "0s"},
		},
		{
			// No pending pods: "nothing to requeue"; clearPoppedEntity
			// lets the next member form a new entity at once.
			name:   "after a cycle that leaves no pending members a new member forms a new entity at once",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qPop(), qDone("a"), qEnd(nil), qAdd(b)},
			where:  map[string]string{"a": "absent", "b": "active"},
			entity: entityWant{place: "active", members: []string{"b"}},
		},
		{
			// Rejected: UnschedulableCount++, timestamp now, backing off
			// -> moveToBackoffQ; backoffQueue.add puts an entity whose own
			// UnschedulablePlugins are empty (a group's always are) in
			// entityErrorBackoffQ.
			name:   "after a rejected cycle they back off together",
			steps:  rejectedCycle,
			where:  map[string]string{"a": "errorBackoff", "b": "errorBackoff"},
			entity: entityWant{place: "errorBackoff", members: []string{"a", "b"}, counters: counters(1, 1, 0), stampedAt: "0s"},
		},
		{
			// The pending pods of a rejected cycle include the members
			// that arrived meanwhile.
			name: "a member that arrived during a rejected cycle backs off with the rejected ones",
			steps: []queueStep{qAddGroup(pg), qAdd(a), qPop(), qAdd(b), qFail("NodeResourcesFit", "a"),
				qEnd(rejected)},
			where:  map[string]string{"a": "errorBackoff", "b": "errorBackoff"},
			entity: entityWant{place: "errorBackoff", members: []string{"a", "b"}, counters: counters(1, 1, 0)},
		},
		{
			// Neither success nor rejected: ConsecutiveErrorsCount++.
			name:   "after a cycle that failed with an error the group backs off counting the error",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qPop(), qFail("", "a"), qEnd(framework.AsStatus(errors.New("boom")))},
			where:  map[string]string{"a": "errorBackoff"},
			entity: entityWant{place: "errorBackoff", members: []string{"a"}, counters: counters(1, 0, 1)},
		},
		{
			// unlockedPop pops from backoffQ only via popBackoff, which
			// takes entityBackoffQ, never entityErrorBackoffQ.
			name:   "a backing-off group is not popped while activeQ is empty",
			steps:  steps(rejectedCycle, []queueStep{qPop()}),
			where:  map[string]string{"a": "errorBackoff", "b": "errorBackoff"},
			popped: "none",
		},
		{
			// isEntityBackingoff: the expiry (timestamp + 1s, aligned)
			// not before the current window means still backing off.
			name:   "a rejected group still backs off in the window its first second ends",
			steps:  steps(rejectedCycle, []queueStep{qWait(time.Second)}),
			entity: entityWant{place: "errorBackoff", members: []string{"a", "b"}},
		},
		{
			name:   "a rejected group is in activeQ once the window its first second ends has passed",
			steps:  steps(rejectedCycle, []queueStep{qWait(2 * time.Second)}),
			entity: entityWant{place: "active", members: []string{"a", "b"}},
		},
		{
			// calculateBackoffDuration: a lone pod's max backoff, 10s,
			// caps the fifth rejection's 16s.
			name:   "a group of one pod backs off at most the plain max",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qRejectCycles(5), qWait(11 * time.Second)},
			entity: entityWant{place: "active", members: []string{"a"}, counters: counters(5, 5, 0)},
		},
		{
			// calculateBackoffDuration: "The maximum backoff duration is
			// multiplied by the size of the entity" (its square root):
			// 10s*sqrt(4) = 20s, so the fifth rejection backs off 16s.
			name:   "a group's max backoff grows with the square root of its size",
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b, c, member("d")), qRejectCycles(5), qWait(12 * time.Second)},
			entity: entityWant{place: "errorBackoff", members: []string{"a", "b", "c", "d"}, counters: counters(5, 5, 0)},
		},

		// --- members joining and leaving a waiting group (addToPodGroupIfExists, deletePodGroupMember) ---
		{
			// addToPodGroupIfExists: deleteFromAnyQueue reports
			// queueAfterBackoff; requeueEntityWithQueueingStrategy puts it
			// back in backoff while it backs off.
			name:   "a member arriving while its group backs off joins it there",
			steps:  steps(rejectedCycle, []queueStep{qAdd(c)}),
			where:  map[string]string{"c": "errorBackoff"},
			entity: entityWant{place: "errorBackoff", members: []string{"a", "b", "c"}},
		},
		{
			// deletePodGroupMember: RemovePod; an entity without queued
			// pods is not requeued.
			name:   "deleting the last waiting member takes its group's entity out of the queue",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qDelete(a)},
			where:  map[string]string{"a": "absent"},
			entity: entityWant{place: "none"},
		},
		{
			// deletePodGroupMember requeues the rest where they were.
			name:   "deleting one member leaves the others' entity where it waits",
			steps:  steps(rejectedCycle, []queueStep{qDelete(a)}),
			where:  map[string]string{"a": "absent", "b": "errorBackoff"},
			entity: entityWant{place: "errorBackoff", members: []string{"b"}},
		},
		{
			// deletePodGroupMember: no entity -> pendingPodGroupPods.delete.
			name:   "deleting a member that waits in pending takes it out for good",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qPop(), qAdd(b), qDelete(b), qDone("a"), qEnd(nil)},
			where:  map[string]string{"b": "absent"},
			entity: entityWant{place: "none"},
		},
		{
			// deletePodGroupMember: no root -> incompletePodGroupPods.delete.
			name:   "deleting a member that waits in incomplete takes it out for good",
			steps:  []queueStep{qAdd(a), qDelete(a), qAddGroup(pg)},
			where:  map[string]string{"a": "absent"},
			entity: entityWant{place: "none"},
		},

		// --- the PodGroup's object (AddPodGroup, UpdatePodGroup, DeletePodGroup, workload_forest.go) ---
		{
			// DeletePodGroup: RemovePodGroup returns the entity's pods,
			// added to incompletePodGroupPods; the empty entity is dropped.
			name:   "deleting the PodGroup sends its waiting members back to incomplete",
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b), qDeleteGroup(pg)},
			where:  map[string]string{"a": "incomplete", "b": "incomplete"},
			entity: entityWant{place: "none"},
		},
		{
			name:   "observing the PodGroup again brings them back as one entity",
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b), qDeleteGroup(pg), qAddGroup(pg)},
			where:  map[string]string{"a": "active", "b": "active"},
			entity: entityWant{place: "active", members: []string{"a", "b"}},
		},
		{
			// DeletePodGroup: no entity, but the last popped ->
			// pendingPodGroupPods cleared into incompletePodGroupPods.
			name:   "deleting the PodGroup while its cycle runs sends the pending members to incomplete",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qPop(), qAdd(b), qDeleteGroup(pg), qDone("a"), qEnd(nil)},
			where:  map[string]string{"a": "absent", "b": "incomplete"},
			entity: entityWant{place: "none"},
		},
		{
			// addUnschedulablePodGroupMember -> addPodGroupMember: no root.
			name:   "a member returned after its PodGroup was deleted waits in incomplete",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qPop(), qDeleteGroup(pg), qFail("NodeResourcesFit", "a")},
			where:  map[string]string{"a": "incomplete"},
			entity: entityWant{place: "none"},
		},
		{
			// workloadForest.updatePodGroup stores the object whether or
			// not it was added: the group is observed from then on.
			name:   "an update of a PodGroup never added makes it observed for members arriving later",
			steps:  []queueStep{qUpdateGroup(pg), qAdd(a)},
			where:  map[string]string{"a": "active"},
			entity: entityWant{place: "active", members: []string{"a"}},
		},

		// --- member updates (Update) ---
		{
			// Update: addEventsIfPodInFlight -> return.
			name:   "an update of a member in flight leaves it in flight",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qPop(), qUpdate(a, labelled(a))},
			where:  map[string]string{"a": "inflight"},
			entity: entityWant{place: "none"},
		},
		{
			// Update: not in any queue -> pendingPodGroupPods.update.
			name:   "an update of a pending member keeps it pending",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qPop(), qAdd(b), qUpdate(b, labelled(b))},
			where:  map[string]string{"b": "pending"},
			entity: entityWant{place: "none"},
		},
		{
			// Update: no root -> incompletePodGroupPods.update.
			name:   "an update of a member waiting in incomplete keeps it there",
			steps:  []queueStep{qAdd(a), qUpdate(a, labelled(a))},
			where:  map[string]string{"a": "incomplete"},
			entity: entityWant{place: "none"},
		},
		{
			// Update: found nowhere -> addPod.
			name:   "an update of a member of an observed group the queue does not hold adds it",
			steps:  []queueStep{qAddGroup(pg), qUpdate(a, labelled(a))},
			where:  map[string]string{"a": "active"},
			entity: entityWant{place: "active", members: []string{"a"}},
		},
		{
			// Update: no root -> incompletePodGroupPods.update finds
			// nothing, and Update returns without adding it.
			name:   "an update of a member of an unobserved group the queue does not hold does not add it",
			steps:  []queueStep{qUpdate(a, labelled(a))},
			where:  map[string]string{"a": "absent"},
			entity: entityWant{place: "none"},
		},

		// --- PreEnqueue and events (runPreEnqueuePlugins, moveEntitiesToActiveOrBackoffQueue) ---
		{
			// runPreEnqueuePlugins: one member gated gates the entity;
			// moveToActiveQ puts a gated entity in unschedulableEntities.
			name:   "a group with a gated member waits in unschedulable",
			gated:  map[string]string{"b": "Hinted"},
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b)},
			where:  map[string]string{"a": "unschedulable", "b": "unschedulable"},
			entity: entityWant{place: "unschedulable", members: []string{"a", "b"}},
		},
		{
			// addToPodGroupIfExists: from unschedulableEntities the
			// strategy is queueSkip, and the entity goes back there
			// without PreEnqueue.
			name:   "a member arriving while its group is gated joins it in unschedulable",
			gated:  map[string]string{"a": "Hinted"},
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qUngate("a"), qAdd(b)},
			where:  map[string]string{"b": "unschedulable"},
			entity: entityWant{place: "unschedulable", members: []string{"a", "b"}},
		},
		{
			// isEntityWorthRequeuing: b joined without PreEnqueue and no
			// plugin rejected it, so isPodWorthRequeuing says
			// queueAfterBackoff for it whatever the hints: the group is
			// requeued, and moveToActiveQ's PreEnqueue lets it in.
			name:   "a gated group with a member no plugin rejected is requeued by any event its gate registered",
			gated:  map[string]string{"a": "Hinted", "b": "Hinted"},
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b), qUngate("a"), qUngate("b"), qMoveAll(nodeLabel, notOkNode)},
			entity: entityWant{place: "active", members: []string{"a", "b"}},
		},
		{
			// moveEntitiesToActiveOrBackoffQueue: the gate's event;
			// isEntityWorthRequeuing asks the members' plugins (the gating
			// one is in both members' UnschedulablePlugins after the
			// first requeue ran PreEnqueue on both, runPreEnqueuePlugin);
			// Queue -> requeue -> PreEnqueue passes -> activeQ.
			name:  "an event the gating plugin registered, its hint saying Queue, moves the ungated group to activeQ",
			gated: map[string]string{"a": "Hinted", "b": "Hinted"},
			steps: []queueStep{qAddGroup(pg), qAdd(a, b), qMoveAll(nodeLabel, okNode), qUngate("a"), qUngate("b"),
				qMoveAll(nodeLabel, okNode)},
			entity: entityWant{place: "active", members: []string{"a", "b"}},
		},
		{
			name:  "an event whose hint says QueueSkip for every member leaves the group gated",
			gated: map[string]string{"a": "Hinted", "b": "Hinted"},
			steps: []queueStep{qAddGroup(pg), qAdd(a, b), qMoveAll(nodeLabel, okNode), qUngate("a"), qUngate("b"),
				qMoveAll(nodeLabel, notOkNode)},
			entity: entityWant{place: "unschedulable", members: []string{"a", "b"}},
		},
		{
			// A gated entity and an event its gating plugin did not
			// register: skipped before any hint is asked.
			name:   "an event the gating plugin did not register leaves the group gated",
			gated:  map[string]string{"a": "Hinted", "b": "Hinted"},
			steps:  []queueStep{qAddGroup(pg), qAdd(a, b), qUngate("a"), qUngate("b"), qMoveAll(nodeAdd, okNode)},
			entity: entityWant{place: "unschedulable", members: []string{"a", "b"}},
		},
		{
			// Update of a member of an entity in unschedulableEntities:
			// entity.Update, then for each event isEntityWorthRequeuing
			// and requeueEntityWithQueueingStrategy (SchedulingGates
			// registered UpdatePodSchedulingGatesEliminated).
			name:   "an update that removes a member's scheduling gate moves its group out of unschedulable",
			steps:  []queueStep{qAddGroup(pg), qAdd(withGate), qUpdate(withGate, a)},
			where:  map[string]string{"a": "active"},
			entity: entityWant{place: "active", members: []string{"a"}},
		},

		// --- Activate ---
		{
			// activate: backoffQ.delete -> moveToActiveQ.
			name:   "activating a member moves its backing-off group to activeQ",
			steps:  steps(rejectedCycle, []queueStep{qActivate(a)}),
			where:  map[string]string{"a": "active", "b": "active"},
			entity: entityWant{place: "active", members: []string{"a", "b"}},
		},
		{
			// Activate: no root -> continue.
			name:   "activating a member of an unobserved group leaves it in incomplete",
			steps:  []queueStep{qAdd(a), qActivate(a)},
			where:  map[string]string{"a": "incomplete"},
			entity: entityWant{place: "none"},
		},
		{
			// activate finds no entity in unschedulableEntities nor
			// backoffQ: nothing moves.
			name:   "activating a member waiting in pending leaves it there",
			steps:  []queueStep{qAddGroup(pg), qAdd(a), qPop(), qAdd(b), qActivate(b)},
			where:  map[string]string{"b": "pending"},
			entity: entityWant{place: "none"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != "" {
				t.Skip(tt.skip)
			}
			r := &groupRun{t: t, gated: map[string]string{}}
			for name, plugin := range tt.gated {
				r.gated[name] = plugin
			}
			opts := Options{PodGroups: true, PreEnqueue: func(_ context.Context, pod *v1.Pod) *framework.Status {
				if plugin, ok := r.gated[pod.Name]; ok {
					return framework.NewStatus(framework.UnschedulableAndUnresolvable, "held").WithPlugin(plugin)
				}
				if len(pod.Spec.SchedulingGates) > 0 {
					return framework.NewStatus(framework.UnschedulableAndUnresolvable, "gated").WithPlugin("SchedulingGates")
				}
				return nil
			}}
			r.q, r.clk = newQueue(opts)
			r.start = r.clk.Now()
			for _, s := range tt.steps {
				s.run(r)
			}
			for name, want := range tt.where {
				if got := memberPlace(r.q, member(name)); got != want {
					t.Errorf("member %s is in %s, want %s", name, got, want)
				}
			}
			if tt.popped != "" {
				got := "none"
				if r.popped != nil {
					var names []string
					for _, m := range r.popped.Group.Members {
						names = append(names, m.Pod.Name)
					}
					got = strings.Join(names, ",")
				}
				if got != tt.popped {
					t.Errorf("the last pop returned %s, want %s", got, tt.popped)
				}
			}
			checkEntity(t, r, tt.entity)
		})
	}
}

func checkEntity(t *testing.T, r *groupRun, want entityWant) {
	t.Helper()
	if want.place == "" {
		return
	}
	r.q.lock.Lock()
	place, e := entityPlace(r.q)
	r.q.lock.Unlock()
	if place != want.place {
		t.Fatalf("group g's entity is in %s, want %s", place, want.place)
	}
	if e == nil {
		return
	}
	var names []string
	for _, m := range e.Group.Members {
		names = append(names, m.Pod.Name)
	}
	if fmt.Sprint(names) != fmt.Sprint(want.members) {
		t.Errorf("the entity's members are %v, want %v", names, want.members)
	}
	if want.counters != nil {
		got := [3]int{e.Attempts, e.UnschedulableCount, e.ConsecutiveErrorsCount}
		if got != *want.counters {
			t.Errorf("the entity's attempts, rejections, errors = %v, want %v", got, *want.counters)
		}
	}
	if want.stampedAt != "" {
		if got := e.Timestamp.Sub(r.start).String(); got != want.stampedAt {
			t.Errorf("the entity is stamped at %s, want %s", got, want.stampedAt)
		}
	}
}
