// Package nodevolumelimits holds NodeVolumeLimits: a node's CSINode says
// how many volumes each CSI driver can attach there; a pod whose new
// volumes would exceed that does not fit. As upstream's (v1.37 csi.go):
// volumes are counted by driver and volume handle, from the pods on the
// node and from its VolumeAttachments; in-tree volumes (AWS EBS, GCE PD,
// Azure Disk, Cinder, Portworx) count against the CSI driver they migrate
// to; and a CSIDriver with preventPodSchedulingIfMissing keeps pods off
// nodes whose CSINode lacks it (VolumeLimitScaling, beta in v1.37).
package nodevolumelimits

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	csitrans "k8s.io/csi-translation-lib"
	csilibplugins "k8s.io/csi-translation-lib/plugins"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "NodeVolumeLimits"

// ErrReasonMaxVolumeCountExceeded is upstream's reason.
const ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

// unboundPrefix names a claim not bound yet, counted against its class's
// provisioner (upstream uses a random prefix to the same end).
const unboundPrefix = "kubesched-unbound-claim-"

// CSILimits is a PreFilter and Filter plugin.
type CSILimits struct {
	handle     framework.Handle
	translator csitrans.CSITranslator
}

var (
	_ framework.PreFilterPlugin   = &CSILimits{}
	_ framework.FilterPlugin      = &CSILimits{}
	_ framework.EnqueueExtensions = &CSILimits{}
)

// New builds the plugin.
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &CSILimits{handle: h, translator: csitrans.New()}, nil
}

// Name implements framework.Plugin.
func (*CSILimits) Name() string { return Name }

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// volume is one attachable volume: its unique name (driver/handle) and
// driver; migratedFrom is the in-tree plugin it comes from, when it counts
// only where that plugin's migration is on.
type volume struct {
	unique, driver, migratedFrom string
}

// preFilterState holds what one cycle needs: the pod's volumes, the
// error looking up one of its claims, and the VolumeAttachments by node.
type preFilterState struct {
	volumes     []volume
	claimErr    error
	attachments map[string][]*storagev1.VolumeAttachment
}

func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter finds the pod's attachable volumes once per cycle; Skip when
// it has no claim, ephemeral volume or migratable in-tree volume.
func (pl *CSILimits) PreFilter(ctx context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	relevant := false
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil || pl.translator.IsInlineMigratable(vol) {
			relevant = true
			break
		}
	}
	if !relevant {
		return nil, framework.NewStatus(framework.Skip)
	}
	s := &preFilterState{}
	s.volumes, s.claimErr = pl.attachable(klog.FromContext(ctx), pod, true)
	l := pl.handle.Listers()
	if l.VolumeAttachments != nil {
		vas, err := l.VolumeAttachments.List(labels.Everything())
		if err != nil {
			return nil, framework.AsStatus(err)
		}
		s.attachments = map[string][]*storagev1.VolumeAttachment{}
		for _, va := range vas {
			s.attachments[va.Spec.NodeName] = append(s.attachments[va.Spec.NodeName], va)
		}
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*CSILimits) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter counts, per CSI driver with a limit on the node, the volumes the
// node's pods and VolumeAttachments already use and the pod's new ones (a
// volume already there is not new).
func (pl *CSILimits) Filter(ctx context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	d, err := state.Read(preFilterStateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	s := d.(*preFilterState)
	if s.claimErr != nil {
		if apierrors.IsNotFound(s.claimErr) {
			return framework.NewStatus(framework.UnschedulableAndUnresolvable, s.claimErr.Error())
		}
		return framework.AsStatus(s.claimErr)
	}
	l := pl.handle.Listers()
	node := ni.Node()
	var csiNode *storagev1.CSINode
	if l.CSINodes != nil {
		if c, err := l.CSINodes.Get(node.Name); err == nil {
			csiNode = c
		}
	}
	newVolumes := map[string]string{}
	for _, v := range s.volumes {
		if v.migratedFrom == "" || migrationOn(csiNode, v.migratedFrom) {
			newVolumes[v.unique] = v.driver
		}
	}
	if len(newVolumes) == 0 {
		return nil
	}
	for _, driver := range newVolumes {
		if !pl.driverInstalled(driver, csiNode) {
			return framework.NewStatus(framework.Unschedulable, fmt.Sprintf("%s CSI driver is not installed on the node", driver))
		}
	}
	limits := volumeLimits(csiNode)
	if len(limits) == 0 {
		return nil
	}
	logger := klog.FromContext(ctx)
	attached := map[string]string{}
	for _, pi := range ni.Pods() {
		vols, _ := pl.attachable(logger, pi.Pod, false)
		for _, v := range vols {
			if v.migratedFrom == "" || migrationOn(csiNode, v.migratedFrom) {
				attached[v.unique] = v.driver
			}
		}
	}
	count := map[string]int{}
	for unique, driver := range attached {
		delete(newVolumes, unique)
		count[driver]++
	}
	for unique, driver := range pl.attachedByVolumeAttachments(s.attachments[node.Name]) {
		if _, counted := attached[unique]; !counted {
			count[driver]++
		}
	}
	adding := map[string]int{}
	for _, driver := range newVolumes {
		adding[driver]++
	}
	for driver, n := range adding {
		if limit, ok := limits[driver]; ok && count[driver]+n > int(limit) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonMaxVolumeCountExceeded)
		}
	}
	return nil
}

