package cluster

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// IsDaemonSetPod: a DaemonSet controls the pod (a drain leaves it, it goes
// with its node).
func IsDaemonSetPod(p *v1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet"
}

// PodDisruptionBudgets returns the cluster's PodDisruptionBudgets.
func (c *Cluster) PodDisruptionBudgets() []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, o := range c.Others {
		if pdb, ok := o.(*policyv1.PodDisruptionBudget); ok {
			out = append(out, pdb)
		}
	}
	return out
}

// Budget is a PodDisruptionBudget as kube-controller-manager v1.37's
// disruption controller counts it (pkg/controller/disruption: trySync,
// getExpectedPodCount): Expected pods and Desired healthy ones; the
// healthy pods are counted when an eviction is asked (Healthy), and the
// disruptions it allows are healthy − desired, none when Expected is 0.
type Budget struct {
	PDB *policyv1.PodDisruptionBudget
	// sel is the PDB's selector: metav1.LabelSelectorAsSelector's, so an
	// empty selector ({}) selects every pod of the namespace and a
	// missing one none; nil when it does not parse (the eviction API then
	// does not match it).
	sel      labels.Selector
	Expected int32
	Desired  int32
	// Failed is why the controller could not count the budget (a pod's
	// controller has no scale): it then allows no disruption, as the
	// controller's failSafe sets.
	Failed string
}

// Selects: the budget guards the pod (same namespace, selector matches).
func (b *Budget) Selects(p *v1.Pod) bool {
	return b.sel != nil && p.Namespace == b.PDB.Namespace && b.sel.Matches(labels.Set(p.Labels))
}

// Budgets counts the cluster's PodDisruptionBudgets over pods (every pod
// of the cluster: pending and finished ones are counted as the
// controller's pod lister lists them). Expected pods are, for
// maxUnavailable and a percentage minAvailable, the sum of the scales of
// the selected pods' controllers (a Deployment's replicas for the pods of
// its ReplicaSets, a ReplicaSet's, StatefulSet's or
// ReplicationController's own); for an integer minAvailable, the pods
// selected. Pods without a controller are left out of the scale, as the
// controller leaves them out. A controller kube-apiserver serves without
// a scale subresource (DaemonSet, Job, Node for mirror pods) fails the
// count: the budget then allows nothing. A controller the input does not
// hold counts its selected pods: the cluster the input was read from has
// it, and its scale is most likely its pods.
func (c *Cluster) Budgets(pods []*v1.Pod) []*Budget {
	pdbs := c.PodDisruptionBudgets()
	if len(pdbs) == 0 {
		return nil
	}
	sc := newScales(c)
	out := make([]*Budget, 0, len(pdbs))
	for _, pdb := range pdbs {
		b := &Budget{PDB: pdb}
		if sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			b.sel = sel
		}
		var selected []*v1.Pod
		for _, p := range pods {
			if b.Selects(p) {
				selected = append(selected, p)
			}
		}
		b.count(selected, sc)
		out = append(out, b)
	}
	return out
}

func (b *Budget) count(selected []*v1.Pod, sc *scales) {
	spec := b.PDB.Spec
	switch {
	case spec.MaxUnavailable != nil:
		b.Expected, b.Failed = sc.expected(selected)
		unavailable, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, int(b.Expected), true)
		if err != nil && b.Failed == "" {
			b.Failed = err.Error()
		}
		b.Desired = max(b.Expected-int32(unavailable), 0)
	case spec.MinAvailable != nil && spec.MinAvailable.Type == intstr.Int:
		b.Desired, b.Expected = spec.MinAvailable.IntVal, int32(len(selected))
	case spec.MinAvailable != nil:
		b.Expected, b.Failed = sc.expected(selected)
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, int(b.Expected), true)
		if err != nil && b.Failed == "" {
			b.Failed = err.Error()
		}
		b.Desired = int32(minAvailable)
	}
}

// Allowed is how many disruptions the budget allows with healthy pods
// healthy (the controller's updatePdbStatus).
func (b *Budget) Allowed(healthy int32) int32 {
	if b.Failed != "" || b.Expected <= 0 || healthy <= b.Desired {
		return 0
	}
	return healthy - b.Desired
}

