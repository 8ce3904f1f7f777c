package cluster

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The Scenario kind: a timeline of steps simulate replays on virtual time.
//
//	apiVersion: simulation.kubesched.io/v1alpha1
//	kind: Scenario
//	metadata: {name: rollout}
//	spec:
//	  steps:
//	  - at: 10m                 # virtual time since the start
//	    name: scale web         # optional; "step N" otherwise
//	    create: [<objects>]     # Nodes, Pods, workloads, and the objects plugins read
//	    delete: [{kind: Deployment, namespace: shop, name: web}]  # Pod, Node or a workload
//	    scale: [{kind: Deployment, namespace: shop, name: web, replicas: 30}]
//	    cordon: [node-a]        # spec.unschedulable
//	    uncordon: [node-a]
//	    drain: [node-b]         # cordon, then evict its pods but DaemonSets' through the eviction
//	                            # API's rules (as kubectl drain --ignore-daemonsets --force
//	                            # --delete-emptydir-data): an eviction a PodDisruptionBudget refuses
//	                            # is asked again every 5 s of virtual time
//	    deleteNodes: [node-c]   # the node and its pods (the pod GC)
//	    taint: [{node: node-d, key: k, value: v, effect: NoSchedule}]
//	    untaint: [{node: node-d, key: k, effect: NoSchedule}]
//
// Pods (and workload pod templates) with the annotation
// simulation.kubesched.io/duration finish that long after they are bound.
const (
	ScenarioAPIVersion = "simulation.kubesched.io/v1alpha1"
	ScenarioKind       = "Scenario"
	// DurationAnnotation: a pod finishes (succeeds and goes away) this
	// long after it is bound, a Go duration ("90s", "2h").
	DurationAnnotation = "simulation.kubesched.io/duration"
)

// Scenario is a timeline read from a Scenario manifest.
type Scenario struct {
	Name   string
	Source string // "file: document N"
	Steps  []Step
}

// Step is what happens at one point of virtual time.
type Step struct {
	At          time.Duration
	Name        string
	Create      []runtime.Object
	Delete      []ObjectRef
	Scale       []ScaleRef
	Cordon      []string
	Uncordon    []string
	Drain       []string
	DeleteNodes []string
	Taint       []NodeTaint
	Untaint     []NodeTaint
}

// ObjectRef names an object a step deletes.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// ScaleRef sets a workload's replicas (a Job's parallelism).
type ScaleRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Replicas  int32  `json:"replicas"`
}

// NodeTaint is a taint on a node.
type NodeTaint struct {
	Node   string         `json:"node"`
	Key    string         `json:"key"`
	Value  string         `json:"value,omitempty"`
	Effect v1.TaintEffect `json:"effect"`
}
