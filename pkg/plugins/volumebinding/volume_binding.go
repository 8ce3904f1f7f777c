// Package volumebinding holds VolumeBinding, minimal but correct: a pod's
// bound claims restrict it to the nodes their PVs' node affinity allows;
// claims of a WaitForFirstConsumer class need, on the node, an available
// static PV that matches (class, size, access modes, volume mode, selector,
// node affinity) or a provisioner whose allowedTopologies admit the node.
// Static PVs chosen for a pod are held (Reserve) so that no two claims get
// the same one, and PreBind writes the choice through the API as upstream
// does (claimRef on a static PV, the selected node on a claim to provision)
// and waits, up to bindTimeoutSeconds, until the PV controller (and a
// provisioner) have completed the binding (bind.go).
package volumebinding

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins/helper"
)

// Name of the plugin.
const Name = "VolumeBinding"

// Upstream's reasons.
const (
	ErrReasonBindConflict   = "node(s) didn't find available persistent volumes to bind"
	ErrReasonNodeConflict   = "node(s) didn't match PersistentVolume's node affinity"
	ErrReasonPVNotExist     = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	ErrReasonNotEnoughSpace = "node(s) did not have enough free storage"
	errUnboundImmediate     = "pod has unbound immediate PersistentVolumeClaims"
	noProvisioner           = "kubernetes.io/no-provisioner"
)

const stateKey framework.StateKey = Name

