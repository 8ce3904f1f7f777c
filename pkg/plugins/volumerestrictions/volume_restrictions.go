// Package volumerestrictions holds VolumeRestrictions: in-tree disks that
// only one pod may mount read-write (GCE PD, AWS EBS, iSCSI, RBD) conflict
// on a node, and a ReadWriteOncePod claim in use by another pod blocks the
// pod everywhere.
package volumerestrictions

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "VolumeRestrictions"

// Upstream's reasons.
const (
	ErrReasonDiskConflict             = "node(s) had no available disk"
	ErrReasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// VolumeRestrictions is a PreFilter and Filter plugin.
type VolumeRestrictions struct{ handle framework.Handle }

var (
	_ framework.PreFilterPlugin   = &VolumeRestrictions{}
	_ framework.FilterPlugin      = &VolumeRestrictions{}
	_ framework.EnqueueExtensions = &VolumeRestrictions{}
)

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &VolumeRestrictions{handle: h}, nil
}

// Name implements framework.Plugin.
func (*VolumeRestrictions) Name() string { return Name }

type preFilterState struct {
	// rwop are the pod's ReadWriteOncePod claims (names in its namespace).
	rwop sets.Set[string]
	// conflicts counts other pods using one of them.
	conflicts int
}

func (s *preFilterState) Clone() framework.StateData {
	c := *s
	return &c
}

func needsDiskCheck(v *v1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// PreFilter finds the pod's ReadWriteOncePod claims and counts the pods
// already using them. A claim that does not exist is unresolvable. Skip
// when there is nothing to check.
func (pl *VolumeRestrictions) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	needsCheck := false
	s := &preFilterState{rwop: sets.New[string]()}
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if needsDiskCheck(v) {
			needsCheck = true
		}
		if v.PersistentVolumeClaim == nil {
			continue
		}
		l := pl.handle.Listers().PersistentVolumeClaims
		if l == nil {
			continue
		}
		pvc, err := l.PersistentVolumeClaims(pod.Namespace).Get(v.PersistentVolumeClaim.ClaimName)
		if err != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q not found", v.PersistentVolumeClaim.ClaimName))
		}
		for _, m := range pvc.Spec.AccessModes {
			if m == v1.ReadWriteOncePod {
				s.rwop.Insert(pvc.Name)
			}
		}
	}
	if s.rwop.Len() > 0 {
		for _, ni := range nodes {
			for _, pi := range ni.Pods() {
				s.conflicts += s.uses(pod, pi.Pod)
			}
		}
	}
	if !needsCheck && s.conflicts == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// uses counts other's volumes that are one of the pod's RWOP claims.
func (s *preFilterState) uses(pod, other *v1.Pod) int {
	if other.Namespace != pod.Namespace || other.UID == pod.UID {
		return 0
	}
	n := 0
	for i := range other.Spec.Volumes {
		if c := other.Spec.Volumes[i].PersistentVolumeClaim; c != nil && s.rwop.Has(c.ClaimName) {
			n++
		}
	}
	return n
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (pl *VolumeRestrictions) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts a pod added speculatively.
func (pl *VolumeRestrictions) AddPod(_ context.Context, state *framework.CycleState, pod *v1.Pod, add *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	if d, err := state.Read(preFilterStateKey); err == nil {
		s := d.(*preFilterState)
		s.conflicts += s.uses(pod, add.Pod)
	}
	return nil
}

// RemovePod uncounts a pod removed speculatively (a preemption victim).
func (pl *VolumeRestrictions) RemovePod(_ context.Context, state *framework.CycleState, pod *v1.Pod, rm *framework.PodInfo, _ *framework.NodeInfo) *framework.Status {
	if d, err := state.Read(preFilterStateKey); err == nil {
		s := d.(*preFilterState)
		s.conflicts -= s.uses(pod, rm.Pod)
	}
	return nil
}

// Filter rejects a node where a pod mounts one of the pod's disks
// conflictingly, and any node while its RWOP claim is in use.
func (pl *VolumeRestrictions) Filter(_ context.Context, state *framework.CycleState, pod *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if !needsDiskCheck(v) {
			continue
		}
		for _, pi := range ni.Pods() {
			if conflicts(v, pi.Pod) {
				return framework.NewStatus(framework.Unschedulable, ErrReasonDiskConflict)
			}
		}
	}
	if d, err := state.Read(preFilterStateKey); err == nil && d.(*preFilterState).conflicts > 0 {
		return framework.NewStatus(framework.Unschedulable, ErrReasonReadWriteOncePodConflict)
	}
	return nil
}

// conflicts: the same disk mounted by both pods, unless both read-only
// (an EBS volume conflicts even then).
func conflicts(v *v1.Volume, other *v1.Pod) bool {
	for i := range other.Spec.Volumes {
		e := &other.Spec.Volumes[i]
		switch {
		case v.GCEPersistentDisk != nil && e.GCEPersistentDisk != nil:
			if v.GCEPersistentDisk.PDName == e.GCEPersistentDisk.PDName && !(v.GCEPersistentDisk.ReadOnly && e.GCEPersistentDisk.ReadOnly) {
				return true
			}
		case v.AWSElasticBlockStore != nil && e.AWSElasticBlockStore != nil:
			if v.AWSElasticBlockStore.VolumeID == e.AWSElasticBlockStore.VolumeID {
				return true
			}
		case v.ISCSI != nil && e.ISCSI != nil:
			if v.ISCSI.IQN == e.ISCSI.IQN && !(v.ISCSI.ReadOnly && e.ISCSI.ReadOnly) {
				return true
			}
		case v.RBD != nil && e.RBD != nil:
			if overlap(v.RBD.CephMonitors, e.RBD.CephMonitors) && v.RBD.RBDPool == e.RBD.RBDPool && v.RBD.RBDImage == e.RBD.RBDImage &&
				!(v.RBD.ReadOnly && e.RBD.ReadOnly) {
				return true
			}
		}
	}
	return false
}

func overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// EventsToRegister: a pod using the disk or claim going away, or the
// claim appearing.
func (*VolumeRestrictions) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update}, QueueingHintFn: helper.AfterClaimChange},
	}, nil
}
