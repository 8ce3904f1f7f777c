package defaultpreemption

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/pkg/framework"
)

// callExtenders lets the extenders that support preemption and are
// interested in the pod narrow the candidates, each on what the previous
// one left (v1.37.2's Evaluator.callExtenders): an extender may drop
// nodes or change their victims. An error fails preemption unless the
// extender is ignorable; so does a node left without victims (an
// ignorable extender's such node is dropped instead). Upstream rebuilds
// the candidates from a map, in random order; here they keep the order
// they had, so that pickOne's last tie-break stays the node order.
func (pl *DefaultPreemption) callExtenders(ctx context.Context, pod *v1.Pod, candidates []candidate) ([]candidate, *framework.Status) {
	extenders := pl.handle.Extenders()
	if len(extenders) == 0 || len(candidates) == 0 {
		return candidates, nil
	}
	victims := make(map[string]*extenderv1.Victims, len(candidates))
	order := make([]string, 0, len(candidates))
	for _, c := range candidates {
		if _, dup := victims[c.node]; dup {
			continue
		}
		victims[c.node] = &extenderv1.Victims{Pods: c.victims, NumPDBViolations: int64(c.pdbViolations)}
		order = append(order, c.node)
	}
	nodes := pl.handle.SnapshotSharedLister().NodeInfos()
	logger := klog.FromContext(ctx)
	for _, e := range extenders {
		if !e.SupportsPreemption() || !e.IsInterested(pod) {
			continue
		}
		out, err := e.ProcessPreemption(pod, victims, nodes)
		if err != nil {
			if e.IsIgnorable() {
				logger.V(2).Info("Skipped extender as it returned error and has ignorable flag set", "extender", e.Name(), "err", err)
				continue
			}
			return nil, framework.AsStatus(err)
		}
		for node, v := range out {
			if v == nil || len(v.Pods) == 0 {
				if e.IsIgnorable() {
					delete(out, node)
					logger.V(2).Info("Ignored node for which the extender didn't report victims", "node", klog.KRef("", node), "extender", e.Name())
					continue
				}
				return nil, framework.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", node))
			}
		}
		victims = out
		if len(victims) == 0 {
			break
		}
	}
	result := make([]candidate, 0, len(victims))
	seen := make(map[string]bool, len(victims))
	add := func(node string) {
		v, ok := victims[node]
		if !ok || seen[node] {
			return
		}
		seen[node] = true
		result = append(result, candidate{node: node, victims: v.Pods, pdbViolations: int(v.NumPDBViolations)})
	}
	for _, node := range order {
		add(node)
	}
	// Nodes an extender added, in name order.
	var extra []string
	for node := range victims {
		if !seen[node] {
			extra = append(extra, node)
		}
	}
	slices.Sort(extra)
	for _, node := range extra {
		add(node)
	}
	return result, nil
}
