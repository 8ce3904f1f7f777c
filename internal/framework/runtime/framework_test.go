package runtime_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/cache"
	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
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
