package podtopologyspread

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/nodeaffinity"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// criticalPaths keeps the two domains with the fewest matching pods; [0]
// always holds the minimum. Two are enough because preemption only ever
// removes pods from one node (one domain) of a cloned state.
type criticalPaths [2]struct {
	value string
	num   int
}

func newCriticalPaths() criticalPaths {
	return criticalPaths{{num: math.MaxInt32}, {num: math.MaxInt32}}
}

func (p *criticalPaths) update(value string, num int) {
	i := -1
	if value == p[0].value {
		i = 0
	} else if value == p[1].value {
		i = 1
	}
	if i >= 0 {
		p[i].num = num
		if p[0].num > p[1].num {
			p[0], p[1] = p[1], p[0]
		}
		return
	}
	if num < p[0].num {
		p[1] = p[0]
		p[0].value, p[0].num = value, num
	} else if num < p[1].num {
		p[1].value, p[1].num = value, num
	}
}

type preFilterState struct {
	constraints []constraint
	// selfMatch[i] is 1 when the pod matches constraint i's selector.
	selfMatch []int
	paths     []criticalPaths
	// counts[i] maps a domain of constraint i's key to its matching pods.
	counts []map[string]int
	// affinity is the pod's compiled required node affinity (inclusion policy).
	affinity nodeaffinity.RequiredMatcher
	// memo is the shape's memo this cycle's counts came from; Filter reads
	// the nodes' label values from it (read-only until the next cycle).
	memo *memo
}

func (s *preFilterState) Clone() framework.StateData {
	out := &preFilterState{constraints: s.constraints, selfMatch: s.selfMatch, affinity: s.affinity, memo: s.memo,
		paths: append([]criticalPaths(nil), s.paths...), counts: make([]map[string]int, len(s.counts))}
	for i, m := range s.counts {
		c := make(map[string]int, len(m))
		for k, v := range m {
			c[k] = v
		}
		out.counts[i] = c
	}
	return out
}

// minMatch is the global minimum for constraint i: 0 when fewer domains
// than minDomains exist.
func (s *preFilterState) minMatch(i int) int {
	if len(s.counts[i]) < int(s.constraints[i].MinDomains) {
		return 0
	}
	return s.paths[i][0].num
}

// PreFilter counts, per domain of each DoNotSchedule constraint, the
// matching pods on the nodes that count (all topology keys present, node
// inclusion policies met). Skip when the pod has no such constraint.
func (pl *PodTopologySpread) PreFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	cs, err := pl.constraintsFor(pod, v1.DoNotSchedule)
	if err != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
	}
	if len(cs) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	logger := framework.Logger(ctx)
	s := &preFilterState{constraints: cs, selfMatch: make([]int, len(cs)), paths: make([]criticalPaths, len(cs)),
		counts: make([]map[string]int, len(cs)), affinity: nodeaffinity.CompileRequired(pod)}
	podLabels := labels.Set(pod.Labels)
	for i := range cs {
		if cs[i].Selector.Matches(podLabels) {
			s.selfMatch[i] = 1
		}
	}
	// The domain counts come from the shape's memo: only nodes that changed
	// since its last cycle are counted again. The maps are the memo's, read
	// only here and in Filter; AddPod/RemovePod work on clones.
	var key [256]byte
	m := pl.memos.Lock(memoKey(key[:0], filterMemo, pod, cs), func() *memo { return newMemo(topologyKeys(cs)) })
	s.memo = m
	m.refresh(pl.handle.SnapshotSharedLister(), nodes, func(ni *framework.NodeInfo, into []contribution) {
		node := ni.Node()
		if node == nil || !hasAllKeys(node.Labels, cs) {
			return // a node must have every key to count
		}
		var nc nodeCounts
		for i := range cs {
			if cs[i].includes(logger, pod, node, &s.affinity) {
				into[i] = contribution{counted: true, value: node.Labels[cs[i].TopologyKey], pods: nc.of(ni, cs, i, pod.Namespace)}
			}
		}
	})
	copy(s.counts, m.counts)
	pl.memos.Unlock()
	for i := range cs {
		s.paths[i] = newCriticalPaths()
		for v, n := range s.counts[i] {
			s.paths[i].update(v, n)
		}
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (pl *PodTopologySpread) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts a pod placed speculatively.
func (pl *PodTopologySpread) AddPod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, add *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return pl.updateWith(ctx, state, pod, add.Pod, ni.Node(), 1)
}

// RemovePod uncounts a pod removed speculatively.
func (pl *PodTopologySpread) RemovePod(ctx context.Context, state *framework.CycleState, pod *v1.Pod, rm *framework.PodInfo, ni *framework.NodeInfo) *framework.Status {
	return pl.updateWith(ctx, state, pod, rm.Pod, ni.Node(), -1)
}

func (pl *PodTopologySpread) updateWith(ctx context.Context, state *framework.CycleState, pod, other *v1.Pod, node *v1.Node, delta int) *framework.Status {
	d, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil
	}
	s := d.(*preFilterState)
	if other.Namespace != pod.Namespace || node == nil || !hasAllKeys(node.Labels, s.constraints) {
		return nil
	}
	logger := framework.Logger(ctx)
	set := labels.Set(other.Labels)
	for i := range s.constraints {
		c := &s.constraints[i]
		if !c.Selector.Matches(set) || !c.includes(logger, pod, node, &s.affinity) {
			continue
		}
		v := node.Labels[c.TopologyKey]
		s.counts[i][v] += delta
		s.paths[i].update(v, s.counts[i][v])
	}
	return nil
}

// Filter rejects a node lacking a topology key (unresolvable), or whose
// domain would exceed a constraint's maxSkew with the pod in it.
func (pl *PodTopologySpread) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	d, err := state.Read(preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	s := d.(*preFilterState)
	for i := range s.constraints {
		c := &s.constraints[i]
		v, ok, _ := s.memo.label(ni, i, c.TopologyKey)
		if !ok {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
		}
		if s.counts[i][v]+s.selfMatch[i]-s.minMatch(i) > int(c.MaxSkew) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch)
		}
	}
	return nil
}

// topologyKeys lists the constraints' keys, in order.
func topologyKeys(cs []constraint) []string {
	out := make([]string, len(cs))
	for i := range cs {
		out[i] = cs[i].TopologyKey
	}
	return out
}
