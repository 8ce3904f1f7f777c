package scheduler_test

import (
	"fmt"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	configv1 "k8s.io/kube-scheduler/config/v1"

	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
	"github.com/kubesched/kubesched/pkg/plugins/gangscheduling"
	"github.com/kubesched/kubesched/pkg/plugins/podgrouppodscount"
	"github.com/kubesched/kubesched/pkg/plugins/topologyaware"
)

// A pod group's cycle, and its placement cycle, as a specification: each
// case is a cluster, a PodGroup and its pods, drained through the
// scheduler, and what kube-scheduler v1.37.2 does with them
// (pkg/scheduler/schedule_one_podgroup.go: scheduleOnePodGroup,
// validatePodGroup, podGroupSchedulingDefaultAlgorithm,
// completePodGroupAlgorithmResult, applyPodGroupPostFilterResult,
// submitPodGroupAlgorithmResult, podGroupSchedulingPlacementAlgorithm;
// the GangScheduling plugin's PreEnqueue and PlacementFeasible;
// TopologyPlacementGenerator's GeneratePlacements; the queue's
// AddAttemptedPodGroupIfNeeded): which pods are bound where, each pod's
// PodScheduled condition, the PodGroup's PodGroupInitiallyScheduled
// condition, and where the group waits after.
//
// The cases run without PodGroupPostFilter plugins, so a group's
// message is the algorithm's: upstream's RunPodGroupPostFilterPlugins then
// returns Unschedulable without reasons, and applyPodGroupPostFilterResult
// appends its empty String() to the group's reasons (hence the group's
// messages end with ", ").

const rackKey = "topology.kubernetes.io/rack"

// specEnv builds a scheduler with GenericWorkload on (GangScheduling in the
// default profile), and with TopologyAwareWorkloadScheduling and its
// plugins when placements; its profile has no PodGroupPostFilter plugin.
func specEnv(t *testing.T, placements bool) *env {
	t.Helper()
	var registry fwkruntime.Registry = plugins.NewInTreeRegistry()
	registry[gangscheduling.Name] = gangscheduling.New
	features := framework.Features{GenericWorkload: true}
	if placements {
		registry[topologyaware.Name] = topologyaware.New
		registry[podgrouppodscount.Name] = podgrouppodscount.New
		features.TopologyAwareWorkloadScheduling = true
	}
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: &configv1.Plugins{
		PodGroupPostFilter: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "*"}}}}}}}
	return newEnvWith(t, registry, cfg, []scheduler.Option{scheduler.WithPluginFeatures(features)})
}

// rackNode is a node with cpus and room for 100 pods, in rack when set.
func rackNode(name, cpus, rack string) *v1.Node {
	n := st.MakeNode().Name(name).Capacity(rl{v1.ResourceCPU: cpus, v1.ResourcePods: "100"})
	if rack != "" {
		n = n.Label(rackKey, rack)
	}
	return n.Obj()
}

// gangPod is a member of group g requesting cpus, bound to node when set.
func gangPod(name, cpus, node string) *v1.Pod {
	p := st.MakePod().Name(name).InGroup("g").Req(rl{v1.ResourceCPU: cpus})
	if node != "" {
		p = p.Node(node)
	}
	return p.Obj()
}

