package difffuzz

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
)

// Answer is one pod's per-node decision, in the schema of the conformance
// expected.json files (plus the FitError message when no node fits).
type Answer struct {
	Pod           string       `json:"pod"`
	Nodes         []NodeAnswer `json:"nodes"`
	FeasibleCount int          `json:"feasibleCount"`
	BestNodes     []string     `json:"bestNodes"`
	// Message is the FitError message (FitError.Error() of the Diagnosis,
	// no preemption) when no node is feasible.
	Message string `json:"message,omitempty"`
}

// NodeAnswer is one node's verdict.
type NodeAnswer struct {
	Name     string           `json:"name"`
	Feasible bool             `json:"feasible"`
	Plugin   string           `json:"plugin"`
	Reasons  []string         `json:"reasons"`
	Score    *int64           `json:"score"`
	Scores   map[string]int64 `json:"scores"`
	// RawScores are Score() before NormalizeScore and weights (oracle only;
	// informational, never compared).
	RawScores map[string]int64 `json:"rawScores,omitempty"`
}

// JSON renders the answer as the expected.json files are written.
func (a *Answer) JSON() string {
	b, _ := json.MarshalIndent(a, "", "  ")
	return string(b)
}

// node returns the named node's verdict, or nil.
func (a *Answer) node(name string) *NodeAnswer {
	for i := range a.Nodes {
		if a.Nodes[i].Name == name {
			return &a.Nodes[i]
		}
	}
	return nil
}

// Diff compares kubesched's answer (got) with upstream's (want) on every
// decision: per node feasibility, rejecting plugin, reasons, each plugin's
// weighted score and the total; the best nodes; the FitError message. It
// returns one line per difference, empty when they agree.
func Diff(want, got *Answer) []string {
	var d []string
	add := func(format string, args ...any) { d = append(d, fmt.Sprintf(format, args...)) }
	if want.FeasibleCount != got.FeasibleCount {
		add("feasibleCount: upstream %d, kubesched %d", want.FeasibleCount, got.FeasibleCount)
	}
	names := map[string]bool{}
	for _, n := range want.Nodes {
		names[n.Name] = true
	}
	for _, n := range got.Nodes {
		names[n.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		w, g := want.node(name), got.node(name)
		switch {
		case w == nil:
			add("node %s: only kubesched has it", name)
			continue
		case g == nil:
			add("node %s: only upstream has it", name)
			continue
		}
		if w.Feasible != g.Feasible {
			add("node %s: feasible upstream %v (%s %q), kubesched %v (%s %q)", name, w.Feasible, w.Plugin, w.Reasons, g.Feasible, g.Plugin, g.Reasons)
			continue
		}
		if !w.Feasible {
			if w.Plugin != g.Plugin {
				add("node %s: rejected by upstream's %s %q, kubesched's %s %q", name, w.Plugin, w.Reasons, g.Plugin, g.Reasons)
			} else if !slices.Equal(sortedCopy(w.Reasons), sortedCopy(g.Reasons)) {
				add("node %s: %s reasons upstream %q, kubesched %q", name, cmp.Or(w.Plugin, "PreFilter"), w.Reasons, g.Reasons)
			}
			continue
		}
		if deref(w.Score) != deref(g.Score) {
			add("node %s: total upstream %d, kubesched %d", name, deref(w.Score), deref(g.Score))
		}
		plugins := map[string]bool{}
		for p := range w.Scores {
			plugins[p] = true
		}
		for p := range g.Scores {
			plugins[p] = true
		}
		for _, p := range slices.Sorted(maps.Keys(plugins)) {
			ws, wok := w.Scores[p]
			gs, gok := g.Scores[p]
			switch {
			case !wok:
				add("node %s: %s scored %d by kubesched, skipped by upstream", name, p, gs)
			case !gok:
				add("node %s: %s scored %d by upstream (raw %d), skipped by kubesched", name, p, ws, w.RawScores[p])
			case ws != gs:
				add("node %s: %s upstream %d (raw %d), kubesched %d", name, p, ws, w.RawScores[p], gs)
			}
		}
	}
	if !slices.Equal(want.BestNodes, got.BestNodes) {
		add("bestNodes: upstream %v, kubesched %v", want.BestNodes, got.BestNodes)
	}
	if want.Message != got.Message {
		add("message:\n  upstream:  %s\n  kubesched: %s", want.Message, got.Message)
	}
	return d
}

// Cause condenses a diff line to its kind (plugin and what differed, no
// node names or numbers), to group divergences.
func Cause(line string) string {
	f := strings.Fields(line)
	switch {
	case strings.HasPrefix(line, "message:"):
		return "FitError message"
	case len(f) >= 3 && f[0] == "node" && f[2] == "rejected":
		return "rejecting plugin: upstream " + f[5] + ", kubesched " + afterWord(line, "kubesched's")
	case len(f) >= 3 && f[0] == "node" && f[2] == "feasible":
		return "feasibility: upstream " + f[4] + " " + f[5] + ", kubesched " + afterWord(line, "kubesched")
	case len(f) >= 4 && f[0] == "node" && f[3] == "reasons":
		return f[2] + " reasons"
	case len(f) >= 3 && f[0] == "node" && f[2] == "total":
		return "total"
	case len(f) >= 4 && f[0] == "node" && (f[3] == "upstream" || f[3] == "scored"):
		return f[2] + " score"
	}
	if len(f) > 0 {
		return strings.TrimSuffix(f[0], ":")
	}
	return line
}

// afterWord returns the word after w in s (a plugin name), with "(" cut.
func afterWord(s, w string) string {
	f := strings.Fields(s)
	for i := range f {
		if f[i] == w && i+1 < len(f) {
			return strings.TrimPrefix(f[i+1], "(")
		}
	}
	return "?"
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}
