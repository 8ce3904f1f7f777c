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

	"github.com/kubesched/kubesched/pkg/plugins"
)

// expected is the part of an upstream answer (testdata/conformance, from
// kube-scheduler v1.37.2's own framework) that the test reads.
type expected struct {
	Pod   string `json:"pod"`
	Nodes []struct {
		Name     string           `json:"name"`
		Feasible bool             `json:"feasible"`
		Plugin   string           `json:"plugin"`
		Reasons  []string         `json:"reasons"`
		Score    *int64           `json:"score"`
		Scores   map[string]int64 `json:"scores"`
	} `json:"nodes"`
	BestNodes []string `json:"bestNodes"`
	// Message is the FitError without its preemption part, where the
	// answer has one (the differential fuzzer's scenarios).
	Message string `json:"message"`
}

// TestExplainAgreesWithUpstream holds explain to upstream's answers on the
// conformance scenarios, for every decision this build's plugins make:
// a node upstream rejects with one of our plugins is rejected by the same
// plugin, a node upstream finds feasible is feasible, and every plugin
// score we compute equals upstream's, and so do each feasible node's total
// and the best nodes: all three levels of ../shared/conformance/compare.sh.
func TestExplainAgreesWithUpstream(t *testing.T) {
	registry := plugins.NewInTreeRegistry()
	// The first 50 scenarios, 30 with storage objects, 20 with dynamic
	// resource allocation and 30 of API corner cases (empty and missing
	// selectors, pod-level resources, image volumes, matchLabelKeys, ...).
	var files []string
	// conformance-fuzz holds what the differential fuzzer found
	// (test/integration/difffuzz), with upstream's answers.
	for _, set := range []string{"conformance", "conformance-storage", "conformance-dra", "conformance-edge", "conformance-fuzz"} {
		found, err := filepath.Glob("testdata/" + set + "/*.yaml")
		if err != nil || len(found) == 0 {
			t.Fatalf("no scenarios in testdata/%s: %v", set, err)
		}
		files = append(files, found...)
	}
	if len(files) < 136 {
		t.Fatalf("want 136 scenarios, found %d", len(files))
	}
	var checked, scores int
	for _, f := range files {
		id := filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".yaml")
		t.Run(id, func(t *testing.T) {
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
				t.Fatalf("explained %s, upstream explained %s", got.Pod, want.Pod)
			}
			byName := map[string]report.ExplainNode{}
			for _, n := range got.Nodes {
				byName[n.Name] = n
			}
			for _, w := range want.Nodes {
				g, ok := byName[w.Name]
				if !ok {
					t.Errorf("node %s missing from explain", w.Name)
					continue
				}
				if !w.Feasible {
					// "": the PreFilter restrictions excluded each other.
					if _, have := registry[strings.Split(w.Plugin, ",")[0]]; !have && w.Plugin != "" {
						t.Errorf("node %s: upstream rejects with %s, a plugin this build does not have", w.Name, w.Plugin)
					}
					checked++
					if g.Feasible || g.Plugin != w.Plugin {
						t.Errorf("node %s: upstream rejects with %s, explain says feasible=%v plugin=%q %v", w.Name, w.Plugin, g.Feasible, g.Plugin, g.Reasons)
					} else if !slices.Equal(g.Reasons, w.Reasons) {
						t.Errorf("node %s: %s's reasons %q, upstream %q", w.Name, w.Plugin, g.Reasons, w.Reasons)
					}
					continue
				}
				checked++
				if !g.Feasible {
					t.Errorf("node %s: upstream finds it feasible, explain rejects with %s %v", w.Name, g.Plugin, g.Reasons)
					continue
				}
				if g.Score == nil || w.Score == nil || *g.Score != *w.Score {
					t.Errorf("node %s: total score %v, upstream %v", w.Name, deref(g.Score), deref(w.Score))
				}
				for p := range w.Scores {
					if _, ok := g.Scores[p]; !ok {
						t.Errorf("node %s: upstream scores with %s, explain does not", w.Name, p)
					}
				}
				for p, s := range g.Scores {
					scores++
					if ws, ok := w.Scores[p]; !ok || ws != s {
						t.Errorf("node %s: %s scores %d, upstream %d (present %v)", w.Name, p, s, ws, ok)
					}
				}
			}
			if !slices.Equal(got.BestNodes, want.BestNodes) {
				t.Errorf("best nodes %v, upstream %v", got.BestNodes, want.BestNodes)
			}
			// explain's message goes on with what preemption found.
			if want.Message != "" && !strings.HasPrefix(got.Message, want.Message+" preemption: ") {
				t.Errorf("message %q, upstream's begins %q", got.Message, want.Message)
			}
		})
	}
	t.Logf("checked %d node verdicts and %d plugin scores against upstream", checked, scores)
}

func deref(p *int64) interface{} {
	if p == nil {
		return nil
	}
	return *p
}