// Healthy: the pod counts as healthy for a budget (countHealthyPods): not
// being deleted, and Ready. A bound pod without a Ready condition is
// taken as Ready: the input's manifests carry no status, and the
// simulation runs what it binds; one whose status says Ready False (a
// cluster's dump) is not.
func Healthy(p *v1.Pod) bool {
	if p.Spec.NodeName == "" || p.DeletionTimestamp != nil || terminal(p) {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return true
}

// EvictionRefused returns the first of the evicted pods that the eviction
// API (kube-apiserver v1.37's pods/eviction, evicting them one after
// another with pods as the cluster's pods) refuses for a
// PodDisruptionBudget, and why; nil when every eviction is allowed. Its
// rules:
//   - a pod pending, finished or being deleted is deleted without a look
//     at budgets;
//   - a pod that more than one budget selects is refused;
//   - an unready pod is deleted without using a disruption when its
//     budget's unhealthyPodEvictionPolicy is AlwaysAllow, or (IfHealthyBudget,
//     the default) when the budget has its desired healthy pods;
//   - otherwise each eviction uses one of the disruptions the budget
//     allows, and one past them is refused (429).
func EvictionRefused(evicted, pods []*v1.Pod, budgets []*Budget) (*v1.Pod, string) {
	if len(budgets) == 0 {
		return nil, ""
	}
	used := make([]int32, len(budgets))
	var healthy []int32 // counted when a pod first needs it
	for _, p := range evicted {
		if p.Spec.NodeName == "" || terminal(p) || p.DeletionTimestamp != nil {
			continue
		}
		at, n := -1, 0
		for i, b := range budgets {
			if b.Selects(p) {
				at, n = i, n+1
			}
		}
		if n == 0 {
			continue
		}
		if n > 1 {
			return p, "the eviction API refuses to evict a pod that more than one PodDisruptionBudget selects (\"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.\")"
		}
		if healthy == nil {
			healthy = HealthyPods(pods, budgets)
		}
		b := budgets[at]
		if !Healthy(p) {
			if pol := b.PDB.Spec.UnhealthyPodEvictionPolicy; pol != nil && *pol == policyv1.AlwaysAllow {
				continue
			}
			if healthy[at] >= b.Desired && b.Desired > 0 {
				continue
			}
		}
		allowed := b.Allowed(healthy[at])
		if used[at] >= allowed {
			return p, b.refusal(used[at]+1, allowed, healthy[at])
		}
		used[at]++
	}
	return nil, ""
}

// HealthyPods counts, per budget, the healthy pods it selects.
func HealthyPods(pods []*v1.Pod, budgets []*Budget) []int32 {
	healthy := make([]int32, len(budgets))
	for _, p := range pods {
		if !Healthy(p) {
			continue
		}
		for i, b := range budgets {
			if b.Selects(p) {
				healthy[i]++
			}
		}
	}
	return healthy
}

func (b *Budget) refusal(evicting, allowed, healthy int32) string {
	name := b.PDB.Namespace + "/" + b.PDB.Name
	if b.Failed != "" {
		return fmt.Sprintf("PodDisruptionBudget %s allows no disruption: the disruption controller cannot count it (%s)", name, b.Failed)
	}
	return fmt.Sprintf("evicting the node's %d pod(s) of PodDisruptionBudget %s exceeds the %d disruption(s) it allows (%d healthy, %d desired of %d expected)",
		evicting, name, allowed, healthy, b.Desired, b.Expected)
}

// scales finds the scale of a pod's controller as the disruption
// controller's finders do (getPodReplicationController, getPodDeployment,
// getPodReplicaSet, getPodStatefulSet, getScaleController).
type scales struct {
	rs   map[string]*ownerScale // namespace/name
	deps map[string]*ownerScale
	ss   map[string]*ownerScale
	rcs  map[string]*ownerScale
}

type ownerScale struct {
	uid   string
	scale int32
	// owner is a ReplicaSet's controlling Deployment, namespace/name.
	owner, ownerUID string
}

func newScales(c *Cluster) *scales {
	sc := &scales{rs: map[string]*ownerScale{}, deps: map[string]*ownerScale{}, ss: map[string]*ownerScale{}, rcs: map[string]*ownerScale{}}
	replicas := func(r *int32) int32 {
		if r == nil {
			return 1 // the API server's default
		}
		return *r
	}
	for _, r := range c.ReplicaSets {
		o := &ownerScale{uid: string(r.UID), scale: replicas(r.Spec.Replicas)}
		if ref := metav1.GetControllerOf(r); ref != nil && ref.Kind == "Deployment" {
			o.owner, o.ownerUID = r.Namespace+"/"+ref.Name, string(ref.UID)
		}
		sc.rs[r.Namespace+"/"+r.Name] = o
	}
	for _, d := range c.Deployments {
		sc.deps[d.Namespace+"/"+d.Name] = &ownerScale{uid: string(d.UID), scale: replicas(d.Spec.Replicas)}
	}
	for _, s := range c.StatefulSets {
		sc.ss[s.Namespace+"/"+s.Name] = &ownerScale{uid: string(s.UID), scale: replicas(s.Spec.Replicas)}
	}
	for _, r := range c.RCs {
		sc.rcs[r.Namespace+"/"+r.Name] = &ownerScale{uid: string(r.UID), scale: replicas(r.Spec.Replicas)}
	}
	return sc
}

// noScale are the controllers kube-apiserver serves without a scale
// subresource, by group and kind, and the resource its error names.
var noScale = map[schema.GroupKind]string{
	{Group: "apps", Kind: "DaemonSet"}: "daemonsets.apps",
	{Group: "batch", Kind: "Job"}:      "jobs.batch",
	{Group: "batch", Kind: "CronJob"}:  "cronjobs.batch",
	{Group: "", Kind: "Node"}:          "nodes",
	{Group: "", Kind: "Pod"}:           "pods",
}

// expected sums the scales of the pods' controllers (getExpectedScale);
// failed says why it cannot.
func (sc *scales) expected(pods []*v1.Pod) (expected int32, failed string) {
	seen := map[string]bool{}
	// input counts, per controller the input does not hold, its pods.
	input := map[string]int32{}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue // unmanaged: left out
		}
		key, scale, found := sc.find(ref, p.Namespace)
		if found {
			if !seen[key] {
				seen[key] = true
				expected += scale
			}
			continue
		}
		gv, _ := schema.ParseGroupVersion(ref.APIVersion)
		if res, ok := noScale[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]; ok {
			return 0, fmt.Sprintf("%s does not implement the scale subresource (pod %s/%s is controlled by %s %s)", res, p.Namespace, p.Name, ref.Kind, ref.Name)
		}
		input[ref.Kind+"/"+ref.Name+"/"+string(ref.UID)]++
	}
	for _, n := range input {
		expected += n
	}
	return expected, ""
}

