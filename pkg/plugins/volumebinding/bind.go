package volumebinding

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	volumehelpers "k8s.io/component-helpers/storage/volume"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// defaultBindTimeout is VolumeBindingArgs' bindTimeoutSeconds default.
const defaultBindTimeout = 600 * time.Second

// bindPollInterval is how often PreBind looks at the claims while it waits
// for the PV controller (upstream's 1 s).
const bindPollInterval = time.Second

var (
	pvResource  = schema.GroupResource{Resource: "persistentvolumes"}
	pvcResource = schema.GroupResource{Resource: "persistentvolumeclaims"}
)

// bindings are PreBind's writes, as the API returned them: static PVs
// given their claim, and claims given the selected node.
type bindings struct {
	static    []staticBinding
	provision []*v1.PersistentVolumeClaim
}

type staticBinding struct {
	pv  *v1.PersistentVolume
	pvc *v1.PersistentVolumeClaim
}

// PreBind is upstream's BindPodVolumes: it writes what Reserve decided
// (each static PV gets its claim in spec.claimRef, each claim left to a
// provisioner gets the selected node), then waits until the PV controller
// has bound every claim, up to bindTimeoutSeconds. A claim or volume that
// goes away, a claimRef reset, a selected node removed (the provisioner
// gave up) or the pod deleted fail PreBind at once, and the pod is tried
// again. In a simulation the store completes the binding as it is
// written, so the first look finds it done.
func (pl *VolumeBinding) PreBind(ctx context.Context, state *framework.CycleState, pod *v1.Pod, node string) *framework.Status {
	chosen := chosenOn(state, node)
	if len(chosen.static) == 0 && len(chosen.provision) == 0 {
		return nil
	}
	w := pl.handle.VolumeWriter()
	if w == nil {
		return nil
	}
	logger := klog.FromContext(ctx)
	b, err := pl.bindAPIUpdate(ctx, w, chosen, node)
	if err != nil {
		logger.V(5).Info("Failed to bind volumes for pod", "pod", klog.KObj(pod), "err", err)
		return framework.AsStatus(err)
	}
	if err := pl.waitForBindings(ctx, pod, node, b); err != nil {
		logger.V(5).Info("Failed to bind volumes for pod", "pod", klog.KObj(pod), "err", err)
		return framework.AsStatus(fmt.Errorf("binding volumes: %w", err))
	}
	logger.V(5).Info("Success binding volumes for pod", "pod", klog.KObj(pod))
	return nil
}

// bindAPIUpdate writes the bindings, static PVs first (by name), and keeps
// the objects the API returned.
func (pl *VolumeBinding) bindAPIUpdate(ctx context.Context, w framework.VolumeWriter, chosen *nodeVolumes, node string) (*bindings, error) {
	l := pl.handle.Listers()
	b := &bindings{}
	names := make([]string, 0, len(chosen.static))
	for name := range chosen.static {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		pvc := chosen.static[name]
		cur, err := l.PersistentVolumes.Get(name)
		if err != nil {
			return nil, err
		}
		pv := cur.DeepCopy()
		pv.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: pvc.Namespace, Name: pvc.Name,
			UID: pvc.UID, ResourceVersion: pvc.ResourceVersion}
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, annBoundByController, "yes")
		written, err := w.UpdatePersistentVolume(ctx, pv)
		if err != nil {
			return nil, err
		}
		klog.FromContext(ctx).V(2).Info("Updated PersistentVolume with claim. Waiting for binding to complete", "PV", klog.KObj(pv), "PVC", klog.KObj(pvc))
		b.static = append(b.static, staticBinding{pv: written, pvc: pvc})
	}
	for _, p := range chosen.provision {
		cur, err := l.PersistentVolumeClaims.PersistentVolumeClaims(p.claim.Namespace).Get(p.claim.Name)
		if err != nil {
			return nil, err
		}
		c := cur.DeepCopy()
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, annSelectedNode, node)
		written, err := w.UpdatePersistentVolumeClaim(ctx, c)
		if err != nil {
			return nil, err
		}
		b.provision = append(b.provision, written)
	}
	return b, nil
}

