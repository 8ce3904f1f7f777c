package queue

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Pod groups in the queue (the GenericWorkload gate, Options.PodGroups), as
// kube-scheduler v1.37.2's backend/queue keeps them. A group's pending pods
// wait as one entity in activeQ, backoffQ or unschedulablePods: a
// QueuedPodInfo whose Group holds the members and whose pod is the group's
// stand-in (its name, priority and scheduler name, for the ordering). Three
// invariants hold for a member pod:
//
//  1. incomplete: it waits in incomplete while its PodGroup has not been
//     observed;
//  2. queued: otherwise, unless its group is in flight, it is a member of
//     its group's entity;
//  3. pending: while its group is in flight (popped, its cycle running), a
//     member that arrives, or fails, waits in pending until the cycle ends
//     (AddAttemptedPodGroupIfNeeded), then joins a new entity.
type podGroups struct {
	// forest holds the observed PodGroups by namespace/name.
	forest     map[string]*schedulingv1beta1.PodGroup
	incomplete memberPods
	pending    memberPods
	// lastPopped is the key of the entity popped last: a group whose
	// cycle runs.
	lastPopped string
}

// memberPods holds member pods by group, then by pod key.
type memberPods map[string]map[string]*framework.QueuedPodInfo

func (m memberPods) add(group string, p *framework.QueuedPodInfo) {
	if m[group] == nil {
		m[group] = map[string]*framework.QueuedPodInfo{}
	}
	m[group][Key(p.Pod)] = p
}

func (m memberPods) get(group, key string) (*framework.QueuedPodInfo, bool) {
	p, ok := m[group][key]
	return p, ok
}

func (m memberPods) delete(group, key string) bool {
	if _, ok := m[group][key]; !ok {
		return false
	}
	delete(m[group], key)
	if len(m[group]) == 0 {
		delete(m, group)
	}
	return true
}

// clear takes a group's pods out, in arrival order.
func (m memberPods) clear(group string) []*framework.QueuedPodInfo {
	out := make([]*framework.QueuedPodInfo, 0, len(m[group]))
	for _, p := range m[group] {
		out = append(out, p)
	}
	delete(m, group)
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

func (m memberPods) len() int {
	n := 0
	for _, g := range m {
		n += len(g)
	}
	return n
}

func newPodGroups() *podGroups {
	return &podGroups{forest: map[string]*schedulingv1beta1.PodGroup{}, incomplete: memberPods{}, pending: memberPods{}}
}

// entityKey is a group entity's key in the queue's heaps and maps; a pod
// key (namespace/name) never starts with the prefix.
func entityKey(namespace, name string) string { return "podgroup:" + namespace + "/" + name }

// isMember: the pod belongs to a pod group and pod groups are on.
func (q *PriorityQueue) isMember(pod *v1.Pod) bool {
	return q.groups != nil && framework.PodGroupName(pod) != ""
}

func groupKeyOf(pod *v1.Pod) string {
	return framework.PodGroupKey(pod.Namespace, framework.PodGroupName(pod))
}

// newEntity is a new entity for group pg, first member p: it takes the
// member's timestamp and arrival, as upstream's
// newQueuedPodGroupInfoFromRootLookup.
func newEntity(pg *schedulingv1beta1.PodGroup, p *framework.QueuedPodInfo) *framework.QueuedPodInfo {
	e := &framework.QueuedPodInfo{
		Timestamp:               p.Timestamp,
		InitialAttemptTimestamp: p.InitialAttemptTimestamp,
		Seq:                     p.Seq,
	}
	setEntityGroup(e, pg, p.Pod.Spec.SchedulerName)
	e.Group.Add(p)
	return e
}

// setEntityGroup gives e the group's object and a stand-in pod for it.
func setEntityGroup(e *framework.QueuedPodInfo, pg *schedulingv1beta1.PodGroup, schedulerName string) {
	prio := framework.PodGroupPriority(pg)
	stand := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: pg.Namespace, Name: pg.Name, UID: types.UID(entityKey(pg.Namespace, pg.Name))},
		Spec:       v1.PodSpec{Priority: &prio, SchedulerName: schedulerName},
	}
	e.PodInfo = framework.NewPodInfo(stand)
	if e.Group == nil {
		e.Group = &framework.QueuedPodGroupInfo{PodGroupInfo: &framework.PodGroupInfo{}}
	}
	e.Group.Namespace, e.Group.Name, e.Group.PodGroup = pg.Namespace, pg.Name, pg
}

