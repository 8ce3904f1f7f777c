// Package volumebinding holds VolumeBinding, minimal but correct: a pod's
// bound claims restrict it to the nodes their PVs' node affinity allows;
// claims of a WaitForFirstConsumer class need, on the node, an available
// static PV that matches (class, size, access modes, volume mode, selector,
// node affinity) or a provisioner whose allowedTopologies admit the node.
// Static PVs chosen for a pod are held (Reserve) so that no two claims get
// the same one, and PreBind writes the choice through the API as upstream
// does (claimRef on a static PV, the selected node on a claim to provision);
// the PV controller completes the binding. Upstream's wait for that
// completion before binding the pod is not done: the kubelet waits for it.
package volumebinding

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "VolumeBinding"

// Upstream's reasons.
const (
	ErrReasonBindConflict = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNodeConflict = "node(s) didn't match PersistentVolume's node affinity"
	ErrReasonPVNotExist   = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	errUnboundImmediate   = "pod has unbound immediate PersistentVolumeClaims"
	noProvisioner         = "kubernetes.io/no-provisioner"
)

const stateKey framework.StateKey = Name

// VolumeBinding is a PreFilter, Filter, Score and Reserve plugin.
type VolumeBinding struct {
	handle framework.Handle
	mu     sync.Mutex
	// assumed maps a static PV chosen for a claim to that claim's key.
	assumed map[string]string
}

var (
	_ framework.PreFilterPlugin   = &VolumeBinding{}
	_ framework.FilterPlugin      = &VolumeBinding{}
	_ framework.PreScorePlugin    = &VolumeBinding{}
	_ framework.ScorePlugin       = &VolumeBinding{}
	_ framework.ReservePlugin     = &VolumeBinding{}
	_ framework.PreBindPlugin     = &VolumeBinding{}
	_ framework.EnqueueExtensions = &VolumeBinding{}
)

// New builds the plugin (VolumeBindingArgs are accepted; bindTimeoutSeconds
// and the scoring shape have nothing to act on yet).
func New(_ context.Context, _ runtime.Object, h framework.Handle) (framework.Plugin, error) {
	return &VolumeBinding{handle: h, assumed: map[string]string{}}, nil
}

// Name implements framework.Plugin.
func (*VolumeBinding) Name() string { return Name }

type stateData struct {
	bound   []*v1.PersistentVolumeClaim
	delayed []*v1.PersistentVolumeClaim
	// pvs are the PersistentVolumes, sorted by name, listed once per cycle for the
	// delayed claims (Filter reads them on every node).
	pvs []*v1.PersistentVolume
	mu  sync.Mutex
	// chosen are, per node, what Filter found for the delayed claims.
	chosen map[string]*nodeVolumes
}

// nodeVolumes are the delayed claims' volumes on one node: static PVs
// (PV name -> claim) and claims left to dynamic provisioning.
type nodeVolumes struct {
	static    map[string]*v1.PersistentVolumeClaim
	provision []*v1.PersistentVolumeClaim
}

func (s *stateData) Clone() framework.StateData { return s }

func claimKey(pvc *v1.PersistentVolumeClaim) string { return pvc.Namespace + "/" + pvc.Name }

// PreFilter sorts the pod's claims into bound and delayed; a missing or
// terminating claim, or an unbound claim of an immediate class, is
// unresolvable. Skip without claims.
func (pl *VolumeBinding) PreFilter(_ context.Context, state *framework.CycleState, pod *v1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if !helper.HasPVCs(pod) {
		state.Write(stateKey, &stateData{})
		return nil, framework.NewStatus(framework.Skip)
	}
	l := pl.handle.Listers()
	pl.releaseStaleHolds(l)
	s := &stateData{chosen: map[string]*nodeVolumes{}}
	immediate := false
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		name := helper.PVCName(pod, vol)
		if name == "" {
			continue
		}
		pvc, err := l.PersistentVolumeClaims.PersistentVolumeClaims(pod.Namespace).Get(name)
		if err != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q not found", name))
		}
		if vol.Ephemeral != nil && !metav1.IsControlledBy(pvc, pod) {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable,
				fmt.Sprintf("PVC %s/%s was not created for pod %s/%s (pod is not owner)", pvc.Namespace, pvc.Name, pod.Namespace, pod.Name))
		}
		if pvc.DeletionTimestamp != nil {
			return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("persistentvolumeclaim %q is being deleted", name))
		}
		switch {
		case pvc.Spec.VolumeName != "":
			s.bound = append(s.bound, pvc)
		case helper.IsDelayedBinding(l, pvc):
			s.delayed = append(s.delayed, pvc)
		default:
			immediate = true
		}
	}
	if immediate {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, errUnboundImmediate)
	}
	if len(s.delayed) > 0 {
		s.pvs, _ = l.PersistentVolumes.List(labels.Everything())
		sort.Slice(s.pvs, func(i, j int) bool { return s.pvs[i].Name < s.pvs[j].Name })
	}
	state.Write(stateKey, s)
	return nil, nil
}

