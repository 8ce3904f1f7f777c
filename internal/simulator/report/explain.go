package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// ExplainLimit bounds the pending pods the HTML report explains.
const ExplainLimit = 100

// ExplainNode is one node in explain's JSON.
type ExplainNode struct {
	Name     string           `json:"name"`
	Feasible bool             `json:"feasible"`
	Plugin   string           `json:"plugin"`
	Reasons  []string         `json:"reasons"`
	Score    *int64           `json:"score"`
	Scores   map[string]int64 `json:"scores"`
	// Devices are the devices the node would allocate to the pod's
	// claims (dynamic resource allocation), "claim/request: driver/pool/device".
	Devices []string `json:"devices,omitempty"`
	// Why is the rejecting plugin's account of a rejected node in more
	// detail than its reasons, when it has one (dynamic resource
	// allocation: which request of which claim cannot be allocated).
	Why []string `json:"why,omitempty"`
}

// ExplainReport is explain's JSON document.
type ExplainReport struct {
	Pod           string        `json:"pod"`
	Nodes         []ExplainNode `json:"nodes"`
	FeasibleCount int           `json:"feasibleCount"`
	BestNodes     []string      `json:"bestNodes"`
	// Message is the FitError a scheduling attempt would report when no node fits.
	Message string `json:"message,omitempty"`
	// Preemption is where preemption would make room, when no node fits.
	Preemption *ExplainPreemption `json:"preemption,omitempty"`
	// LastAttempt is the simulated attempt whose state this explains
	// (simulate --explain).
	LastAttempt *LastAttempt `json:"lastAttempt,omitempty"`
	// PendingNotPlaced counts the other pods of the cluster files left
	// pending (explain -f): the pod is judged against the running pods
	// only, none of these placed before it. A note says so.
	PendingNotPlaced int `json:"pendingNotPlaced,omitempty"`
	// Notes say where the answer depends on what a controller or the
	// scheduler has not done yet.
	Notes []string `json:"notes,omitempty"`
}

// ExplainPreemption is where preemption would make room for a pod that
// fits nowhere, and whom it would evict.
type ExplainPreemption struct {
	Node    string   `json:"node"`
	Victims []string `json:"victims"`
}

// LastAttempt is when and how a pod's last scheduling attempt ended,
// as simulate --explain reports it.
type LastAttempt struct {
	T       string `json:"t"`
	Attempt int    `json:"attempt"`
	Result  string `json:"result"`
	Node    string `json:"node,omitempty"`
}

// Write renders the report as json or a table.
func (r *ExplainReport) Write(out io.Writer, format string) error {
	switch format {
	case "json":
		return WriteJSON(out, r)
	case "table", "":
	default:
		return fmt.Errorf("unknown output format %q: want table or json", format)
	}
	if a := r.LastAttempt; a != nil {
		fmt.Fprintf(out, "As attempt %d of %s saw the cluster at %s (result: %s", a.Attempt, r.Pod, a.T, a.Result)
		if a.Node != "" {
			fmt.Fprintf(out, ", node %s", a.Node)
		}
		fmt.Fprintln(out, "):")
	}
	fmt.Fprintf(out, "Pod %s: %d/%s feasible", r.Pod, r.FeasibleCount, Plural(len(r.Nodes), "node"))
	if len(r.BestNodes) > 0 {
		fmt.Fprintf(out, "; best: %s", strings.Join(r.BestNodes, ", "))
	}
	fmt.Fprintln(out)
	if r.Message != "" {
		fmt.Fprintln(out, r.Message)
	}
	if p := r.Preemption; p != nil {
		fmt.Fprintf(out, "Preemption would make room on %s by evicting %s.\n", p.Node, strings.Join(p.Victims, ", "))
	}
	for _, n := range r.Notes {
		fmt.Fprintln(out, "Note:", n)
	}
	fmt.Fprintln(out)
	var plugins []string
	seen := map[string]bool{}
	for _, n := range r.Nodes {
		for p := range n.Scores {
			if !seen[p] {
				seen[p] = true
				plugins = append(plugins, p)
			}
		}
	}
	sort.Strings(plugins)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	header := "NODE\tFITS\tSCORE\tREJECTED BY\tREASONS"
	for _, p := range plugins {
		header += "\t" + p
	}
	fmt.Fprintln(tw, header)
	for _, n := range r.Nodes {
		fits, score := "no", "-"
		if n.Feasible {
			fits = "yes"
			score = fmt.Sprint(*n.Score)
		}
		plugin := n.Plugin
		if plugin == "" {
			plugin = "-"
		}
		reasons := strings.Join(n.Reasons, "; ")
		if reasons == "" {
			reasons = "-"
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", n.Name, fits, score, plugin, reasons)
		for _, p := range plugins {
			if v, ok := n.Scores[p]; ok {
				line += fmt.Sprintf("\t%d", v)
			} else {
				line += "\t-"
			}
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The devices each feasible node would allocate (DRA), and why a
	// rejected node could not, after the table.
	for _, n := range r.Nodes {
		if len(n.Devices) > 0 {
			if _, err := fmt.Fprintf(out, "%s would allocate: %s\n", n.Name, strings.Join(n.Devices, ", ")); err != nil {
				return err
			}
		}
		for _, w := range n.Why {
			if _, err := fmt.Fprintf(out, "%s: %s\n", n.Name, w); err != nil {
				return err
			}
		}
	}
	return nil
}