func TestAPodGroupsCycleFollowsUpstreams(t *testing.T) {
	gang2 := func() *schedulingv1beta1.PodGroup { return st.MakePodGroup("g").Gang(2).Obj() }
	tests := []struct {
		name string
		// placements: TopologyAwareWorkloadScheduling on.
		placements bool
		nodes      []*v1.Node
		// group is the PodGroup (nil: never observed).
		group *schedulingv1beta1.PodGroup
		// bound are the group's pods already bound; pods its pending
		// ones; later pods added after a first drain.
		bound, pods, later []*v1.Pod
		// wantNode is each pod's node ("" unbound); wantRack each pod's
		// rack, for the cases where the scheduler may choose among a
		// rack's nodes.
		wantNode, wantRack map[string]string
		// wantCond is each pod's PodScheduled condition: "True" (bound),
		// "Reason: Message" when False, "" when it has none (never tried).
		wantCond map[string]string
		// wantGroupCond is the PodGroup's PodGroupInitiallyScheduled
		// condition as "Status/Reason: Message" ("" none).
		wantGroupCond string
		// wantQueue is the queue's active, backoff, unschedulable counts
		// and the pods waiting for their PodGroup (incomplete).
		wantQueue [4]int
		// wantBackingOffRejected: the group backs off after a rejection
		// (not an error).
		wantBackingOffRejected bool
		skip                   string
	}{
		{
			// scheduleOnePodGroup -> podGroupCycle: both fit,
			// PlacementFeasible succeeds once 2 are placed; every member
			// goes to its binding cycle and the condition is True with
			// the success status's (empty) message.
			name:          "a gang that fits is bound whole and its PodGroup is InitiallyScheduled",
			nodes:         []*v1.Node{rackNode("n", "4", "")},
			group:         gang2(),
			pods:          []*v1.Pod{gangPod("a", "1", ""), gangPod("b", "1", "")},
			wantNode:      map[string]string{"a": "n", "b": "n"},
			wantCond:      map[string]string{"a": "True", "b": "True"},
			wantGroupCond: "True/Scheduled: ",
		},
		{
			// podGroupSchedulingDefaultAlgorithm: a placed (1 scheduled, 1
			// remaining: Wait), b does not fit (0 remaining:
			// Unschedulable "minCount (2) cannot be satisfied", the
			// group's status). submitPodGroupAlgorithmResult: a, placed,
			// fails with the group's message behind
			// errPodGroupUnschedulable; b with its own FitError (no
			// per-pod PostFilter in a group's cycle). The rejected group
			// backs off (AddAttemptedPodGroupIfNeeded).
			name:     "a gang short of room binds nobody, its placed member carries the group's message and the group backs off",
			nodes:    []*v1.Node{rackNode("n", "100", "")},
			group:    gang2(),
			pods:     []*v1.Pod{gangPod("a", "60", ""), gangPod("b", "60", "")},
			wantNode: map[string]string{"a": "", "b": ""},
			wantCond: map[string]string{
				"a": "Unschedulable: pod group is unschedulable, minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, ",
				"b": "Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.",
			},
			wantGroupCond:          "False/Unschedulable: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, ",
			wantQueue:              [4]int{0, 1, 0, 0},
			wantBackingOffRejected: true,
		},
		{
			// The first member fails, PlacementFeasible is Unschedulable at
			// once (0 scheduled, 1 remaining) and the loop stops;
			// completePodGroupAlgorithmResult gives b, never tried, a
			// clone of the group's status before PodGroupPostFilter.
			name:     "a member never tried after its gang became infeasible fails with the group's reason",
			nodes:    []*v1.Node{rackNode("n", "4", "")},
			group:    gang2(),
			pods:     []*v1.Pod{gangPod("a", "8", ""), gangPod("b", "1", "")},
			wantNode: map[string]string{"a": "", "b": ""},
			wantCond: map[string]string{
				"a": "Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.",
				"b": "Unschedulable: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining",
			},
			wantGroupCond:          "False/Unschedulable: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, ",
			wantQueue:              [4]int{0, 1, 0, 0},
			wantBackingOffRejected: true,
		},
		{
			// PlacementProgress.Scheduled starts at the state's
			// ScheduledPodsCount: the bound member counts, one more
			// reaches minCount.
			name:          "members already bound count towards minCount",
			nodes:         []*v1.Node{rackNode("n", "4", "")},
			group:         gang2(),
			bound:         []*v1.Pod{gangPod("x", "1", "n")},
			pods:          []*v1.Pod{gangPod("a", "1", "")},
			wantNode:      map[string]string{"x": "n", "a": "n"},
			wantCond:      map[string]string{"a": "True"},
			wantGroupCond: "True/Scheduled: ",
		},
		{
			// The queue keeps the member in incompletePodGroupPods: it is
			// never popped, so never tried (no condition).
			name:      "a group whose PodGroup is not observed is not tried",
			nodes:     []*v1.Node{rackNode("n", "4", "")},
			pods:      []*v1.Pod{gangPod("a", "1", "")},
			wantNode:  map[string]string{"a": ""},
			wantCond:  map[string]string{"a": ""},
			wantQueue: [4]int{0, 0, 0, 1},
		},
		{
			// GangScheduling's PreEnqueue: fewer pods than minCount ->
			// gated in unschedulableEntities, no cycle, no condition; the
			// third member's arrival (an event GangScheduling registered)
			// requeues the group, now admitted and bound whole.
			name:          "a gang waits without a cycle until minCount members exist, then is bound whole",
			nodes:         []*v1.Node{rackNode("n", "4", "")},
			group:         st.MakePodGroup("g").Gang(3).Obj(),
			pods:          []*v1.Pod{gangPod("a", "1", ""), gangPod("b", "1", "")},
			later:         []*v1.Pod{gangPod("c", "1", "")},
			wantNode:      map[string]string{"a": "n", "b": "n", "c": "n"},
			wantCond:      map[string]string{"a": "True", "b": "True", "c": "True"},
			wantGroupCond: "True/Scheduled: ",
		},
		{
			// The same, without the third member: still gated.
			name:      "a gang short of minCount members waits gated, never tried",
			nodes:     []*v1.Node{rackNode("n", "4", "")},
			group:     st.MakePodGroup("g").Gang(3).Obj(),
			pods:      []*v1.Pod{gangPod("a", "1", ""), gangPod("b", "1", "")},
			wantNode:  map[string]string{"a": "", "b": ""},
			wantCond:  map[string]string{"a": "", "b": ""},
			wantQueue: [4]int{0, 0, 1, 0},
		},
		{
			// A basic group's minCount is 1 (GangScheduling getMinCount):
			// a placed, b not, the group succeeds; b comes back pending,
			// requeued at once (AddAttemptedPodGroupIfNeeded on success),
			// fails again alone (no pod scheduled: errPodGroupUnschedulable)
			// and backs off; the True condition never goes back to False
			// (updatePodGroupCondition).
			name:     "a basic group binds the members that fit and retries the others",
			nodes:    []*v1.Node{rackNode("n", "100", "")},
			group:    st.MakePodGroup("g").Obj(),
			pods:     []*v1.Pod{gangPod("a", "60", ""), gangPod("b", "60", "")},
			wantNode: map[string]string{"a": "n", "b": ""},
			wantCond: map[string]string{
				"a": "True",
				"b": "Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.",
			},
			wantGroupCond:          "True/Scheduled: ",
			wantQueue:              [4]int{0, 1, 0, 0},
			wantBackingOffRejected: true,
		},
		{
			// validatePodGroup: every pod must have the group's priority;
			// handlePodGroupFailureBeforeScheduling fails each member with
			// the error and writes it on the PodGroup (SchedulerError);
			// the group backs off after an error.
			name:  "a member whose priority is not its group's fails every member with a scheduler error",
			nodes: []*v1.Node{rackNode("n", "4", "")},
			group: gang2(),
			pods: []*v1.Pod{gangPod("a", "1", ""),
				st.MakePod().Name("b").InGroup("g").Priority(5).Req(rl{v1.ResourceCPU: "1"}).Obj()},
			wantNode: map[string]string{"a": "", "b": ""},
			wantCond: map[string]string{
				"a": "SchedulerError: all pods in a single pod group should have the same priority as the pod group's priority, got 5 and 0",
				"b": "SchedulerError: all pods in a single pod group should have the same priority as the pod group's priority, got 5 and 0",
			},
			wantGroupCond: "False/SchedulerError: all pods in a single pod group should have the same priority as the pod group's priority, got 5 and 0",
			wantQueue:     [4]int{0, 1, 0, 0},
		},

		// --- placements (TopologyAwareWorkloadScheduling) ---
		{
			// One placement per rack; in rack-a only one member fits
			// (PlacementFeasible: Unschedulable), in rack-b both: the
			// only feasible placement is the group's.
			name:       "a constrained gang lands in the one domain where it fits whole",
			placements: true,
			nodes: []*v1.Node{rackNode("a1", "2", "rack-a"), rackNode("a2", "1", "rack-a"),
				rackNode("b1", "2", "rack-b"), rackNode("b2", "2", "rack-b")},
			group:         st.MakePodGroup("g").Gang(2).Topology(rackKey).Obj(),
			pods:          []*v1.Pod{gangPod("a", "2", ""), gangPod("b", "2", "")},
			wantRack:      map[string]string{"a": "rack-b", "b": "rack-b"},
			wantCond:      map[string]string{"a": "True", "b": "True"},
			wantGroupCond: "True/Scheduled: ",
		},
		{
			// GeneratePlacements: pods already scheduled -> only their
			// domain, though rack-b has more room.
			name:       "the domain of already-scheduled members is the only candidate",
			placements: true,
			nodes: []*v1.Node{rackNode("a1", "2", "rack-a"), rackNode("a2", "2", "rack-a"),
				rackNode("b1", "8", "rack-b"), rackNode("b2", "8", "rack-b")},
			group:         st.MakePodGroup("g").Gang(2).Topology(rackKey).Obj(),
			bound:         []*v1.Pod{gangPod("x", "1", "a1")},
			pods:          []*v1.Pod{gangPod("a", "1", "")},
			wantRack:      map[string]string{"x": "rack-a", "a": "rack-a"},
			wantCond:      map[string]string{"a": "True"},
			wantGroupCond: "True/Scheduled: ",
		},
		{
			// The only placement fails: podGroupSchedulingPlacementAlgorithm
			// reports "0/1 placements are available, first placement
			// status: ..." behind errPodGroupUnschedulable; a's own
			// FitError counts the placement's nodes
			// (NumNodesInPlacement).
			name:       "a gang whose scheduled members' domain is full is not placed elsewhere",
			placements: true,
			nodes: []*v1.Node{rackNode("a1", "2", "rack-a"), rackNode("a2", "2", "rack-a"),
				rackNode("b1", "8", "rack-b"), rackNode("b2", "8", "rack-b")},
			group:    st.MakePodGroup("g").Gang(2).Topology(rackKey).Obj(),
			bound:    []*v1.Pod{gangPod("x", "1", "a1")},
			pods:     []*v1.Pod{gangPod("a", "3", "")},
			wantNode: map[string]string{"x": "a1", "a": ""},
			wantCond: map[string]string{
				"a": "Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.",
			},
			wantGroupCond:          "False/Unschedulable: pod group is unschedulable, 0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, ",
			wantQueue:              [4]int{0, 1, 0, 0},
			wantBackingOffRejected: true,
		},
		{
			// No rack fits the gang: "0/2 placements are available"; the
			// tried member fails with its FitError within its placement.
			// Both racks fail alike, so the message does not depend on
			// which placement came first.
			name:       "a gang that fits in no domain reports 0/N placements are available",
			placements: true,
			nodes: []*v1.Node{rackNode("a1", "2", "rack-a"), rackNode("a2", "2", "rack-a"),
				rackNode("b1", "2", "rack-b"), rackNode("b2", "2", "rack-b")},
			group:    st.MakePodGroup("g").Gang(2).Topology(rackKey).Obj(),
			pods:     []*v1.Pod{gangPod("a", "3", ""), gangPod("b", "3", "")},
			wantNode: map[string]string{"a": "", "b": ""},
			wantCond: map[string]string{
				"a": "Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.",
			},
			wantGroupCond:          "False/Unschedulable: pod group is unschedulable, 0/2 placements are available, first placement status: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, ",
			wantQueue:              [4]int{0, 1, 0, 0},
			wantBackingOffRejected: true,
		},
		{
			// The member never tried in any placement gets the 0/N
			// status (completePodGroupAlgorithmResult's clone, before
			// PodGroupPostFilter).
			name:       "a member never tried in any placement fails with the 0/N placements status",
			placements: true,
			nodes: []*v1.Node{rackNode("a1", "2", "rack-a"), rackNode("a2", "2", "rack-a"),
				rackNode("b1", "2", "rack-b"), rackNode("b2", "2", "rack-b")},
			group:    st.MakePodGroup("g").Gang(2).Topology(rackKey).Obj(),
			pods:     []*v1.Pod{gangPod("a", "3", ""), gangPod("b", "3", "")},
			wantNode: map[string]string{"a": "", "b": ""},
			wantCond: map[string]string{
				"b": "Unschedulable: pod group is unschedulable, 0/2 placements are available, first placement status: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining",
			},
			wantGroupCond:          "False/Unschedulable: pod group is unschedulable, 0/2 placements are available, first placement status: minCount (2) cannot be satisfied: 0 scheduled, 1 remaining, ",
			wantQueue:              [4]int{0, 1, 0, 0},
			wantBackingOffRejected: true,
		},
		{
			// Nodes without the key are in no placement: a constrained
			// gang is not placed on them however roomy.
			name:       "a constrained gang is never placed on nodes without its topology key",
			placements: true,
			nodes:      []*v1.Node{rackNode("a1", "1", "rack-a"), rackNode("free", "64", "")},
			group:      st.MakePodGroup("g").Gang(2).Topology(rackKey).Obj(),
			pods:       []*v1.Pod{gangPod("a", "1", ""), gangPod("b", "1", "")},
			wantNode:   map[string]string{"a": "", "b": ""},
			// a, placed in the failed placement, gets the group's
			// message, itself behind errPodGroupUnschedulable, behind
			// errPodGroupUnschedulable again (submitPodGroupAlgorithmResult).
			wantCond: map[string]string{
				"a": "Unschedulable: pod group is unschedulable, pod group is unschedulable, 0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, ",
				"b": "Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.",
			},
			wantGroupCond:          "False/Unschedulable: pod group is unschedulable, 0/1 placements are available, first placement status: minCount (2) cannot be satisfied: 1 scheduled, 0 remaining, ",
			wantQueue:              [4]int{0, 1, 0, 0},
			wantBackingOffRejected: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != "" {
				t.Skip(tt.skip)
			}
			e := specEnv(t, tt.placements)
			for _, n := range tt.nodes {
				e.add(t, n)
			}
			if tt.group != nil {
				if err := e.store.AddPodGroup(tt.group); err != nil {
					t.Fatal(err)
				}
				e.store.Flush()
			}
			for _, p := range tt.bound {
				e.add(t, p)
			}
			for _, p := range tt.pods {
				e.add(t, p)
			}
			e.drain()
			if len(tt.later) > 0 {
				for _, p := range tt.later {
					e.add(t, p)
				}
				e.drain()
			}
			checkPlacedPods(t, e, tt.wantNode, tt.wantRack)
			for name, want := range tt.wantCond {
				got := ""
				switch c := condition(e.pod(t, name)); {
				case c == nil:
				case c.Status == v1.ConditionTrue:
					got = "True"
				default:
					got = c.Reason + ": " + c.Message
				}
				if got != want {
					t.Errorf("pod %s: PodScheduled condition %q, want %q", name, got, want)
				}
			}
			if got := groupCondition(t, e); got != tt.wantGroupCond {
				t.Errorf("PodGroup condition %q, want %q", got, tt.wantGroupCond)
			}
			active, backoff, unsched := e.sched.Queue.Counts()
			incomplete, _ := e.sched.Queue.PodGroupCounts()
			if got := [4]int{active, backoff, unsched, incomplete}; got != tt.wantQueue {
				t.Errorf("queue active/backoff/unschedulable/incomplete = %v, want %v", got, tt.wantQueue)
			}
			if got := e.sched.Queue.OnlyRejectedGroupsBackingOff(); got != tt.wantBackingOffRejected {
				t.Errorf("only rejected groups back off: %v, want %v", got, tt.wantBackingOffRejected)
			}
		})
	}
}

