package questions_test

import (
	"encoding/json"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExplainCases holds explain to the answers under testdata/explain:
// every node's verdict, and the scores of the plugin the case is about,
// computed by hand from upstream's formulas (the derivation is the first
// line of the case's YAML). They are read as upstream's answers are
// (expected), and compared on the fields they give.
func TestExplainCases(t *testing.T) {
	files, err := filepath.Glob("testdata/explain/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			raw, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".expected.json")
			if err != nil {
				t.Fatal(err)
			}
			var want expected
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			got := simtest.ExplainFile(t, f)
			if got.Pod != want.Pod {
				t.Fatalf("explained %s, want %s", got.Pod, want.Pod)
			}
			if len(got.Nodes) != len(want.Nodes) {
				t.Fatalf("%d nodes explained, want %d", len(got.Nodes), len(want.Nodes))
			}
			byName := map[string]report.ExplainNode{}
			for _, n := range got.Nodes {
				byName[n.Name] = n
			}
			for _, w := range want.Nodes {
				g := byName[w.Name]
				if g.Feasible != w.Feasible || g.Plugin != w.Plugin {
					t.Errorf("node %s: feasible=%v plugin=%q %v, want feasible=%v plugin=%q", w.Name, g.Feasible, g.Plugin, g.Reasons, w.Feasible, w.Plugin)
				}
				for p, s := range w.Scores {
					if gs, ok := g.Scores[p]; !ok || gs != s {
						t.Errorf("node %s: %s = %d (present %v), want %d", w.Name, p, gs, ok, s)
					}
				}
				if w.Score != nil && (g.Score == nil || *g.Score != *w.Score) {
					t.Errorf("node %s: total %v, want %d", w.Name, deref(g.Score), *w.Score)
				}
			}
			if want.BestNodes != nil && !slices.Equal(got.BestNodes, want.BestNodes) {
				t.Errorf("best nodes %v, want %v", got.BestNodes, want.BestNodes)
			}
		})
	}
}
