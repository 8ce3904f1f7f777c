// Package nodedeclaredfeatures holds NodeDeclaredFeatures: a pod that
// needs node features (inferred from its spec by component-helpers'
// registry, as upstream) only fits nodes that declare them in
// status.declaredFeatures.
package nodedeclaredfeatures

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	versionutil "k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "NodeDeclaredFeatures"

// ErrReasonUnsatisfiedRequirements is upstream's reason.
const ErrReasonUnsatisfiedRequirements = "node(s) didn't match Pod's required features"

// TargetVersion is the Kubernetes version whose features are inferred:
// kubesched schedules as kube-scheduler v1.37 does.
var TargetVersion = versionutil.MustParseGeneric("1.37.2")

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// NodeDeclaredFeatures is a PreFilter and Filter plugin.
type NodeDeclaredFeatures struct{}

var (
	_ framework.PreFilterPlugin   = &NodeDeclaredFeatures{}
	_ framework.FilterPlugin      = &NodeDeclaredFeatures{}
	_ framework.EnqueueExtensions = &NodeDeclaredFeatures{}
)

// New builds the plugin.
func New(context.Context, runtime.Object, framework.Handle) (framework.Plugin, error) {
	return &NodeDeclaredFeatures{}, nil
}

// Name implements framework.Plugin.
func (*NodeDeclaredFeatures) Name() string { return Name }

type preFilterState struct{ reqs ndf.FeatureSet }

func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter infers the features the pod needs; Skip when none.
func (*NodeDeclaredFeatures) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	reqs, err := ndf.DefaultFramework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, TargetVersion)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if reqs.IsEmpty() {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, &preFilterState{reqs: reqs})
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*NodeDeclaredFeatures) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects nodes that do not declare every required feature.
func (*NodeDeclaredFeatures) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	d, err := state.Read(preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	ok, err := d.(*preFilterState).reqs.IsSubset(ni.DeclaredFeatures())
	if err != nil {
		return framework.AsStatus(err)
	}
	if !ok {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnsatisfiedRequirements)
	}
	return nil
}

// EventsToRegister: nodes added or declaring other features.
func (*NodeDeclaredFeatures) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return framework.Events(framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeDeclaredFeature}), nil
}