// VolumeBinding is a PreFilter, Filter, Score and Reserve plugin.
type VolumeBinding struct {
	handle framework.Handle
	mu     sync.Mutex
	// shape scores a storage class's utilization.
	shape helper.FunctionShape
	// assumed maps a static PV chosen for a claim to that claim's key.
	assumed map[string]string
	// bindTimeout bounds PreBind's wait for the PV controller.
	bindTimeout time.Duration
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

// New builds the plugin from VolumeBindingArgs: the scoring shape
// (StorageCapacityScoring, beta and on in v1.37) and bindTimeoutSeconds,
// how long PreBind waits for the PV controller (600 s by default).
func New(_ context.Context, obj runtime.Object, h framework.Handle) (framework.Plugin, error) {
	args, err := helper.Args[configv1.VolumeBindingArgs](obj)
	if err != nil {
		return nil, err
	}
	shape := make(helper.FunctionShape, 0, len(args.Shape))
	for _, p := range args.Shape {
		// Shape scores are 0..10; node scores 0..100.
		shape = append(shape, helper.FunctionShapePoint{Utilization: int64(p.Utilization), Score: int64(p.Score) * (framework.MaxNodeScore / 10)})
	}
	timeout := defaultBindTimeout
	if args.BindTimeoutSeconds != nil {
		timeout = time.Duration(*args.BindTimeoutSeconds) * time.Second
	}
	return &VolumeBinding{handle: h, assumed: map[string]string{}, shape: shape, bindTimeout: timeout}, nil
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
	provision []provision
}

// provision is a claim left to its provisioner on a node, with the
// CSIStorageCapacity that admitted it (nil when capacity is not tracked).
type provision struct {
	claim    *v1.PersistentVolumeClaim
	capacity *storagev1.CSIStorageCapacity
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
			// A generic ephemeral volume's claim missing is normal right
			// after the pod's creation: upstream says what it waits for.
			if vol.Ephemeral != nil {
				return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name))
			}
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
		case pvc.Spec.VolumeName != "" && metav1.HasAnnotation(pvc.ObjectMeta, annBindCompleted):
			// Bound only once the PV controller says so: a claim prebound
			// to a volume (spec.volumeName, no bind-completed) is not yet.
			s.bound = append(s.bound, pvc)
		case pvc.Spec.VolumeName == "" && helper.IsDelayedBinding(l, pvc):
			// A prebound claim (volumeName set, not bound yet) is unbound
			// immediate whatever its class says (upstream's GetPodVolumeClaims).
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
	boundSatisfied, boundPVsFound := true, true
	for _, pvc := range s.bound {
		pv, err := l.PersistentVolumes.Get(pvc.Spec.VolumeName)
		if err != nil {
			boundPVsFound = false
			break
		}
		if !pvNodeAffinityMatches(pv, node) {
			boundSatisfied = false
			break
		}
	}
	unboundSatisfied, enoughSpace := true, true
	if len(s.delayed) > 0 {
		var chosen *nodeVolumes
		chosen, unboundSatisfied, enoughSpace = pl.findVolumes(s.delayed, s.pvs, node)
		if unboundSatisfied && enoughSpace {
			s.mu.Lock()
			s.chosen[node.Name] = chosen
			s.mu.Unlock()
		}
	}
	// Upstream's reasons, in its order (FindPodVolumes).
	var reasons []string
	if !boundSatisfied {
		reasons = append(reasons, ErrReasonNodeConflict)
	}
	if !unboundSatisfied {
		reasons = append(reasons, ErrReasonBindConflict)
	}
	if !enoughSpace {
		reasons = append(reasons, ErrReasonNotEnoughSpace)
	}
	if !boundPVsFound {
		reasons = append(reasons, ErrReasonPVNotExist)
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
// PV that matches it on node, or accepts dynamic provisioning there, as
// upstream's FindPodVolumes: a claim whose selected-node annotation names
// another node does not fit; one that names this node is provisioned; a
// provisioner whose CSIDriver tracks storage capacity needs a
// CSIStorageCapacity of the class that reaches the node and holds the
// claim. ok is false on a bind conflict, space on a lack of capacity.
func (pl *VolumeBinding) findVolumes(claims []*v1.PersistentVolumeClaim, pvs []*v1.PersistentVolume, node *v1.Node) (chosen *nodeVolumes, ok, space bool) {
	l := pl.handle.Listers()
	chosen = &nodeVolumes{static: map[string]*v1.PersistentVolumeClaim{}}
	// As upstream's FindPodVolumes: the claims with a selected node are
	// provisioned (in the pod's order), the others matched with static PVs
	// smallest request first (findMatchingVolumes' byPVCSize), and those
	// left unmatched provisioned after, in that order: which PV a claim
	// gets, and which claim's failure is reported, follow from it.
	var toProvision, toMatch []*v1.PersistentVolumeClaim
	for _, pvc := range claims {
		if selected, has := pvc.Annotations[annSelectedNode]; has {
			if selected != node.Name {
				return nil, false, true
			}
			toProvision = append(toProvision, pvc)
			continue
		}
		toMatch = append(toMatch, pvc)
	}
	sort.SliceStable(toMatch, func(i, j int) bool {
		a, b := toMatch[i].Spec.Resources.Requests[v1.ResourceStorage], toMatch[j].Spec.Resources.Requests[v1.ResourceStorage]
		return a.Cmp(b) < 0
	})
	pl.mu.Lock()
	for _, pvc := range toMatch {
		key := claimKey(pvc)
		var best *v1.PersistentVolume
		for _, pv := range pvs {
			if _, taken := chosen.static[pv.Name]; taken || !pl.available(pv, pvc, key) || !matches(pv, pvc) || !pvNodeAffinityMatches(pv, node) {
				continue
			}
			if pvc.Spec.VolumeName != "" && pv.Name != pvc.Spec.VolumeName {
				continue // prebound: only its volume
			}
			if best == nil || capacity(pv).Cmp(*capacity(best)) < 0 {
				best = pv
			}
		}
		if best != nil {
			chosen.static[best.Name] = pvc
			continue
		}
		toProvision = append(toProvision, pvc)
	}
	pl.mu.Unlock()
	for _, pvc := range toProvision {
		sc := helper.StorageClass(l, pvc)
		if sc == nil || sc.Provisioner == "" || sc.Provisioner == noProvisioner || !allowedTopologiesMatch(sc, node) {
			return nil, false, true
		}
		enough, capacity := pl.storageCapacity(sc, pvc, node)
		if !enough {
			return nil, true, false
		}
		chosen.provision = append(chosen.provision, provision{claim: pvc, capacity: capacity})
	}
	return chosen, true, true
}

// storageCapacity is upstream's hasEnoughCapacity: without a CSIDriver
// that tracks capacity (storageCapacity: true) there is always room;
// otherwise a CSIStorageCapacity of the class, reaching the node, whose
// maximumVolumeSize (else capacity) holds the claim. The first such object
// (by namespace and name) is the node's capacity for scoring.
func (pl *VolumeBinding) storageCapacity(sc *storagev1.StorageClass, pvc *v1.PersistentVolumeClaim, node *v1.Node) (bool, *storagev1.CSIStorageCapacity) {
	want, ok := pvc.Spec.Resources.Requests[v1.ResourceStorage]
	if !ok {
		return true, nil
	}
	l := pl.handle.Listers()
	if l.CSIDrivers == nil || l.CSIStorageCapacities == nil {
		return true, nil
	}
	driver, err := l.CSIDrivers.Get(sc.Provisioner)
	if err != nil || driver.Spec.StorageCapacity == nil || !*driver.Spec.StorageCapacity {
		return true, nil
	}
	caps, err := l.CSIStorageCapacities.List(labels.Everything())
	if err != nil {
		return false, nil
	}
	sort.Slice(caps, func(i, j int) bool {
		if caps[i].Namespace != caps[j].Namespace {
			return caps[i].Namespace < caps[j].Namespace
		}
		return caps[i].Name < caps[j].Name
	})
	for _, c := range caps {
		if c.StorageClassName != sc.Name || c.NodeTopology == nil {
			continue
		}
		limit := c.MaximumVolumeSize
		if limit == nil {
			limit = c.Capacity
		}
		if limit == nil || limit.Value() < want.Value() {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.NodeTopology)
		if err != nil || !sel.Matches(labels.Set(node.Labels)) {
			continue
		}
		return true, c
	}
	return false, nil
}

// available: not being deleted, not claimed by or held for another claim;
// Available (status.phase), unless it is already bound to this claim, as
// upstream's FindMatchingVolume (component-helpers) requires.
func (pl *VolumeBinding) available(pv *v1.PersistentVolume, pvc *v1.PersistentVolumeClaim, key string) bool {
	if pv.DeletionTimestamp != nil {
		return false
	}
	ref := pv.Spec.ClaimRef
	if ref != nil && (ref.Namespace != pvc.Namespace || ref.Name != pvc.Name || (ref.UID != "" && ref.UID != pvc.UID)) {
		return false
	}
	if ref == nil && pv.Status.Phase != v1.VolumeAvailable {
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

// Score is upstream's (StorageCapacityScoring): per storage class, the
// requested storage over the capacity, through the shape (by default an
// empty class scores 100, a full one 0), averaged over the classes. With
// static bindings on the node, the chosen PVs' capacities; otherwise the
// claims to provision, against the CSIStorageCapacity that admitted them.
func (pl *VolumeBinding) Score(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	chosen := chosenOn(state, ni.NodeName())
	if len(chosen.static) == 0 && len(chosen.provision) == 0 {
		return 0, nil // nothing to score, nothing allocated
	}
	type usage struct{ requested, capacity int64 }
	classes := map[string]*usage{}
	class := func(name string) *usage {
		u := classes[name]
		if u == nil {
			u = &usage{}
			classes[name] = u
		}
		return u
	}
	if len(chosen.static) > 0 {
		l := pl.handle.Listers()
		for pvName, pvc := range chosen.static {
			pv, err := l.PersistentVolumes.Get(pvName)
			if err != nil {
				continue
			}
			u := class(pv.Spec.StorageClassName)
			req := pvc.Spec.Resources.Requests[v1.ResourceStorage]
			capacity := pv.Spec.Capacity[v1.ResourceStorage]
			u.requested += req.Value()
			u.capacity += capacity.Value()
		}
	} else {
		for _, p := range chosen.provision {
			if p.capacity == nil {
				continue
			}
			u := class(helper.StorageClassName(p.claim))
			// Not +=: two claims of one class share the node's capacity.
			if p.capacity.Capacity != nil {
				u.capacity = p.capacity.Capacity.Value()
			}
			req := p.claim.Spec.Resources.Requests[v1.ResourceStorage]
			u.requested += req.Value()
		}
	}
	if len(classes) == 0 {
		return 0, nil
	}
	var total int64
	for _, u := range classes {
		total += pl.shape.ScoreAt(u.requested, u.capacity)
	}
	return int64(math.Round(float64(total) / float64(len(classes)))), nil
}

// ScoreExtensions implements framework.ScorePlugin.
func (*VolumeBinding) ScoreExtensions() framework.ScoreExtensions { return nil }

// chosenOn returns what Filter found on node for the delayed claims.
// noVolumes is what a node without chosen volumes has (shared, read-only).
var noVolumes = &nodeVolumes{}

func chosenOn(state *framework.CycleState, node string) *nodeVolumes {
	d, err := state.Read(stateKey)
	if err != nil {
		return noVolumes
	}
	s := d.(*stateData)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := s.chosen[node]; v != nil {
		return v
	}
	return noVolumes
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
	annBindCompleted     = "pv.kubernetes.io/bind-completed"
	annSelectedNode      = "volume.kubernetes.io/selected-node"
)

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

// AppendPodSignature implements framework.EquivalencePlugin for pods
// without claims only: PreFilter skips them and Score is 0 on every node.
// A pod with claims reads listers and the in-flight assumptions, so it is
// never cached.
func (*VolumeBinding) AppendPodSignature(b []byte, pi *framework.PodInfo) ([]byte, bool) {
	pod := pi.Pod
	if helper.HasPVCs(pod) {
		return b, false
	}
	return b, true
}