// find is the scale of the controller ref names in namespace ns, keyed
// by the controller that owns the scale.
func (sc *scales) find(ref *metav1.OwnerReference, ns string) (key string, scale int32, found bool) {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	name := ns + "/" + ref.Name
	switch {
	case ref.Kind == "ReplicationController" && gv.Group == "":
		if o := sc.rcs[name]; o != nil && o.uid == string(ref.UID) {
			return "rc/" + name, o.scale, true
		}
	case ref.Kind == "ReplicaSet" && (gv.Group == "apps" || gv.Group == "extensions"):
		o := sc.rs[name]
		if o == nil || o.uid != string(ref.UID) {
			return "", 0, false
		}
		if o.owner != "" {
			// getPodDeployment: the Deployment's scale; a ReplicaSet a
			// Deployment controls has none of its own.
			if d := sc.deps[o.owner]; d != nil && d.uid == o.ownerUID {
				return "deployment/" + o.owner, d.scale, true
			}
			// Without it, getScaleController reads the ReplicaSet's own
			// scale subresource.
		}
		return "rs/" + name, o.scale, true
	case ref.Kind == "StatefulSet" && gv.Group == "apps":
		if o := sc.ss[name]; o != nil && o.uid == string(ref.UID) {
			return "ss/" + name, o.scale, true
		}
	}
	return "", 0, false
}