// checkPlacedPods compares each pod's node (or rack) with the wants.
func checkPlacedPods(t *testing.T, e *env, wantNode, wantRack map[string]string) {
	t.Helper()
	names := make([]string, 0, len(wantNode)+len(wantRack))
	for name := range wantNode {
		names = append(names, name)
	}
	for name := range wantRack {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		node := e.pod(t, name).Spec.NodeName
		if want, ok := wantNode[name]; ok && node != want {
			t.Errorf("pod %s is on node %q, want %q", name, node, want)
		}
		if want, ok := wantRack[name]; ok {
			rack := ""
			if n, found := e.store.GetNode(node); found {
				rack = n.Labels[rackKey]
			}
			if rack != want {
				t.Errorf("pod %s is on node %q in rack %q, want rack %q", name, node, rack, want)
			}
		}
	}
}

// groupCondition is PodGroup g's PodGroupInitiallyScheduled condition as
// "Status/Reason: Message", "" when it has none (or there is no PodGroup).
func groupCondition(t *testing.T, e *env) string {
	t.Helper()
	for _, pg := range e.store.PodGroups() {
		if pg.Namespace != "default" || pg.Name != "g" {
			continue
		}
		c := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
		if c == nil {
			return ""
		}
		if c.ObservedGeneration != pg.Generation {
			t.Errorf("PodGroup condition observed generation %d, want %d", c.ObservedGeneration, pg.Generation)
		}
		return fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
	}
	return ""
}