// takeEntity removes the group's entity from whichever part of the queue
// holds it and returns where it was.
func (q *PriorityQueue) takeEntity(key string) (*framework.QueuedPodInfo, queueingStrategy, bool) {
	if e, ok := q.activeQ.Get(key); ok {
		q.activeQ.Delete(key)
		return e, queueImmediately, true
	}
	for _, h := range [2]*keyedHeap[*framework.QueuedPodInfo]{q.backoffQ, q.errorBackoffQ} {
		if e, ok := h.Get(key); ok {
			h.Delete(key)
			return e, queueAfterBackoff, true
		}
	}
	if e, ok := q.unschedulable.get(key); ok {
		q.unschedulable.delete(key)
		return e, queueSkip, true
	}
	return nil, queueSkip, false
}

// findEntity returns the group's entity where it waits.
func (q *PriorityQueue) findEntity(key string) (*framework.QueuedPodInfo, bool) {
	for _, h := range [3]*keyedHeap[*framework.QueuedPodInfo]{q.activeQ, q.backoffQ, q.errorBackoffQ} {
		if e, ok := h.Get(key); ok {
			return e, true
		}
	}
	return q.unschedulable.get(key)
}

// addMemberLocked puts a member pod where the invariants say: incomplete,
// into its group's entity (which keeps its place), pending, or a new
// entity in activeQ (upstream's addPodGroupMember).
func (q *PriorityQueue) addMemberLocked(p *framework.QueuedPodInfo, event string) {
	group := groupKeyOf(p.Pod)
	pg, ok := q.groups.forest[group]
	if !ok {
		q.groups.incomplete.add(group, p)
		return
	}
	key := entityKey(pg.Namespace, pg.Name)
	if e, s, ok := q.takeEntity(key); ok {
		e.Group.Add(p)
		q.requeue(e, s, event)
		return
	}
	if q.groups.lastPopped == key {
		q.groups.pending.add(group, p)
		return
	}
	q.moveToActiveQ(newEntity(pg, p), event)
}

// AddAttemptedPodGroupIfNeeded ends a group's cycle: the members that
// arrived or failed meanwhile (pending) form a new entity, requeued at
// once after a success (keeping its timestamp when some of its pods were
// in the cycle, so that they preempt next), after backoff otherwise
// (upstream's AddAttemptedPodGroupIfNeeded).
func (q *PriorityQueue) AddAttemptedPodGroupIfNeeded(e *framework.QueuedPodInfo, st *framework.Status) {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.groups.lastPopped = ""
	group := framework.PodGroupKey(e.Group.Namespace, e.Group.Name)
	pending := q.groups.pending.clear(group)
	if len(pending) == 0 {
		return
	}
	pg, ok := q.groups.forest[group]
	if !ok {
		for _, p := range pending {
			q.groups.incomplete.add(group, p)
		}
		return
	}
	inCycle := sets.New[types.UID]()
	for _, m := range e.Group.Members {
		inCycle.Insert(m.Pod.UID)
	}
	hadFailures := false
	for _, p := range pending {
		if inCycle.Has(p.Pod.UID) {
			hadFailures = true
		}
	}
	ne := &framework.QueuedPodInfo{
		Timestamp: e.Timestamp, Attempts: e.Attempts, InitialAttemptTimestamp: e.InitialAttemptTimestamp,
		UnschedulablePlugins: e.UnschedulablePlugins, PendingPlugins: e.PendingPlugins, GatingPlugin: e.GatingPlugin,
		UnschedulableCount: e.UnschedulableCount, ConsecutiveErrorsCount: e.ConsecutiveErrorsCount,
		Seq: e.Seq, BackoffExpiration: e.BackoffExpiration,
	}
	setEntityGroup(ne, pg, pending[0].Pod.Spec.SchedulerName)
	for _, p := range pending {
		ne.Group.Add(p)
	}
	withoutBackoff, preserve := false, false
	switch {
	case st.IsSuccess():
		withoutBackoff, preserve = true, hadFailures
		ne.UnschedulableCount, ne.ConsecutiveErrorsCount = 0, 0
	case st.IsRejected():
		ne.UnschedulableCount++
		ne.ConsecutiveErrorsCount = 0
		ne.BackoffExpiration = time.Time{}
	default:
		ne.ConsecutiveErrorsCount++
		ne.BackoffExpiration = time.Time{}
	}
	if !preserve {
		ne.Timestamp = q.clock.Now()
	}
	ne.MovedByFlush = false
	if !withoutBackoff && q.isBackingOff(ne) {
		q.moveToBackoffQ(ne, "ScheduleAttemptFailure")
		q.cond.Broadcast()
		return
	}
	q.moveToActiveQ(ne, "ScheduleAttemptFailure")
}

// addUnschedulableMemberLocked is AddUnschedulableIfNotPresent for a
// member: no in-flight events are asked; the pod goes back to its group.
func (q *PriorityQueue) addUnschedulableMemberLocked(p *framework.QueuedPodInfo) {
	q.doneLocked(p.Pod.UID)
	q.addMemberLocked(p, "ScheduleAttemptFailure")
}

