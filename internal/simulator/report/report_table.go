package report

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"
)

// Show is how much of a report the table lists. JSON, YAML and HTML
// always hold everything.
type Show string

const (
	// ShowSummary: the counts, the pending pods' reasons, the workloads
	// and the timeline's steps.
	ShowSummary Show = "summary"
	// ShowPending adds the pods that are not running (unschedulable, not
	// created, preempted), grouped by reason: the default, what a large
	// cluster's user reads first.
	ShowPending Show = "pending"
	// ShowAll adds every pod and every node.
	ShowAll Show = "all"
)

// ParseShow reads a --show value.
func ParseShow(s string) (Show, error) {
	switch sh := Show(s); sh {
	case ShowSummary, ShowPending, ShowAll:
		return sh, nil
	}
	return "", fmt.Errorf("unknown value %q: want summary, pending or all", s)
}

// pendingWithReason: the pod waits, for the reason in its message.
func pendingWithReason(p *PodResult) bool {
	return p.Status == StatusUnschedulable || p.Status == StatusNotCreated || p.Status == StatusOtherScheduler
}

// notRunning: the pod is listed with --show pending.
func notRunning(p *PodResult) bool {
	return pendingWithReason(p) || p.Status == StatusPreempted
}

// PendingReasons are the messages of the pods left pending (unschedulable
// or not created) with their counts, the most shared first (ties in the
// pods' order). Reason n of the table and of the HTML page is
// PendingReasons()[n-1]; number maps a message to its n.
func (r *Report) PendingReasons() (reasons []Reason, number map[string]int) {
	number = map[string]int{}
	for i := range r.Pods {
		p := &r.Pods[i]
		if !pendingWithReason(p) {
			continue
		}
		n, ok := number[p.Message]
		if !ok {
			reasons = append(reasons, Reason{Message: p.Message})
			n = len(reasons)
			number[p.Message] = n
		}
		reasons[n-1].Pods++
	}
	sort.SliceStable(reasons, func(i, j int) bool { return reasons[i].Pods > reasons[j].Pods })
	for i, re := range reasons {
		number[re.Message] = i + 1
	}
	return reasons, number
}

// PendingGroup is the pending pods of one group (workload, controller or
// app) with one reason.
type PendingGroup struct {
	Group string
	// Reason is the reason's number, as in PendingReasons.
	Reason int
	Pods   int
}

