package config

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Validate checks a defaulted configuration and returns every problem at
// once, each with its field path. known is the set of plugins of this build.
func Validate(cfg *configv1.KubeSchedulerConfiguration, known sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	if p := cfg.Parallelism; p != nil && *p <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("parallelism"), *p, "should be an integer value greater than zero"))
	}
	errs = append(errs, validatePercentage(field.NewPath("percentageOfNodesToScore"), cfg.PercentageOfNodesToScore)...)
	if b := cfg.PodInitialBackoffSeconds; b != nil && *b <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("podInitialBackoffSeconds"), *b, "must be greater than 0"))
	}
	if b, i := cfg.PodMaxBackoffSeconds, cfg.PodInitialBackoffSeconds; b != nil && i != nil && *b < *i {
		errs = append(errs, field.Invalid(field.NewPath("podMaxBackoffSeconds"), *b, "must be greater than or equal to PodInitialBackoffSeconds"))
	}
	le := cfg.LeaderElection
	if le.LeaderElect != nil && *le.LeaderElect {
		lp := field.NewPath("leaderElection")
		if le.LeaseDuration.Duration <= 0 {
			errs = append(errs, field.Invalid(lp.Child("leaseDuration"), le.LeaseDuration, "must be greater than zero"))
		}
		if le.RenewDeadline.Duration <= 0 {
			errs = append(errs, field.Invalid(lp.Child("renewDeadline"), le.RenewDeadline, "must be greater than zero"))
		}
		if le.RetryPeriod.Duration <= 0 {
			errs = append(errs, field.Invalid(lp.Child("retryPeriod"), le.RetryPeriod, "must be greater than zero"))
		}
		if le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
			errs = append(errs, field.Invalid(lp.Child("leaseDuration"), le.LeaseDuration, "LeaseDuration must be greater than RenewDeadline"))
		}
	}
	if cfg.ClientConnection.QPS < 0 {
		errs = append(errs, field.Invalid(field.NewPath("clientConnection", "qps"), cfg.ClientConnection.QPS, "must be greater than or equal to 0"))
	}
	if cfg.ClientConnection.Burst < 0 {
		errs = append(errs, field.Invalid(field.NewPath("clientConnection", "burst"), cfg.ClientConnection.Burst, "must be greater than or equal to 0"))
	}
	errs = append(errs, validateExtenders(field.NewPath("extenders"), cfg.Extenders)...)
	names := map[string]int{}
	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		pp := field.NewPath("profiles").Index(i)
		name := ""
		if prof.SchedulerName != nil {
			name = *prof.SchedulerName
		}
		if name == "" {
			errs = append(errs, field.Required(pp.Child("schedulerName"), ""))
		} else if j, dup := names[name]; dup {
			errs = append(errs, field.Duplicate(pp.Child("schedulerName"), fmt.Sprintf("%s (also profiles[%d])", name, j)))
		} else {
			names[name] = i
		}
		errs = append(errs, validatePercentage(pp.Child("percentageOfNodesToScore"), prof.PercentageOfNodesToScore)...)
		errs = append(errs, validatePlugins(pp.Child("plugins"), prof.Plugins, known)...)
		errs = append(errs, validatePluginConfig(pp.Child("pluginConfig"), prof.PluginConfig)...)
	}
	return errs
}

func validatePercentage(p *field.Path, v *int32) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(p, *v, "not in valid range [0-100]")}
	}
	return nil
}

