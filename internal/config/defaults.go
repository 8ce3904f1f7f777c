package config

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Upstream defaults (kube-scheduler v1.37).
const (
	DefaultSchedulerName            = v1.DefaultSchedulerName
	DefaultParallelism        int32 = 16
	DefaultPodInitialBackoff  int64 = 1
	DefaultPodMaxBackoff      int64 = 10
	DefaultHardPodAffinityWgt int32 = helper.DefaultHardPodAffinityWeight
)

// DefaultMultiPoint is upstream v1.37's default profile, in its order,
// with the score weights. Defaulting keeps the ones this build knows.
var DefaultMultiPoint = []configv1.Plugin{
	{Name: "SchedulingGates"},
	{Name: "PrioritySort"},
	{Name: "NodeName"},
	{Name: "NodeUnschedulable"},
	{Name: "TaintToleration", Weight: ptr.To[int32](3)},
	{Name: "NodeAffinity", Weight: ptr.To[int32](2)},
	{Name: "NodePorts"},
	{Name: "NodeResourcesFit", Weight: ptr.To[int32](1)},
	{Name: "VolumeRestrictions"},
	{Name: "NodeVolumeLimits"},
	{Name: "VolumeBinding", Weight: ptr.To[int32](1)},
	{Name: "VolumeZone"},
	{Name: "PodTopologySpread", Weight: ptr.To[int32](2)},
	{Name: "InterPodAffinity", Weight: ptr.To[int32](2)},
	{Name: "DynamicResources", Weight: ptr.To[int32](2)},
	{Name: "NodeDeclaredFeatures"},
	{Name: "DefaultPreemption"},
	{Name: "NodeResourcesBalancedAllocation", Weight: ptr.To[int32](1)},
	{Name: "ImageLocality", Weight: ptr.To[int32](1)},
	{Name: "DefaultBinder"},
	// Appended with the GenericWorkload gate on (upstream's
	// applyGangScheduling); the registry has it only then.
	{Name: "GangScheduling"},
	// Appended with the TopologyAwareWorkloadScheduling gate on (upstream's
	// applyTopologyAwareWorkloadScheduling); the registry has them only then.
	{Name: "TopologyPlacementGenerator"},
	{Name: "PodGroupPodsCount", Weight: ptr.To[int32](1)},
}

// SetDefaults fills every unset field with upstream's default. known is
// the set of plugins this build has; the default profile holds those of
// upstream's that are known.
func SetDefaults(cfg *configv1.KubeSchedulerConfiguration, known sets.Set[string]) {
	if cfg.Parallelism == nil {
		cfg.Parallelism = ptr.To(DefaultParallelism)
	}
	if cfg.PodInitialBackoffSeconds == nil {
		cfg.PodInitialBackoffSeconds = ptr.To(DefaultPodInitialBackoff)
	}
	if cfg.PodMaxBackoffSeconds == nil {
		cfg.PodMaxBackoffSeconds = ptr.To(DefaultPodMaxBackoff)
	}
	setDefaultsLeaderElection(&cfg.LeaderElection)
	setDefaultsClientConnection(&cfg.ClientConnection)
	if cfg.EnableProfiling == nil {
		cfg.EnableProfiling = ptr.To(true)
	}
	if cfg.EnableContentionProfiling == nil {
		cfg.EnableContentionProfiling = ptr.To(true)
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = []configv1.KubeSchedulerProfile{{}}
	}
	var defaults configv1.PluginSet
	for _, p := range DefaultMultiPoint {
		if known.Has(p.Name) {
			defaults.Enabled = append(defaults.Enabled, p)
		}
	}
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		if prof.SchedulerName == nil {
			prof.SchedulerName = ptr.To(DefaultSchedulerName)
		}
		prof.Plugins = mergePlugins(&configv1.Plugins{MultiPoint: defaults}, prof.Plugins)
		setDefaultsPluginConfig(prof)
	}
}

func setDefaultsLeaderElection(le *componentbaseconfigv1alpha1.LeaderElectionConfiguration) {
	if le.LeaderElect == nil {
		le.LeaderElect = ptr.To(true)
	}
	zero := metav1.Duration{}
	if le.LeaseDuration == zero {
		le.LeaseDuration = metav1.Duration{Duration: 15 * time.Second}
	}
	if le.RenewDeadline == zero {
		le.RenewDeadline = metav1.Duration{Duration: 10 * time.Second}
	}
	if le.RetryPeriod == zero {
		le.RetryPeriod = metav1.Duration{Duration: 2 * time.Second}
	}
	if le.ResourceLock == "" {
		le.ResourceLock = "leases"
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = configv1.SchedulerDefaultLockObjectNamespace
	}
	if le.ResourceName == "" {
		le.ResourceName = configv1.SchedulerDefaultLockObjectName
	}
}

