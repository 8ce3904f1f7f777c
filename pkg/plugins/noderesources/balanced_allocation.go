package noderesources

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// BalancedAllocationName is the name of the plugin.
const BalancedAllocationName = "NodeResourcesBalancedAllocation"

const balancedPreScoreStateKey framework.StateKey = "PreScore" + BalancedAllocationName

// BalancedAllocation favors nodes whose resource utilizations stay even.
type BalancedAllocation struct {
	scorer resourceAllocationScorer
}

var (
	_ framework.PreScorePlugin = &BalancedAllocation{}
	_ framework.ScorePlugin    = &BalancedAllocation{}
)

// NewBalancedAllocation builds the plugin from
// *configv1.NodeResourcesBalancedAllocationArgs (nil: cpu and memory).
func NewBalancedAllocation(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	args, err := helper.Args[configv1.NodeResourcesBalancedAllocationArgs](obj)
	if err != nil {
		return nil, err
	}
	s := resourceAllocationScorer{strategy: balanced, resources: args.Resources, useRequested: true, memo: &podMemo[[]int64]{}}
	s.initNames()
	s.setDRA(draResolver(h))
	return &BalancedAllocation{scorer: s}, nil
}

// Name implements framework.Plugin.
func (*BalancedAllocation) Name() string { return BalancedAllocationName }

// PreScore computes the pod's requests; a best-effort pod skips scoring,
// so such pods do not all pile onto one node.
func (b *BalancedAllocation) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	reqs := b.scorer.podRequestsOf(state.PodInfoOf(pod))
	bestEffort := true
	for _, r := range reqs {
		if r != 0 {
			bestEffort = false
			break
		}
	}
	if bestEffort {
		return framework.NewStatus(framework.Skip)
	}
	dra, st := b.scorer.draScoreStateOf(reqs)
	if st != nil {
		return st
	}
	state.Write(balancedPreScoreStateKey, &preScoreState{podRequests: reqs, dra: dra})
	return nil
}

// Score implements framework.ScorePlugin.
func (b *BalancedAllocation) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	var reqs []int64
	var dra *draScoreState
	if s, err := state.Read(balancedPreScoreStateKey); err == nil {
		reqs, dra = s.(*preScoreState).podRequests, s.(*preScoreState).dra
	} else {
		reqs = b.scorer.podRequests(pod)
	}
	return b.scorer.score(ni, reqs, dra), nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (*BalancedAllocation) ScoreExtensions() framework.ScoreExtensions { return nil }

// AppendPodSignature implements framework.EquivalencePlugin: Score (and
// PreScore's Skip) read the requests of the balanced resources. A pod
// asking for a resource a DeviceClass provides is not cached (its score
// counts devices), as upstream's signature.
func (b *BalancedAllocation) AppendPodSignature(sig []byte, pi *framework.PodInfo) ([]byte, bool) {
	if requestsDRABacked(b.scorer.dra, &pi.Requests) {
		return sig, false
	}
	for _, r := range b.scorer.podRequestsOf(pi) {
		sig = framework.AppendSigInt(sig, r)
	}
	return sig, true
}