func validatePlugins(p *field.Path, plugins *configv1.Plugins, known sets.Set[string]) field.ErrorList {
	if plugins == nil {
		return nil
	}
	var errs field.ErrorList
	sets := []struct {
		name string
		set  configv1.PluginSet
	}{
		{"multiPoint", plugins.MultiPoint}, {"preEnqueue", plugins.PreEnqueue}, {"queueSort", plugins.QueueSort},
		{"preFilter", plugins.PreFilter}, {"filter", plugins.Filter}, {"postFilter", plugins.PostFilter},
		{"preScore", plugins.PreScore}, {"score", plugins.Score}, {"reserve", plugins.Reserve},
		{"permit", plugins.Permit}, {"preBind", plugins.PreBind}, {"bind", plugins.Bind}, {"postBind", plugins.PostBind},
		{"placementGenerate", plugins.PlacementGenerate}, {"placementScore", plugins.PlacementScore}, {"podGroupPostFilter", plugins.PodGroupPostFilter},
	}
	for _, s := range sets {
		sp := p.Child(s.name)
		seen := map[string]bool{}
		for i, e := range s.set.Enabled {
			ep := sp.Child("enabled").Index(i)
			if !known.Has(e.Name) {
				errs = append(errs, field.NotSupported(ep.Child("name"), e.Name, sortedList(known)))
			}
			if seen[e.Name] && s.name != "multiPoint" {
				errs = append(errs, field.Duplicate(ep.Child("name"), e.Name))
			}
			seen[e.Name] = true
			if e.Weight != nil && (*e.Weight < 0 || *e.Weight > 100) {
				errs = append(errs, field.Invalid(ep.Child("weight"), *e.Weight, "must be in the range [0, 100]"))
			}
			if e.Weight != nil && s.name != "score" && s.name != "placementScore" && s.name != "multiPoint" {
				errs = append(errs, field.Invalid(ep.Child("weight"), *e.Weight, "weight is only meaningful for score plugins"))
			}
		}
		for i, d := range s.set.Disabled {
			if d.Name != "*" && !known.Has(d.Name) {
				errs = append(errs, field.NotSupported(sp.Child("disabled").Index(i).Child("name"), d.Name, sortedList(known)))
			}
		}
	}
	return errs
}

func sortedList(s sets.Set[string]) []string { return sets.List(s) }

func validatePluginConfig(p *field.Path, pcs []configv1.PluginConfig) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, pc := range pcs {
		ip := p.Index(i)
		if seen[pc.Name] {
			errs = append(errs, field.Duplicate(ip.Child("name"), pc.Name))
		}
		seen[pc.Name] = true
		ap := ip.Child("args")
		switch a := pc.Args.Object.(type) {
		case *configv1.NodeResourcesFitArgs:
			errs = append(errs, validateFitArgs(ap, a)...)
		case *configv1.NodeResourcesBalancedAllocationArgs:
			errs = append(errs, validateResources(ap.Child("resources"), a.Resources, 1, 1)...)
		case *configv1.InterPodAffinityArgs:
			if w := a.HardPodAffinityWeight; w != nil && (*w < 0 || *w > 100) {
				errs = append(errs, field.Invalid(ap.Child("hardPodAffinityWeight"), *w, "not in valid range [0, 100]"))
			}
		case *configv1.NodeAffinityArgs:
			if a.AddedAffinity != nil {
				if r := a.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
					if _, err := nodeaffinity.NewNodeSelector(r, field.WithPath(ap.Child("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))); err != nil {
						errs = append(errs, field.Invalid(ap.Child("addedAffinity"), "", err.Error()))
					}
				}
				if _, err := nodeaffinity.NewPreferredSchedulingTerms(a.AddedAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
					field.WithPath(ap.Child("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution"))); err != nil {
					errs = append(errs, field.Invalid(ap.Child("addedAffinity"), "", err.Error()))
				}
			}
		case *configv1.PodTopologySpreadArgs:
			switch a.DefaultingType {
			case configv1.SystemDefaulting:
				if len(a.DefaultConstraints) > 0 {
					errs = append(errs, field.Invalid(ap.Child("defaultConstraints"), len(a.DefaultConstraints), "when .defaultingType is \"System\", .defaultConstraints must be empty"))
				}
			case configv1.ListDefaulting:
			default:
				errs = append(errs, field.NotSupported(ap.Child("defaultingType"), a.DefaultingType, []string{string(configv1.SystemDefaulting), string(configv1.ListDefaulting)}))
			}
		}
	}
	return errs
}

