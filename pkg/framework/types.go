package framework

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// QueuedPodInfo is a pod in the scheduling queue, with its attempts.
type QueuedPodInfo struct {
	*PodInfo
	// Timestamp is when the pod was added to the queue (last time).
	Timestamp time.Time
	// Attempts counts scheduling attempts.
	Attempts int
	// InitialAttemptTimestamp is the first pop; nil before.
	InitialAttemptTimestamp *time.Time
	// UnschedulablePlugins rejected the pod in its last attempt.
	UnschedulablePlugins sets.Set[string]
	// PendingPlugins returned Pending in its last attempt.
	PendingPlugins sets.Set[string]
	// GatingPlugin is the PreEnqueue plugin that holds the pod, if any.
	GatingPlugin string
	// UnschedulableCount counts attempts that plugins rejected;
	// ConsecutiveErrorsCount counts attempts in a row that failed with an
	// error. The backoff grows with the latter when it is set, else with
	// the former (upstream's rule); a pod never rejected has no backoff.
	UnschedulableCount     int
	ConsecutiveErrorsCount int
	// Seq orders pods that entered the queue at the same instant (the
	// simulator's fake clock): arrival order, as a real clock would.
	Seq uint64
	// BackoffExpiration caches the computed expiry.
	BackoffExpiration time.Time
	// MovedByFlush is set when the unschedulable flush, not a cluster
	// event, brought the pod back for its current attempt.
	MovedByFlush bool
	// Group is set when the entity is a pod group (the GenericWorkload
	// gate): PodInfo is then the group's stand-in, whose pod carries the
	// group's name, priority and scheduler name for the queue's ordering,
	// and Group holds the member pods.
	Group *QueuedPodGroupInfo
}

// ActionType is what happened to a resource. The bits are upstream's
// (k8s.io/kube-scheduler/framework v0.37), in the same order, so that
// MatchClusterEvents' "incoming <= registered" rule means the same here.
type ActionType int64

// The actions of cluster events.
const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	// UpdateNodeTaint is a change of taints or of spec.unschedulable.
	UpdateNodeTaint
	UpdateNodeCondition
	UpdateNodeAnnotation
	UpdateNodeDeclaredFeature
	UpdateNodePreemptionPolicy
	UpdatePodLabel
	UpdatePodScaleDown
	UpdatePodScaleUp
	// UpdatePodToleration: a toleration was added (they cannot be removed).
	UpdatePodToleration
	UpdatePodSchedulingGatesEliminated
	UpdatePodGeneratedResourceClaim

	// All is any action.
	All ActionType = 1<<iota - 1

	// Update is any update; an event whose change is not one of the
	// specific kinds above carries Update and wakes only plugins that
	// registered Update (or All).
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition | UpdateNodeAnnotation | UpdateNodeDeclaredFeature | UpdateNodePreemptionPolicy |
		UpdatePodLabel | UpdatePodScaleDown | UpdatePodScaleUp | UpdatePodToleration | UpdatePodSchedulingGatesEliminated | UpdatePodGeneratedResourceClaim

	// None is no action.
	None ActionType = 0
)

var actionNames = map[ActionType]string{
	Add: "Add", Delete: "Delete", UpdateNodeAllocatable: "UpdateNodeAllocatable", UpdateNodeLabel: "UpdateNodeLabel",
	UpdateNodeTaint: "UpdateNodeTaint", UpdateNodeCondition: "UpdateNodeCondition", UpdateNodeAnnotation: "UpdateNodeAnnotation",
	UpdateNodeDeclaredFeature: "UpdateNodeDeclaredFeature", UpdateNodePreemptionPolicy: "UpdateNodePreemptionPolicy",
	UpdatePodLabel: "UpdatePodLabel", UpdatePodScaleDown: "UpdatePodScaleDown", UpdatePodScaleUp: "UpdatePodScaleUp",
	UpdatePodToleration: "UpdatePodToleration", UpdatePodSchedulingGatesEliminated: "UpdatePodSchedulingGatesEliminated",
	UpdatePodGeneratedResourceClaim: "UpdatePodGeneratedResourceClaim", All: "All", Update: "Update",
}