// driverInstalled: a CSIDriver that asks for it (preventPodSchedulingIfMissing)
// must be on the node's CSINode; a driver without a CSIDriver object, or
// one that does not ask, is assumed installed.
func (pl *CSILimits) driverInstalled(driver string, csiNode *storagev1.CSINode) bool {
	l := pl.handle.Listers()
	if l.CSIDrivers == nil {
		return true
	}
	d, err := l.CSIDrivers.Get(driver)
	if err != nil || d.Spec.PreventPodSchedulingIfMissing == nil || !*d.Spec.PreventPodSchedulingIfMissing {
		return true
	}
	if csiNode == nil {
		return false
	}
	for _, nd := range csiNode.Spec.Drivers {
		if nd.Name == driver {
			return true
		}
	}
	return false
}

// attachable lists a pod's attachable volumes. For the pod being scheduled
// a missing claim is an error; for pods already placed it is skipped.
func (pl *CSILimits) attachable(logger klog.Logger, pod *v1.Pod, newPod bool) ([]volume, error) {
	l := pl.handle.Listers()
	var out []volume
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name := helper.PVCName(pod, vol)
		if name == "" {
			if v, ok := pl.inlineVolume(logger, vol, pod.Namespace); ok {
				out = append(out, v)
			}
			continue
		}
		if l.PersistentVolumeClaims == nil {
			continue
		}
		pvc, err := l.PersistentVolumeClaims.PersistentVolumeClaims(pod.Namespace).Get(name)
		if err != nil {
			if newPod {
				return nil, fmt.Errorf("looking up PVC %s/%s: %w", pod.Namespace, name, err)
			}
			continue
		}
		if v, ok := pl.claimVolume(logger, pvc); ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// inlineVolume: an in-tree volume that migrates to CSI counts against
// that driver (where the migration is on).
func (pl *CSILimits) inlineVolume(logger klog.Logger, vol *v1.Volume, ns string) (volume, bool) {
	if !pl.translator.IsInlineMigratable(vol) {
		return volume{}, false
	}
	plugin, err := pl.translator.GetInTreePluginNameFromSpec(nil, vol)
	if err != nil {
		return volume{}, false
	}
	pv, err := pl.translator.TranslateInTreeInlineVolumeToCSI(logger, vol, ns)
	if err != nil || pv == nil || pv.Spec.CSI == nil {
		return volume{}, false
	}
	driver, err := pl.translator.GetCSINameFromInTreeName(plugin)
	if err != nil {
		return volume{}, false
	}
	return volume{unique: driver + "/" + pv.Spec.CSI.VolumeHandle, driver: driver, migratedFrom: plugin}, true
}

// claimVolume: a bound claim counts its PV's CSI driver and handle (an
// in-tree PV its migrated driver); a claim not bound yet, or bound to a PV
// not found, counts against its class's provisioner.
func (pl *CSILimits) claimVolume(logger klog.Logger, pvc *v1.PersistentVolumeClaim) (volume, bool) {
	l := pl.handle.Listers()
	if pvc.Spec.VolumeName == "" || l.PersistentVolumes == nil {
		return pl.classVolume(pvc)
	}
	pv, err := l.PersistentVolumes.Get(pvc.Spec.VolumeName)
	if err != nil {
		return pl.classVolume(pvc)
	}
	if pv.Spec.CSI != nil {
		return volume{unique: pv.Spec.CSI.Driver + "/" + pv.Spec.CSI.VolumeHandle, driver: pv.Spec.CSI.Driver}, true
	}
	if !pl.translator.IsPVMigratable(pv) {
		return volume{}, false
	}
	plugin, err := pl.translator.GetInTreePluginNameFromSpec(pv, nil)
	if err != nil {
		return volume{}, false
	}
	csiPV, err := pl.translator.TranslateInTreePVToCSI(logger, pv)
	if err != nil || csiPV.Spec.CSI == nil {
		return volume{}, false
	}
	return volume{unique: csiPV.Spec.CSI.Driver + "/" + csiPV.Spec.CSI.VolumeHandle, driver: csiPV.Spec.CSI.Driver, migratedFrom: plugin}, true
}

// classVolume counts an unbound claim against its class's provisioner (an
// in-tree provisioner against its migrated driver).
func (pl *CSILimits) classVolume(pvc *v1.PersistentVolumeClaim) (volume, bool) {
	sc := helper.StorageClass(pl.handle.Listers(), pvc)
	if sc == nil {
		return volume{}, false
	}
	unique := unboundPrefix + pvc.Namespace + "/" + pvc.Name
	if pl.translator.IsMigratableIntreePluginByName(sc.Provisioner) {
		driver, err := pl.translator.GetCSINameFromInTreeName(sc.Provisioner)
		if err != nil {
			return volume{}, false
		}
		return volume{unique: driver + "/" + unique, driver: driver, migratedFrom: sc.Provisioner}, true
	}
	return volume{unique: sc.Provisioner + "/" + unique, driver: sc.Provisioner}, true
}

// attachedByVolumeAttachments lists the CSI volumes a node's
// VolumeAttachments hold (with an attacher and a CSI PV), stale ones
// included, as upstream counts them.
func (pl *CSILimits) attachedByVolumeAttachments(vas []*storagev1.VolumeAttachment) map[string]string {
	l := pl.handle.Listers()
	out := map[string]string{}
	for _, va := range vas {
		if va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil || l.PersistentVolumes == nil {
			continue
		}
		pv, err := l.PersistentVolumes.Get(*va.Spec.Source.PersistentVolumeName)
		if err != nil || pv.Spec.CSI == nil {
			continue
		}
		out[va.Spec.Attacher+"/"+pv.Spec.CSI.VolumeHandle] = va.Spec.Attacher
	}
	return out
}

// migrationOn: in v1.37 the migration of the five in-tree plugins is on
// (GA, locked) wherever the node has a CSINode.
func migrationOn(csiNode *storagev1.CSINode, plugin string) bool {
	if csiNode == nil {
		return false
	}
	switch plugin {
	case csilibplugins.AWSEBSInTreePluginName, csilibplugins.PortworxVolumePluginName, csilibplugins.GCEPDInTreePluginName,
		csilibplugins.AzureDiskInTreePluginName, csilibplugins.CinderInTreePluginName:
		return true
	}
	return false
}

// volumeLimits are the node's per-driver attach limits.
func volumeLimits(csiNode *storagev1.CSINode) map[string]int32 {
	out := map[string]int32{}
	if csiNode == nil {
		return out
	}
	for _, d := range csiNode.Spec.Drivers {
		if d.Allocatable != nil && d.Allocatable.Count != nil {
			out[d.Name] = *d.Allocatable.Count
		}
	}
	return out
}

// EventsToRegister: a pod leaving the node, a VolumeAttachment going, or
// the node's CSINode changing.
func (*CSILimits) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}},
		{Event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.VolumeAttachment, ActionType: framework.Delete}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}, QueueingHintFn: helper.AfterClaimChange},
	}, nil
}
