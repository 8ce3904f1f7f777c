package simtest

import (
	"bytes"
	"context"
	"encoding/json"
	st "github.com/kubesched/kubesched/internal/testing"
	v1 "k8s.io/api/core/v1"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/config"
	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
	"github.com/kubesched/kubesched/pkg/plugins/gangscheduling"
	"github.com/kubesched/kubesched/pkg/plugins/podgrouppodscount"
	"github.com/kubesched/kubesched/pkg/plugins/topologyaware"
)

// DefaultConfig is the default KubeSchedulerConfiguration, validated.
func DefaultConfig(t testing.TB) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg := &configv1.KubeSchedulerConfiguration{}
	known := scheduler.Known(plugins.NewInTreeRegistry())
	config.SetDefaults(cfg, known)
	if errs := config.Validate(cfg, known); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return cfg
}

// NewWorld builds the world of c with the default configuration and the
// in-tree plugins.
func NewWorld(t testing.TB, c *cluster.Cluster, seed int64, opts ...scheduler.Option) *simulator.World {
	t.Helper()
	return newWorld(t, c, DefaultConfig(t), plugins.NewInTreeRegistry(), seed, opts...)
}

// Simulate runs a cluster and checks the invariants on the result.
func Simulate(t testing.TB, c *cluster.Cluster, seed int64) (*simulator.World, *report.Report) {
	t.Helper()
	w := NewWorld(t, c, seed)
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, err := range w.CheckInvariants() {
		t.Errorf("invariant broken: %v", err)
	}
	return w, w.Report()
}

// SimulateFiles loads manifests, simulates them with seed 1, and fails
// on a broken invariant.
func SimulateFiles(t testing.TB, paths ...string) *simulator.World {
	t.Helper()
	c, err := loading.Load(paths)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWorld(t, c, 1)
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if errs := w.CheckInvariants(); len(errs) > 0 {
		t.Fatalf("invariants: %v", errs)
	}
	return w
}