// popEntityLocked marks a popped group's members in flight (a member
// already in flight is dropped from the group) and counts the attempt on
// the group and on each member.
func (q *PriorityQueue) popEntityLocked(e *framework.QueuedPodInfo) bool {
	kept := e.Group.Members[:0]
	for _, m := range e.Group.Members {
		if _, dup := q.inFlightPods[m.Pod.UID]; dup {
			q.logger.Error(nil, "Discarding a popped pod group member that is already in flight", "pod", m.Pod.Namespace+"/"+m.Pod.Name)
			continue
		}
		kept = append(kept, m)
	}
	e.Group.Members = kept
	e.Group.SyncUnscheduled()
	if len(kept) == 0 {
		return false
	}
	now := q.clock.Now()
	e.Attempts++
	if e.InitialAttemptTimestamp == nil {
		e.InitialAttemptTimestamp = &now
	}
	for _, m := range kept {
		m.Attempts++
		if m.InitialAttemptTimestamp == nil {
			t := now
			m.InitialAttemptTimestamp = &t
		}
		q.pushInFlight(m.Pod)
	}
	return true
}

// appendPods appends an entity's pods: the pod, or a group's members.
func appendPods(out []*v1.Pod, p *framework.QueuedPodInfo) []*v1.Pod {
	if p.Group == nil {
		return append(out, p.Pod)
	}
	for _, m := range p.Group.Members {
		out = append(out, m.Pod)
	}
	return out
}

// updateMemberLocked is Update for a member not in flight (upstream's
// Update for a pod group member): a member of a group never observed is
// updated where it waits in incomplete, and is not added when it waits
// nowhere; a member of a waiting entity is updated there, and an entity
// in unschedulablePods is asked, event by event, whether the update may
// make it schedulable (a scheduling gate removed) and requeued if so; a
// member in pending is updated there; any other is added.
func (q *PriorityQueue) updateMemberLocked(oldPod, newPod *v1.Pod, events []framework.ClusterEvent) {
	group, key := groupKeyOf(newPod), Key(newPod)
	if _, ok := q.groups.forest[group]; !ok {
		if p, ok := q.groups.incomplete.get(group, key); ok {
			p.PodInfo = framework.NewPodInfo(newPod)
		}
		return
	}
	ekey := entityKey(newPod.Namespace, framework.PodGroupName(newPod))
	if e, ok := q.findEntity(ekey); ok {
		if p, ok := e.Group.Get(newPod); ok {
			p.PodInfo = framework.NewPodInfo(newPod)
			e.Group.SyncUnscheduled()
			if _, waits := q.unschedulable.get(ekey); waits {
				q.requeueIfWorthLocked(ekey, e, events, oldPod, newPod)
			}
			return
		}
	}
	if p, ok := q.groups.pending.get(group, key); ok {
		p.PodInfo = framework.NewPodInfo(newPod)
		return
	}
	q.addLocked(newPod)
}

// deleteMemberLocked removes a member; a group left without members
// leaves the queue.
func (q *PriorityQueue) deleteMemberLocked(pod *v1.Pod) {
	group, key := groupKeyOf(pod), Key(pod)
	if q.groups.incomplete.delete(group, key) || q.groups.pending.delete(group, key) {
		return
	}
	e, s, ok := q.takeEntity(entityKey(pod.Namespace, framework.PodGroupName(pod)))
	if !ok {
		return
	}
	e.Group.Remove(pod)
	if len(e.Group.Members) == 0 {
		return
	}
	q.requeue(e, s, "UnscheduledPodDelete")
}

func (q *PriorityQueue) hasMemberLocked(pod *v1.Pod) bool {
	group, key := groupKeyOf(pod), Key(pod)
	if _, ok := q.groups.incomplete.get(group, key); ok {
		return true
	}
	if _, ok := q.groups.pending.get(group, key); ok {
		return true
	}
	if e, ok := q.findEntity(entityKey(pod.Namespace, framework.PodGroupName(pod))); ok {
		_, ok := e.Group.Get(pod)
		return ok
	}
	return false
}

// AddPodGroup observes a group: its pods waiting in incomplete join the
// queue (upstream's AddPodGroup).
func (q *PriorityQueue) AddPodGroup(pg *schedulingv1beta1.PodGroup) {
	if q.groups == nil {
		return
	}
	q.lock.Lock()
	defer q.lock.Unlock()
	group := framework.PodGroupKey(pg.Namespace, pg.Name)
	q.groups.forest[group] = pg
	if e, ok := q.findEntity(entityKey(pg.Namespace, pg.Name)); ok {
		setEntityGroup(e, pg, e.Pod.Spec.SchedulerName)
	}
	for _, p := range q.groups.incomplete.clear(group) {
		q.addMemberLocked(p, "PodGroupAdd")
	}
}

