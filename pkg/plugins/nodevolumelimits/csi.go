// Package nodevolumelimits holds NodeVolumeLimits: a node's CSINode says
// how many volumes each CSI driver can attach there; a pod whose new
// volumes would exceed that does not fit.
package nodevolumelimits

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "NodeVolumeLimits"

// ErrReasonMaxVolumeCountExceeded is upstream's reason.
const ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

// CSILimits is a PreFilter and Filter plugin.
type CSILimits struct{ handle framework.Handle }

var (
	_ framework.PreFilterPlugin   = &CSILimits{}
	_ framework.FilterPlugin      = &CSILimits{}
	_ framework.EnqueueExtensions = &CSILimits{}
)

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &CSILimits{handle: h}, nil
}

// Name implements framework.Plugin.
func (*CSILimits) Name() string { return Name }

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// preFilterState are the pod's attachable volumes (unique name -> driver),
// found once per cycle.
type preFilterState struct{ volumes map[string]string }

func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter finds the pod's CSI volumes; Skip when it has none.
func (pl *CSILimits) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if !helper.HasPVCs(pod) {
		return nil, framework.NewStatus(framework.Skip)
	}
	s := &preFilterState{volumes: map[string]string{}}
	pl.attachable(pod, s.volumes)
	if len(s.volumes) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*CSILimits) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter counts, per CSI driver with a limit on the node, the volumes the
// node's pods already use and the pod's new ones (a volume shared with a
// pod already there is not new).
func (pl *CSILimits) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	d, err := state.Read(preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	newVolumes := d.(*preFilterState).volumes
	node := ni.Node()
	l := pl.handle.Listers()
	csiNode, err := l.CSINodes.Get(node.Name)
	if err != nil || csiNode == nil {
		return nil // no CSINode: no limits known
	}
	limits := map[string]int32{}
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			limits[d.Name] = *d.Allocatable.Count
		}
	}
	if len(limits) == 0 {
		return nil
	}
	attached := map[string]string{}
	for _, pi := range ni.Pods {
		pl.attachable(pi.Pod, attached)
	}
	count := map[string]int{}
	for _, driver := range attached {
		count[driver]++
	}
	adding := map[string]int{}
	for v, driver := range newVolumes {
		if _, there := attached[v]; !there {
			adding[driver]++
		}
	}
	for driver, n := range adding {
		if limit, ok := limits[driver]; ok && count[driver]+n > int(limit) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonMaxVolumeCountExceeded)
		}
	}
	return nil
}

// attachable adds a pod's CSI volumes to out as unique name -> driver: a
// bound claim's PV by driver and volume handle; an unbound claim by its
// class's provisioner and the claim itself.
func (pl *CSILimits) attachable(pod *v1.Pod, out map[string]string) {
	l := pl.handle.Listers()
	for i := range pod.Spec.Volumes {
		name := helper.PVCName(pod, &pod.Spec.Volumes[i])
		if name == "" {
			continue
		}
		pvc, err := l.PersistentVolumeClaims.PersistentVolumeClaims(pod.Namespace).Get(name)
		if err != nil {
			continue
		}
		if pvc.Spec.VolumeName == "" {
			if sc := helper.StorageClass(l, pvc); sc != nil && sc.Provisioner != "" {
				out[sc.Provisioner+"/"+pvc.Namespace+"/"+pvc.Name] = sc.Provisioner
			}
			continue
		}
		pv, err := l.PersistentVolumes.Get(pvc.Spec.VolumeName)
		if err != nil || pv.Spec.CSI == nil {
			continue
		}
		out[pv.Spec.CSI.Driver+"/"+pv.Spec.CSI.VolumeHandle] = pv.Spec.CSI.Driver
	}
}

// EventsToRegister: a pod leaving the node, or the node's CSINode changing.
func (*CSILimits) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}},
		{Event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}, QueueingHintFn: helper.AfterClaimChange},
	}, nil
}
