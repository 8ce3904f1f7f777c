// Package volumezone holds VolumeZone: a pod whose bound volumes carry
// zone or region labels only fits nodes in those zones and regions.
package volumezone

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "VolumeZone"

// ErrReasonConflict is upstream's reason.
const ErrReasonConflict = "node(s) had no available volume zone"

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// topologyLabels are the PV labels that constrain nodes (beta and GA).
var topologyLabels = []string{v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion, v1.LabelTopologyZone, v1.LabelTopologyRegion}

// VolumeZone is a PreFilter and Filter plugin.
type VolumeZone struct{ handle framework.Handle }

var (
	_ framework.PreFilterPlugin   = &VolumeZone{}
	_ framework.FilterPlugin      = &VolumeZone{}
	_ framework.EnqueueExtensions = &VolumeZone{}
)

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &VolumeZone{handle: h}, nil
}

// Name implements framework.Plugin.
func (*VolumeZone) Name() string { return Name }

type pvTopology struct {
	key    string
	values sets.Set[string]
}

type stateData struct{ topologies []pvTopology }

func (s *stateData) Clone() framework.StateData { return s }

// PreFilter collects the topology labels of the PVs bound to the pod's
// claims. Claims waiting for their first consumer are left to
// VolumeBinding; other unbound claims, and missing objects, are
// unresolvable. Skip when no PV constrains the pod.
func (pl *VolumeZone) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	l := pl.handle.Listers()
	var tops []pvTopology
	for i := range pod.Spec.Volumes {
		c := pod.Spec.Volumes[i].PersistentVolumeClaim
		if c == nil {
			continue
		}
		if c.ClaimName == "" {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no name")
		}
		pvc, err := l.PersistentVolumeClaims.PersistentVolumeClaims(pod.Namespace).Get(c.ClaimName)
		if err != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		}
		if pvc.Spec.VolumeName == "" {
			class := helper.StorageClassName(pvc)
			if class == "" {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name")
			}
			sc, err := l.StorageClasses.Get(class)
			if err != nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
			}
			if sc.VolumeBindingMode == nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", class))
			}
			if *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				continue
			}
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, "PersistentVolume had no name")
		}
		pv, err := l.PersistentVolumes.Get(pvc.Spec.VolumeName)
		if err != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, err.Error())
		}
		for _, key := range topologyLabels {
			if value, ok := pv.Labels[key]; ok {
				if zones := labelZonesToSet(value); zones.Len() > 0 {
					tops = append(tops, pvTopology{key: key, values: zones})
				}
			}
		}
	}
	if len(tops) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, &stateData{topologies: tops})
	return nil, nil
}

// labelZonesToSet splits a multi-zone label value ("a__b").
func labelZonesToSet(value string) sets.Set[string] {
	out := sets.New[string]()
	for _, z := range strings.Split(value, "__") {
		if z = strings.TrimSpace(z); z != "" {
			out.Insert(z)
		}
	}
	return out
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*VolumeZone) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects a node (that has any topology label) outside a volume's
// zone or region. A node with no topology label at all is not constrained.
func (pl *VolumeZone) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	d, err := state.Read(preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	node := ni.Node()
	constrained := false
	for _, k := range topologyLabels {
		if _, ok := node.Labels[k]; ok {
			constrained = true
			break
		}
	}
	if !constrained {
		return nil
	}
	for _, t := range d.(*stateData).topologies {
		v, ok := node.Labels[t.key]
		if !ok {
			v, ok = node.Labels[toGA(t.key)]
		}
		if !ok || !t.values.Has(v) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonConflict)
		}
	}
	return nil
}

func toGA(label string) string {
	switch label {
	case v1.LabelFailureDomainBetaRegion:
		return v1.LabelTopologyRegion
	case v1.LabelFailureDomainBetaZone:
		return v1.LabelTopologyZone
	}
	return label
}

// EventsToRegister: nodes and storage objects appearing or changing.
func (*VolumeZone) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update}, QueueingHintFn: helper.AfterClaimChange},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add}},
	}, nil
}
