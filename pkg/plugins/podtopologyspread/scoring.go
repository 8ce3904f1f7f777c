package podtopologyspread

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/nodeaffinity"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

type preScoreState struct {
	constraints []constraint
	// ignored are feasible nodes missing a topology key: they score 0.
	ignored sets.Set[string]
	// counts[i] maps a domain (of a non-hostname key) to its matching
	// pods; hostname domains are counted in Score, on the node itself.
	counts []map[string]int64
	// weights[i] is log(domains+2): small topologies are not watered down.
	weights []float64
	// memo holds the nodes' label values and, for hostname constraints,
	// each node's matching pods (read-only until the next cycle).
	memo *memo
}

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore counts matching pods per domain of the ScheduleAnyway
// constraints (or the system defaults), over every node of the cluster,
// for the domains the feasible nodes are in. Skip without constraints.
func (pl *PodTopologySpread) PreScore(ctx context.Context, state *framework.CycleState, pod *v1.Pod, feasible []*framework.NodeInfo) *framework.Status {
	all, err := pl.handle.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(all) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	cs, err := pl.constraintsFor(pod, v1.ScheduleAnyway)
	if err != nil {
		return framework.AsStatus(err)
	}
	if len(cs) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	// Only explicit constraints require every key on a node: with system
	// defaults, nodes without a zone still spread by hostname.
	requireAll := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	s := &preScoreState{constraints: cs, ignored: sets.New[string](), counts: make([]map[string]int64, len(cs)), weights: make([]float64, len(cs))}
	sizes := make([]int, len(cs))
	for i := range cs {
		s.counts[i] = map[string]int64{}
	}
	logger := framework.Logger(ctx)
	affinity := nodeaffinity.CompileRequired(pod)
	// The matching pods of every node's domain come from a memo, as in
	// PreFilter (a shape of its own: PreScore's rules differ): only nodes
	// that changed since the shape's last cycle are counted again. The
	// system default spreading of every Service-backed pod needs this.
	kind := scoreMemo
	if requireAll {
		kind = scoreMemoRequireAll
	}
	var key [256]byte
	m := pl.memos.Lock(memoKey(key[:0], kind, pod, cs), func() *memo { return newMemo(topologyKeys(cs)) })
	defer pl.memos.Unlock()
	m.refresh(pl.handle.SnapshotSharedLister(), all, func(ni *framework.NodeInfo, into []contribution) {
		node := ni.Node()
		if node == nil || (requireAll && !hasAllKeys(node.Labels, cs)) {
			return
		}
		var nc nodeCounts
		for i := range cs {
			c := &cs[i]
			if c.TopologyKey == v1.LabelHostname {
				// Not a counted domain: Score reads the node's own count.
				into[i] = contribution{pods: nc.of(ni, cs, i, pod.Namespace)}
				continue
			}
			if !c.includes(logger, pod, node, &affinity) {
				continue
			}
			into[i] = contribution{counted: true, value: node.Labels[c.TopologyKey], pods: nc.of(ni, cs, i, pod.Namespace)}
		}
	})
	s.memo = m
	// The feasible nodes' domains, with their label values read from the
	// memo (refreshed above over every node) rather than from each node's
	// label map: those lookups were most of a Service-backed pod's cycle.
	for _, ni := range feasible {
		if requireAll && !m.hasAll(ni, cs) {
			s.ignored.Insert(ni.NodeName())
			continue
		}
		for i := range cs {
			if cs[i].TopologyKey == v1.LabelHostname {
				continue
			}
			// A node without the key (possible only with system defaults)
			// makes a "" domain: it counts toward the topology's size, as
			// upstream's, though Score never reads it.
			v, _, _ := m.label(ni, i, cs[i].TopologyKey)
			if _, seen := s.counts[i][v]; !seen {
				s.counts[i][v] = 0
				sizes[i]++
			}
		}
	}
	for i := range cs {
		n := sizes[i]
		if cs[i].TopologyKey == v1.LabelHostname {
			n = len(feasible) - len(s.ignored)
		}
		s.weights[i] = math.Log(float64(n + 2))
	}
	for i := range cs {
		for v := range s.counts[i] {
			s.counts[i][v] = int64(m.counts[i][v])
		}
	}
	state.Write(preScoreStateKey, s)
	return nil
}

// Score sums, over the constraints whose key the node has, the matching
// pods of its domain times the topology weight, plus maxSkew-1.
func (pl *PodTopologySpread) Score(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	d, err := state.Read(preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	s := d.(*preScoreState)
	if s.ignored.Has(ni.NodeName()) {
		return 0, nil
	}
	var score float64
	for i := range s.constraints {
		c := &s.constraints[i]
		v, ok, known := s.memo.label(ni, i, c.TopologyKey)
		if !ok {
			continue
		}
		var cnt int64
		switch {
		case c.TopologyKey != v1.LabelHostname:
			cnt = s.counts[i][v]
		case known && ni.Node() != nil:
			cnt = int64(s.memo.contributionAt(ni, i).pods)
		default:
			cnt = int64(countMatching(ni.Pods(), c.Selector, pod.Namespace))
		}
		score += float64(cnt)*s.weights[i] + float64(c.MaxSkew-1)
	}
	return int64(math.Round(score)), nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (pl *PodTopologySpread) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps s to 100*(max+min-s)/max (fewer matching pods is
// better); ignored nodes score 0; all 100 when max is 0.
func (pl *PodTopologySpread) NormalizeScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *framework.Status {
	d, err := state.Read(preScoreStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	s := d.(*preScoreState)
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for _, sc := range scores {
		if s.ignored.Has(sc.Name) {
			continue
		}
		minScore = min(minScore, sc.Score)
		maxScore = max(maxScore, sc.Score)
	}
	for i := range scores {
		switch {
		case s.ignored.Has(scores[i].Name):
			scores[i].Score = 0
		case maxScore == 0:
			scores[i].Score = framework.MaxNodeScore
		default:
			scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
		}
	}
	return nil
}
