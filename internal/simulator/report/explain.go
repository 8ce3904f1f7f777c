package report

import (
	"fmt"
	"io"
	"slices"
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

// ExplainShow is what explain's table lists.
type ExplainShow string

const (
	// ExplainShowAuto lists every node up to ExplainListAll nodes, and
	// the summary past them.
	ExplainShowAuto ExplainShow = ""
	// ExplainShowSummary lists the best feasible nodes and folds the
	// rejected ones by plugin and reasons.
	ExplainShowSummary ExplainShow = "summary"
	// ExplainShowAll lists every node.
	ExplainShowAll ExplainShow = "all"
)

const (
	// ExplainListAll is the largest cluster whose every node the table
	// lists by default.
	ExplainListAll = 50
	// ExplainTopFeasible is how many feasible nodes the summary lists.
	ExplainTopFeasible = 20
)

// Write renders the report as json or a table, the table as
// ExplainShowAuto says.
func (r *ExplainReport) Write(out io.Writer, format string) error {
	return r.WriteShow(out, format, ExplainShowAuto)
}

// WriteShow renders the report as json or a table listing what show
// says (JSON always holds every node).
func (r *ExplainReport) WriteShow(out io.Writer, format string, show ExplainShow) error {
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
	listed, folded := r.Nodes, []ExplainNode(nil)
	if show == ExplainShowSummary || (show == ExplainShowAuto && len(r.Nodes) > ExplainListAll) {
		listed, folded = r.summary()
	}
	var plugins []string
	seen := map[string]bool{}
	for _, n := range listed {
		for p := range n.Scores {
			if !seen[p] {
				seen[p] = true
				plugins = append(plugins, p)
			}
		}
	}
	sort.Strings(plugins)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	// The summary lists feasible nodes only: no rejection columns.
	header, rejection := "NODE\tFITS\tSCORE\tREJECTED BY\tREASONS", folded == nil
	if !rejection {
		header = "NODE\tFITS\tSCORE"
	}
	for _, p := range plugins {
		header += "\t" + p
	}
	if len(listed) > 0 {
		fmt.Fprintln(tw, header)
	}
	for _, n := range listed {
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
		line := fmt.Sprintf("%s\t%s\t%s", n.Name, fits, score)
		if rejection {
			line += fmt.Sprintf("\t%s\t%s", plugin, reasons)
		}
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
	if folded != nil {
		return r.writeFolded(out, listed, folded)
	}
	return writeDetails(out, listed)
}

// writeDetails prints the devices each feasible node would allocate
// (DRA), and why a rejected node could not, after the table.
func writeDetails(out io.Writer, nodes []ExplainNode) error {
	for _, n := range nodes {
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

// summary splits the nodes into the best feasible ones, listed one by
// one (the highest scores first, then by name), and the rest.
func (r *ExplainReport) summary() (listed, folded []ExplainNode) {
	var feasible []ExplainNode
	for _, n := range r.Nodes {
		if n.Feasible {
			feasible = append(feasible, n)
		} else {
			folded = append(folded, n)
		}
	}
	sort.SliceStable(feasible, func(i, j int) bool {
		if si, sj := *feasible[i].Score, *feasible[j].Score; si != sj {
			return si > sj
		}
		return feasible[i].Name < feasible[j].Name
	})
	if len(feasible) > ExplainTopFeasible {
		folded = append(folded, feasible[ExplainTopFeasible:]...)
		feasible = feasible[:ExplainTopFeasible]
	}
	return feasible, folded
}

// writeFolded prints the summary's rejected nodes grouped by the plugin
// that rejected them and its reasons (the largest groups first, each with
// its first node as an example, and that node's details), then what was
// not listed.
func (r *ExplainReport) writeFolded(out io.Writer, listed, folded []ExplainNode) error {
	type group struct {
		plugin, reasons string
		nodes           int
		example         ExplainNode
	}
	var groups []*group
	byKey := map[string]*group{}
	moreFeasible := 0
	for _, n := range folded {
		if n.Feasible {
			moreFeasible++
			continue
		}
		reasons := strings.Join(n.Reasons, "; ")
		k := n.Plugin + "\x00" + reasons
		g := byKey[k]
		if g == nil {
			g = &group{plugin: n.Plugin, reasons: reasons, example: n}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.nodes++
	}
	if moreFeasible > 0 {
		fmt.Fprintf(out, "... and %s, with lower scores.\n", Plural(moreFeasible, "more feasible node"))
	}
	examples := slices.Clone(listed)
	if len(groups) > 0 {
		sort.SliceStable(groups, func(i, j int) bool {
			if groups[i].nodes != groups[j].nodes {
				return groups[i].nodes > groups[j].nodes
			}
			if groups[i].plugin != groups[j].plugin {
				return groups[i].plugin < groups[j].plugin
			}
			return groups[i].reasons < groups[j].reasons
		})
		if len(listed) > 0 || moreFeasible > 0 {
			fmt.Fprintln(out)
		}
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "REJECTED BY\tNODES\tREASONS\tFOR EXAMPLE")
		for _, g := range groups {
			plugin, reasons := g.plugin, g.reasons
			if plugin == "" {
				plugin = "-"
			}
			if reasons == "" {
				reasons = "-"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", plugin, g.nodes, reasons, g.example.Name)
			examples = append(examples, g.example)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if err := writeDetails(out, examples); err != nil {
		return err
	}
	_, err := fmt.Fprintf(out, "\nNot listed one by one: %s of %d (--show all lists every node; -o json holds them all).\n", Plural(len(folded), "node"), len(r.Nodes))
	return err
}
