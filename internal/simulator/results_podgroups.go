package simulator

import (
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
)

// podGroupResults are the world's pod groups (none without the
// GenericWorkload gate): each group's pods in the store now, bound or
// not, the domain of its topology key they are bound in, and its
// PodGroupInitiallyScheduled condition.
func (w *World) podGroupResults() []report.PodGroupResult {
	groups := w.Store.PodGroups()
	if len(groups) == 0 {
		return nil
	}
	index := make(map[string]int, len(groups))
	out := make([]report.PodGroupResult, len(groups))
	for i, pg := range groups {
		index[framework.PodGroupKey(pg.Namespace, pg.Name)] = i
		g := &out[i]
		g.Namespace, g.Name, g.Policy = pg.Namespace, pg.Name, "basic"
		if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
			g.Policy, g.MinCount = "gang", int(gang.MinCount)
		}
		if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
			g.Topology = c.Topology[0].Key
		}
		if c := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled); c != nil {
			g.Condition, g.Reason, g.Message = string(c.Status), c.Reason, c.Message
		}
	}
	var nodeLabels map[string]map[string]string
	for _, p := range w.Store.Pods() {
		name := framework.PodGroupName(p)
		if name == "" {
			continue
		}
		i, ok := index[framework.PodGroupKey(p.Namespace, name)]
		if !ok {
			continue
		}
		g := &out[i]
		g.Pods++
		if p.Spec.NodeName == "" {
			g.Pending++
			continue
		}
		g.Scheduled++
		if g.Topology != "" && g.Domain == "" {
			if nodeLabels == nil {
				nodeLabels = map[string]map[string]string{}
				for _, n := range w.Store.Nodes() {
					nodeLabels[n.Name] = n.Labels
				}
			}
			g.Domain = nodeLabels[p.Spec.NodeName][g.Topology]
		}
	}
	return out
}
