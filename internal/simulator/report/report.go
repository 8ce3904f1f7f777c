package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"
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
	Kind      string   `json:"kind"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Pods      int      `json:"pods"`
	Scheduled int      `json:"scheduled"`
	Pending   int      `json:"pending"`
	Reasons   []Reason `json:"reasons,omitempty"`
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
		return r.writeTable(out)
	case "html":
		return r.writeHTML(out)
	}
	return fmt.Errorf("unknown output format %q: want table, json, yaml or html", format)
}

func (r *Report) writeTable(out io.Writer) error {
	var buf bytes.Buffer
	// Pending pods' messages are long and shared: the pod table names a
	// reason by number, listed once after it with its count.
	reasons, reasonOf := map[string]int{}, []string{}
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tNODE\tSTATUS\tMESSAGE")
	for _, p := range r.Pods {
		node, msg := p.Node, p.Message
		if node == "" {
			node = "-"
		}
		if p.Status == StatusUnschedulable || p.Status == StatusNotCreated {
			n, ok := reasons[p.Message]
			if !ok {
				reasonOf = append(reasonOf, p.Message)
				n = len(reasonOf)
				reasons[p.Message] = n
			}
			msg = fmt.Sprintf("reason %d", n)
		}
		if len(p.Devices) > 0 {
			msg = "devices: " + strings.Join(p.Devices, ", ")
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\n", p.Namespace, p.Name, node, p.Status, msg)
	}
	tw.Flush()
	if len(reasonOf) > 0 {
		counts := make([]int, len(reasonOf))
		for _, p := range r.Pods {
			if p.Status == StatusUnschedulable || p.Status == StatusNotCreated {
				counts[reasons[p.Message]-1]++
			}
		}
		buf.WriteString("\n")
		tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "REASON\tPODS\tWHY PENDING")
		for i, m := range reasonOf {
			fmt.Fprintf(tw, "%d\t%d\t%s\n", i+1, counts[i], m)
		}
		tw.Flush()
	}
	buf.WriteString("\n")
	r.writeNodes(&buf)
	if len(r.Workloads) > 0 {
		buf.WriteString("\n")
		tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKLOAD\tPODS\tSCHEDULED\tPENDING\tWHY PENDING")
		for _, wl := range r.Workloads {
			var why []string
			for _, re := range wl.Reasons {
				why = append(why, fmt.Sprintf("%d: %s", re.Pods, re.Message))
			}
			fmt.Fprintf(tw, "%s %s/%s\t%d\t%d\t%d\t%s\n", wl.Kind, wl.Namespace, wl.Name, wl.Pods, wl.Scheduled, wl.Pending, strings.Join(why, "; "))
		}
		tw.Flush()
	}
	if r.Timeline != nil {
		r.Timeline.writeTable(&buf)
	}
	fmt.Fprintf(&buf, "\n%d scheduled, %d unschedulable, %d preempted", r.Summary.Scheduled, r.Summary.Unschedulable, r.Summary.Preempted)
	if r.Summary.NotCreated > 0 {
		fmt.Fprintf(&buf, ", %d not created", r.Summary.NotCreated)
	}
	if r.Summary.Finished > 0 || r.Summary.Deleted > 0 {
		fmt.Fprintf(&buf, ", %d finished, %d deleted", r.Summary.Finished, r.Summary.Deleted)
	}
	fmt.Fprintf(&buf, "; %d already running; %d nodes\n", r.Summary.Running, r.Summary.Nodes)
	_, err := out.Write([]byte(strings.TrimLeft(buf.String(), "\n")))
	return err
}

// writeNodes writes the node table: cpu in cores, memory in GiB, and a
// requested/allocatable column per extended resource any node has.
func (r *Report) writeNodes(buf *bytes.Buffer) {
	var extended []v1.ResourceName
	seen := map[v1.ResourceName]bool{}
	for _, n := range r.Nodes {
		for name, v := range n.AllocatableResources.Scalar {
			if v > 0 && !seen[name] {
				seen[name] = true
				extended = append(extended, name)
			}
		}
	}
	sort.Slice(extended, func(i, j int) bool { return extended[i] < extended[j] })
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "NODE\tPODS\tCPU REQUESTED\tCPU ALLOCATABLE\tCPU %\tMEMORY REQUESTED\tMEMORY ALLOCATABLE\tMEMORY %\t"
	for _, e := range extended {
		header += strings.ToUpper(string(e)) + "\t"
	}
	fmt.Fprintln(tw, header)
	for _, n := range r.Nodes {
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t", n.Name, n.Pods, n.AllocatableResources.AllowedPodNumber,
			cores(n.RequestedResources.MilliCPU), cores(n.AllocatableResources.MilliCPU), wholePercent(n.RequestedResources.MilliCPU, n.AllocatableResources.MilliCPU),
			gib(n.RequestedResources.Memory), gib(n.AllocatableResources.Memory), wholePercent(n.RequestedResources.Memory, n.AllocatableResources.Memory))
		for _, e := range extended {
			fmt.Fprintf(tw, "%d/%d\t", n.RequestedResources.Scalar[e], n.AllocatableResources.Scalar[e])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// cores writes millicores as cores with two decimals.
func cores(milli int64) string { return fmt.Sprintf("%.2f", float64(milli)/1000) }

// gib writes bytes as GiB with one decimal.
func gib(b int64) string { return fmt.Sprintf("%.1fGi", float64(b)/(1<<30)) }

// wholePercent writes used as a whole percentage of total, "-" when total is 0.
func wholePercent(used, total int64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", PercentFloor(used, total))
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
