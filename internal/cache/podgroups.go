package cache

import (
	"maps"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Pod groups' states (the GenericWorkload gate, EnablePodGroups): per
// group, its object and its pods, each unscheduled, assumed or assigned,
// as kube-scheduler v1.37.2's backend/cache/podgroupstate.go keeps them.
// The gang plugin counts them (PreEnqueue: enough pods exist; Permit:
// enough are scheduled). With the gate off nothing here runs.

type podGroupState struct {
	podGroup    *schedulingv1beta1.PodGroup
	all         map[types.UID]*v1.Pod
	unscheduled sets.Set[types.UID]
	assumed     map[types.UID]*v1.Pod
	assigned    sets.Set[types.UID]
}

func newPodGroupState() *podGroupState {
	return &podGroupState{
		all:         map[types.UID]*v1.Pod{},
		unscheduled: sets.New[types.UID](),
		assumed:     map[types.UID]*v1.Pod{},
		assigned:    sets.New[types.UID](),
	}
}

func (d *podGroupState) addPod(pod *v1.Pod) {
	d.all[pod.UID] = pod
	if pod.Spec.NodeName != "" {
		d.assigned.Insert(pod.UID)
		d.unscheduled.Delete(pod.UID)
		delete(d.assumed, pod.UID)
	} else {
		d.unscheduled.Insert(pod.UID)
	}
}

func (d *podGroupState) updatePod(oldPod, newPod *v1.Pod) {
	d.all[newPod.UID] = newPod
	if oldPod.Spec.NodeName == "" && newPod.Spec.NodeName != "" {
		d.assigned.Insert(newPod.UID)
		d.unscheduled.Delete(newPod.UID)
		delete(d.assumed, newPod.UID)
	}
}

func (d *podGroupState) deletePod(uid types.UID) {
	delete(d.all, uid)
	d.unscheduled.Delete(uid)
	delete(d.assumed, uid)
	d.assigned.Delete(uid)
}

func (d *podGroupState) assumePod(pod *v1.Pod) {
	stored, ok := d.all[pod.UID]
	if !ok {
		return
	}
	if stored.Spec.NodeName != "" {
		d.assigned.Insert(pod.UID)
	} else {
		d.assumed[pod.UID] = pod
	}
	d.unscheduled.Delete(pod.UID)
}

func (d *podGroupState) forgetPod(uid types.UID) {
	pod := d.all[uid]
	if pod == nil {
		return
	}
	delete(d.assumed, uid)
	if pod.Spec.NodeName != "" {
		d.assigned.Insert(uid)
	} else {
		d.unscheduled.Insert(uid)
	}
}

func (d *podGroupState) empty() bool { return len(d.all) == 0 && d.podGroup == nil }

func (d *podGroupState) clone() *podGroupState {
	return &podGroupState{
		podGroup:    d.podGroup,
		all:         maps.Clone(d.all),
		unscheduled: d.unscheduled.Clone(),
		assumed:     maps.Clone(d.assumed),
		assigned:    d.assigned.Clone(),
	}
}

var _ framework.PodGroupState = &podGroupState{}

func (d *podGroupState) AllPodsCount() int       { return len(d.all) }
func (d *podGroupState) ScheduledPodsCount() int { return len(d.assumed) + len(d.assigned) }

func (d *podGroupState) ScheduledPods() []*v1.Pod {
	out := make([]*v1.Pod, 0, len(d.assigned)+len(d.assumed))
	for uid := range d.assigned {
		out = append(out, d.all[uid])
	}
	for _, p := range d.assumed {
		out = append(out, p)
	}
	return out
}

func (d *podGroupState) UnscheduledPods() map[string]*v1.Pod {
	out := make(map[string]*v1.Pod, len(d.unscheduled))
	for uid := range d.unscheduled {
		p := d.all[uid]
		out[p.Name] = p
	}
	return out
}

func (d *podGroupState) AssumedPods() sets.Set[types.UID]      { return sets.KeySet(d.assumed) }
func (d *podGroupState) PodGroup() *schedulingv1beta1.PodGroup { return d.podGroup }

func (c *Cache) isPodGroupMember(pod *v1.Pod) bool {
	return c.podGroupsOn && framework.PodGroupName(pod) != ""
}

func podGroupKeyOf(pod *v1.Pod) string {
	return framework.PodGroupKey(pod.Namespace, framework.PodGroupName(pod))
}

// stateFor returns a group's state, created empty when new (the lock held).
func (c *Cache) stateFor(key string) *podGroupState {
	st, ok := c.podGroups[key]
	if !ok {
		st = newPodGroupState()
		c.podGroups[key] = st
	}
	return st
}

// EnablePodGroups turns the pod groups' states on (the GenericWorkload
// gate). Call it before the first event.
func (c *Cache) EnablePodGroups() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.podGroupsOn = true
	c.podGroups = map[string]*podGroupState{}
}

