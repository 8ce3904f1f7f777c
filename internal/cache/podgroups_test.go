package cache

import (
	"fmt"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	st "github.com/kubesched/kubesched/internal/testing"
)

// The pod groups' states of the cache as a specification: each case is a
// sequence of events and scheduler calls, and the state of group
// default/g after them, as kube-scheduler v1.37.2 keeps it
// (pkg/scheduler/backend/cache: podgroupstate.go's podGroupStateData and
// cache.go's *PodGroupMember, assumePodGroupMember, forgetPodGroupMember,
// addPod/removePod and *PodGroup). Every expectation is read off upstream's
// code, cited by function next to the case.

// groupStep is one call on the cache; wantErr is the error upstream
// returns for it (most calls return none).
type groupStep struct {
	name    string
	run     func(c *Cache) error
	wantErr bool
}

func addGroup(pg *schedulingv1beta1.PodGroup) groupStep {
	return groupStep{name: "AddPodGroup " + pg.Name, run: func(c *Cache) error { c.AddPodGroup(pg); return nil }}
}

func updateGroup(pg *schedulingv1beta1.PodGroup) groupStep {
	return groupStep{name: "UpdatePodGroup " + pg.Name, run: func(c *Cache) error { c.UpdatePodGroup(pg); return nil }}
}

func removeGroup(pg *schedulingv1beta1.PodGroup) groupStep {
	return groupStep{name: "RemovePodGroup " + pg.Name, run: func(c *Cache) error { c.RemovePodGroup(pg); return nil }}
}

func addMember(p *v1.Pod) groupStep {
	return groupStep{name: "AddPodGroupMember " + p.Name, run: func(c *Cache) error { c.AddPodGroupMember(p); return nil }}
}

func updateMember(oldPod, newPod *v1.Pod) groupStep {
	return groupStep{name: "UpdatePodGroupMember " + newPod.Name, run: func(c *Cache) error { c.UpdatePodGroupMember(oldPod, newPod); return nil }}
}

func removeMember(p *v1.Pod) groupStep {
	return groupStep{name: "RemovePodGroupMember " + p.Name, run: func(c *Cache) error { c.RemovePodGroupMember(p); return nil }}
}

func assume(p *v1.Pod) groupStep {
	return groupStep{name: "AssumePod " + p.Name, run: func(c *Cache) error { return c.AssumePod(p) }}
}

func forget(p *v1.Pod) groupStep {
	return groupStep{name: "ForgetPod " + p.Name, run: func(c *Cache) error { return c.ForgetPod(p) }}
}

func removeAssumed(p *v1.Pod) groupStep {
	return groupStep{name: "RemoveAssumedPod " + p.Name, run: func(c *Cache) error { return c.RemoveAssumedPod(p) }}
}

func addAssigned(p *v1.Pod) groupStep {
	return groupStep{name: "AddPod " + p.Name, run: func(c *Cache) error { return c.AddPod(p) }}
}

func updateAssigned(oldPod, newPod *v1.Pod) groupStep {
	return groupStep{name: "UpdatePod " + newPod.Name, run: func(c *Cache) error { return c.UpdatePod(oldPod, newPod) }}
}

func removeAssigned(p *v1.Pod) groupStep {
	return groupStep{name: "RemovePod " + p.Name, run: func(c *Cache) error { return c.RemovePod(p) }}
}

// failing marks a step upstream refuses with an error.
func (s groupStep) failing() groupStep { s.wantErr = true; return s }

// groupWant is group default/g's state: absent, or its counts and pods.
type groupWant struct {
	absent bool
	all    int
	// scheduled are the names of ScheduledPods (assigned and assumed),
	// sorted; its length must be ScheduledPodsCount.
	scheduled []string
	// unscheduled are UnscheduledPods as name/uid, sorted.
	unscheduled []string
	// assumed are the UIDs of AssumedPods, sorted.
	assumed []string
	// podGroup is the object the state holds (nil: none).
	podGroup *schedulingv1beta1.PodGroup
}