func setDefaultsClientConnection(cc *componentbaseconfigv1alpha1.ClientConnectionConfiguration) {
	if cc.QPS == 0 {
		cc.QPS = 50
	}
	if cc.Burst == 0 {
		cc.Burst = 100
	}
	if cc.ContentType == "" {
		cc.ContentType = "application/vnd.kubernetes.protobuf"
	}
	if cc.AcceptContentTypes == "" {
		cc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
}

// mergePlugins overlays custom on defaults, point by point, as upstream
// does: a default plugin re-listed in custom keeps its place with the
// custom weight, other custom plugins follow, and "*" in disabled drops
// every default at that point.
func mergePlugins(defaults, custom *configv1.Plugins) *configv1.Plugins {
	if custom == nil {
		return defaults.DeepCopy()
	}
	out := custom.DeepCopy()
	type pair struct{ d, c, o *configv1.PluginSet }
	for _, p := range []pair{
		{&defaults.MultiPoint, &custom.MultiPoint, &out.MultiPoint},
		{&defaults.PreEnqueue, &custom.PreEnqueue, &out.PreEnqueue},
		{&defaults.QueueSort, &custom.QueueSort, &out.QueueSort},
		{&defaults.PreFilter, &custom.PreFilter, &out.PreFilter},
		{&defaults.Filter, &custom.Filter, &out.Filter},
		{&defaults.PostFilter, &custom.PostFilter, &out.PostFilter},
		{&defaults.PreScore, &custom.PreScore, &out.PreScore},
		{&defaults.Score, &custom.Score, &out.Score},
		{&defaults.Reserve, &custom.Reserve, &out.Reserve},
		{&defaults.Permit, &custom.Permit, &out.Permit},
		{&defaults.PreBind, &custom.PreBind, &out.PreBind},
		{&defaults.Bind, &custom.Bind, &out.Bind},
		{&defaults.PostBind, &custom.PostBind, &out.PostBind},
		{&defaults.PlacementGenerate, &custom.PlacementGenerate, &out.PlacementGenerate},
		{&defaults.PlacementScore, &custom.PlacementScore, &out.PlacementScore},
		{&defaults.PodGroupPostFilter, &custom.PodGroupPostFilter, &out.PodGroupPostFilter},
	} {
		*p.o = mergePluginSet(*p.d, *p.c)
	}
	return out
}

func mergePluginSet(def, custom configv1.PluginSet) configv1.PluginSet {
	disabled := sets.New[string]()
	var out configv1.PluginSet
	for _, d := range append(append([]configv1.Plugin(nil), custom.Disabled...), def.Disabled...) {
		out.Disabled = append(out.Disabled, configv1.Plugin{Name: d.Name})
		disabled.Insert(d.Name)
	}
	customIdx := map[string]int{}
	for i, e := range custom.Enabled {
		if _, dup := customIdx[e.Name]; !dup {
			customIdx[e.Name] = i
		}
	}
	replaced := sets.New[int]()
	if !disabled.Has("*") {
		for _, e := range def.Enabled {
			if disabled.Has(e.Name) {
				continue
			}
			if i, ok := customIdx[e.Name]; ok {
				e = custom.Enabled[i]
				replaced.Insert(i)
			}
			out.Enabled = append(out.Enabled, e)
		}
	}
	for i, e := range custom.Enabled {
		if !replaced.Has(i) {
			out.Enabled = append(out.Enabled, e)
		}
	}
	return out
}

// pluginNames lists every plugin a profile enables anywhere.
func pluginNames(p *configv1.Plugins) []string {
	var names []string
	seen := sets.New[string]()
	for _, set := range []configv1.PluginSet{p.MultiPoint, p.PreEnqueue, p.QueueSort, p.PreFilter, p.Filter, p.PostFilter,
		p.PreScore, p.Score, p.Reserve, p.Permit, p.PreBind, p.Bind, p.PostBind, p.PlacementGenerate, p.PlacementScore, p.PodGroupPostFilter} {
		for _, e := range set.Enabled {
			if !seen.Has(e.Name) {
				seen.Insert(e.Name)
				names = append(names, e.Name)
			}
		}
	}
	return names
}

// setDefaultsPluginConfig gives every enabled plugin that has an args type
// a defaulted args object.
func setDefaultsPluginConfig(prof *configv1.KubeSchedulerProfile) {
	have := map[string]int{}
	for i, pc := range prof.PluginConfig {
		have[pc.Name] = i
	}
	for _, name := range pluginNames(prof.Plugins) {
		if _, ok := have[name]; ok {
			continue
		}
		if args := NewArgs(name); args != nil {
			prof.PluginConfig = append(prof.PluginConfig, configv1.PluginConfig{Name: name, Args: runtime.RawExtension{Object: args}})
		}
	}
	for i := range prof.PluginConfig {
		pc := &prof.PluginConfig[i]
		if pc.Args.Object == nil && len(pc.Args.Raw) == 0 {
			pc.Args.Object = NewArgs(pc.Name)
		}
		SetDefaultsArgs(pc.Args.Object)
	}
}

// SetDefaultsArgs applies upstream's defaults to a plugin args object
// (defined beside the plugins, which default their own args too).
func SetDefaultsArgs(obj runtime.Object) { helper.SetDefaultsArgs(obj) }
