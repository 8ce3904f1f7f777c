// Package topologyaware holds TopologyPlacementGenerator, kube-scheduler
// v1.37.2's PlacementGenerate plugin (the TopologyAwareWorkloadScheduling
// gate, alpha): a pod group whose PodGroup names a topology key gets one
// candidate placement per value of that node label, so that the whole
// group lands in one domain (one rack, one zone).
package topologyaware

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// Name of the plugin.
const Name = "TopologyPlacementGenerator"

// TopologyPlacement is a PlacementGenerate plugin.
type TopologyPlacement struct {
	handle framework.Handle
}

var _ framework.PlacementGeneratePlugin = &TopologyPlacement{}

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &TopologyPlacement{handle: h}, nil
}

// Name implements framework.Plugin.
func (*TopologyPlacement) Name() string { return Name }

// TopologyKey is the key of a group's topology constraint, "" for none
// (the API allows one).
func TopologyKey(pgi *framework.PodGroupInfo) string {
	if pgi.PodGroup == nil {
		return ""
	}
	if c := pgi.PodGroup.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
		return c.Topology[0].Key
	}
	return ""
}

// GeneratePlacements implements framework.PlacementGeneratePlugin: without
// a constraint, the parent placement; otherwise one placement per domain
// of the parent's nodes that carry the key, or only the domain of the
// group's pods already scheduled. Nodes without the key are in none.
//
// Upstream returns the domains in map order (at random); kubesched sorts
// them by value, so a simulation is repeatable. Only which placement's
// status a group that fits nowhere reports, and the draw among placements
// of equal score, can differ from a given kube-scheduler run.
func (pl *TopologyPlacement) GeneratePlacements(ctx context.Context, pgi *framework.PodGroupInfo, parent *framework.Placement) ([]*framework.Placement, *framework.Status) {
	key := TopologyKey(pgi)
	if key == "" {
		return []*framework.Placement{parent}, nil
	}
	scheduled, err := pl.scheduledPods(pgi)
	if err != nil {
		return nil, framework.AsStatus(err)
	}
	required, haveRequired := "", false
	if len(scheduled) > 0 {
		d, err := pl.scheduledDomain(key, scheduled)
		if err != nil {
			return nil, framework.AsStatus(fmt.Errorf("cannot determine domain for already scheduled pods: %w", err))
		}
		required, haveRequired = d, true
	}
	byDomain := map[string][]*framework.NodeInfo{}
	for _, ni := range parent.Nodes {
		d, ok := ni.Node().Labels[key]
		if !ok || haveRequired && d != required {
			continue
		}
		byDomain[d] = append(byDomain[d], ni)
	}
	placements := make([]*framework.Placement, 0, len(byDomain))
	for d, nodes := range byDomain {
		placements = append(placements, &framework.Placement{Name: d, Nodes: nodes})
	}
	slices.SortFunc(placements, func(a, b *framework.Placement) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return placements, nil
}

func (pl *TopologyPlacement) scheduledPods(pgi *framework.PodGroupInfo) ([]*v1.Pod, error) {
	groups := pl.handle.PodGroupManager()
	if groups == nil {
		return nil, nil
	}
	st, ok := groups.PodGroupState(pgi.Namespace, pgi.Name)
	if !ok {
		return nil, fmt.Errorf("pod group state not found for pod group %s/%s", pgi.Namespace, pgi.Name)
	}
	return st.ScheduledPods(), nil
}

// scheduledDomain is the one domain of the group's scheduled pods.
func (pl *TopologyPlacement) scheduledDomain(key string, pods []*v1.Pod) (string, error) {
	domain := ""
	for _, pod := range pods {
		ni, err := pl.handle.SnapshotSharedLister().NodeInfos().Get(pod.Spec.NodeName)
		if err != nil {
			return "", fmt.Errorf("getting node for pod %v: %w", klog.KObj(pod), err)
		}
		d, ok := ni.Node().Labels[key]
		if !ok {
			return "", fmt.Errorf("no topology domain found for pod %v", klog.KObj(pod))
		}
		if domain != "" && domain != d {
			return "", fmt.Errorf("more than 1 domain found for pod group: %v, %v", domain, d)
		}
		domain = d
	}
	return domain, nil
}