func TestPodGroupStateFollowsItsPodsAsUpstreams(t *testing.T) {
	member := func(name string) *v1.Pod { return st.MakePod().Name(name).UID("uid-" + name).InGroup("g").Obj() }
	on := func(name, node string) *v1.Pod {
		return st.MakePod().Name(name).UID("uid-" + name).InGroup("g").Node(node).Obj()
	}
	labelled := func(p *v1.Pod) *v1.Pod {
		p = p.DeepCopy()
		p.Labels = map[string]string{"changed": "yes"}
		return p
	}
	pg := st.MakePodGroup("g").Gang(2).Obj()
	pg3 := st.MakePodGroup("g").Gang(3).Obj()
	a, b := member("a"), member("b")
	aOnN := on("a", "n")
	otherNS := st.MakePod().Name("a").UID("uid-other-a").Namespace("other").InGroup("g").Obj()

	tests := []struct {
		name string
		// off: the cache without EnablePodGroups (the gate off).
		off   bool
		steps []groupStep
		want  groupWant
		// skip: why the case diverges from upstream (kept, asserting
		// upstream's behaviour).
		skip string
	}{
		// --- PodGroup objects (cache.go AddPodGroup/UpdatePodGroup/RemovePodGroup) ---
		{
			// AddPodGroup creates the state if absent (setPodGroup); the
			// state exists without pods (podGroupStateData comment).
			name:  "an observed PodGroup has a state before any of its pods",
			steps: []groupStep{addGroup(pg)},
			want:  groupWant{podGroup: pg},
		},
		{
			// UpdatePodGroup: setPodGroup on the existing state.
			name:  "an update replaces the PodGroup the state holds",
			steps: []groupStep{addGroup(pg), updateGroup(pg3)},
			want:  groupWant{podGroup: pg3},
		},
		{
			// UpdatePodGroup: "Pod group state not found for update, this
			// indicates a missed add event" and returns, creating nothing.
			name:  "an update of a PodGroup the cache never saw is dropped",
			steps: []groupStep{updateGroup(pg)},
			want:  groupWant{absent: true},
		},
		{
			// RemovePodGroup: removePodGroup, then the state goes when
			// empty() (no pods and no PodGroup).
			name:  "a removed PodGroup without pods leaves no state",
			steps: []groupStep{addGroup(pg), removeGroup(pg)},
			want:  groupWant{absent: true},
		},
		{
			// RemovePodGroup: empty() is false while allPods has a pod.
			name:  "the state outlives its PodGroup while a member exists",
			steps: []groupStep{addGroup(pg), addMember(a), removeGroup(pg)},
			want:  groupWant{all: 1, unscheduled: []string{"a/uid-a"}},
		},
		{
			// isPodGroupMember is false with GenericWorkload off: every
			// call is a no-op for the groups.
			name:  "with the gate off no group has a state",
			off:   true,
			steps: []groupStep{addGroup(pg), addMember(a), assume(aOnN)},
			want:  groupWant{absent: true},
		},

		// --- pending members (AddPodGroupMember/UpdatePodGroupMember/RemovePodGroupMember) ---
		{
			// addPodGroupMember creates the state; addPod puts a pod
			// without a node in unscheduledPods.
			name:  "a pending member is unscheduled, and its group's state exists without the PodGroup",
			steps: []groupStep{addMember(a)},
			want:  groupWant{all: 1, unscheduled: []string{"a/uid-a"}},
		},
		{
			// PodGroupKey is namespace/name.
			name:  "a member of a group of the same name in another namespace is not counted",
			steps: []groupStep{addGroup(pg), addMember(otherNS)},
			want:  groupWant{podGroup: pg},
		},
		{
			// updatePod: NodeName "" -> set moves it to assignedPods.
			name:  "a pending member updated with a node is assigned",
			steps: []groupStep{addGroup(pg), addMember(a), addMember(b), updateMember(a, aOnN)},
			want:  groupWant{all: 2, scheduled: []string{"a"}, unscheduled: []string{"b/uid-b"}, podGroup: pg},
		},
		{
			// updatePod only records the new object otherwise.
			name:  "a pending member updated without a node stays unscheduled",
			steps: []groupStep{addGroup(pg), addMember(a), updateMember(a, labelled(a))},
			want:  groupWant{all: 1, unscheduled: []string{"a/uid-a"}, podGroup: pg},
		},
		{
			// updatePodGroupMember: "Pod group state not found for update,
			// this indicates a missed add event" and returns.
			name:  "an update of a member whose group has no state creates none",
			steps: []groupStep{updateMember(a, labelled(a))},
			want:  groupWant{absent: true},
		},
		{
			// removePodGroupMember: deletePod; the state stays while the
			// PodGroup does.
			name:  "a removed member leaves its group, whose state stays with the PodGroup",
			steps: []groupStep{addGroup(pg), addMember(a), addMember(b), removeMember(a)},
			want:  groupWant{all: 1, unscheduled: []string{"b/uid-b"}, podGroup: pg},
		},
		{
			// removePodGroupMember: empty() -> delete the state.
			name:  "the last member removed takes a state without PodGroup with it",
			steps: []groupStep{addMember(a), removeMember(a)},
			want:  groupWant{absent: true},
		},

		// --- assume, forget, remove assumed (AssumePod/ForgetPod/RemoveAssumedPod) ---
		{
			// AssumePod -> addPod(assumePod=true) -> assumePodGroupMember
			// -> assumePod: the stored pod has no node, so assumedPods.
			name:  "an assumed member is scheduled and no longer unscheduled",
			steps: []groupStep{addGroup(pg), addMember(a), addMember(b), assume(aOnN)},
			want:  groupWant{all: 2, scheduled: []string{"a"}, unscheduled: []string{"b/uid-b"}, assumed: []string{"uid-a"}, podGroup: pg},
		},
		{
			// ForgetPod -> removePod(forgetPod=true) ->
			// forgetPodGroupMember -> forgetPod: back to unscheduledPods.
			name:  "a forgotten member goes back to unscheduled",
			steps: []groupStep{addGroup(pg), addMember(a), assume(aOnN), forget(aOnN)},
			want:  groupWant{all: 1, unscheduled: []string{"a/uid-a"}, podGroup: pg},
		},
		{
			// RemoveAssumedPod -> removePod(forgetPod=false) ->
			// removePodGroupMember: the pod leaves allPods.
			name:  "a removed assumed member leaves its group",
			steps: []groupStep{addGroup(pg), addMember(a), addMember(b), assume(aOnN), removeAssumed(aOnN)},
			want:  groupWant{all: 1, unscheduled: []string{"b/uid-b"}, podGroup: pg},
		},
		{
			// removePodGroupMember deletes an empty state.
			name:  "a removed assumed member that was all of a group without PodGroup leaves no state",
			steps: []groupStep{addMember(a), assume(aOnN), removeAssumed(aOnN)},
			want:  groupWant{absent: true},
		},
		{
			// The binding cycle of a member deleted meanwhile fails and
			// forgets it: ForgetPod finds no podState ("Pod does not exist
			// in the cache anymore") and returns nil; the group is as
			// RemoveAssumedPod left it.
			name:  "forgetting a member already removed is no error and does not bring it back",
			steps: []groupStep{addGroup(pg), addMember(a), assume(aOnN), removeAssumed(aOnN), forget(aOnN)},
			want:  groupWant{podGroup: pg},
		},
		{
			// assumePodGroupMember: the state exists, and assumePod
			// ignores a pod allPods lacks ("A scheduling pod may be
			// removed from the cluster").
			name:  "an assumed pod its group no longer lists is not counted",
			steps: []groupStep{addGroup(pg), addMember(a), addMember(b), removeMember(a), assume(aOnN)},
			want:  groupWant{all: 1, unscheduled: []string{"b/uid-b"}, podGroup: pg},
		},
		{
			// assumePodGroupMember: no state -> a new one whose allPods
			// holds the assumed pod itself, which has a node, so
			// assumePod counts it in assignedPods, not assumedPods.
			name:  "a pod assumed into a group the cache does not know starts its state, counted as assigned",
			steps: []groupStep{assume(aOnN)},
			want:  groupWant{all: 1, scheduled: []string{"a"}},
		},
		{
			// forgetPod: the stored pod has a node -> assignedPods again.
			name:  "forgetting a pod whose group learnt of it only as assumed keeps it assigned",
			steps: []groupStep{assume(aOnN), forget(aOnN)},
			want:  groupWant{all: 1, scheduled: []string{"a"}},
		},
		{
			// TestForgetPodGroupMember "add pod group member with NodeName,
			// then call assume and forget": assumePod and forgetPod look at
			// the stored pod, which has a node.
			name:  "a member the group saw with a node stays assigned when assumed and forgotten",
			steps: []groupStep{addGroup(pg), addMember(aOnN), assume(aOnN), forget(aOnN)},
			want:  groupWant{all: 1, scheduled: []string{"a"}, podGroup: pg},
		},
		{
			// AssumePod: "pod ... is in the cache, so can't be assumed".
			name:  "a member assumed twice is refused the second time and counted once",
			steps: []groupStep{addGroup(pg), addMember(a), assume(aOnN), assume(aOnN).failing()},
			want:  groupWant{all: 1, scheduled: []string{"a"}, assumed: []string{"uid-a"}, podGroup: pg},
		},

		// --- assigned pods (AddPod/UpdatePod/RemovePod) ---
		{
			// AddPod of an assumed pod -> updatePod -> removePod(false) +
			// addPod(false): removePodGroupMember then addPodGroupMember,
			// whose addPod puts a pod with a node in assignedPods.
			name:  "a confirmed assumed member is assigned, no longer assumed",
			steps: []groupStep{addGroup(pg), addMember(a), assume(aOnN), addAssigned(aOnN)},
			want:  groupWant{all: 1, scheduled: []string{"a"}, podGroup: pg},
		},
		{
			// The same without a PodGroup: the state emptied by
			// removePodGroupMember is deleted, then created again.
			name:  "a confirmed assumed member of a group without PodGroup keeps its group's state",
			steps: []groupStep{addMember(a), assume(aOnN), addAssigned(aOnN)},
			want:  groupWant{all: 1, scheduled: []string{"a"}},
		},
		{
			// AddPod of a pod not in podStates -> addPod(false) ->
			// addPodGroupMember -> addPod: assignedPods, and out of
			// unscheduledPods ("external binding of a previously-queued
			// pod group member").
			name:  "a pending member the world bound is assigned, no longer unscheduled",
			steps: []groupStep{addGroup(pg), addMember(a), addAssigned(aOnN)},
			want:  groupWant{all: 1, scheduled: []string{"a"}, podGroup: pg},
		},
		{
			// AddPod creates the state (addPodGroupMember).
			name:  "an assigned member starts its group's state",
			steps: []groupStep{addAssigned(aOnN)},
			want:  groupWant{all: 1, scheduled: []string{"a"}},
		},
		{
			// UpdatePod -> updatePod: removePodGroupMember then
			// addPodGroupMember of the new object.
			name:  "an updated assigned member stays assigned",
			steps: []groupStep{addGroup(pg), addAssigned(aOnN), updateAssigned(aOnN, labelled(aOnN))},
			want:  groupWant{all: 1, scheduled: []string{"a"}, podGroup: pg},
		},
		{
			// RemovePod -> removePod(false) -> removePodGroupMember.
			name:  "a deleted assigned member leaves its group",
			steps: []groupStep{addGroup(pg), addMember(b), addAssigned(aOnN), removeAssigned(aOnN)},
			want:  groupWant{all: 1, unscheduled: []string{"b/uid-b"}, podGroup: pg},
		},
		{
			// RemovePod of an assumed pod: podStates holds it, so
			// removePod(false) and removePodGroupMember.
			name:  "an assumed member removed as a pod leaves its group",
			steps: []groupStep{addGroup(pg), addMember(a), assume(aOnN), removeAssigned(aOnN)},
			want:  groupWant{podGroup: pg},
		},
		{
			// The last pod and no PodGroup: the state goes.
			name:  "a deleted assigned member that was all of its group leaves no state",
			steps: []groupStep{addAssigned(aOnN), removeAssigned(aOnN)},
			want:  groupWant{absent: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != "" {
				t.Skip(tt.skip)
			}
			c := newCache()
			if !tt.off {
				c.EnablePodGroups()
			}
			for i, s := range tt.steps {
				err := s.run(c)
				if (err != nil) != s.wantErr {
					t.Fatalf("step %d (%s): error %v, want error: %v", i+1, s.name, err, s.wantErr)
				}
			}
			checkGroupState(t, c, tt.want)
		})
	}
}

