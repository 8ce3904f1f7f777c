package framework

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// StartKubelets plays the kubelets of a cluster whose pods a scheduler
// binds (it binds nothing itself): every 100 ms, until the test ends, each
// pod bound to a node that exists is reported Running and Ready once
// startup has passed since it was first seen bound (its containers
// starting), and each pod being deleted is deleted with grace 0 (its
// containers stopped, as a kubelet confirms a deletion). The pods of a
// node that is gone are left to DeleteNode (the pod garbage collector's
// part).
func StartKubelets(t testing.TB, c kubernetes.Interface, startup time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		bound := map[types.UID]time.Time{}
		for {
			if err := kubeletPass(ctx, c, startup, bound); err != nil && ctx.Err() == nil {
				t.Logf("fake kubelets: %v", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// kubeletPass does one round over every pod; bound holds when each pod
// was first seen bound. The first error is returned (a pod changed
// meanwhile is seen again at the next pass).
func kubeletPass(ctx context.Context, c kubernetes.Interface, startup time.Duration, bound map[types.UID]time.Time) error {
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	exists := map[string]bool{}
	for _, n := range nodes.Items {
		exists[n.Name] = true
	}
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var first error
	now := time.Now()
	seen := map[types.UID]bool{}
	for i := range pods.Items {
		p := &pods.Items[i]
		seen[p.UID] = true
		if _, ok := bound[p.UID]; !ok && p.Spec.NodeName != "" {
			bound[p.UID] = now
		}
		switch {
		case p.DeletionTimestamp != nil:
			// Once: a pod a finalizer holds (a Job's) stays until its
			// controller lets it go.
			if p.DeletionGracePeriodSeconds != nil && *p.DeletionGracePeriodSeconds == 0 {
				continue
			}
			err = c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0)),
				Preconditions: &metav1.Preconditions{UID: &p.UID}})
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				err = nil
			}
		case p.Spec.NodeName != "" && exists[p.Spec.NodeName] && !RunningAndReady(p) && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed:
			if now.Sub(bound[p.UID]) < startup {
				continue
			}
			at := metav1.NewTime(now)
			p.Status.Phase, p.Status.StartTime = v1.PodRunning, &at
			p.Status.Conditions = nil
			for _, ct := range []v1.PodConditionType{v1.PodScheduled, v1.PodInitialized, v1.ContainersReady, v1.PodReady} {
				p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: ct, Status: v1.ConditionTrue, LastTransitionTime: at})
			}
			_, err = c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
				err = nil
			}
		}
		if err != nil && first == nil {
			first = fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		err = nil
	}
	for uid := range bound {
		if !seen[uid] {
			delete(bound, uid)
		}
	}
	return first
}

// RunningAndReady: the pod's phase is Running and its Ready condition
// True.
func RunningAndReady(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// Cordon marks the node unschedulable (kubectl cordon).
func Cordon(t testing.TB, c kubernetes.Interface, node string) {
	t.Helper()
	ctx := context.Background()
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Spec.Unschedulable = true
	if _, err := c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// PodsOn lists the pods bound to the node, in every namespace.
func PodsOn(ctx context.Context, c kubernetes.Interface, node string) ([]v1.Pod, error) {
	pods, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// Evict evicts the pod of that UID through the Eviction API (policy/v1),
// as kubectl drain does: while the API answers 429 TooManyRequests (a
// PodDisruptionBudget allows no disruption now), it asks again every
// second, up to timeout. before, if set, runs before each attempt. It
// returns how many times the API refused; a pod already gone (or
// replaced by one of the same name) counts as evicted.
func Evict(ctx context.Context, c kubernetes.Interface, namespace, name string, uid types.UID, timeout time.Duration, before func()) (refusals int, err error) {
	deadline := time.Now().Add(timeout)
	for {
		if before != nil {
			before()
		}
		err = c.PolicyV1().Evictions(namespace).Evict(ctx, &policyv1.Eviction{
			ObjectMeta:    metav1.ObjectMeta{Name: name, Namespace: namespace},
			DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}},
		})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return refusals, nil
		case apierrors.IsConflict(err):
			// The UID precondition failed, or the pod changed meanwhile.
			p, gerr := c.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(gerr) || (gerr == nil && p.UID != uid) {
				return refusals, nil
			}
		case apierrors.IsTooManyRequests(err):
			refusals++
		default:
			return refusals, fmt.Errorf("evicting %s/%s: %w", namespace, name, err)
		}
		if time.Now().After(deadline) {
			return refusals, fmt.Errorf("evicting %s/%s: refused for %s (%d times), last: %w", namespace, name, timeout, refusals, err)
		}
		select {
		case <-ctx.Done():
			return refusals, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// DeleteNode deletes the node, then the pods bound to it (with grace 0),
// as the pod garbage collector does to the pods of a node that is gone.
func DeleteNode(t testing.TB, c kubernetes.Interface, node string) {
	t.Helper()
	ctx := context.Background()
	if err := c.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pods, err := PodsOn(ctx, c, node)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		err := c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0)),
			Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			t.Fatal(err)
		}
	}
}