// String names a single action (or All, Update) as upstream does; "" for
// other combinations.
func (a ActionType) String() string { return actionNames[a] }

// EventResource is the kind of object an event is about.
type EventResource string

// The resources of cluster events.
const (
	// Pod matches AssignedPod, UnscheduledPod and TargetPod.
	Pod         EventResource = "Pod"
	AssignedPod EventResource = "AssignedPod"
	// UnscheduledPod is another pod that is not bound yet.
	UnscheduledPod EventResource = "UnscheduledPod"
	// TargetPod is the pod being scheduled itself.
	TargetPod     EventResource = "TargetPod"
	Node          EventResource = "Node"
	Namespace     EventResource = "Namespace"
	PriorityClass EventResource = "PriorityClass"
	// Storage objects (volume plugins).
	PersistentVolume      EventResource = "PersistentVolume"
	PersistentVolumeClaim EventResource = "PersistentVolumeClaim"
	StorageClass          EventResource = "storage.k8s.io/StorageClass"
	CSINode               EventResource = "storage.k8s.io/CSINode"
	CSIDriver             EventResource = "storage.k8s.io/CSIDriver"
	VolumeAttachment      EventResource = "storage.k8s.io/VolumeAttachment"
	CSIStorageCapacity    EventResource = "storage.k8s.io/CSIStorageCapacity"
	// Dynamic resource allocation (DynamicResources).
	ResourceClaim EventResource = "resource.k8s.io/ResourceClaim"
	ResourceSlice EventResource = "resource.k8s.io/ResourceSlice"
	DeviceClass   EventResource = "resource.k8s.io/DeviceClass"
	WildCard      EventResource = "*"
)

// ClusterEvent is something that happened in the cluster.
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
	// Label, when set, names the event instead of Resource+ActionType.
	Label string
}

// IsWildCard is true for the events that concern every pod (the flush).
func (e ClusterEvent) IsWildCard() bool {
	return e.Resource == WildCard && e.ActionType == All
}

// Match is true when e (a registered interest) covers the incoming event
// o, by upstream's rule (MatchClusterEvents): the resource matches, the
// actions overlap, and o is not broader than e; so a generic Update wakes
// only plugins that registered Update.
func (e ClusterEvent) Match(o ClusterEvent) bool {
	if e.IsWildCard() {
		return true
	}
	res := e.Resource == WildCard || e.Resource == o.Resource ||
		(e.Resource == Pod && (o.Resource == AssignedPod || o.Resource == UnscheduledPod || o.Resource == TargetPod))
	return res && e.ActionType&o.ActionType != 0 && o.ActionType <= e.ActionType
}

// String names the event for metrics and logs: its Label, else the
// resource followed by the action, as upstream's Label() ("NodeAdd").
func (e ClusterEvent) String() string {
	if e.Label != "" {
		return e.Label
	}
	if a := e.ActionType.String(); a != "" {
		return string(e.Resource) + a
	}
	return fmt.Sprintf("%s%d", e.Resource, e.ActionType)
}

// EventUnschedulableTimeout is the flush of pods that waited too long.
var EventUnschedulableTimeout = ClusterEvent{Resource: WildCard, ActionType: All, Label: "UnschedulableTimeout"}

// EventForceActivate is recorded for a pod activated while in flight (its
// newObj is that pod, and it concerns that pod alone): when the attempt
// ends, the pod is retried instead of waiting for an event.
var EventForceActivate = ClusterEvent{Resource: WildCard, ActionType: All, Label: "ForceActivate"}

// NodeToStatusReader reads the per-node statuses of a failed cycle.
type NodeToStatusReader interface {
	Get(nodeName string) *Status
}

// NodeToStatus maps node names to their rejecting status. Nodes not in the
// map (e.g. cut by a PreFilter node restriction) get AbsentNodesStatus.
type NodeToStatus struct {
	// m is built on the first Set, Get or Recorded; until then the
	// statuses added with AddNew are kept in names and sts, in order: a
	// cycle that finds a node records every node it rejected on the way,
	// thousands for a pod that most nodes reject, and only a failed cycle
	// reads them by name.
	m                 map[string]*Status
	mu                sync.Mutex // guards building m; Get may be called in parallel
	infos             []*NodeInfo
	sts               []*Status
	AbsentNodesStatus *Status
}

