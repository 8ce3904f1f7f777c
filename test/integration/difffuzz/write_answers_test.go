package difffuzz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteOracleAnswers writes upstream's answer (NNN.expected.json, the
// conformance schema plus the FitError message) beside each NNN.yaml of
// the folder KUBESCHED_ORACLE_WRITE names: how a divergence the fuzzer
// found becomes a scenario in the main module's testdata with upstream's
// answer. Each object gets the API's defaulting and must be valid. Skipped
// unless the variable is set.
func TestWriteOracleAnswers(t *testing.T) {
	dir := os.Getenv("KUBESCHED_ORACLE_WRITE")
	if dir == "" {
		t.Skip("KUBESCHED_ORACLE_WRITE names no folder")
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s: %v", dir, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := DecodeScenario(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				Default(o)
				if errs := Validate(o); len(errs) > 0 {
					t.Fatalf("%T is not valid: %v", o, errs.ToAggregate())
				}
			}
			ans, err := oracleAnswer(objs)
			if err != nil {
				t.Fatal(err)
			}
			out := strings.TrimSuffix(f, ".yaml") + ".expected.json"
			if err := os.WriteFile(out, []byte(ans.JSON()+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d/%d feasible %q", out, ans.FeasibleCount, len(ans.Nodes), ans.Message)
		})
	}
}
