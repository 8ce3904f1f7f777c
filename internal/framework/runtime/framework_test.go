package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/cache"
	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/pkg/plugins"
)

func build(t *testing.T, p *configv1.Plugins) (*runtime.Framework, error) {
	t.Helper()
	registry := plugins.NewInTreeRegistry()
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: p}}}
	config.SetDefaults(cfg, scheduler.Known(registry))
	prof := cfg.Profiles[0]
	return runtime.New(context.Background(), registry, &runtime.Profile{SchedulerName: *prof.SchedulerName, Plugins: prof.Plugins}, runtime.Options{Snapshot: cache.NewEmptySnapshot()})
}

func TestExtensionPointsFromMultiPoint(t *testing.T) {
	tests := []struct {
		name    string
		plugins *configv1.Plugins
		point   string
		want    []string
		wantErr bool
	}{
		{name: "the default profile filters with upstream's plugins in upstream's order", point: "Filter",
			want: []string{"NodeName", "NodeUnschedulable", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
				"VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"}},
		{name: "the default profile scores with upstream's weights", point: "Score",
			want: []string{"TaintToleration(3)", "NodeAffinity(2)", "NodeResourcesFit(1)", "VolumeBinding(1)", "PodTopologySpread(2)", "InterPodAffinity(2)",
				"DynamicResources(2)", "NodeResourcesBalancedAllocation(1)", "ImageLocality(1)"}},
		{name: "a plugin disabled at one point stays at the others", point: "Score",
			plugins: &configv1.Plugins{Score: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "NodeAffinity"}}}},
			want: []string{"TaintToleration(3)", "NodeResourcesFit(1)", "VolumeBinding(1)", "PodTopologySpread(2)", "InterPodAffinity(2)",
				"DynamicResources(2)", "NodeResourcesBalancedAllocation(1)", "ImageLocality(1)"}},
		{name: "a score weight set at the score point overrides multiPoint's", point: "Score",
			plugins: &configv1.Plugins{Score: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "ImageLocality", Weight: ptr.To[int32](5)}}}},
			want: []string{"ImageLocality(5)", "TaintToleration(3)", "NodeAffinity(2)", "NodeResourcesFit(1)", "VolumeBinding(1)", "PodTopologySpread(2)",
				"InterPodAffinity(2)", "DynamicResources(2)", "NodeResourcesBalancedAllocation(1)"}},
		{name: "disabling everything at a point with * leaves only what is listed there", point: "Filter",
			plugins: &configv1.Plugins{Filter: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "*"}}, Enabled: []configv1.Plugin{{Name: "NodePorts"}}}},
			want:    []string{"NodePorts"}},
		{name: "group preemption comes from multiPoint, DynamicResources first, even with DefaultPreemption disabled at PostFilter", point: "PodGroupPostFilter",
			plugins: &configv1.Plugins{PostFilter: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "DefaultPreemption"}}}},
			want:    []string{"DynamicResources", "DefaultPreemption"}},
		{name: "group preemption disabled at its own point is gone there only", point: "PodGroupPostFilter",
			plugins: &configv1.Plugins{PodGroupPostFilter: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "DefaultPreemption"}}}},
			want:    []string{"DynamicResources"}},
		{name: "a plugin enabled at a point it does not implement is an error", wantErr: true,
			plugins: &configv1.Plugins{Bind: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "NodePorts"}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := build(t, tt.plugins)
			if tt.wantErr {
				if err == nil {
					t.Fatal("no error, want one")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, f.ListPlugins()[tt.point]); diff != "" {
				t.Errorf("%s plugins (-want,+got):\n%s", tt.point, diff)
			}
		})
	}
}

func TestPlacementExtensionPoints(t *testing.T) {
	registry := simtest.PlacementRegistry()
	tests := []struct {
		name    string
		plugins *configv1.Plugins
		want    map[string][]string
		wantErr string
	}{
		{name: "with the gate's plugins the default profile generates placements by topology and scores them by pod count",
			want: map[string][]string{"PlacementGenerate": {"TopologyPlacementGenerator"}, "PlacementScore": {"PodGroupPodsCount(1)"}}},
		{name: "a placement score weight set at its point overrides multiPoint's",
			plugins: &configv1.Plugins{PlacementScore: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "PodGroupPodsCount", Weight: ptr.To[int32](4)}}}},
			want:    map[string][]string{"PlacementGenerate": {"TopologyPlacementGenerator"}, "PlacementScore": {"PodGroupPodsCount(4)"}}},
		{name: "a score plugin is no placement score plugin",
			plugins: &configv1.Plugins{PlacementScore: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "ImageLocality"}}}},
			wantErr: `plugin "ImageLocality" does not extend PlacementScore plugin`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{Plugins: tt.plugins}}}
			config.SetDefaults(cfg, scheduler.Known(registry))
			prof := cfg.Profiles[0]
			f, err := runtime.New(context.Background(), registry, &runtime.Profile{SchedulerName: *prof.SchedulerName, Plugins: prof.Plugins}, runtime.Options{Snapshot: cache.NewEmptySnapshot()})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := f.ListPlugins()
			for point, want := range tt.want {
				if diff := cmp.Diff(want, got[point]); diff != "" {
					t.Errorf("%s plugins (-want,+got):\n%s", point, diff)
				}
			}
		})
	}
}