// NewNodeToStatus returns an empty map whose absent nodes are
// UnschedulableAndUnresolvable; size is a capacity hint.
func NewNodeToStatus(size ...int) *NodeToStatus {
	n := &NodeToStatus{AbsentNodesStatus: NewStatus(UnschedulableAndUnresolvable)}
	if len(size) > 0 && size[0] > 0 {
		n.m = make(map[string]*Status, size[0])
	}
	return n
}

// Reserve makes room for size more nodes' statuses added with AddNew.
func (n *NodeToStatus) Reserve(size int) {
	if n.m == nil && cap(n.infos)-len(n.infos) < size {
		n.infos = append(make([]*NodeInfo, 0, len(n.infos)+size), n.infos...)
		n.sts = append(make([]*Status, 0, len(n.sts)+size), n.sts...)
	}
}

func (n *NodeToStatus) materialize() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m != nil {
		return
	}
	n.m = make(map[string]*Status, len(n.infos))
	for i, ni := range n.infos {
		n.m[ni.NodeName()] = n.sts[i]
	}
	n.infos, n.sts = nil, nil
}

// each calls fn with every recorded status, in no order.
func (n *NodeToStatus) each(fn func(*Status)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		for _, st := range n.sts {
			fn(st)
		}
		return
	}
	for _, st := range n.m {
		fn(st)
	}
}

// StatusesOf returns, in order, the status Get returns for each of nodes
// (a snapshot's list, each NodeInfo at its Index). Statuses added with
// AddNew for NodeInfos of that list are read by position, without
// building the map by name.
func (n *NodeToStatus) StatusesOf(nodes []*NodeInfo) []*Status {
	out := make([]*Status, len(nodes))
	n.mu.Lock()
	infos, sts := n.infos, n.sts
	byPosition := n.m == nil
	if byPosition {
		for i, ni := range infos {
			j := ni.Index()
			if j < 0 || j >= len(nodes) || nodes[j] != ni || sts[i] == nil {
				byPosition = false
				break
			}
			out[j] = sts[i]
		}
	}
	n.mu.Unlock()
	if !byPosition {
		for j, ni := range nodes {
			out[j] = n.Get(ni.NodeName())
		}
		return out
	}
	for j := range out {
		if out[j] == nil {
			out[j] = n.AbsentNodesStatus
		}
	}
	return out
}

// Set records a node's status.
func (n *NodeToStatus) Set(node string, s *Status) {
	n.materialize()
	n.m[node] = s
}

// AddNew records the status of a node the caller knows has none recorded
// (each node of a search is looked at once); its name is read when the
// map is built, within the cycle (a snapshot's NodeInfo keeps its node).
func (n *NodeToStatus) AddNew(ni *NodeInfo, s *Status) {
	if n.m != nil {
		n.m[ni.NodeName()] = s
		return
	}
	n.infos, n.sts = append(n.infos, ni), append(n.sts, s)
}

// Get returns the node's status.
func (n *NodeToStatus) Get(node string) *Status {
	n.materialize()
	if s, ok := n.m[node]; ok {
		return s
	}
	return n.AbsentNodesStatus
}

// Len counts recorded nodes.
func (n *NodeToStatus) Len() int {
	if n.m == nil {
		return len(n.infos)
	}
	return len(n.m)
}