// waitForBindings looks at once, then every second on the handle's clock,
// until checkBindings says done or fails, the timeout passes, or the
// binding cycle is cancelled (the pod was deleted).
func (pl *VolumeBinding) waitForBindings(ctx context.Context, pod *v1.Pod, node string, b *bindings) error {
	if done, err := pl.checkBindings(ctx, pod, node, b); done || err != nil {
		return err
	}
	clk := pl.handle.Clock()
	timeout := clk.NewTimer(pl.bindTimeout)
	defer timeout.Stop()
	tick := clk.NewTicker(bindPollInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C():
			return context.DeadlineExceeded
		case <-tick.C():
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if done, err := pl.checkBindings(ctx, pod, node, b); done || err != nil {
			return err
		}
	}
}

// checkBindings is upstream's: true when every claim PreBind wrote is
// fully bound; an error when the binding cannot complete. An informer
// that has not yet seen PreBind's own write is waited for.
func (pl *VolumeBinding) checkBindings(ctx context.Context, pod *v1.Pod, nodeName string, b *bindings) (bool, error) {
	if _, ok := pl.handle.GetPod(pod.Namespace, pod.Name); !ok {
		return false, fmt.Errorf("pod does not exist any more: %w", apierrors.NewNotFound(v1.Resource("pods"), pod.Name))
	}
	// The binding cycle's goroutine: the node from the world, never from
	// the snapshot the next scheduling cycle rewrites (upstream reads its
	// node informer's lister).
	node, ok := pl.handle.GetNode(nodeName)
	if !ok {
		return false, fmt.Errorf("failed to get node %q: %w", nodeName, apierrors.NewNotFound(v1.Resource("node"), nodeName))
	}
	l := pl.handle.Listers()
	for _, s := range b.static {
		pv, err := l.PersistentVolumes.Get(s.pv.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", notFound(err, pvResource, s.pv.Name))
		}
		pvc, err := l.PersistentVolumeClaims.PersistentVolumeClaims(s.pvc.Namespace).Get(s.pvc.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check binding: %w", notFound(err, pvcResource, claimKey(s.pvc)))
		}
		if olderThan(pv.ResourceVersion, s.pv.ResourceVersion) {
			return false, nil
		}
		if err := volumehelpers.CheckNodeAffinity(pv, node.Labels); err != nil {
			return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", pv.Name, node.Name, err)
		}
		if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "" {
			return false, fmt.Errorf("ClaimRef got reset for pv %q", pv.Name)
		}
		if !fullyBound(pvc) {
			return false, nil
		}
	}
	for _, claim := range b.provision {
		pvc, err := l.PersistentVolumeClaims.PersistentVolumeClaims(claim.Namespace).Get(claim.Name)
		if err != nil {
			return false, fmt.Errorf("failed to check provisioning pvc: %w", notFound(err, pvcResource, claimKey(claim)))
		}
		if olderThan(pvc.ResourceVersion, claim.ResourceVersion) {
			return false, nil
		}
		if pvc.Annotations == nil {
			return false, fmt.Errorf("selectedNode annotation reset for PVC %q", pvc.Name)
		}
		if pvc.Annotations[annSelectedNode] != nodeName {
			// A provisioner that fails removes the annotation: try again.
			return false, fmt.Errorf("provisioning failed for PVC %q", pvc.Name)
		}
		if pvc.Spec.VolumeName != "" {
			pv, err := l.PersistentVolumes.Get(pvc.Spec.VolumeName)
			if err != nil {
				if apierrors.IsNotFound(err) {
					// Not seen yet, or deleted (then the claim is unbound later).
					return false, nil
				}
				return false, fmt.Errorf("failed to get pv %q from cache: %w", pvc.Spec.VolumeName, err)
			}
			if err := volumehelpers.CheckNodeAffinity(pv, node.Labels); err != nil {
				return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", pv.Name, node.Name, err)
			}
		}
		if !fullyBound(pvc) {
			return false, nil
		}
	}
	klog.FromContext(ctx).V(2).Info("All PVCs for pod are bound", "pod", klog.KObj(pod))
	return true, nil
}

// notFound is a lister's NotFound as upstream's assume cache words it
// (resource and key).
func notFound(err error, gr schema.GroupResource, key string) error {
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(gr, key)
	}
	return err
}

// olderThan: resource version a is older than b (both numbers; anything
// else is never older, as no order can be told).
func olderThan(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x < y
}

func fullyBound(pvc *v1.PersistentVolumeClaim) bool {
	return pvc.Spec.VolumeName != "" && metav1.HasAnnotation(pvc.ObjectMeta, annBindCompleted)
}
