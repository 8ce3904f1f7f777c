package interpodaffinity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/pkg/framework"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

type topologyPair struct{ key, value string }

// pairCounts counts matched terms per topology domain.
type pairCounts map[topologyPair]int64

func (m pairCounts) add(node *v1.Node, key string, delta int64) {
	if v, ok := node.Labels[key]; ok {
		p := topologyPair{key, v}
		m[p] += delta
		if m[p] == 0 {
			delete(m, p)
		}
	}
}

type preFilterState struct {
	// existingAnti: domains where an existing pod's required anti-affinity
	// term selects the incoming pod.
	existingAnti pairCounts
	// existingKeys are the topology keys of existingAnti's domains, so that
	// Filter looks up those keys of a node instead of all its labels.
	existingKeys []string
	// affinity: domains with pods matching all the incoming pod's required
	// affinity terms; anti: domains with pods matching one of its required
	// anti-affinity terms.
	affinity, anti pairCounts
	// The incoming pod's required terms, namespaceSelector resolved.
	affinityTerms, antiTerms []framework.AffinityTerm
	// selfMatch: the pod matches all its own affinity terms (the first pod
	// of a group with affinity to itself may go anywhere the keys exist).
	selfMatch bool
	nsLabels  labels.Set
}

func (s *preFilterState) Clone() framework.StateData {
	c := *s
	c.existingAnti, c.affinity, c.anti = maps.Clone(s.existingAnti), maps.Clone(s.affinity), maps.Clone(s.anti)
	c.existingKeys = slices.Clone(s.existingKeys)
	return &c
}

