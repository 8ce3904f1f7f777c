package simulator_test

import (
	"bytes"
	"flag"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/testing/clustergen"
	"github.com/kubesched/kubesched/pkg/plugins"
)

var update = flag.Bool("update", false, "rewrite golden files")

const example = "../../examples/cluster.yaml"

func TestSimulateExampleMatchesGolden(t *testing.T) {
	// table is the default --show pending; table-all, --show all.
	for _, format := range []string{"json", "table", "table-all"} {
		t.Run(format, func(t *testing.T) {
			c, err := loading.Load([]string{example})
			if err != nil {
				t.Fatal(err)
			}
			_, rep := simtest.Simulate(t, c, 1)
			var got []byte
			if format == "table-all" {
				var b bytes.Buffer
				if err := rep.WriteTable(&b, report.ShowAll); err != nil {
					t.Fatal(err)
				}
				got = b.Bytes()
			} else {
				got = simtest.Render(t, rep, format)
			}
			golden := filepath.Join("testdata", "example.golden."+format)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/simulator -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("simulate output differs from %s (-want,+got):\n%s", golden, diff)
			}
		})
	}
}

func TestSimulateIsDeterministic(t *testing.T) {
	run := func() []byte {
		c, err := loading.Load([]string{example})
		if err != nil {
			t.Fatal(err)
		}
		_, rep := simtest.Simulate(t, c, 42)
		return simtest.Render(t, rep, "json")
	}
	first, second := run(), run()
	if !bytes.Equal(first, second) {
		t.Errorf("two runs with the same input and seed differ:\n%s", cmp.Diff(string(first), string(second)))
	}
}

func TestSimulateGeneratedClustersKeepInvariants(t *testing.T) {
	tests := []struct {
		name string
		opts clustergen.Options
	}{
		{name: "a small crowded cluster", opts: clustergen.Options{Nodes: 5, Pods: 200, RunningFraction: 0.3, Seed: 1}},
		{name: "a medium cluster with many pending pods", opts: clustergen.Options{Nodes: 60, Pods: 1500, RunningFraction: 0.2, Seed: 2}},
		{name: "a cluster of more than 100 nodes, where only part of the nodes is searched", opts: clustergen.Options{Nodes: 300, Pods: 2000, RunningFraction: 0.1, Seed: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clusterFromObjects(t, tt.opts)
			_, rep := simtest.Simulate(t, c, tt.opts.Seed)
			if rep.Summary.Scheduled == 0 {
				t.Errorf("nothing was scheduled: %+v", rep.Summary)
			}
		})
	}
}

// clusterFromObjects writes generated objects to a file and loads them,
// so generated clusters go through the same loader and defaulting.
func clusterFromObjects(t testing.TB, o clustergen.Options) *cluster.Cluster {
	t.Helper()
	return simtest.LoadObjects(t, clustergen.Generate(o))
}

func pluginsRegistry() fwkruntime.Registry { return plugins.NewInTreeRegistry() }
