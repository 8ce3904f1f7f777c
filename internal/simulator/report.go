package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Pod outcomes.
const (
	StatusScheduled     = "Scheduled"
	StatusUnschedulable = "Unschedulable"
	StatusPreempted     = "Preempted"
)

// PodResult is one pending pod's outcome.
type PodResult struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	Status    string `json:"status"`
	Message   string `json:"message"`
}

// NodeResult is one node's load at the end.
type NodeResult struct {
	Name        string            `json:"name"`
	Pods        int               `json:"pods"`
	Requested   map[string]string `json:"requested"`
	Allocatable map[string]string `json:"allocatable"`

	requested   framework.Resource
	allocatable framework.Resource
}

// Summary counts outcomes.
type Summary struct {
	Scheduled     int `json:"scheduled"`
	Unschedulable int `json:"unschedulable"`
	Preempted     int `json:"preempted"`
	Nodes         int `json:"nodes"`
}

// Report is the outcome of a simulation.
type Report struct {
	Pods    []PodResult  `json:"pods"`
	Nodes   []NodeResult `json:"nodes"`
	Summary Summary      `json:"summary"`
}

// Report builds the report from the store's final state.
func (w *World) Report() *Report {
	r := &Report{Pods: []PodResult{}, Nodes: []NodeResult{}}
	pending := map[string]bool{}
	for _, p := range w.Pending {
		k := p.Namespace + "/" + p.Name
		pending[k] = true
		cur, ok := w.Store.GetPod(p.Namespace, p.Name)
		res := PodResult{Namespace: p.Namespace, Name: p.Name}
		ev, evicted := w.Store.Evicted[k]
		switch {
		case !ok && evicted:
			res.Node, res.Status, res.Message = ev.Node, StatusPreempted, "preempted by "+ev.Preemptor
			r.Summary.Preempted++
		case !ok:
			res.Status, res.Message = StatusUnschedulable, "deleted"
		case cur.Spec.NodeName != "":
			res.Node, res.Status = cur.Spec.NodeName, StatusScheduled
			r.Summary.Scheduled++
		default:
			res.Status = StatusUnschedulable
			r.Summary.Unschedulable++
			for _, c := range cur.Status.Conditions {
				if c.Type == v1.PodScheduled {
					res.Message = c.Message
				}
			}
			if res.Message == "" && len(cur.Spec.SchedulingGates) > 0 {
				gates := make([]string, 0, len(cur.Spec.SchedulingGates))
				for _, g := range cur.Spec.SchedulingGates {
					gates = append(gates, g.Name)
				}
				res.Message = fmt.Sprintf("waiting for scheduling gates: %v", gates)
			}
		}
		r.Pods = append(r.Pods, res)
	}
	// Pods that were running and were preempted are listed too.
	for k, ev := range w.Store.Evicted {
		if pending[k] {
			continue
		}
		ns, name, _ := strings.Cut(k, "/")
		r.Pods = append(r.Pods, PodResult{Namespace: ns, Name: name, Node: ev.Node, Status: StatusPreempted, Message: "preempted by " + ev.Preemptor})
		r.Summary.Preempted++
	}
	sort.Slice(r.Pods, func(i, j int) bool {
		a, b := r.Pods[i], r.Pods[j]
		return a.Namespace < b.Namespace || (a.Namespace == b.Namespace && a.Name < b.Name)
	})
	byNode := map[string]*NodeResult{}
	for _, n := range w.Store.Nodes() {
		nr := &NodeResult{Name: n.Name, allocatable: *framework.NewResource(n.Status.Allocatable)}
		byNode[n.Name] = nr
	}
	for _, p := range w.Store.Pods() {
		nr, ok := byNode[p.Spec.NodeName]
		if !ok || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		nr.Pods++
		pi := framework.NewPodInfo(p)
		nr.requested.AddResource(&pi.Requests)
	}
	for _, n := range w.Store.Nodes() {
		nr := byNode[n.Name]
		nr.Requested = quantities(&nr.requested, false)
		nr.Allocatable = quantities(&nr.allocatable, true)
		r.Nodes = append(r.Nodes, *nr)
	}
	r.Summary.Nodes = len(r.Nodes)
	return r
}

func quantities(r *framework.Resource, withPods bool) map[string]string {
	out := map[string]string{
		"cpu":    resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI).String(),
		"memory": resource.NewQuantity(r.Memory, resource.BinarySI).String(),
	}
	if withPods {
		out["pods"] = fmt.Sprint(r.AllowedPodNumber)
	}
	if r.EphemeralStorage != 0 {
		out["ephemeral-storage"] = resource.NewQuantity(r.EphemeralStorage, resource.BinarySI).String()
	}
	for k, v := range r.Scalar {
		if v != 0 {
			out[string(k)] = resource.NewQuantity(v, resource.DecimalSI).String()
		}
	}
	return out
}

// Write renders the report as table, json or yaml.
func (r *Report) Write(out io.Writer, format string) error {
	switch format {
	case "json":
		return writeJSON(out, r)
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	case "table", "":
		return r.writeTable(out)
	}
	return fmt.Errorf("unknown output format %q: want table, json or yaml", format)
}

func (r *Report) writeTable(out io.Writer) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tNODE\tSTATUS\tMESSAGE")
	for _, p := range r.Pods {
		node := p.Node
		if node == "" {
			node = "-"
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\n", p.Namespace, p.Name, node, p.Status, p.Message)
	}
	tw.Flush()
	buf.WriteString("\n")
	tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "NODE\tPODS\tCPU REQUESTED\tCPU ALLOCATABLE\tCPU %\tMEMORY REQUESTED\tMEMORY ALLOCATABLE\tMEMORY %\t")
	for _, n := range r.Nodes {
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n.Name, n.Pods, n.allocatable.AllowedPodNumber,
			n.Requested["cpu"], n.Allocatable["cpu"], pct(n.requested.MilliCPU, n.allocatable.MilliCPU),
			n.Requested["memory"], n.Allocatable["memory"], pct(n.requested.Memory, n.allocatable.Memory))
	}
	tw.Flush()
	fmt.Fprintf(&buf, "\n%d scheduled, %d unschedulable, %d preempted, %d nodes\n", r.Summary.Scheduled, r.Summary.Unschedulable, r.Summary.Preempted, r.Summary.Nodes)
	_, err := out.Write([]byte(strings.TrimLeft(buf.String(), "\n")))
	return err
}

func pct(used, total int64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", used*100/total)
}

// writeJSON writes v indented, with a final newline.
func writeJSON(out io.Writer, v interface{}) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = out.Write(append(b, '\n'))
	return err
}
