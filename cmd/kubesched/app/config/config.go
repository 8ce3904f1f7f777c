// Package config holds the scheduler's run configuration: the defaulted
// and validated KubeSchedulerConfiguration plus the plugin registry. Only
// Complete makes a CompletedConfig, so nothing runs on a half-built one.
package config

import (
	"k8s.io/component-base/featuregate"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/internal/features"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Config is what Options produce.
type Config struct {
	// ComponentConfig is defaulted and validated.
	ComponentConfig *configv1.KubeSchedulerConfiguration
	// Registry has the in-tree plugins and any added with WithPlugin.
	Registry runtime.Registry
	// Seed seeds tie-breaking.
	Seed int64
	// Features are the feature gates.
	Features featuregate.FeatureGate
	// Namespace is the namespace of the manifests' namespaced objects
	// that name none (-n/--namespace; empty: default), as kubectl apply -n.
	Namespace string
	// DefaultStorageClass is the StorageClass given to claims without one
	// when the manifests mark no class the default
	// (--default-storage-class), as the cluster's default class would.
	DefaultStorageClass string
	// HPAMax scales every HorizontalPodAutoscaler's target to its
	// maxReplicas (--hpa-max), the what-if of every HPA scaled out.
	HPAMax bool
}

// SchedulerOptions are the scheduler options the feature gates imply.
func (c *Config) SchedulerOptions() []scheduler.Option {
	enabled := func(f featuregate.Feature) bool { return c.Features == nil || c.Features.Enabled(f) }
	opts := []scheduler.Option{
		scheduler.WithEquivalenceCache(enabled(features.EquivalenceCache)),
		scheduler.WithAsyncPreemption(enabled(features.SchedulerAsyncPreemption)),
	}
	if c.Features != nil {
		opts = append(opts, scheduler.WithDRAFeatures(features.DRAFeatures(c.Features)),
			scheduler.WithPluginFeatures(framework.Features{
				TaintTolerationComparisonOperators: c.Features.Enabled(features.TaintTolerationComparisonOperators),
				GenericWorkload:                    c.Features.Enabled(features.GenericWorkload),
				TopologyAwareWorkloadScheduling:    c.Features.Enabled(features.TopologyAwareWorkloadScheduling),
			}))
	}
	return opts
}

type completedConfig struct {
	*Config
}

// CompletedConfig is a Config ready to build a scheduler from.
type CompletedConfig struct {
	*completedConfig
}

// Complete fills in what Options left empty.
func (c *Config) Complete() CompletedConfig {
	if c.Registry == nil {
		c.Registry = runtime.Registry{}
	}
	return CompletedConfig{&completedConfig{c}}
}