// UpdatePodGroup replaces a group's object. One never added is stored all
// the same (upstream's workloadForest.updatePodGroup): members arriving
// later join the queue, the ones waiting in incomplete wait for an Add.
func (q *PriorityQueue) UpdatePodGroup(pg *schedulingv1beta1.PodGroup) {
	if q.groups == nil {
		return
	}
	q.lock.Lock()
	defer q.lock.Unlock()
	group := framework.PodGroupKey(pg.Namespace, pg.Name)
	q.groups.forest[group] = pg
	key := entityKey(pg.Namespace, pg.Name)
	if e, s, ok := q.takeEntity(key); ok {
		// The priority may have changed: the heaps re-place it.
		setEntityGroup(e, pg, e.Pod.Spec.SchedulerName)
		q.putBack(e, s)
	}
}

// putBack returns an entity to the part of the queue it was taken from,
// without running PreEnqueue or moving it.
func (q *PriorityQueue) putBack(e *framework.QueuedPodInfo, s queueingStrategy) {
	switch {
	case s == queueImmediately:
		q.activeQ.AddOrUpdate(e)
	case s == queueSkip:
		q.unschedulable.add(qKey(e), e)
	case e.UnschedulablePlugins.Len()+e.PendingPlugins.Len() == 0:
		q.errorBackoffQ.AddOrUpdate(e)
	default:
		q.backoffQ.AddOrUpdate(e)
	}
}

// DeletePodGroup forgets a group: its waiting pods go back to incomplete.
func (q *PriorityQueue) DeletePodGroup(pg *schedulingv1beta1.PodGroup) {
	if q.groups == nil {
		return
	}
	q.lock.Lock()
	defer q.lock.Unlock()
	group := framework.PodGroupKey(pg.Namespace, pg.Name)
	if _, ok := q.groups.forest[group]; !ok {
		return
	}
	delete(q.groups.forest, group)
	key := entityKey(pg.Namespace, pg.Name)
	if e, _, ok := q.takeEntity(key); ok {
		for _, m := range e.Group.Members {
			q.groups.incomplete.add(group, m)
		}
		return
	}
	if q.groups.lastPopped == key {
		for _, p := range q.groups.pending.clear(group) {
			q.groups.incomplete.add(group, p)
		}
	}
}

// worthRequeuing is isPodWorthRequeuing for an entity: for a group, the
// best of its members' answers (upstream's isEntityWorthRequeuing).
func (q *PriorityQueue) worthRequeuing(p *framework.QueuedPodInfo, event framework.ClusterEvent, oldObj, newObj interface{}) queueingStrategy {
	if p.Group == nil {
		return q.isPodWorthRequeuing(p, event, oldObj, newObj)
	}
	best := queueSkip
	for _, m := range p.Group.Members {
		if s := q.isPodWorthRequeuing(m, event, oldObj, newObj); s > best {
			best = s
			if best == queueImmediately {
				break
			}
		}
	}
	return best
}

// activateMemberLocked activates the entity of a member's group; false
// when the group waits nowhere (its pod may be in flight).
func (q *PriorityQueue) activateMemberLocked(pod *v1.Pod) bool {
	key := entityKey(pod.Namespace, framework.PodGroupName(pod))
	if _, ok := q.activeQ.Get(key); ok {
		return true
	}
	e, ok := q.findEntity(key)
	if !ok {
		return false
	}
	q.moveToActiveQ(e, framework.EventForceActivate.Label)
	return true
}

// PodGroupCounts are the pods waiting for their group to be observed
// (incomplete) and for their group's cycle to end (pending).
func (q *PriorityQueue) PodGroupCounts() (incomplete, pending int) {
	q.lock.Lock()
	defer q.lock.Unlock()
	if q.groups == nil {
		return 0, 0
	}
	return q.groups.incomplete.len(), q.groups.pending.len()
}

// OnlyRejectedGroupsBackingOff: activeQ is empty and what backs off is
// only pod groups whose last attempt was rejected (not an error).
func (q *PriorityQueue) OnlyRejectedGroupsBackingOff() bool {
	q.lock.Lock()
	defer q.lock.Unlock()
	if q.groups == nil || q.activeQ.Len() > 0 || q.backoffQ.Len()+q.errorBackoffQ.Len() == 0 {
		return false
	}
	for _, h := range [2]*keyedHeap[*framework.QueuedPodInfo]{q.backoffQ, q.errorBackoffQ} {
		for _, p := range h.List() {
			if p.Group == nil || p.UnschedulableCount == 0 || p.ConsecutiveErrorsCount > 0 {
				return false
			}
		}
	}
	return true
}