// checkGroupState compares group default/g's state with want.
func checkGroupState(t *testing.T, c *Cache, want groupWant) {
	t.Helper()
	state, ok := c.PodGroupState("default", "g")
	if want.absent {
		if ok {
			t.Fatalf("group default/g has a state (%d pods, PodGroup %v), want none", state.AllPodsCount(), state.PodGroup() != nil)
		}
		if _, ok := c.PodGroup("default", "g"); ok {
			t.Error("PodGroup default/g is known, want not")
		}
		return
	}
	if !ok {
		t.Fatal("group default/g has no state")
	}
	if got := state.AllPodsCount(); got != want.all {
		t.Errorf("AllPodsCount = %d, want %d", got, want.all)
	}
	var scheduled []string
	for _, p := range state.ScheduledPods() {
		scheduled = append(scheduled, p.Name)
	}
	sort.Strings(scheduled)
	if fmt.Sprint(scheduled) != fmt.Sprint(want.scheduled) {
		t.Errorf("ScheduledPods = %v, want %v", scheduled, want.scheduled)
	}
	if got := state.ScheduledPodsCount(); got != len(want.scheduled) {
		t.Errorf("ScheduledPodsCount = %d, want %d", got, len(want.scheduled))
	}
	var unscheduled []string
	for name, p := range state.UnscheduledPods() {
		unscheduled = append(unscheduled, name+"/"+string(p.UID))
	}
	sort.Strings(unscheduled)
	if fmt.Sprint(unscheduled) != fmt.Sprint(want.unscheduled) {
		t.Errorf("UnscheduledPods = %v, want %v", unscheduled, want.unscheduled)
	}
	var assumed []string
	for uid := range state.AssumedPods() {
		assumed = append(assumed, string(uid))
	}
	sort.Strings(assumed)
	if fmt.Sprint(assumed) != fmt.Sprint(want.assumed) {
		t.Errorf("AssumedPods = %v, want %v", assumed, want.assumed)
	}
	if got := state.PodGroup(); got != want.podGroup {
		t.Errorf("the state's PodGroup = %v, want %v", got, want.podGroup)
	}
	got, ok := c.PodGroup("default", "g")
	if ok != (want.podGroup != nil) || got != want.podGroup {
		t.Errorf("PodGroup(default, g) = %v, %v; want %v", got, ok, want.podGroup)
	}
}
