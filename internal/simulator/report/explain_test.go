package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/internal/simulator/report"
)

// explainOf builds an explanation: feasible nodes fit-0, fit-1, ...
// scored 100, 99, ...; rejected nodes by (plugin, reason, count).
func explainOf(feasible int, rejected ...rejection) *report.ExplainReport {
	r := &report.ExplainReport{Pod: "default/web", FeasibleCount: feasible}
	for i := range feasible {
		score := int64(100 - i)
		r.Nodes = append(r.Nodes, report.ExplainNode{Name: fmt.Sprintf("fit-%02d", i), Feasible: true, Score: &score,
			Scores: map[string]int64{"NodeResourcesFit": score}})
	}
	for _, g := range rejected {
		for i := range g.count {
			r.Nodes = append(r.Nodes, report.ExplainNode{Name: fmt.Sprintf("%s-%02d", strings.ToLower(g.plugin), i), Plugin: g.plugin,
				Reasons: []string{g.reason}, Why: g.why})
		}
	}
	return r
}

type rejection struct {
	plugin, reason string
	count          int
	why            []string
}

func TestExplainsTableListsSmallClustersNodeByNodeAndFoldsLargeOnes(t *testing.T) {
	affinity := rejection{plugin: "NodeAffinity", reason: "node(s) didn't match Pod's node affinity/selector", count: 30}
	gpu := rejection{plugin: "DynamicResources", reason: "cannot allocate all claims", count: 12, why: []string{"claim gpu: no device matches"}}
	tests := []struct {
		name    string
		report  *report.ExplainReport
		show    report.ExplainShow
		want    []string
		notWant []string
	}{
		{
			name:    "a cluster of 50 nodes or fewer is listed node by node",
			report:  explainOf(3, rejection{plugin: "NodeAffinity", reason: "node(s) didn't match Pod's node affinity/selector", count: 2}),
			want:    []string{"REJECTED BY   REASONS", "fit-02", "nodeaffinity-01  no    -      NodeAffinity"},
			notWant: []string{"Not listed"},
		},
		{
			name:   "past 50 nodes the 20 best feasible nodes are listed and the rejected ones folded by plugin and reasons",
			report: explainOf(25, affinity, gpu),
			want: []string{"NODE    FITS  SCORE  NodeResourcesFit", "fit-19  yes   81", "... and 5 more feasible nodes, with lower scores.",
				"NodeAffinity      30     node(s) didn't match Pod's node affinity/selector  nodeaffinity-00",
				"DynamicResources  12     cannot allocate all claims", "dynamicresources-00: claim gpu: no device matches",
				"Not listed one by one: 47 nodes of 67 (--show all"},
			notWant: []string{"fit-20", "nodeaffinity-01", "dynamicresources-01:"},
		},
		{
			name:    "--show all lists every node of a large cluster",
			report:  explainOf(25, affinity, gpu),
			show:    report.ExplainShowAll,
			want:    []string{"fit-24", "nodeaffinity-29", "dynamicresources-11: claim gpu: no device matches"},
			notWant: []string{"Not listed", "more feasible"},
		},
		{
			name:    "--show summary folds a small cluster too",
			report:  explainOf(0, rejection{plugin: "TaintToleration", reason: "node(s) had untolerated taint(s)", count: 3}),
			show:    report.ExplainShowSummary,
			want:    []string{"TaintToleration  3      node(s) had untolerated taint(s)  tainttoleration-00", "Not listed one by one: 3 nodes of 3"},
			notWant: []string{"NODE ", "tainttoleration-01"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := tt.report.WriteShow(&out, "table", tt.show); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("the table lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("the table has %q:\n%s", w, out.String())
				}
			}
		})
	}
}