// PreFilterExtensions implements framework.PreFilterPlugin.
func (*VolumeBinding) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter checks the bound claims' PVs' node affinity, then finds a static
// PV or a provisioner for each delayed claim.
func (pl *VolumeBinding) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) *framework.Status {
	d, err := state.Read(stateKey)
	if err != nil {
		return framework.AsStatus(err)
	}
	s := d.(*stateData)
	node := ni.Node()
	l := pl.handle.Listers()
	var reasons []string
	for _, pvc := range s.bound {
		pv, err := l.PersistentVolumes.Get(pvc.Spec.VolumeName)
		if err != nil {
			reasons = append(reasons, ErrReasonPVNotExist)
			break
		}
		if !pvNodeAffinityMatches(pv, node) {
			reasons = append(reasons, ErrReasonNodeConflict)
			break
		}
	}
	if len(s.delayed) > 0 {
		chosen, ok := pl.findVolumes(s.delayed, s.pvs, node)
		if !ok {
			reasons = append(reasons, ErrReasonBindConflict)
		} else {
			s.mu.Lock()
			s.chosen[node.Name] = chosen
			s.mu.Unlock()
		}
	}
	if len(reasons) > 0 {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, reasons...)
	}
	return nil
}

func pvNodeAffinityMatches(pv *v1.PersistentVolume, node *v1.Node) bool {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return true
	}
	ok, err := corev1helpers.MatchNodeSelectorTerms(node, pv.Spec.NodeAffinity.Required)
	return err == nil && ok
}

// findVolumes picks, for each delayed claim, the smallest available static
// PV that matches it on node, or accepts dynamic provisioning there.
func (pl *VolumeBinding) findVolumes(claims []*v1.PersistentVolumeClaim, pvs []*v1.PersistentVolume, node *v1.Node) (*nodeVolumes, bool) {
	l := pl.handle.Listers()
	chosen := &nodeVolumes{static: map[string]*v1.PersistentVolumeClaim{}}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for _, pvc := range claims {
		key := claimKey(pvc)
		var best *v1.PersistentVolume
		for _, pv := range pvs {
			if _, taken := chosen.static[pv.Name]; taken || !pl.available(pv, pvc, key) || !matches(pv, pvc) || !pvNodeAffinityMatches(pv, node) {
				continue
			}
			if best == nil || capacity(pv).Cmp(*capacity(best)) < 0 {
				best = pv
			}
		}
		if best != nil {
			chosen.static[best.Name] = pvc
			continue
		}
		sc := helper.StorageClass(l, pvc)
		if sc == nil || sc.Provisioner == "" || sc.Provisioner == noProvisioner || !allowedTopologiesMatch(sc, node) {
			return nil, false
		}
		chosen.provision = append(chosen.provision, pvc)
	}
	return chosen, true
}

// available: not being deleted, not claimed by or held for another claim.
func (pl *VolumeBinding) available(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim, key string) bool {
	if pv.DeletionTimestamp != nil {
		return false
	}
	if ref := pv.Spec.ClaimRef; ref != nil && (ref.Namespace != pvc.Namespace || ref.Name != pvc.Name || (ref.UID != "" && ref.UID != pvc.UID)) {
		return false
	}
	if holder, ok := pl.assumed[pv.Name]; ok && holder != key {
		return false
	}
	return true
}