// PreFilter counts, once per cycle, the topology domains each rule
// concerns; Skip when neither the pod nor any existing pod has a required
// term.
func (pl *InterPodAffinity) PreFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	pi := state.PodInfoOf(pod).AffinityTerms
	if pi.AffinityParseError != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %v", pi.AffinityParseError))
	}
	withAnti, err := pl.handle.SnapshotSharedLister().NodeInfos().HavePodsWithRequiredAntiAffinityList()
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	if len(pi.RequiredAffinityTerms) == 0 && len(pi.RequiredAntiAffinityTerms) == 0 && len(withAnti) == 0 {
		// Nothing to check, for this pod or against it (the state below
		// would be empty and Skip returned).
		return nil, framework.NewStatus(framework.Skip)
	}
	s := &preFilterState{existingAnti: pairCounts{}, affinity: pairCounts{}, anti: pairCounts{}}
	if s.affinityTerms, err = pl.resolveNamespaces(pi.RequiredAffinityTerms); err != nil {
		return nil, framework.AsStatus(err)
	}
	if s.antiTerms, err = pl.resolveNamespaces(pi.RequiredAntiAffinityTerms); err != nil {
		return nil, framework.AsStatus(err)
	}
	s.nsLabels = pl.handle.Listers().NamespaceLabels(pod.Namespace)
	s.selfMatch = matchesAllTerms(s.affinityTerms, pod, nil)
	hasTerms := len(s.affinityTerms) > 0 || len(s.antiTerms) > 0
	// Existing pods' anti-affinity against this pod: from the memo of the
	// pod's shape, recounting only nodes that changed. The map is the
	// memo's (read only here and in Filter; AddPod/RemovePod clone it).
	// Without any such pod in the cluster there is nothing to count.
	if len(withAnti) > 0 {
		var key [256]byte
		am := pl.antiMemos.Lock(podKey(key[:0], pod, s.nsLabels), newAntiMemo)
		am.refresh(pl.handle.SnapshotSharedLister(), nodes, pod, s.nsLabels)
		s.existingAnti = am.counts
		for p := range am.counts {
			if !slices.Contains(s.existingKeys, p.key) {
				s.existingKeys = append(s.existingKeys, p.key)
			}
		}
		sort.Strings(s.existingKeys)
		pl.antiMemos.Unlock()
	}
	if hasTerms {
		// The incoming terms' counts come from the memo of these terms:
		// only nodes that changed since its last cycle are counted again.
		// The maps are the memo's, read only here and in Filter;
		// AddPod/RemovePod work on clones (Clone).
		var key [256]byte
		m := pl.memos.Lock(termsKey(key[:0], s.affinityTerms, s.antiTerms), newIncomingMemo)
		m.refresh(pl.handle.SnapshotSharedLister(), nodes, s.affinityTerms, s.antiTerms)
		s.affinity, s.anti = m.affinity, m.anti
		pl.memos.Unlock()
	}
	if len(s.existingAnti) == 0 && !hasTerms {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// addExisting counts an existing pod's anti-affinity term on node's domain.
func (s *preFilterState) addExisting(node *v1.Node, key string, delta int64) {
	if _, ok := node.Labels[key]; !ok {
		return
	}
	s.existingAnti.add(node, key, delta)
	if !slices.Contains(s.existingKeys, key) {
		s.existingKeys = append(s.existingKeys, key)
	}
}

// countIncoming counts an existing pod against the incoming pod's terms.
func (s *preFilterState) countIncoming(existing *v1.Pod, node *v1.Node, delta int64) {
	if matchesAllTerms(s.affinityTerms, existing, nil) {
		for i := range s.affinityTerms {
			s.affinity.add(node, s.affinityTerms[i].TopologyKey, delta)
		}
	}
	for i := range s.antiTerms {
		if s.antiTerms[i].Matches(existing, nil) {
			s.anti.add(node, s.antiTerms[i].TopologyKey, delta)
		}
	}
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (pl *InterPodAffinity) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod accounts for a pod placed speculatively.
func (pl *InterPodAffinity) AddPod(_ context.Context, state *framework.CycleState, pod *v1.Pod, add *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return update(state, pod, add, ni.Node(), 1)
}

// RemovePod accounts for a pod removed speculatively.
func (pl *InterPodAffinity) RemovePod(_ context.Context, state *framework.CycleState, pod *v1.Pod, rm *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return update(state, pod, rm, ni.Node(), -1)
}

func update(state *framework.CycleState, pod *v1.Pod, other *framework.PodInfo, node *v1.Node, delta int64) *framework.Status {
	d, err := state.Read(preFilterStateKey)
	if err != nil || node == nil {
		return nil
	}
	s := d.(*preFilterState)
	for i := range other.RequiredAntiAffinityTerms {
		t := &other.RequiredAntiAffinityTerms[i]
		if t.Matches(pod, s.nsLabels) {
			s.addExisting(node, t.TopologyKey, delta)
		}
	}
	s.countIncoming(other.Pod, node, delta)
	return nil
}

// Filter checks, in upstream's order, the pod's required affinity
// (unresolvable), its required anti-affinity, and existing pods'
// anti-affinity against it. Map lookups only.
func (pl *InterPodAffinity) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	d, err := state.Read(preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	s := d.(*preFilterState)
	node := ni.Node()
	if !s.satisfiesAffinity(node) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	}
	if len(s.anti) > 0 {
		for i := range s.antiTerms {
			if v, ok := node.Labels[s.antiTerms[i].TopologyKey]; ok && s.anti[topologyPair{s.antiTerms[i].TopologyKey, v}] > 0 {
				return framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
			}
		}
	}
	if len(s.existingAnti) > 0 {
		for _, k := range s.existingKeys {
			if v, ok := node.Labels[k]; ok && s.existingAnti[topologyPair{k, v}] > 0 {
				return framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
			}
		}
	}
	return nil
}

func (s *preFilterState) satisfiesAffinity(node *v1.Node) bool {
	podsExist := true
	for i := range s.affinityTerms {
		v, ok := node.Labels[s.affinityTerms[i].TopologyKey]
		if !ok {
			return false // every topology key must exist on the node
		}
		if s.affinity[topologyPair{s.affinityTerms[i].TopologyKey, v}] <= 0 {
			podsExist = false
		}
	}
	if podsExist {
		return true
	}
	// No pod anywhere matches yet: the pod may start its own group.
	return len(s.affinity) == 0 && s.selfMatch
}
