package kube

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/util/retry"
)

// CreateResourceClaim implements framework.ClaimWriter.
func (w *World) CreateResourceClaim(ctx context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return w.client.ResourceV1().ResourceClaims(c.Namespace).Create(ctx, c, metav1.CreateOptions{})
}

// DeleteResourceClaim implements framework.ClaimWriter.
func (w *World) DeleteResourceClaim(ctx context.Context, namespace, name string) error {
	return w.client.ResourceV1().ResourceClaims(namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

// PatchPodExtendedResourceClaimStatus implements framework.ClaimWriter as
// kube-scheduler's PatchPodStatus: a two-way strategic merge patch of the
// pod's status to the status subresource, retried on conflicts and
// transient errors.
func (w *World) PatchPodExtendedResourceClaimStatus(ctx context.Context, pod *v1.Pod, st *v1.PodExtendedResourceClaimStatus) error {
	next := pod.Status.DeepCopy()
	next.ExtendedResourceClaimStatus = st
	oldData, err := json.Marshal(v1.Pod{Status: pod.Status})
	if err != nil {
		return err
	}
	newData, err := json.Marshal(v1.Pod{Status: *next})
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &v1.Pod{})
	if err != nil {
		return fmt.Errorf("failed to create merge patch for pod %q/%q: %w", pod.Namespace, pod.Name, err)
	}
	if string(patch) == "{}" {
		return nil
	}
	return retry.OnError(retry.DefaultBackoff, retriableWithConflict, func() error {
		_, err := w.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	})
}