// Recorded returns the recorded node names, sorted.
func (n *NodeToStatus) Recorded() []string {
	n.materialize()
	out := make([]string, 0, len(n.m))
	for k := range n.m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Diagnosis says why a pod fits no node.
type Diagnosis struct {
	NodeToStatus         *NodeToStatus
	UnschedulablePlugins sets.Set[string]
	PendingPlugins       sets.Set[string]
	// PreFilterMsg is set when PreFilter rejected the pod outright.
	PreFilterMsg string
	// PostFilterMsg is set by PostFilter (e.g. preemption).
	PostFilterMsg string
}

// FitError is the error of a cycle that found no node.
type FitError struct {
	Pod         *v1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis

	// histogram is the message's per-reason part, built once: Error is
	// called for the status, the condition and the event of one failure,
	// and counting over every node's status each time was a seventh of a
	// large simulation's CPU.
	histogram string
}

const (
	// NoNodeAvailableMsg starts every FitError message.
	NoNodeAvailableMsg = "0/%v nodes are available"
	separatorFormat    = " %v."
)

// reasonHistogram is the message up to the PostFilter part.
func (f *FitError) reasonHistogram() string {
	reasonMsg := fmt.Sprintf(NoNodeAvailableMsg+":", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		// PreFilter rejected the pod: the same status is on every node, so
		// the per-node histogram would only repeat it.
		return reasonMsg + fmt.Sprintf(separatorFormat, f.Diagnosis.PreFilterMsg)
	}
	counts := map[string]int{}
	if nts := f.Diagnosis.NodeToStatus; nts != nil {
		// Thousands of nodes, a handful of distinct reason lists: count
		// the lists first (by a short scan, then by a map past 16), then
		// their reasons.
		type group struct {
			reasons []string
			n       int
		}
		var groups []group
		var index map[string]int
		// groupOf finds (or adds) the group of a reason list.
		groupOf := func(rs []string) int {
			if index == nil {
				for i := range groups {
					if slices.Equal(groups[i].reasons, rs) {
						return i
					}
				}
				if len(groups) < 16 {
					groups = append(groups, group{reasons: rs})
					return len(groups) - 1
				}
				index = map[string]int{}
				for i, g := range groups {
					index[strings.Join(g.reasons, "\x00")] = i
				}
			}
			k := strings.Join(rs, "\x00")
			if i, ok := index[k]; ok {
				return i
			}
			index[k] = len(groups)
			groups = append(groups, group{reasons: rs})
			return len(groups) - 1
		}
		// Nodes rejected for the same reason mostly share one status
		// (StatusInterner): the last few statuses seen are matched by
		// pointer before their reasons are compared.
		var seen [8]*Status
		var seenGroup [8]int
		next := 0
		nts.each(func(st *Status) {
			for i, s := range seen {
				if s == st && s != nil {
					groups[seenGroup[i]].n++
					return
				}
			}
			g := groupOf(st.Reasons())
			groups[g].n++
			if st != nil {
				seen[next], seenGroup[next] = st, g
				next = (next + 1) % len(seen)
			}
		})
		for _, g := range groups {
			for _, r := range g.reasons {
				counts[r] += g.n
			}
		}
		// Nodes cut by a PreFilter restriction count under its status.
		if absent := f.NumAllNodes - nts.Len(); absent > 0 {
			for _, r := range nts.AbsentNodesStatus.Reasons() {
				counts[r] += absent
			}
		}
	}
	parts := make([]string, 0, len(counts))
	for r, c := range counts {
		parts = append(parts, fmt.Sprintf("%v %v", c, r))
	}
	sort.Strings(parts)
	if len(parts) > 0 {
		reasonMsg += fmt.Sprintf(separatorFormat, strings.Join(parts, ", "))
	}
	return reasonMsg
}

// ShareHistogram gives f the reason histogram other has rendered, when f
// reads the very statuses other does (the same NodeToStatus, not a copy):
// the scheduler hands the statuses of a failed cycle to the next pod of
// its class, and thousands of nodes need not be counted again.
func (f *FitError) ShareHistogram(other *FitError) {
	if other.histogram != "" && f.NumAllNodes == other.NumAllNodes &&
		f.Diagnosis.NodeToStatus == other.Diagnosis.NodeToStatus &&
		f.Diagnosis.PreFilterMsg == other.Diagnosis.PreFilterMsg {
		f.histogram = other.histogram
	}
}

// Error renders upstream's message: "0/5 nodes are available: 3 Insufficient
// cpu, 2 node(s) had untolerated taint(s)." then the PostFilter part.
func (f *FitError) Error() string {
	if f.histogram == "" {
		f.histogram = f.reasonHistogram()
	}
	reasonMsg := f.histogram
	// PostFilter's message is joined as it is, with no period of ours
	// (v1.37.2 framework/types.go: " %v").
	if f.Diagnosis.PostFilterMsg != "" {
		reasonMsg += " " + f.Diagnosis.PostFilterMsg
	}
	return reasonMsg
}