func validateFitArgs(p *field.Path, a *configv1.NodeResourcesFitArgs) field.ErrorList {
	var errs field.ErrorList
	s := a.ScoringStrategy
	if s == nil {
		return nil
	}
	sp := p.Child("scoringStrategy")
	switch s.Type {
	case configv1.LeastAllocated, configv1.MostAllocated:
		errs = append(errs, validateResources(sp.Child("resources"), s.Resources, 1, 100)...)
	case configv1.RequestedToCapacityRatio:
		errs = append(errs, validateResources(sp.Child("resources"), s.Resources, 1, 100)...)
		if s.RequestedToCapacityRatio == nil || len(s.RequestedToCapacityRatio.Shape) == 0 {
			errs = append(errs, field.Required(sp.Child("requestedToCapacityRatio", "shape"), "at least one point must be specified"))
			break
		}
		shp := sp.Child("requestedToCapacityRatio", "shape")
		for i, pt := range s.RequestedToCapacityRatio.Shape {
			if pt.Utilization < 0 || pt.Utilization > 100 {
				errs = append(errs, field.Invalid(shp.Index(i).Child("utilization"), pt.Utilization, "not in valid range [0, 100]"))
			} else if i > 0 && pt.Utilization <= s.RequestedToCapacityRatio.Shape[i-1].Utilization {
				errs = append(errs, field.Invalid(shp.Index(i).Child("utilization"), pt.Utilization, "utilization values must be sorted in increasing order"))
			}
			if pt.Score < 0 || pt.Score > 10 {
				errs = append(errs, field.Invalid(shp.Index(i).Child("score"), pt.Score, "not in valid range [0, 10]"))
			}
		}
	default:
		errs = append(errs, field.NotSupported(sp.Child("type"), s.Type, []string{string(configv1.LeastAllocated), string(configv1.MostAllocated), string(configv1.RequestedToCapacityRatio)}))
	}
	for i, r := range a.IgnoredResources {
		if r == "" {
			errs = append(errs, field.Required(p.Child("ignoredResources").Index(i), ""))
		}
	}
	return errs
}

func validateResources(p *field.Path, rs []configv1.ResourceSpec, minW, maxW int64) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, r := range rs {
		if r.Name == "" {
			errs = append(errs, field.Required(p.Index(i).Child("name"), ""))
		}
		if seen[r.Name] {
			errs = append(errs, field.Duplicate(p.Index(i).Child("name"), r.Name))
		}
		seen[r.Name] = true
		if r.Weight < minW || r.Weight > maxW {
			msg := fmt.Sprintf("resource weight of %s not in valid range [%d, %d]", r.Name, minW, maxW)
			if minW == maxW {
				msg = fmt.Sprintf("resource weight of %s should be %d", r.Name, minW)
			}
			errs = append(errs, field.Invalid(p.Index(i).Child("weight"), r.Weight, msg))
		}
	}
	return errs
}

// validateExtenders is kube-scheduler v1.37.2's validation of extenders: a
// prioritizer needs a positive weight, at most one extender binds, and the
// managed resources are extended resource names, each managed once.
func validateExtenders(p *field.Path, extenders []configv1.Extender) field.ErrorList {
	var errs field.ErrorList
	binders := 0
	managed := sets.New[string]()
	for i, e := range extenders {
		ep := p.Index(i)
		if e.PrioritizeVerb != "" && e.Weight <= 0 {
			errs = append(errs, field.Invalid(ep.Child("weight"), e.Weight, "must have a positive weight applied to it"))
		}
		if e.BindVerb != "" {
			binders++
		}
		for j, r := range e.ManagedResources {
			np := ep.Child("managedResources").Index(j).Child("name")
			if msgs := validation.IsQualifiedName(r.Name); len(msgs) > 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(np, r.Name, msg))
				}
			} else if !framework.IsExtendedResourceName(v1.ResourceName(r.Name)) {
				errs = append(errs, field.Invalid(np, r.Name, "is an invalid extended resource name"))
			}
			if managed.Has(r.Name) {
				errs = append(errs, field.Invalid(np, r.Name, "duplicate extender managed resource name"))
			}
			managed.Insert(r.Name)
		}
	}
	if binders > 1 {
		errs = append(errs, field.Invalid(p, fmt.Sprintf("found %d extenders implementing bind", binders), "only one extender can implement bind"))
	}
	return errs
}