// PodGroupsEnabled reports EnablePodGroups.
func (c *Cache) PodGroupsEnabled() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.podGroupsOn
}

// AddPodGroupMember records a pending pod of a group.
func (c *Cache) AddPodGroupMember(pod *v1.Pod) {
	if !c.isPodGroupMember(pod) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stateFor(podGroupKeyOf(pod)).addPod(pod)
}

// UpdatePodGroupMember records a change to a pending pod of a group.
func (c *Cache) UpdatePodGroupMember(oldPod, newPod *v1.Pod) {
	if !c.isPodGroupMember(newPod) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.podGroups[podGroupKeyOf(newPod)]; ok {
		st.updatePod(oldPod, newPod)
	}
}

// RemovePodGroupMember forgets a pending pod of a group (deleted).
func (c *Cache) RemovePodGroupMember(pod *v1.Pod) {
	if !c.isPodGroupMember(pod) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removePodGroupMemberLocked(pod)
}

func (c *Cache) removePodGroupMemberLocked(pod *v1.Pod) {
	key := podGroupKeyOf(pod)
	st, ok := c.podGroups[key]
	if !ok {
		return
	}
	st.deletePod(pod.UID)
	if st.empty() {
		delete(c.podGroups, key)
	}
}

// podGroupAssumed and podGroupForgotten follow AssumePod and ForgetPod
// (the lock held).
//
// A pod assumed into a group the cache knows but that no longer lists it
// (deleted while its group's cycle ran) is not counted, as upstream's
// assumePodGroupMember: it would count towards a gang's minCount. Only a
// group not known at all is started with it.
func (c *Cache) podGroupAssumed(pod *v1.Pod) {
	if !c.isPodGroupMember(pod) {
		return
	}
	key := podGroupKeyOf(pod)
	st, ok := c.podGroups[key]
	if !ok {
		st = newPodGroupState()
		st.all[pod.UID] = pod
		c.podGroups[key] = st
	}
	st.assumePod(pod)
}

func (c *Cache) podGroupForgotten(pod *v1.Pod) {
	if !c.isPodGroupMember(pod) {
		return
	}
	if st, ok := c.podGroups[podGroupKeyOf(pod)]; ok {
		st.forgetPod(pod.UID)
	}
}

// podGroupAdded follows AddPod (an assigned pod, or an assumed one
// confirmed), podGroupRemoved RemovePod.
func (c *Cache) podGroupAdded(pod *v1.Pod) {
	if c.isPodGroupMember(pod) {
		c.stateFor(podGroupKeyOf(pod)).addPod(pod)
	}
}

func (c *Cache) podGroupRemoved(pod *v1.Pod) {
	if c.isPodGroupMember(pod) {
		c.removePodGroupMemberLocked(pod)
	}
}

// AddPodGroup records a group's object; UpdatePodGroup replaces it.
func (c *Cache) AddPodGroup(pg *schedulingv1beta1.PodGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.podGroupsOn {
		return
	}
	c.stateFor(framework.PodGroupKey(pg.Namespace, pg.Name)).podGroup = pg
}

// UpdatePodGroup replaces a group's object. A group with no state (its
// add was missed, which informers never do) is left alone, as upstream's
// UpdatePodGroup.
func (c *Cache) UpdatePodGroup(pg *schedulingv1beta1.PodGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.podGroupsOn {
		return
	}
	st, ok := c.podGroups[framework.PodGroupKey(pg.Namespace, pg.Name)]
	if !ok {
		c.logger.Error(nil, "Pod group state not found for update, this indicates a missed add event", "podGroup", klog.KObj(pg))
		return
	}
	st.podGroup = pg
}

// RemovePodGroup forgets a group's object (its pods' states stay while
// they exist).
func (c *Cache) RemovePodGroup(pg *schedulingv1beta1.PodGroup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.podGroupsOn {
		return
	}
	key := framework.PodGroupKey(pg.Namespace, pg.Name)
	if st, ok := c.podGroups[key]; ok {
		st.podGroup = nil
		if st.empty() {
			delete(c.podGroups, key)
		}
	}
}

var _ framework.PodGroupManager = &Cache{}

// PodGroup implements framework.PodGroupManager.
func (c *Cache) PodGroup(namespace, name string) (*schedulingv1beta1.PodGroup, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	st, ok := c.podGroups[framework.PodGroupKey(namespace, name)]
	if !ok || st.podGroup == nil {
		return nil, false
	}
	return st.podGroup, true
}

// PodGroupState implements framework.PodGroupManager: a copy, consistent
// as of the call.
func (c *Cache) PodGroupState(namespace, name string) (framework.PodGroupState, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	st, ok := c.podGroups[framework.PodGroupKey(namespace, name)]
	if !ok {
		return nil, false
	}
	return st.clone(), true
}
