package simulator

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/pkg/framework"
)

// CheckInvariants verifies what the scheduler's own decisions must never
// break, recomputed from the world's final state rather than the cache:
// on every node that received a pod from us, requests and the pod count fit
// allocatable; and every pod we placed tolerates its node's NoSchedule and
// NoExecute taints and matches its required node affinity; no device is
// allocated to two claims (but with admin access or a share), and a
// claim reserved for a bound pod is allocated on that pod's node.
func (w *World) CheckInvariants() []error {
	var errs []error
	ours := map[string]bool{}
	for _, p := range w.Pending {
		ours[p.Namespace+"/"+p.Name] = true
	}
	nodes := map[string]*v1.Node{}
	for _, n := range w.Store.Nodes() {
		nodes[n.Name] = n
	}
	used := map[string]*framework.Resource{}
	count := map[string]int64{}
	touched := map[string]bool{}
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		n := p.Spec.NodeName
		if used[n] == nil {
			used[n] = &framework.Resource{}
		}
		pi := framework.NewPodInfo(p)
		used[n].AddResource(&pi.Requests)
		count[n]++
		if !ours[p.Namespace+"/"+p.Name] {
			continue
		}
		touched[n] = true
		node, ok := nodes[n]
		if !ok {
			errs = append(errs, fmt.Errorf("pod %s/%s placed on missing node %s", p.Namespace, p.Name, n))
			continue
		}
		for i := range node.Spec.Taints {
			t := &node.Spec.Taints[i]
			if (t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute) &&
				!v1helper.TolerationsTolerateTaint(klog.Background(), p.Spec.Tolerations, t, true) {
				errs = append(errs, fmt.Errorf("pod %s/%s placed on %s despite untolerated taint %s", p.Namespace, p.Name, n, t.ToString()))
			}
		}
		if ok, _ := nodeaffinity.GetRequiredNodeAffinity(p).Match(node); !ok {
			errs = append(errs, fmt.Errorf("pod %s/%s placed on %s which does not match its required node affinity", p.Namespace, p.Name, n))
		}
	}
	for n := range touched {
		node, ok := nodes[n]
		if !ok {
			continue
		}
		alloc := framework.NewResource(node.Status.Allocatable)
		u := used[n]
		if count[n] > alloc.AllowedPodNumber {
			errs = append(errs, fmt.Errorf("node %s: %d pods > %d allocatable", n, count[n], alloc.AllowedPodNumber))
		}
		if u.MilliCPU > alloc.MilliCPU {
			errs = append(errs, fmt.Errorf("node %s: cpu requested %dm > allocatable %dm", n, u.MilliCPU, alloc.MilliCPU))
		}
		if u.Memory > alloc.Memory {
			errs = append(errs, fmt.Errorf("node %s: memory requested %d > allocatable %d", n, u.Memory, alloc.Memory))
		}
		if u.EphemeralStorage > alloc.EphemeralStorage && u.EphemeralStorage > 0 {
			errs = append(errs, fmt.Errorf("node %s: ephemeral-storage requested %d > allocatable %d", n, u.EphemeralStorage, alloc.EphemeralStorage))
		}
		for name, q := range u.Scalar {
			if alloc.Scalar[name] == 0 && framework.IsDRAExtendedResourceName(name) {
				// Backed by DRA: the pod's claim holds the devices
				// (CheckClaims below).
				continue
			}
			if q > alloc.Scalar[name] {
				errs = append(errs, fmt.Errorf("node %s: %s requested %d > allocatable %d", n, name, q, alloc.Scalar[name]))
			}
		}
	}
	errs = append(errs, w.checkGangs(ours, nodes)...)
	return append(errs, w.Store.CheckClaims(nodes)...)
}

// checkGangs: no gang (a PodGroup with the gang policy) had fewer than
// minCount members bound once we bound one of them, unless some were
// bound before the run (a gang that was already running may have lost
// members since). Members that finished or were preempted since count as
// bound: they were.
func (w *World) checkGangs(ours map[string]bool, nodes map[string]*v1.Node) []error {
	groups := w.Store.PodGroups()
	if len(groups) == 0 {
		return nil
	}
	type tally struct{ bound, boundByUs int }
	byGroup := map[string]*tally{}
	pods := w.Store.Pods()
	for _, e := range w.Store.Evicted {
		pods = append(pods, e.Pod)
	}
	for _, p := range pods {
		name := framework.PodGroupName(p)
		if name == "" || p.Spec.NodeName == "" {
			continue
		}
		k := framework.PodGroupKey(p.Namespace, name)
		if byGroup[k] == nil {
			byGroup[k] = &tally{}
		}
		byGroup[k].bound++
		if ours[p.Namespace+"/"+p.Name] {
			byGroup[k].boundByUs++
		}
	}
	var errs []error
	for _, pg := range groups {
		if pg.Spec.SchedulingPolicy.Gang == nil {
			continue
		}
		t := byGroup[framework.PodGroupKey(pg.Namespace, pg.Name)]
		if t == nil || t.boundByUs == 0 || t.bound > t.boundByUs {
			continue
		}
		if min := int(pg.Spec.SchedulingPolicy.Gang.MinCount); t.bound < min {
			errs = append(errs, fmt.Errorf("pod group %s/%s: %d of its pods bound, fewer than its minCount %d (a gang is placed whole or not at all)", pg.Namespace, pg.Name, t.bound, min))
		}
	}
	if w.Scheduler != nil && w.Scheduler.PlacementsEnabled() {
		errs = append(errs, w.checkGroupDomains(pods, ours, nodes)...)
	}
	return errs
}

// checkGroupDomains: with placements (TopologyAwareWorkloadScheduling),
// every pod of a group with a topology constraint that we bound is in the
// same domain as the group's other bound pods.
func (w *World) checkGroupDomains(pods []*v1.Pod, ours map[string]bool, nodes map[string]*v1.Node) []error {
	keys := map[string]string{}
	for _, pg := range w.Store.PodGroups() {
		if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
			keys[framework.PodGroupKey(pg.Namespace, pg.Name)] = c.Topology[0].Key
		}
	}
	if len(keys) == 0 {
		return nil
	}
	domains := map[string]map[string]bool{}
	anyOurs := map[string]bool{}
	for _, p := range pods {
		name := framework.PodGroupName(p)
		k := framework.PodGroupKey(p.Namespace, name)
		key, ok := keys[k]
		if name == "" || !ok || p.Spec.NodeName == "" {
			continue
		}
		d := "(no " + key + ")"
		if n, ok := nodes[p.Spec.NodeName]; ok {
			if v, ok := n.Labels[key]; ok {
				d = v
			}
		}
		if domains[k] == nil {
			domains[k] = map[string]bool{}
		}
		domains[k][d] = true
		anyOurs[k] = anyOurs[k] || ours[p.Namespace+"/"+p.Name]
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(domains)) {
		if anyOurs[k] && len(domains[k]) > 1 {
			errs = append(errs, fmt.Errorf("pod group %s: its pods are bound in %d domains of %s (%s), where its topology constraint asks for one", k, len(domains[k]), keys[k], strings.Join(slices.Sorted(maps.Keys(domains[k])), ", ")))
		}
	}
	return errs
}
