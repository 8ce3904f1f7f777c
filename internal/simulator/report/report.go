package report

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Pod outcomes.
const (
	StatusScheduled = "Scheduled"
	// StatusFinished: the pod ran its duration and went away.
	StatusFinished = "Finished"
	// StatusDeleted: a step deleted the pod (or drained or deleted its node).
	StatusDeleted       = "Deleted"
	StatusUnschedulable = "Unschedulable"
	StatusPreempted     = "Preempted"
	// StatusNotCreated: a StatefulSet pod its controller has not created
	// yet, waiting for the pod before it to run.
	StatusNotCreated = "NotCreated"
	// StatusOtherScheduler: a pod for a schedulerName none of the
	// configuration's profiles has; another scheduler (or none) places
	// it, kubesched leaves it pending as kube-scheduler would.
	StatusOtherScheduler = "OtherScheduler"
)

// PodResult is one pending pod's outcome.
type PodResult struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	// Devices are a scheduled pod's allocated devices (dynamic resource
	// allocation), "claim/request: driver/pool/device".
	Devices []string `json:"devices,omitempty"`
	// Group is what a pending pod is counted under in the pending pods by
	// workload: its workload ("Deployment shop/web"), else its controller
	// ("ReplicaSet shop/web-5d9"), else its app label ("shop app=web"),
	// else the pod itself.
	Group string `json:"-"`
}

// NodeResult is one node's load at the end.
type NodeResult struct {
	Name        string            `json:"name"`
	Pods        int               `json:"pods"`
	Requested   map[string]string `json:"requested"`
	Allocatable map[string]string `json:"allocatable"`

	// RequestedResources and AllocatableResources are Requested and
	// Allocatable as numbers, for the tables and comparisons.
	RequestedResources   framework.Resource `json:"-"`
	AllocatableResources framework.Resource `json:"-"`
	// Zone and Pool group the node in the HTML report.
	Zone string `json:"-"`
	Pool string `json:"-"`
}

// Summary counts outcomes.
type Summary struct {
	Scheduled     int `json:"scheduled"`
	Unschedulable int `json:"unschedulable"`
	Preempted     int `json:"preempted"`
	NotCreated    int `json:"notCreated,omitempty"`
	// OtherScheduler counts the pods left to another scheduler.
	OtherScheduler int `json:"otherScheduler,omitempty"`
	// Finished and Deleted count the pods a timeline ended or deleted.
	Finished int `json:"finished,omitempty"`
	Deleted  int `json:"deleted,omitempty"`
	Nodes    int `json:"nodes"`
	// Running counts the pods already running when the simulation began.
	Running int `json:"running"`
}

// WorkloadResult counts a workload's pods at the end: those it had
// running and those the simulation created, scheduled or pending (not
// scheduled, preempted, or not created yet), with the pending pods'
// reasons.
type WorkloadResult struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Pods      int    `json:"pods"`
	Scheduled int    `json:"scheduled"`
	Pending   int    `json:"pending"`
	// Completions is a Job's, as kubectl get jobs shows them: its
	// succeeded pods of spec.completions ("3/3"), "2/1 of 3" with a
	// parallelism of 3 and no completions; empty for other kinds.
	Completions string   `json:"completions,omitempty"`
	Reasons     []Reason `json:"reasons,omitempty"`
}

// PodGroupResult is a pod group at the end of the run: its policy, its
// pods (bound and not), the domain of its topology key they are bound in,
// and its PodGroupInitiallyScheduled condition.
type PodGroupResult struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Policy is "gang" or "basic"; MinCount a gang's.
	Policy   string `json:"policy"`
	MinCount int    `json:"minCount,omitempty"`
	// Topology is the key of its topology constraint; Domain the key's
	// value on the nodes its bound pods are on.
	Topology  string `json:"topology,omitempty"`
	Domain    string `json:"domain,omitempty"`
	Pods      int    `json:"pods"`
	Scheduled int    `json:"scheduled"`
	Pending   int    `json:"pending"`
	// Condition is "True", "False" or "" (none written); Reason and
	// Message are the condition's.
	Condition string `json:"condition,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// Reason is a message shared by pending pods, with their count.
type Reason struct {
	Message string `json:"message"`
	Pods    int    `json:"pods"`
}

// Report is the outcome of a simulation.
type Report struct {
	Pods      []PodResult      `json:"pods"`
	Nodes     []NodeResult     `json:"nodes"`
	Workloads []WorkloadResult `json:"workloads,omitempty"`
	// PodGroups are the pod groups (the GenericWorkload gate), by
	// namespace/name.
	PodGroups []PodGroupResult `json:"podGroups,omitempty"`
	Summary   Summary          `json:"summary"`
	// Timeline is a Scenario's replay, step by step and over time.
	Timeline *TimelineReport `json:"timeline,omitempty"`

	// Explanations are pending pods' explanations by namespace/name (the
	// HTML report's).
	Explanations map[string]*ExplainReport `json:"-"`
}

// Write renders the report as table, json or yaml.
func (r *Report) Write(out io.Writer, format string) error {
	switch format {
	case "json":
		return writeReportJSON(out, r)
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	case "table", "":
		return r.WriteTable(out, ShowPending)
	case "html":
		return r.writeHTML(out)
	}
	return fmt.Errorf("unknown output format %q: want table, json, yaml or html", format)
}

// WriteJSON writes v indented, with a final newline.
func WriteJSON(out io.Writer, v interface{}) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
