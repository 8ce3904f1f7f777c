package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

var known = sets.New("SchedulingGates", "PrioritySort", "NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity",
	"NodePorts", "NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality", "DefaultBinder")

func load(t *testing.T, yaml string) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg, err := Decode([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	SetDefaults(cfg, known)
	return cfg
}

const header = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

func TestDefaults(t *testing.T) {
	cfg := load(t, header)
	if len(cfg.Profiles) != 1 || *cfg.Profiles[0].SchedulerName != "default-scheduler" {
		t.Fatalf("profiles = %+v, want one default-scheduler", cfg.Profiles)
	}
	if *cfg.Parallelism != 16 || *cfg.PodInitialBackoffSeconds != 1 || *cfg.PodMaxBackoffSeconds != 10 || cfg.PercentageOfNodesToScore != nil {
		t.Errorf("parallelism %d, backoff %d..%d, percentage %v; want 16, 1..10, unset (adaptive)",
			*cfg.Parallelism, *cfg.PodInitialBackoffSeconds, *cfg.PodMaxBackoffSeconds, cfg.PercentageOfNodesToScore)
	}
	var got []string
	for _, p := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
		w := ""
		if p.Weight != nil {
			w = "=" + string(rune('0'+*p.Weight))
		}
		got = append(got, p.Name+w)
	}
	want := []string{"SchedulingGates", "PrioritySort", "NodeName", "NodeUnschedulable", "TaintToleration=3", "NodeAffinity=2",
		"NodePorts", "NodeResourcesFit=1", "NodeResourcesBalancedAllocation=1", "ImageLocality=1", "DefaultBinder"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default multiPoint (-want,+got):\n%s", diff)
	}
	var fit *configv1.NodeResourcesFitArgs
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if a, ok := pc.Args.Object.(*configv1.NodeResourcesFitArgs); ok {
			fit = a
		}
	}
	if fit == nil || fit.ScoringStrategy.Type != configv1.LeastAllocated ||
		!cmp.Equal(fit.ScoringStrategy.Resources, []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}) {
		t.Errorf("NodeResourcesFit args = %+v, want LeastAllocated on cpu and memory with weight 1", fit)
	}
}

func TestMergingKeepsDefaultOrderAndCustomWeights(t *testing.T) {
	cfg := load(t, header+`profiles:
- schedulerName: custom
  plugins:
    multiPoint:
      enabled:
      - name: NodeAffinity
        weight: 7
      disabled:
      - name: ImageLocality
`)
	var names []string
	weights := map[string]int32{}
	for _, p := range cfg.Profiles[0].Plugins.MultiPoint.Enabled {
		names = append(names, p.Name)
		if p.Weight != nil {
			weights[p.Name] = *p.Weight
		}
	}
	if strings.Contains(strings.Join(names, ","), "ImageLocality") {
		t.Errorf("disabled ImageLocality is still enabled: %v", names)
	}
	if weights["NodeAffinity"] != 7 || names[5] != "NodeAffinity" {
		t.Errorf("NodeAffinity at %v with weight %d; want it in its default place with weight 7", names, weights["NodeAffinity"])
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{name: "an unknown field is an error, not ignored", yaml: header + "parallelizm: 4\n", wantErr: `unknown field "parallelizm"`},
		{name: "an unknown field in plugin args is an error", yaml: header + `profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        typo: x
`, wantErr: `unknown field "scoringStrategy.typo"`},
		{name: "another kind is refused", yaml: "apiVersion: v1\nkind: ConfigMap\n", wantErr: "KubeSchedulerConfiguration"},
		{name: "an older version is refused", yaml: "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n", wantErr: "kubescheduler.config.k8s.io/v1"},
		{name: "an empty file is refused", yaml: "", wantErr: "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantErrs []string
	}{
		{name: "the defaults are valid", yaml: header},
		{name: "a negative score weight names its field", yaml: header + `profiles:
- plugins:
    score:
      enabled:
      - name: NodeAffinity
      - name: TaintToleration
        weight: -1
`, wantErrs: []string{"profiles[0].plugins.score.enabled[1].weight: Invalid value: -1: must be in the range [0, 100]"}},
		{name: "a plugin this build does not have is refused with the list of known ones", yaml: header + `profiles:
- plugins:
    filter:
      enabled:
      - name: NoSuchPlugin
`, wantErrs: []string{`profiles[0].plugins.filter.enabled[0].name: Unsupported value: "NoSuchPlugin"`}},
		{name: "every problem is reported at once", yaml: header + `parallelism: 0
percentageOfNodesToScore: 101
podInitialBackoffSeconds: 5
podMaxBackoffSeconds: 2
profiles:
- schedulerName: a
- schedulerName: a
`, wantErrs: []string{
			"parallelism: Invalid value: 0",
			"percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
			"podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds",
			"profiles[1].schedulerName: Duplicate value",
		}},
		{name: "bad plugin args name their field", yaml: header + `profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: Packed
`, wantErrs: []string{`profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Packed"`}},
		{name: "a RequestedToCapacityRatio shape must increase", yaml: header + `profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: RequestedToCapacityRatio
        requestedToCapacityRatio:
          shape:
          - {utilization: 50, score: 5}
          - {utilization: 10, score: 11}
`, wantErrs: []string{
			"shape[1].utilization: Invalid value: 10: utilization values must be sorted in increasing order",
			"shape[1].score: Invalid value: 11: not in valid range [0, 10]",
		}},
		{name: "an extender with every verb loads", yaml: header + `extenders:
- urlPrefix: http://127.0.0.1:8888/sched
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  bindVerb: bind
  preemptVerb: preempt
  nodeCacheCapable: true
  httpTimeout: 2s
  managedResources:
  - name: example.com/gpu
    ignoredByScheduler: true
  ignorable: true
`},
		{name: "bad extenders get kube-scheduler's errors", yaml: header + `extenders:
- urlPrefix: http://a
  prioritizeVerb: prioritize
  bindVerb: bind
  managedResources:
  - name: example.com/gpu
  - name: cpu
- urlPrefix: http://b
  bindVerb: bind
  managedResources:
  - name: example.com/gpu
  - name: bad_name/x
`, wantErrs: []string{
			"extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
			`extenders[0].managedResources[1].name: Invalid value: "cpu": is an invalid extended resource name`,
			`extenders[1].managedResources[0].name: Invalid value: "example.com/gpu": duplicate extender managed resource name`,
			`extenders[1].managedResources[1].name: Invalid value: "bad_name/x"`,
			`extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(load(t, tt.yaml), known)
			got := errs.ToAggregate()
			if len(tt.wantErrs) == 0 {
				if got != nil {
					t.Fatalf("errors = %v, want none", got)
				}
				return
			}
			if got == nil {
				t.Fatalf("no errors, want %v", tt.wantErrs)
			}
			for _, w := range tt.wantErrs {
				if !strings.Contains(got.Error(), w) {
					t.Errorf("errors = %v\nwant one containing %q", got, w)
				}
			}
		})
	}
}

// TestTheExampleConfigurationLoads: the README's simulate --config example
// is a valid configuration that sets MostAllocated.
func TestTheExampleConfigurationLoads(t *testing.T) {
	cfg, err := LoadFile("../../examples/scheduler-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	SetDefaults(cfg, known)
	if errs := Validate(cfg, known); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	if len(cfg.Profiles) != 1 || len(cfg.Profiles[0].PluginConfig) == 0 {
		t.Fatalf("profiles = %+v, want one with plugin args", cfg.Profiles)
	}
}