// Render writes a report in a format.
func Render(t testing.TB, r *report.Report, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.Write(&b, format); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Manifest writes objects as the documents of one YAML file, as a user
// would: with their TypeMeta, which builders leave empty.
func Manifest(t testing.TB, objs ...runtime.Object) string {
	t.Helper()
	var buf bytes.Buffer
	for _, obj := range objs {
		if obj.GetObjectKind().GroupVersionKind().Empty() {
			gvks, _, err := scheme.Scheme.ObjectKinds(obj)
			if err != nil {
				t.Fatal(err)
			}
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return buf.String()
}

// LoadObjects writes objects as one manifest and loads it, as simulate
// does.
func LoadObjects(t testing.TB, objs []runtime.Object) *cluster.Cluster {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(path, []byte(Manifest(t, objs...)), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loading.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ExplainFile runs explain on a scenario file as the command does.
func ExplainFile(t testing.TB, path string) *report.ExplainReport {
	t.Helper()
	c, err := loading.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := questions.FindPendingPod(c)
	if err != nil {
		t.Fatal(err)
	}
	kept := c.Pods[:0]
	for _, p := range c.Pods {
		if p != pod {
			kept = append(kept, p)
		}
	}
	c.Pods = kept
	w := NewWorld(t, c, 1, scheduler.WithPercentageOfNodesToScore(100))
	rep, err := questions.Explain(context.Background(), w, pod)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// WriteFile writes content to a file name in a temporary folder and
// returns its path.
func WriteFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// DecodeTrace parses a trace's JSON lines.
func DecodeTrace(t testing.TB, text string) []report.TraceLine {
	t.Helper()
	var lines []report.TraceLine
	dec := json.NewDecoder(strings.NewReader(text))
	for dec.More() {
		var l report.TraceLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("line %d of the trace: %v", len(lines)+1, err)
		}
		lines = append(lines, l)
	}
	return lines
}

// Node is a node of 4 cpus, 8Gi of memory and 110 pods.
func Node(name string) *v1.Node {
	return st.MakeNode().Name(name).Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj()
}

// PodGroupRegistry is the in-tree registry with GangScheduling, as the
// GenericWorkload gate makes it.
func PodGroupRegistry() fwkruntime.Registry {
	r := plugins.NewInTreeRegistry()
	r[gangscheduling.Name] = gangscheduling.New
	return r
}

// PlacementRegistry is PodGroupRegistry with the placement plugins, as
// the TopologyAwareWorkloadScheduling gate makes it.
func PlacementRegistry() fwkruntime.Registry {
	r := PodGroupRegistry()
	r[topologyaware.Name] = topologyaware.New
	r[podgrouppodscount.Name] = podgrouppodscount.New
	return r
}

// PodGroupConfig is the default configuration with the GenericWorkload
// gate on: GangScheduling joins the default profile.
func PodGroupConfig(t testing.TB) *configv1.KubeSchedulerConfiguration {
	return defaultConfigOf(t, PodGroupRegistry())
}

// PlacementConfig is the default configuration with the
// TopologyAwareWorkloadScheduling gate on too: TopologyPlacementGenerator
// and PodGroupPodsCount join the default profile.
func PlacementConfig(t testing.TB) *configv1.KubeSchedulerConfiguration {
	return defaultConfigOf(t, PlacementRegistry())
}

// PlacementWorld builds the world of c with GenericWorkload and
// TopologyAwareWorkloadScheduling on (not run).
func PlacementWorld(t testing.TB, c *cluster.Cluster, seed int64) *simulator.World {
	t.Helper()
	return newWorld(t, c, PlacementConfig(t), PlacementRegistry(), seed,
		scheduler.WithPluginFeatures(framework.Features{GenericWorkload: true, TopologyAwareWorkloadScheduling: true}))
}

// PodGroupWorld builds the world of c with the GenericWorkload gate on
// (not run).
func PodGroupWorld(t testing.TB, c *cluster.Cluster, seed int64, opts ...scheduler.Option) *simulator.World {
	t.Helper()
	opts = append([]scheduler.Option{scheduler.WithPluginFeatures(framework.Features{GenericWorkload: true})}, opts...)
	return newWorld(t, c, PodGroupConfig(t), PodGroupRegistry(), seed, opts...)
}

func newWorld(t testing.TB, c *cluster.Cluster, cfg *configv1.KubeSchedulerConfiguration, r fwkruntime.Registry, seed int64, opts ...scheduler.Option) *simulator.World {
	t.Helper()
	w, err := simulator.NewWorld(context.Background(), c, cfg, r, seed, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// SimulatePlacements runs a cluster with GenericWorkload and
// TopologyAwareWorkloadScheduling on and checks the invariants.
func SimulatePlacements(t testing.TB, c *cluster.Cluster, seed int64) (*simulator.World, *report.Report) {
	t.Helper()
	return runChecked(t, PlacementWorld(t, c, seed))
}

// runChecked runs w to its end and checks the invariants.
func runChecked(t testing.TB, w *simulator.World) (*simulator.World, *report.Report) {
	t.Helper()
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, err := range w.CheckInvariants() {
		t.Errorf("invariant broken: %v", err)
	}
	return w, w.Report()
}

func defaultConfigOf(t testing.TB, r fwkruntime.Registry) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg := &configv1.KubeSchedulerConfiguration{}
	known := scheduler.Known(r)
	config.SetDefaults(cfg, known)
	if errs := config.Validate(cfg, known); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	return cfg
}

// SimulatePodGroups runs a cluster with the GenericWorkload gate on and
// checks the invariants on the result.
func SimulatePodGroups(t testing.TB, c *cluster.Cluster, seed int64, opts ...scheduler.Option) (*simulator.World, *report.Report) {
	t.Helper()
	return runChecked(t, PodGroupWorld(t, c, seed, opts...))
}
