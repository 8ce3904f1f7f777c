package helper

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"
)

// DefaultHardPodAffinityWeight is InterPodAffinityArgs' default.
const DefaultHardPodAffinityWeight int32 = 1

// SetDefaultsArgs applies upstream's defaults to a plugin args object.
func SetDefaultsArgs(obj runtime.Object) {
	switch a := obj.(type) {
	case *configv1.NodeResourcesFitArgs:
		SetDefaultsNodeResourcesFitArgs(a)
	case *configv1.NodeResourcesBalancedAllocationArgs:
		if len(a.Resources) == 0 {
			a.Resources = defaultResources()
		}
		for i := range a.Resources {
			if a.Resources[i].Weight == 0 {
				a.Resources[i].Weight = 1
			}
		}
	case *configv1.InterPodAffinityArgs:
		if a.HardPodAffinityWeight == nil {
			a.HardPodAffinityWeight = ptr.To(DefaultHardPodAffinityWeight)
		}
	case *configv1.PodTopologySpreadArgs:
		if a.DefaultingType == "" {
			a.DefaultingType = configv1.SystemDefaulting
		}
	case *configv1.DefaultPreemptionArgs:
		if a.MinCandidateNodesPercentage == nil {
			a.MinCandidateNodesPercentage = ptr.To[int32](10)
		}
		if a.MinCandidateNodesAbsolute == nil {
			a.MinCandidateNodesAbsolute = ptr.To[int32](100)
		}
	case *configv1.VolumeBindingArgs:
		if a.BindTimeoutSeconds == nil {
			a.BindTimeoutSeconds = ptr.To[int64](600)
		}
		// StorageCapacityScoring is beta and on in v1.37: an empty class
		// scores 10, a full one 0.
		if len(a.Shape) == 0 {
			a.Shape = []configv1.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
		}
	case *configv1.DynamicResourcesArgs:
		if a.FilterTimeout == nil {
			a.FilterTimeout = &metav1.Duration{Duration: configv1.DynamicResourcesFilterTimeoutDefault}
		}
	}
}

func defaultResources() []configv1.ResourceSpec {
	return []configv1.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}}
}

// SetDefaultsNodeResourcesFitArgs: LeastAllocated on cpu and memory,
// weight 1 each; a RequestedToCapacityRatio without resources gets them too.
func SetDefaultsNodeResourcesFitArgs(a *configv1.NodeResourcesFitArgs) {
	if a.ScoringStrategy == nil {
		a.ScoringStrategy = &configv1.ScoringStrategy{Type: configv1.LeastAllocated}
	}
	if a.ScoringStrategy.Type == "" {
		a.ScoringStrategy.Type = configv1.LeastAllocated
	}
	if len(a.ScoringStrategy.Resources) == 0 {
		a.ScoringStrategy.Resources = defaultResources()
	}
	for i := range a.ScoringStrategy.Resources {
		if a.ScoringStrategy.Resources[i].Weight == 0 {
			a.ScoringStrategy.Resources[i].Weight = 1
		}
	}
}