// matches: same class, enough capacity, the claim's access modes, the same
// volume mode, and the claim's selector.
func matches(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim) bool {
	if pv.Spec.StorageClassName != helper.StorageClassName(pvc) {
		return false
	}
	if req, ok := pvc.Spec.Resources.Requests[v1.ResourceStorage]; ok {
		c := capacity(pv)
		if c.Cmp(req) < 0 {
			return false
		}
	}
	for _, m := range pvc.Spec.AccessModes {
		found := false
		for _, pm := range pv.Spec.AccessModes {
			if pm == m {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	mode := func(m *v1.PersistentVolumeMode) v1.PersistentVolumeMode {
		if m == nil {
			return v1.PersistentVolumeFilesystem
		}
		return *m
	}
	if mode(pv.Spec.VolumeMode) != mode(pvc.Spec.VolumeMode) {
		return false
	}
	if pvc.Spec.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(pvc.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pv.Labels)) {
			return false
		}
	}
	return true
}

func capacity(pv *v1.PersistentVolume) *resource.Quantity {
	q := pv.Spec.Capacity[v1.ResourceStorage]
	return &q
}

// allowedTopologiesMatch: no allowedTopologies, or one term whose every
// expression the node's labels satisfy.
func allowedTopologiesMatch(sc *storagev1.StorageClass, node *v1.Node) bool {
	if len(sc.AllowedTopologies) == 0 {
		return true
	}
	for _, term := range sc.AllowedTopologies {
		ok := true
		for _, e := range term.MatchLabelExpressions {
			v, has := node.Labels[e.Key]
			if !has || !contains(e.Values, v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// PreScore never skips: upstream v1.37 scores every node (0 without
// storage capacity information), and so do we.
func (*VolumeBinding) PreScore(context.Context, *framework.CycleState, *v1.Pod, []*framework.NodeInfo) *framework.Status {
	return nil
}

// Score is 0: capacity-based scoring needs CSIStorageCapacity, not modeled.
func (*VolumeBinding) Score(context.Context, *framework.CycleState, *v1.Pod, *framework.NodeInfo) (int64, *framework.Status) {
	return 0, nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (*VolumeBinding) ScoreExtensions() framework.ScoreExtensions { return nil }

// chosenOn returns what Filter found on node for the delayed claims.
func chosenOn(state *framework.CycleState, node string) *nodeVolumes {
	d, err := state.Read(stateKey)
	if err != nil {
		return &nodeVolumes{}
	}
	s := d.(*stateData)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.chosen[node]; v != nil {
		return v
	}
	return &nodeVolumes{}
}

// Reserve holds the static PVs chosen on the node for the pod's claims.
func (pl *VolumeBinding) Reserve(_ context.Context, state *framework.CycleState, _ *v1.Pod, node string) *framework.Status {
	chosen := chosenOn(state, node)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for pv, claim := range chosen.static {
		if holder, ok := pl.assumed[pv]; ok && holder != claimKey(claim) {
			return framework.NewStatus(framework.Unschedulable, ErrReasonBindConflict)
		}
	}
	for pv, claim := range chosen.static {
		pl.assumed[pv] = claimKey(claim)
	}
	return nil
}

// releaseStaleHolds drops the holds whose claim or volume no longer
// exists: a hold outlives Reserve (it is the binding in a simulation, and
// covers the PV controller's delay in a cluster), but not its objects.
func (pl *VolumeBinding) releaseStaleHolds(l framework.Listers) {
	if l.PersistentVolumeClaims == nil || l.PersistentVolumes == nil {
		return
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for pv, holder := range pl.assumed {
		ns, name, _ := strings.Cut(holder, "/")
		_, errClaim := l.PersistentVolumeClaims.PersistentVolumeClaims(ns).Get(name)
		_, errPV := l.PersistentVolumes.Get(pv)
		if apierrors.IsNotFound(errClaim) || apierrors.IsNotFound(errPV) {
			delete(pl.assumed, pv)
		}
	}
}

// Unreserve releases them.
func (pl *VolumeBinding) Unreserve(_ context.Context, state *framework.CycleState, _ *v1.Pod, node string) {
	chosen := chosenOn(state, node)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for pv, claim := range chosen.static {
		if pl.assumed[pv] == claimKey(claim) {
			delete(pl.assumed, pv)
		}
	}
}

// Upstream's annotations for a binding the scheduler makes.
const (
	annBoundByController = "pv.kubernetes.io/bound-by-controller"
	annSelectedNode      = "volume.kubernetes.io/selected-node"
)

// PreBind writes what Reserve decided, as kube-scheduler does: each static
// PV gets its claim in spec.claimRef (the PV controller completes the
// binding), each claim left to a provisioner gets the selected node.
// In a simulation the writer does nothing: Reserve's hold is the binding.
func (pl *VolumeBinding) PreBind(ctx context.Context, state *framework.CycleState, _ *v1.Pod, node string) *framework.Status {
	chosen := chosenOn(state, node)
	if len(chosen.static) == 0 && len(chosen.provision) == 0 {
		return nil
	}
	w := pl.handle.VolumeWriter()
	if w == nil {
		return nil
	}
	l := pl.handle.Listers()
	for name, pvc := range chosen.static {
		cur, err := l.PersistentVolumes.Get(name)
		if err != nil {
			return framework.AsStatus(fmt.Errorf("binding PersistentVolume %q: %w", name, err))
		}
		pv := cur.DeepCopy()
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name,
			UID: pvc.UID, ResourceVersion: pvc.ResourceVersion}
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, annBoundByController, "yes")
		if err := w.UpdatePersistentVolume(ctx, pv); err != nil {
			return framework.AsStatus(fmt.Errorf("binding PersistentVolume %q to claim %s: %w", name, claimKey(pvc), err))
		}
	}
	for _, pvc := range chosen.provision {
		cur, err := l.PersistentVolumeClaims.PersistentVolumeClaims(pvc.Namespace).Get(pvc.Name)
		if err != nil {
			return framework.AsStatus(fmt.Errorf("provisioning claim %s: %w", claimKey(pvc), err))
		}
		c := cur.DeepCopy()
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, annSelectedNode, node)
		if err := w.UpdatePersistentVolumeClaim(ctx, c); err != nil {
			return framework.AsStatus(fmt.Errorf("selecting node %s for claim %s: %w", node, claimKey(pvc), err))
		}
	}
	return nil
}

// EventsToRegister: storage objects and nodes appearing or changing.
func (*VolumeBinding) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add | framework.Update}, QueueingHintFn: helper.AfterClaimChange},
		{Event: framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add | framework.Update}},
		{Event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Add | framework.Update}},
	}, nil
}
