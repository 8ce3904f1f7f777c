package interpodaffinity

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/pkg/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// keyScores is one topology key's score per domain.
type keyScores struct {
	key    string
	values map[string]int64
}

type preScoreState struct {
	scores []keyScores
}

func (s *preScoreState) Clone() framework.StateData { return s }

func (s *preScoreState) add(node *v1.Node, key string, delta int64) {
	v, ok := node.Labels[key]
	if !ok {
		return
	}
	for i := range s.scores {
		if s.scores[i].key == key {
			s.scores[i].values[v] += delta
			return
		}
	}
	s.scores = append(s.scores, keyScores{key: key, values: map[string]int64{v: delta}})
}

// PreScore sums, per topology domain, the weights of the terms that match:
// the pod's preferred (anti-)affinity against existing pods, existing
// pods' required affinity (hardPodAffinityWeight) and preferred
// (anti-)affinity against the pod. Skip when no term matched anything.
func (pl *InterPodAffinity) PreScore(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) *framework.Status {
	a := pod.Spec.Affinity
	hasPreferred := a != nil && ((a.PodAffinity != nil && len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) ||
		(a.PodAntiAffinity != nil && len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0))
	if pl.args.IgnorePreferredTermsOfExistingPods && !hasPreferred {
		return framework.NewStatus(framework.Skip)
	}
	// Every node, in the snapshot's order: the memo keys its entries by
	// position (a node without pods with affinity contributes nothing
	// unless the pod has preferred terms of its own: without any such
	// node, nothing can match).
	lister := pl.handle.SnapshotSharedLister().NodeInfos()
	if !hasPreferred {
		withAffinity, err := lister.HavePodsWithAffinityList()
		if err != nil {
			return framework.AsStatus(err)
		}
		if len(withAffinity) == 0 {
			return framework.NewStatus(framework.Skip)
		}
	}
	all, err := lister.List()
	if err != nil {
		return framework.AsStatus(err)
	}
	pi := framework.ParseAffinity(pod)
	if pi.AffinityParseError != nil {
		return framework.AsStatus(pi.AffinityParseError)
	}
	preferred, err := resolveWeighted(pl, pi.PreferredAffinityTerms)
	if err != nil {
		return framework.AsStatus(err)
	}
	preferredAnti, err := resolveWeighted(pl, pi.PreferredAntiAffinityTerms)
	if err != nil {
		return framework.AsStatus(err)
	}
	nsLabels := labels.Set(pl.handle.Listers().NamespaceLabels(pod.Namespace))
	hard := int64(0)
	if pl.args.HardPodAffinityWeight != nil {
		hard = int64(*pl.args.HardPodAffinityWeight)
	}
	// One node's contributions: the terms that match, in domains the node has.
	compute := func(ni *framework.NodeInfo, e *scoreEntry) {
		node := ni.Node()
		if node == nil || len(node.Labels) == 0 {
			return
		}
		term := func(t *framework.AffinityTerm, weight int64, target *v1.Pod, ns labels.Set) {
			if t.Matches(target, ns) {
				if v, ok := node.Labels[t.TopologyKey]; ok {
					e.matches++
					e.contrib = append(e.contrib, scoreContrib{topologyPair{t.TopologyKey, v}, weight})
				}
			}
		}
		pods := ni.PodsWithAffinity()
		if hasPreferred {
			pods = ni.Pods()
		}
		for _, existing := range pods {
			for i := range preferred {
				term(&preferred[i].AffinityTerm, int64(preferred[i].Weight), existing.Pod, nil)
			}
			for i := range preferredAnti {
				term(&preferredAnti[i].AffinityTerm, -int64(preferredAnti[i].Weight), existing.Pod, nil)
			}
			if hard > 0 {
				for i := range existing.RequiredAffinityTerms {
					term(&existing.RequiredAffinityTerms[i], hard, pod, nsLabels)
				}
			}
			if !pl.args.IgnorePreferredTermsOfExistingPods {
				for i := range existing.PreferredAffinityTerms {
					t := &existing.PreferredAffinityTerms[i]
					term(&t.AffinityTerm, int64(t.Weight), pod, nsLabels)
				}
				for i := range existing.PreferredAntiAffinityTerms {
					t := &existing.PreferredAntiAffinityTerms[i]
					term(&t.AffinityTerm, -int64(t.Weight), pod, nsLabels)
				}
			}
		}
	}
	var key [256]byte
	m := pl.scoreMemos.Lock(scoreKey(key[:0], pod, nsLabels, hasPreferred, preferred, preferredAnti), newScoreMemo)
	m.refresh(pl.handle.SnapshotSharedLister(), all, compute)
	matched := m.matches > 0
	s := &preScoreState{scores: m.scores}
	pl.scoreMemos.Unlock()
	if !matched {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreStateKey, s)
	return nil
}

// Score sums the node's domains' scores.
func (pl *InterPodAffinity) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	d, err := state.Read(preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	s := d.(*preScoreState)
	node := ni.Node()
	var score int64
	for i := range s.scores {
		if v, ok := node.Labels[s.scores[i].key]; ok {
			score += s.scores[i].values[v]
		}
	}
	return score, nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *InterPodAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales min..max to 0..100 (all 0 when equal).
func (pl *InterPodAffinity) NormalizeScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	d, err := state.Read(preScoreStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(d.(*preScoreState).scores) == 0 {
		return nil
	}
	var lo, hi int64 = math.MaxInt64, math.MinInt64
	for _, s := range scores {
		lo, hi = min(lo, s.Score), max(hi, s.Score)
	}
	diff := hi - lo
	for i := range scores {
		f := float64(0)
		if diff > 0 {
			f = float64(framework.MaxNodeScore) * (float64(scores[i].Score-lo) / float64(diff))
		}
		scores[i].Score = int64(f)
	}
	return nil
}
