package difffuzz

import (
	"encoding/json"
	"k8s.io/apimachinery/pkg/runtime"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOracleReproducesConformance holds the in-process oracle to upstream's
// answers in the conformance scenarios (copied from ../shared/conformance
// into testdata/, a few of each set): same per-node verdicts, rejecting
// plugins and reasons, weighted scores, raw scores, totals and best nodes.
// The fuzzer trusts the oracle because of this test.
func TestOracleReproducesConformance(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*.yaml")
	if err != nil || len(files) < 16 {
		t.Fatalf("want 16 scenarios in testdata, found %d (%v)", len(files), err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "testdata/"), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".expected.json")
			if err != nil {
				t.Fatal(err)
			}
			var want Answer
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			objs, err := DecodeScenario(data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := oracleAnswer(objs)
			if err != nil {
				t.Fatal(err)
			}
			// The expected files carry no FitError message.
			got.Message = ""
			for _, d := range Diff(&want, got) {
				t.Error(d)
			}
			for _, w := range want.Nodes {
				g := got.node(w.Name)
				for p, r := range w.RawScores {
					if g != nil && g.RawScores[p] != r {
						t.Errorf("node %s: raw %s: want %d, got %d", w.Name, p, r, g.RawScores[p])
					}
				}
			}
		})
	}
}

// oracleAnswer is upstream's answer for a scenario's pending pod.
func oracleAnswer(objs []runtime.Object) (*Answer, error) {
	pending, rest, err := pendingOf(objs)
	if err != nil {
		return nil, err
	}
	o, err := NewOracle(rest)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	return o.Explain(pending)
}
