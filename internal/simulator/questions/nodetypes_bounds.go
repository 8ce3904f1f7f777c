package questions

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// usableTypes says, for each candidate, whether some pod the simulation
// schedules (one without a node in c, the workloads' pods included) could
// run on a new node of it as far as the pod and the node alone decide. A
// type no pod can use is never why a pod schedules: the search leaves it
// out instead of simulating hundreds of nodes of it per round (their only
// effect would be on how far the scheduler's partial search reaches).
//
// Every check is a necessary condition that Filter plugins enforce, taken
// on the permissive side where a gate or an object could decide otherwise:
// the node's NoSchedule and NoExecute taints tolerated (with the
// comparison operators), its labels matching the pod's nodeSelector and
// required node affinity, and each request no more than the node's
// allocatable (with the smaller of the pod-level and the containers'
// requests; an extended resource the node lacks may come from a
// DeviceClass, or the configuration may ignore it, so it counts only when
// the input has no DeviceClass and resourcesIgnored is false). A pod with
// resource claims could use any type.
func usableTypes(c *cluster.Cluster, types []NodeType, resourcesIgnored bool) []bool {
	deviceClasses := resourcesIgnored || hasDeviceClasses(c)
	type need struct {
		pod      *v1.Pod
		affinity nodeaffinity.RequiredNodeAffinity
		requests v1.ResourceList
	}
	var pods []need
	for _, p := range c.Pods {
		if p.Spec.NodeName != "" {
			continue
		}
		pods = append(pods, need{p, nodeaffinity.GetRequiredNodeAffinity(p), smallestRequests(p)})
	}
	out := make([]bool, len(types))
	for i, t := range types {
		n := t.Node
		for _, p := range pods {
			if couldUse(p.pod, p.affinity, p.requests, n, deviceClasses) {
				out[i] = true
				break
			}
		}
	}
	return out
}

func couldUse(p *v1.Pod, affinity nodeaffinity.RequiredNodeAffinity, requests v1.ResourceList, n *v1.Node, deviceClasses bool) bool {
	if len(p.Spec.ResourceClaims) > 0 {
		return true
	}
	if ok, _ := affinity.Match(n); !ok {
		return false
	}
	if _, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, p.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
	}, true); untolerated {
		return false
	}
	for name, q := range requests {
		alloc, ok := n.Status.Allocatable[name]
		if !ok {
			if deviceClasses || isNativeResource(name) || q.IsZero() {
				continue // a native resource the node does not list is checked by the plugins as they read it
			}
			return false
		}
		if q.Cmp(alloc) > 0 {
			return false
		}
	}
	return true
}

// isNativeResource: cpu, memory, ephemeral-storage, pods and hugepages.
func isNativeResource(name v1.ResourceName) bool {
	switch name {
	case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods:
		return true
	}
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// smallestRequests are a pod's requests, each the smaller of its
// pod-level and its containers' (whichever the PodLevelResources gate
// makes the scheduler read), without overhead. A resource only one of
// them requests is left out: the other reads 0 for it.
func smallestRequests(p *v1.Pod) v1.ResourceList {
	containers := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{SkipPodLevelResources: true, ExcludeOverhead: true})
	if p.Spec.Resources == nil {
		return containers
	}
	withPod := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{ExcludeOverhead: true})
	for name, c := range containers {
		q, ok := withPod[name]
		switch {
		case !ok:
			delete(containers, name)
		case q.Cmp(c) < 0:
			containers[name] = q
		}
	}
	return containers
}

// nodesHint is how many nodes of type t would hold the pods placed on w's
// new nodes of it, by their requests and the pods allowed per node: where
// tryType's search starts in its first round (0: no estimate). It is a
// starting point only; the search's answer does not depend on it.
func nodesHint(w *nodeTypeWorld, i int, t NodeType) int {
	k := 0
	for name, sum := range w.placedRequests[i] {
		alloc, ok := t.Node.Status.Allocatable[name]
		if !ok || alloc.MilliValue() <= 0 {
			continue
		}
		k = max(k, int((sum+alloc.MilliValue()-1)/alloc.MilliValue()))
	}
	if podsCap, ok := t.Node.Status.Allocatable[v1.ResourcePods]; ok && podsCap.Value() > 0 {
		k = max(k, int((int64(w.placedAll[i])+podsCap.Value()-1)/podsCap.Value()))
	}
	return k
}
