package simulator

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/config"
	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/testing/clustergen"
	"github.com/kubesched/kubesched/pkg/plugins"
)

var update = flag.Bool("update", false, "rewrite golden files")

const example = "../../examples/cluster.yaml"

func defaultConfig(t testing.TB) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg := &configv1.KubeSchedulerConfiguration{}
	known := scheduler.Known(plugins.NewInTreeRegistry())
	config.SetDefaults(cfg, known)
	if errs := config.Validate(cfg, known); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return cfg
}

// simulate runs a cluster and checks the invariants on the result, so
// every simulation any test runs is also an invariant test.
func simulate(t testing.TB, c *Cluster, seed int64) (*World, *Report) {
	t.Helper()
	w, err := NewWorld(context.Background(), c, defaultConfig(t), plugins.NewInTreeRegistry(), seed)
	if err != nil {
		t.Fatal(err)
	}
	w.Run(context.Background())
	for _, err := range w.CheckInvariants() {
		t.Errorf("invariant broken: %v", err)
	}
	return w, w.Report()
}

func render(t testing.TB, r *Report, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b, format); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestSimulateExampleMatchesGolden(t *testing.T) {
	for _, format := range []string{"json", "table"} {
		t.Run(format, func(t *testing.T) {
			c, err := Load([]string{example})
			if err != nil {
				t.Fatal(err)
			}
			_, rep := simulate(t, c, 1)
			got := render(t, rep, format)
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
		c, err := Load([]string{example})
		if err != nil {
			t.Fatal(err)
		}
		_, rep := simulate(t, c, 42)
		return render(t, rep, "json")
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
			_, rep := simulate(t, c, tt.opts.Seed)
			if rep.Summary.Scheduled == 0 {
				t.Errorf("nothing was scheduled: %+v", rep.Summary)
			}
		})
	}
}

// clusterFromObjects writes generated objects to a file and loads them,
// so generated clusters go through the same loader and defaulting.
func clusterFromObjects(t testing.TB, o clustergen.Options) *Cluster {
	t.Helper()
	return loadObjects(t, clustergen.Generate(o))
}

func pluginsRegistry() fwkruntime.Registry { return plugins.NewInTreeRegistry() }
