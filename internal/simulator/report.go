package simulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
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

	requested   framework.Resource
	allocatable framework.Resource
	// zone and pool group the node in the HTML report.
	zone, pool string
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

	// explanations are pending pods' explanations (the HTML report's).
	explanations map[string]*ExplainReport
}

// Report builds the report from the store's final state.
func (w *World) Report() *Report {
	r := &Report{Pods: make([]PodResult, 0, len(w.Pending)), Nodes: []NodeResult{}}
	pending := make(map[string]bool, len(w.Pending))
	for _, p := range w.Pending {
		k := p.Namespace + "/" + p.Name
		pending[k] = true
		cur, ok := w.Store.GetPod(p.Namespace, p.Name)
		res := PodResult{Namespace: p.Namespace, Name: p.Name}
		ev, evicted := w.Store.Evicted[k]
		g, isGone := w.gone[k]
		switch {
		case !ok && isGone:
			res.Node, res.Status, res.Message = g.node, g.status, g.message
			w.countGone(r, g)
		case !ok && evicted:
			res.Node, res.Status, res.Message = ev.Node, StatusPreempted, "preempted by "+ev.Preemptor
			r.Summary.Preempted++
		case !ok:
			res.Status, res.Message = StatusUnschedulable, "deleted"
		case cur.Spec.NodeName != "":
			res.Node, res.Status = cur.Spec.NodeName, StatusScheduled
			res.Devices = w.podDevices(cur)
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
	// StatefulSet pods never created: the pod before them never ran.
	for _, o := range w.ordered {
		for _, p := range append(o.Failed, o.Waiting...) {
			r.Pods = append(r.Pods, PodResult{Namespace: p.Namespace, Name: p.Name, Status: StatusNotCreated,
				Message: fmt.Sprintf("not created: %s creates its pods in order and waits for %s to run", w.Workloads[o.Workload], o.After)})
			r.Summary.NotCreated++
		}
	}
	// Pods that were running and were preempted, deleted or finished are
	// listed too.
	for k, g := range w.gone {
		if pending[k] {
			continue
		}
		ns, name, _ := strings.Cut(k, "/")
		r.Pods = append(r.Pods, PodResult{Namespace: ns, Name: name, Node: g.node, Status: g.status, Message: g.message})
		w.countGone(r, g)
	}
	for k, ev := range w.Store.Evicted {
		if _, isGone := w.gone[k]; pending[k] || isGone {
			continue
		}
		ns, name, _ := strings.Cut(k, "/")
		r.Pods = append(r.Pods, PodResult{Namespace: ns, Name: name, Node: ev.Node, Status: StatusPreempted, Message: "preempted by " + ev.Preemptor})
		r.Summary.Preempted++
	}
	slices.SortFunc(r.Pods, func(a, b PodResult) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	nodes := w.Store.Nodes()
	byNode := make(map[string]*NodeResult, len(nodes))
	r.Nodes = make([]NodeResult, 0, len(nodes))
	for _, n := range nodes {
		nr := &NodeResult{Name: n.Name, allocatable: *framework.NewResource(n.Status.Allocatable), zone: n.Labels[v1.LabelTopologyZone], pool: n.Labels["pool"]}
		if nr.pool == "" {
			nr.pool = n.Labels[v1.LabelInstanceTypeStable]
		}
		byNode[n.Name] = nr
	}
	w.Store.EachPod(func(p *v1.Pod) { // sums: any order
		nr, ok := byNode[p.Spec.NodeName]
		if !ok || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			return
		}
		nr.Pods++
		req, _, _ := framework.PodRequests(p)
		nr.requested.AddResource(&req)
	})
	// Nodes alike share their quantity maps (read-only from here on).
	shared := map[quantitiesKey]map[string]string{}
	for _, n := range nodes {
		nr := byNode[n.Name]
		nr.Requested = sharedQuantities(shared, &nr.requested, false)
		nr.Allocatable = sharedQuantities(shared, &nr.allocatable, true)
		r.Nodes = append(r.Nodes, *nr)
	}
	r.Summary.Nodes = len(r.Nodes)
	r.Summary.Running = w.running
	r.Workloads = w.workloadResults(r)
	if w.tl != nil && w.tl.report.Steps != nil {
		r.Timeline = &w.tl.report
	}
	return r
}

func (w *World) countGone(r *Report, g gone) {
	if g.status == StatusFinished {
		r.Summary.Finished++
	} else {
		r.Summary.Deleted++
	}
}

// workloadResults counts each workload's pods: the running ones it
// controls and the outcomes of those it created.
func (w *World) workloadResults(r *Report) []WorkloadResult {
	if len(w.Workloads) == 0 {
		return nil
	}
	out := make([]WorkloadResult, len(w.Workloads))
	reasons := make([]map[string]int, len(w.Workloads))
	for i, wl := range w.Workloads {
		out[i] = WorkloadResult{Kind: wl.Kind, Namespace: wl.Namespace, Name: wl.Name}
		reasons[i] = map[string]int{}
	}
	reported := map[string]bool{}
	for _, p := range r.Pods {
		k := p.Namespace + "/" + p.Name
		reported[k] = true
		i, ok := w.WorkloadOf[k]
		if !ok {
			continue
		}
		if p.Status == StatusFinished || p.Status == StatusDeleted || (w.tl != nil && p.Status == StatusPreempted) {
			continue // gone; in a timeline its controller replaced it
		}
		out[i].Pods++
		if p.Status == StatusScheduled {
			out[i].Scheduled++
			continue
		}
		out[i].Pending++
		msg := p.Message
		if p.Status == StatusPreempted {
			msg = "preempted" // its controller would create a replacement
		}
		reasons[i][msg]++
	}
	for _, p := range w.Store.Pods() {
		k := podKey(p)
		if i, ok := w.WorkloadOf[k]; ok && !reported[k] && p.Spec.NodeName != "" && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed {
			out[i].Pods++
			out[i].Scheduled++
		}
	}
	for i := range out {
		for msg, n := range reasons[i] {
			out[i].Reasons = append(out[i].Reasons, Reason{Message: msg, Pods: n})
		}
		sort.Slice(out[i].Reasons, func(a, b int) bool {
			x, y := out[i].Reasons[a], out[i].Reasons[b]
			return x.Pods > y.Pods || (x.Pods == y.Pods && x.Message < y.Message)
		})
	}
	return out
}

type quantitiesKey struct {
	cpu, mem, eph, pods int64
	withPods            bool
}

// sharedQuantities is quantities, the same map for equal resources without
// scalars.
func sharedQuantities(shared map[quantitiesKey]map[string]string, r *framework.Resource, withPods bool) map[string]string {
	if len(r.Scalar) > 0 {
		return quantities(r, withPods)
	}
	k := quantitiesKey{r.MilliCPU, r.Memory, r.EphemeralStorage, r.AllowedPodNumber, withPods}
	if m, ok := shared[k]; ok {
		return m
	}
	m := quantities(r, withPods)
	shared[k] = m
	return m
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
		for name, v := range n.allocatable.Scalar {
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
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t", n.Name, n.Pods, n.allocatable.AllowedPodNumber,
			cores(n.requested.MilliCPU), cores(n.allocatable.MilliCPU), pct(n.requested.MilliCPU, n.allocatable.MilliCPU),
			gib(n.requested.Memory), gib(n.allocatable.Memory), pct(n.requested.Memory, n.allocatable.Memory))
		for _, e := range extended {
			fmt.Fprintf(tw, "%d/%d\t", n.requested.Scalar[e], n.allocatable.Scalar[e])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// cores writes millicores as cores with two decimals.
func cores(milli int64) string { return fmt.Sprintf("%.2f", float64(milli)/1000) }

// gib writes bytes as GiB with one decimal.
func gib(b int64) string { return fmt.Sprintf("%.1fGi", float64(b)/(1<<30)) }

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