// PendingGroups counts the pending pods by group and reason, the largest
// first.
func (r *Report) PendingGroups() []PendingGroup {
	_, number := r.PendingReasons()
	index := map[[2]string]int{}
	var out []PendingGroup
	for i := range r.Pods {
		p := &r.Pods[i]
		if !pendingWithReason(p) {
			continue
		}
		k := [2]string{p.Group, p.Message}
		j, ok := index[k]
		if !ok {
			j = len(out)
			index[k] = j
			out = append(out, PendingGroup{Group: p.Group, Reason: number[p.Message]})
		}
		out[j].Pods++
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Pods != out[j].Pods {
			return out[i].Pods > out[j].Pods
		}
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// listPodsUpTo: with --show pending, past this many pods not running the
// table lists the pending pods by group (workload and reason) instead of
// one by one.
const listPodsUpTo = 100

// Plural writes n and the noun, "1 node", "2 nodes".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// SummaryLine is the report's counts in one line (without a newline).
func (r *Report) SummaryLine() string {
	s := r.Summary
	line := fmt.Sprintf("%d scheduled, %d unschedulable, %d preempted", s.Scheduled, s.Unschedulable, s.Preempted)
	if s.NotCreated > 0 {
		line += fmt.Sprintf(", %d not created", s.NotCreated)
	}
	if s.OtherScheduler > 0 {
		line += fmt.Sprintf(", %d for other schedulers", s.OtherScheduler)
	}
	if s.Finished > 0 || s.Deleted > 0 {
		line += fmt.Sprintf(", %d finished, %d deleted", s.Finished, s.Deleted)
	}
	return line + fmt.Sprintf("; %d already running; %s", s.Running, Plural(s.Nodes, "node"))
}

// WriteTable writes the report as tables, the summary first, then the
// pending pods' reasons (numbered as in the HTML page), the workloads,
// the timeline, and as show asks the pods and the nodes; a last line says
// what show left out.
func (r *Report) WriteTable(out io.Writer, show Show) error {
	var buf bytes.Buffer
	buf.WriteString(r.SummaryLine())
	buf.WriteString("\n")
	reasons, number := r.PendingReasons()
	if len(reasons) > 0 {
		buf.WriteString("\n")
		tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "REASON\tPODS\tWHY PENDING")
		for i, re := range reasons {
			fmt.Fprintf(tw, "%d\t%d\t%s\n", i+1, re.Pods, re.Message)
		}
		tw.Flush()
	}
	if len(r.Workloads) > 0 {
		r.writeWorkloads(&buf)
	}
	if len(r.PodGroups) > 0 {
		r.writePodGroups(&buf)
	}
	if r.Timeline != nil {
		r.Timeline.writeTable(&buf)
	}
	listed := 0
	switch {
	case show == ShowPending && r.notRunningCount() > listPodsUpTo:
		r.writeGroups(&buf)
	case show == ShowPending || show == ShowAll:
		listed = r.writePods(&buf, show, number)
	}
	if show == ShowAll {
		buf.WriteString("\n")
		r.writeNodes(&buf)
		_, err := out.Write(buf.Bytes())
		return err
	}
	if left := len(r.Pods) - listed; left > 0 || len(r.Nodes) > 0 {
		what := Plural(len(r.Nodes), "node")
		if left > 0 {
			what = Plural(left, "pod") + " and " + what
		}
		fmt.Fprintf(&buf, "\nNot listed: %s (--show all lists every pod and node", what)
		if show == ShowSummary && r.Summary.Unschedulable+r.Summary.NotCreated+r.Summary.OtherScheduler+r.Summary.Preempted > 0 {
			buf.WriteString(", --show pending the pods not running")
		}
		buf.WriteString(").\n")
	}
	_, err := out.Write(buf.Bytes())
	return err
}

func (r *Report) notRunningCount() int {
	n := 0
	for i := range r.Pods {
		if notRunning(&r.Pods[i]) {
			n++
		}
	}
	return n
}

// writeGroups writes the pending pods by group and reason.
func (r *Report) writeGroups(buf *bytes.Buffer) {
	groups := r.PendingGroups()
	if len(groups) == 0 {
		return
	}
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PENDING\tREASON\tPODS")
	for _, g := range groups {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", g.Group, g.Reason, g.Pods)
	}
	tw.Flush()
}

// writePods writes the pod table: every pod, or with ShowPending the
// pods not running, by reason (reason 1's first), then the preempted. A
// pending pod's message is its reason's number. It returns the pods
// written.
func (r *Report) writePods(buf *bytes.Buffer, show Show, number map[string]int) int {
	pods := make([]*PodResult, 0, len(r.Pods))
	for i := range r.Pods {
		if p := &r.Pods[i]; show == ShowAll || notRunning(p) {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		return 0
	}
	if show == ShowPending {
		rank := func(p *PodResult) int {
			if n, ok := number[p.Message]; ok && pendingWithReason(p) {
				return n
			}
			return len(number) + 1
		}
		sort.SliceStable(pods, func(i, j int) bool { return rank(pods[i]) < rank(pods[j]) })
	}
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tNODE\tSTATUS\tMESSAGE")
	for _, p := range pods {
		node, msg := p.Node, p.Message
		if node == "" {
			node = "-"
		}
		if pendingWithReason(p) {
			msg = fmt.Sprintf("reason %d", number[p.Message])
		}
		if len(p.Devices) > 0 {
			msg = "devices: " + strings.Join(p.Devices, ", ")
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\n", p.Namespace, p.Name, node, p.Status, msg)
	}
	tw.Flush()
	return len(pods)
}

// writeWorkloads writes the workload table; a COMPLETIONS column when a
// Job is among them.
func (r *Report) writeWorkloads(buf *bytes.Buffer) {
	jobs := false
	for _, wl := range r.Workloads {
		jobs = jobs || wl.Completions != ""
	}
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	header := "WORKLOAD\tPODS\tSCHEDULED\tPENDING\t"
	if jobs {
		header += "COMPLETIONS\t"
	}
	fmt.Fprintln(tw, header+"WHY PENDING")
	for _, wl := range r.Workloads {
		var why []string
		for _, re := range wl.Reasons {
			why = append(why, fmt.Sprintf("%d: %s", re.Pods, re.Message))
		}
		fmt.Fprintf(tw, "%s %s/%s\t%d\t%d\t%d\t", wl.Kind, wl.Namespace, wl.Name, wl.Pods, wl.Scheduled, wl.Pending)
		if jobs {
			c := wl.Completions
			if c == "" {
				c = "-"
			}
			fmt.Fprintf(tw, "%s\t", c)
		}
		fmt.Fprintln(tw, strings.Join(why, "; "))
	}
	tw.Flush()
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
			memory(n.RequestedResources.Memory), memory(n.AllocatableResources.Memory), wholePercent(n.RequestedResources.Memory, n.AllocatableResources.Memory))
		for _, e := range extended {
			fmt.Fprintf(tw, "%d/%d\t", n.RequestedResources.Scalar[e], n.AllocatableResources.Scalar[e])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// cores writes millicores as cores with two decimals.
func cores(milli int64) string { return fmt.Sprintf("%.2f", float64(milli)/1000) }

// memory writes bytes in the unit kubectl's users write them in: whole
// Mi under 1Gi (256Mi, not 0.2Gi), Gi with two decimals from there
// (1.50Gi), and Ki or bytes when smaller than a Mi or not a whole Mi
// (a request of 100M is 95.37Mi): nothing is rounded past the second
// decimal.
func memory(b int64) string {
	const ki, mi, gi = 1 << 10, 1 << 20, 1 << 30
	switch {
	case b == 0:
		return "0"
	case b >= gi:
		return fmt.Sprintf("%.2fGi", float64(b)/gi)
	case b%mi == 0:
		return fmt.Sprintf("%dMi", b/mi)
	case b >= mi:
		return fmt.Sprintf("%.2fMi", float64(b)/mi)
	case b%ki == 0:
		return fmt.Sprintf("%dKi", b/ki)
	}
	return fmt.Sprintf("%d", b)
}

// wholePercent writes used as a whole percentage of total, "-" when total
// is 0: rounded down, as in the HTML page (see percent.go).
func wholePercent(used, total int64) string {
	if total == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", PercentFloor(used, total))
}

// writePodGroups writes the pod-group table: each group placed whole (or
// as far as a basic group goes) or pending, with its condition's message.
func (r *Report) writePodGroups(buf *bytes.Buffer) {
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "POD GROUP\tPOLICY\tPODS\tSCHEDULED\tPENDING\tDOMAIN\tSTATE")
	for _, g := range r.PodGroups {
		policy := g.Policy
		if g.MinCount > 0 {
			policy = fmt.Sprintf("gang of %d", g.MinCount)
		}
		domain := "-"
		switch {
		case g.Domain != "":
			domain = g.Topology + "=" + g.Domain
		case g.Topology != "":
			domain = "one " + g.Topology
		}
		state := "not tried"
		switch g.Condition {
		case "True":
			state = "placed"
		case "False":
			state = g.Reason + ": " + g.Message
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%d\t%d\t%d\t%s\t%s\n", g.Namespace, g.Name, policy, g.Pods, g.Scheduled, g.Pending, domain, state)
	}
	tw.Flush()
}
