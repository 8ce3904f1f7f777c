package consolidatefuzz

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// budget is a PodDisruptionBudget as the judge counts it, on its own, as
// kube-controller-manager v1.37's disruption controller does
// (pkg/controller/disruption: trySync, getExpectedPodCount,
// getExpectedScale and its finders, countHealthyPods, updatePdbStatus).
type budget struct {
	pdb *policyv1.PodDisruptionBudget
	// sel is nil for a selector that does not parse (it selects nothing).
	sel                        labels.Selector
	expected, desired, healthy int32
	// failed: the controller could not count it (failSafe: no disruption
	// allowed).
	failed string
}

func (b *budget) name() string { return b.pdb.Namespace + "/" + b.pdb.Name }

// selects: getPodsForPdb's pods: the budget's namespace, its selector (an
// empty one selects every pod of the namespace).
func (b *budget) selects(p *v1.Pod) bool {
	return b.sel != nil && p.Namespace == b.pdb.Namespace && b.sel.Matches(labels.Set(p.Labels))
}

// allowed is updatePdbStatus's disruptionsAllowed.
func (b *budget) allowed() int32 {
	if b.failed != "" || b.expected <= 0 || b.healthy <= b.desired {
		return 0
	}
	return b.healthy - b.desired
}

func (b *budget) String() string {
	if b.failed != "" {
		return fmt.Sprintf("%s allows nothing: %s", b.name(), b.failed)
	}
	return fmt.Sprintf("%s allows %d (%d healthy, %d desired of %d expected)", b.name(), b.allowed(), b.healthy, b.desired, b.expected)
}

// countBudgets counts c's budgets over pods, every pod of the settled
// cluster (those pending included: the controller's pod lister lists
// them).
func countBudgets(c *cluster.Cluster, pods []*v1.Pod) []*budget {
	var out []*budget
	for _, o := range c.Others {
		pdb, ok := o.(*policyv1.PodDisruptionBudget)
		if !ok {
			continue
		}
		b := &budget{pdb: pdb}
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			b.sel = sel
		}
		var selected []*v1.Pod
		for _, p := range pods {
			if b.selects(p) {
				selected = append(selected, p)
				if healthy(p) {
					b.healthy++
				}
			}
		}
		b.count(c, selected)
		out = append(out, b)
	}
	return out
}

// healthy is countHealthyPods' test: not being deleted, and Ready. A
// bound pod with no Ready condition is one the simulation placed: its
// kubelet runs it, so it is taken as Ready.
func healthy(p *v1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return true
}

// count is getExpectedPodCount.
func (b *budget) count(c *cluster.Cluster, selected []*v1.Pod) {
	spec := b.pdb.Spec
	var err error
	switch {
	case spec.MaxUnavailable != nil:
		b.expected, b.failed = expectedScale(c, selected)
		var unavailable int
		unavailable, err = intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, int(b.expected), true)
		b.desired = max(b.expected-int32(unavailable), 0)
	case spec.MinAvailable != nil && spec.MinAvailable.Type == intstr.Int:
		b.desired, b.expected = spec.MinAvailable.IntVal, int32(len(selected))
	case spec.MinAvailable != nil:
		b.expected, b.failed = expectedScale(c, selected)
		var minAvailable int
		minAvailable, err = intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, int(b.expected), true)
		b.desired = int32(minAvailable)
	}
	if err != nil && b.failed == "" {
		b.failed = err.Error()
	}
}

// expectedScale is getExpectedScale: the sum of the scales of the pods'
// controllers, each once, found by the controller's finders in their
// order (ReplicationController, a ReplicaSet's Deployment, a ReplicaSet
// no Deployment controls, StatefulSet, then the scale subresource).
// Pods without a controller are left out. A controller of a kind served
// without a scale subresource (DaemonSet, Job, Node) fails the count.
// One the input does not hold counts its selected pods, as the README
// documents (the cluster a dump was read from has it; the controller
// would read its scale).
func expectedScale(c *cluster.Cluster, pods []*v1.Pod) (int32, string) {
	scales := map[string]int32{}
	absent := map[string]int32{}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		key, scale, found := findScale(c, ref, p.Namespace)
		if found {
			scales[key] = scale
			continue
		}
		gv, _ := schema.ParseGroupVersion(ref.APIVersion)
		switch (schema.GroupKind{Group: gv.Group, Kind: ref.Kind}) {
		case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, schema.GroupKind{Group: "batch", Kind: "Job"}, schema.GroupKind{Kind: "Node"}:
			return 0, fmt.Sprintf("%s %s has no scale subresource", ref.Kind, ref.Name)
		}
		absent[string(ref.UID)]++
	}
	var sum int32
	for _, s := range scales {
		sum += s
	}
	for _, n := range absent {
		sum += n
	}
	return sum, ""
}

// findScale runs the finders on a controller reference: the UID of the
// controller whose scale counts, and the scale.
func findScale(c *cluster.Cluster, ref *metav1.OwnerReference, ns string) (string, int32, bool) {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	replicas := func(r *int32) int32 {
		if r == nil {
			return 1
		}
		return *r
	}
	switch {
	case ref.Kind == "ReplicationController" && gv.Group == "":
		for _, rc := range c.RCs {
			if rc.Namespace == ns && rc.Name == ref.Name && rc.UID == ref.UID {
				return string(rc.UID), replicas(rc.Spec.Replicas), true
			}
		}
	case ref.Kind == "ReplicaSet" && (gv.Group == "apps" || gv.Group == "extensions"):
		var rs *appsv1.ReplicaSet
		for _, x := range c.ReplicaSets {
			if x.Namespace == ns && x.Name == ref.Name && x.UID == ref.UID {
				rs = x
			}
		}
		if rs == nil {
			return "", 0, false
		}
		if dref := metav1.GetControllerOf(rs); dref != nil && dref.Kind == "Deployment" {
			for _, d := range c.Deployments {
				if d.Namespace == ns && d.Name == dref.Name && d.UID == dref.UID {
					return string(d.UID), replicas(d.Spec.Replicas), true
				}
			}
			// getPodDeployment and getPodReplicaSet both pass; the scale
			// subresource is the ReplicaSet's own.
		}
		return string(rs.UID), replicas(rs.Spec.Replicas), true
	case ref.Kind == "StatefulSet" && gv.Group == "apps":
		for _, s := range c.StatefulSets {
			if s.Namespace == ns && s.Name == ref.Name && s.UID == ref.UID {
				return string(s.UID), replicas(s.Spec.Replicas), true
			}
		}
	}
	return "", 0, false
}
