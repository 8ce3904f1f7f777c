package scheduler

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// NodeVerdict is one node's outcome for a pod.
type NodeVerdict struct {
	Name     string
	Feasible bool
	// Plugin is the first plugin that rejected the node (comma-joined
	// restricting plugins for nodes cut by PreFilter).
	Plugin  string
	Reasons []string
	// Score is the weighted total; nil when infeasible.
	Score *int64
	// Scores are the weighted per-plugin scores; plugins skipped at
	// PreScore are absent.
	Scores map[string]int64
	// Details are what the node would give the pod (the devices
	// DynamicResources would allocate), for feasible nodes.
	Details []string
	// Why is the rejecting plugin's account in more detail than its
	// reasons, when it has one (DynamicResources: which request of
	// which claim cannot be allocated, and why).
	Why []string
}

// Explanation is a pod's evaluation on every node.
type Explanation struct {
	Pod           *v1.Pod
	Nodes         []NodeVerdict // sorted by name
	FeasibleCount int
	BestNodes     []string
	// FitError is the message a failed cycle would report, when no node fits.
	FitError string
	// NominatedNode is where preemption would make room, when no node fits
	// and it can (PostFilter runs in the explaining world, which is thrown
	// away after).
	NominatedNode string
}

// Explain runs PreFilter and Filter on every node and PreScore, Score and
// NormalizeScore on every feasible one (even a single one), without
// assuming or binding: the answer to "why does this pod land there, or
// why is it pending?".
func (s *Scheduler) Explain(ctx context.Context, pod *v1.Pod) (*Explanation, error) {
	fwk, err := s.Profile(pod.Spec.SchedulerName)
	if err != nil {
		return nil, err
	}
	s.Cache.UpdateSnapshot(s.snapshot)
	all, _ := s.snapshot.List()
	ex := &Explanation{Pod: pod, BestNodes: []string{}, Nodes: []NodeVerdict{}}
	if len(all) == 0 {
		// As a scheduling cycle: no filter runs, no preemption is tried.
		ex.FitError = ErrNoNodesAvailable.Error()
		return ex, nil
	}
	state := framework.NewCycleState()
	// The same path as a scheduling cycle, over every node.
	feasible, diagnosis, pfr, err := s.findNodesThatFitPod(ctx, fwk, state, pod, true)
	if err != nil {
		return nil, err
	}
	verdicts := make(map[string]*NodeVerdict, len(all))
	for _, ni := range feasible {
		verdicts[ni.NodeName()] = &NodeVerdict{Name: ni.NodeName(), Feasible: true, Reasons: []string{}, Details: fwk.NodeDetails(state, ni.NodeName())}
	}
	for _, ni := range all {
		name := ni.NodeName()
		if verdicts[name] != nil {
			continue
		}
		st := diagnosis.NodeToStatus.Get(name)
		plugin := st.Plugin()
		if diagnosis.PreFilterMsg == "" && pfr != nil && !pfr.AllNodes() && !pfr.NodeNames.Has(name) {
			plugin = strings.Join(pfr.Restrictors, ",")
		}
		verdicts[name] = &NodeVerdict{Name: name, Plugin: plugin, Reasons: st.Reasons(), Why: fwk.RejectionDetails(state, st.Plugin(), name)}
	}
	ex.FeasibleCount = len(feasible)
	if len(feasible) == 0 {
		fe := &framework.FitError{Pod: pod, NumAllNodes: len(all), Diagnosis: diagnosis}
		if fwk.HasPostFilterPlugins() {
			// As the scheduling cycle: an Error's message ends the FitError.
			pfr, st := fwk.RunPostFilterPlugins(ctx, state, pod, diagnosis.NodeToStatus)
			if len(st.Reasons()) > 0 {
				fe.Diagnosis.PostFilterMsg = st.Message()
			}
			if pfr != nil {
				ex.NominatedNode = pfr.NominatedNodeName
			}
		}
		ex.FitError = fe.Error()
	} else {
		if st := fwk.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
			return nil, fmt.Errorf("PreScore: %w", st.AsError())
		}
		scores, st := fwk.RunScorePlugins(ctx, state, pod, feasible, nil)
		if !st.IsSuccess() {
			return nil, fmt.Errorf("Score: %w", st.AsError())
		}
		// Each extender's weighted score beside the plugins'.
		s.addExtenderScores(ctx, pod, feasible, scores)
		var best int64 = -1
		for _, ns := range scores {
			v := verdicts[ns.Name]
			total := ns.TotalScore
			v.Score = &total
			v.Scores = make(map[string]int64, len(ns.Scores))
			for _, ps := range ns.Scores {
				v.Scores[ps.Name] = ps.Score
			}
			if total > best {
				best = total
				ex.BestNodes = ex.BestNodes[:0]
			}
			if total == best {
				ex.BestNodes = append(ex.BestNodes, ns.Name)
			}
		}
		sort.Strings(ex.BestNodes)
	}
	for _, v := range verdicts {
		if v.Reasons == nil {
			v.Reasons = []string{}
		}
		ex.Nodes = append(ex.Nodes, *v)
	}
	sort.Slice(ex.Nodes, func(i, j int) bool { return ex.Nodes[i].Name < ex.Nodes[j].Name })
	return ex, nil
}
