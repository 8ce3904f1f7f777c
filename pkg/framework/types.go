package framework

import (
	"fmt"
	"sort"
	"strings"
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
	// BackoffExpiration caches the computed expiry.
	BackoffExpiration time.Time
	// MovedByFlush is set when the unschedulable flush, not a cluster
	// event, brought the pod back for its current attempt.
	MovedByFlush bool
}

// ActionType is what happened to a resource.
type ActionType int64

// The actions of cluster events.
const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint
	UpdateNodeCondition
	UpdateNodeAnnotation
	UpdateNodeDeclaredFeature
	UpdatePodLabel
	UpdatePodScaleDown
	UpdatePodTolerations
	UpdatePodSchedulingGatesEliminated
	UpdatePodGeneratedResourceClaim

	// Update is any update.
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition | UpdateNodeAnnotation | UpdateNodeDeclaredFeature |
		UpdatePodLabel | UpdatePodScaleDown | UpdatePodTolerations | UpdatePodSchedulingGatesEliminated | UpdatePodGeneratedResourceClaim
	// All is any action.
	All = Add | Delete | Update
)

// EventResource is the kind of object an event is about.
type EventResource string

// The resources of cluster events.
const (
	Pod              EventResource = "Pod"
	AssignedPod      EventResource = "AssignedPod"
	UnschedulablePod EventResource = "UnschedulablePod"
	Node             EventResource = "Node"
	Namespace        EventResource = "Namespace"
	PriorityClass    EventResource = "PriorityClass"
	// Storage objects (volume plugins).
	PersistentVolume      EventResource = "PersistentVolume"
	PersistentVolumeClaim EventResource = "PersistentVolumeClaim"
	StorageClass          EventResource = "storage.k8s.io/StorageClass"
	CSINode               EventResource = "storage.k8s.io/CSINode"
	WildCard              EventResource = "*"
)

// ClusterEvent is something that happened in the cluster.
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
	Label      string
}

// Match is true when e (a registered interest) covers the event o.
func (e ClusterEvent) Match(o ClusterEvent) bool {
	if e.Resource == WildCard {
		return true
	}
	res := e.Resource == o.Resource || (e.Resource == Pod && (o.Resource == AssignedPod || o.Resource == UnschedulablePod))
	return res && e.ActionType&o.ActionType != 0
}

// Label names the event for metrics and logs.
func (e ClusterEvent) String() string {
	if e.Label != "" {
		return e.Label
	}
	return fmt.Sprintf("%s%d", e.Resource, e.ActionType)
}

// EventUnschedulableTimeout is the flush of pods that waited too long.
var EventUnschedulableTimeout = ClusterEvent{Resource: WildCard, ActionType: All, Label: "UnschedulableTimeout"}

// NodeToStatusReader reads the per-node statuses of a failed cycle.
type NodeToStatusReader interface {
	Get(nodeName string) *Status
}

// NodeToStatus maps node names to their rejecting status. Nodes not in the
// map (e.g. cut by a PreFilter node restriction) get AbsentNodesStatus.
type NodeToStatus struct {
	m                 map[string]*Status
	AbsentNodesStatus *Status
}

// NewNodeToStatus returns an empty map whose absent nodes are
// UnschedulableAndUnresolvable; size is a capacity hint.
func NewNodeToStatus(size ...int) *NodeToStatus {
	n := 0
	if len(size) > 0 {
		n = size[0]
	}
	return &NodeToStatus{m: make(map[string]*Status, n), AbsentNodesStatus: NewStatus(UnschedulableAndUnresolvable)}
}

// Set records a node's status.
func (n *NodeToStatus) Set(node string, s *Status) { n.m[node] = s }

// Get returns the node's status.
func (n *NodeToStatus) Get(node string) *Status {
	if s, ok := n.m[node]; ok {
		return s
	}
	return n.AbsentNodesStatus
}

// Len counts recorded nodes.
func (n *NodeToStatus) Len() int { return len(n.m) }

// Recorded returns the recorded node names, sorted.
func (n *NodeToStatus) Recorded() []string {
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
}

const (
	// NoNodeAvailableMsg starts every FitError message.
	NoNodeAvailableMsg = "0/%v nodes are available"
	separatorFormat    = " %v."
)

// Error renders upstream's message: "0/5 nodes are available: 3 Insufficient
// cpu, 2 node(s) had untolerated taint(s)." then the PostFilter part.
func (f *FitError) Error() string {
	reasonMsg := fmt.Sprintf(NoNodeAvailableMsg+":", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		// PreFilter rejected the pod: the same status is on every node, so
		// the per-node histogram would only repeat it.
		reasonMsg += fmt.Sprintf(separatorFormat, f.Diagnosis.PreFilterMsg)
	} else {
		counts := map[string]int{}
		for _, name := range f.Diagnosis.NodeToStatus.Recorded() {
			for _, r := range f.Diagnosis.NodeToStatus.Get(name).Reasons() {
				counts[r]++
			}
		}
		// Nodes cut by a PreFilter restriction count under its status.
		if absent := f.NumAllNodes - f.Diagnosis.NodeToStatus.Len(); absent > 0 {
			for _, r := range f.Diagnosis.NodeToStatus.AbsentNodesStatus.Reasons() {
				counts[r] += absent
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
	}
	if f.Diagnosis.PostFilterMsg != "" {
		reasonMsg += fmt.Sprintf(separatorFormat, f.Diagnosis.PostFilterMsg)
	}
	return reasonMsg
}
