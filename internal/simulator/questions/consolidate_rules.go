package questions

import (
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// The annotations the rule sets read.
const (
	SafeToEvictAnnotation = "cluster-autoscaler.kubernetes.io/safe-to-evict"
	// SafeToEvictLocalVolumesAnnotation lists (comma-separated, exact
	// names) the local volumes that do not keep a pod from eviction.
	SafeToEvictLocalVolumesAnnotation = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"
	// DaemonSetPodAnnotation marks a pod cluster-autoscaler takes as a
	// DaemonSet's.
	DaemonSetPodAnnotation = "cluster-autoscaler.kubernetes.io/daemonset-pod"
	DoNotDisruptAnnotation = "karpenter.sh/do-not-disrupt"
	// MirrorPodAnnotation marks a static pod's mirror (the kubelet's
	// kubernetes.io/config.mirror).
	MirrorPodAnnotation = v1.MirrorPodAnnotationKey
)

// Rules is a rule set: which pods a drain moves, which go with their
// node, and which keep it.
type Rules string

const (
	// RulesClusterAutoscaler are cluster-autoscaler 1.36's drainability
	// rules with its default flags (simulator/drainability/rules:
	// --skip-nodes-with-system-pods, --skip-nodes-with-local-storage and
	// --skip-nodes-with-custom-controller-pods true, --min-replica-count
	// 0).
	RulesClusterAutoscaler Rules = "cluster-autoscaler"
	// RulesKarpenter are Karpenter v1.15's disruption rules
	// (StateNode.ValidateNodeDisruptable's do-not-disrupt,
	// ValidatePodsDisruptable, pdb.Limits.CanEvictPods, IsReschedulable).
	RulesKarpenter Rules = "karpenter"
)

// ParseRules reads --rules.
func ParseRules(s string) (Rules, error) {
	switch r := Rules(s); r {
	case RulesClusterAutoscaler, RulesKarpenter:
		return r, nil
	}
	return "", fmt.Errorf("--rules: %q is not a rule set: want %q or %q", s, RulesClusterAutoscaler, RulesKarpenter)
}

// fate is what a drain does with a pod.
type fate int

const (
	// moves: the pod is evicted and its replacement must run elsewhere.
	moves fate = iota
	// stays: the pod goes with its node (a DaemonSet's, a mirror pod, one
	// that finished or is long terminating).
	stays
	// blocks: the pod keeps its node.
	blocks
)

// ruleContext is what the rules read besides the pod: the budgets, the
// pods they count, and the time (for terminations and do-not-disrupt
// durations).
type ruleContext struct {
	rules   Rules
	budgets []*cluster.Budget
	// healthy counts, per budget, its healthy pods now: nil until a
	// budget is read, then count's.
	healthy []int32
	count   func() []int32
	now     time.Time
	// owners are the controllers the cluster holds, by kind/namespace/name
	// (cluster-autoscaler's ReplicaCount rule reads them through its
	// listers); nil reads none.
	owners map[string]bool
}

// Owners are the controllers c holds, for ruleContext.owners: its
// ReplicaSets (those its Deployments made included), ReplicationControllers,
// Jobs, StatefulSets and DaemonSets, by kind/namespace/name, and each
// kind it holds any of, by kind.
func Owners(c *cluster.Cluster) map[string]bool {
	out := map[string]bool{}
	add := func(kind string, m metav1.Object) {
		out[kind] = true
		out[kind+"/"+m.GetNamespace()+"/"+m.GetName()] = true
	}
	for _, o := range c.ReplicaSets {
		add("ReplicaSet", o)
	}
	for _, o := range c.RCs {
		add("ReplicationController", o)
	}
	for _, o := range c.Jobs {
		add("Job", o)
	}
	for _, o := range c.StatefulSets {
		add("StatefulSet", o)
	}
	for _, o := range c.DaemonSets {
		add("DaemonSet", o)
	}
	return out
}

// node is the rule set's verdict on a node's pods, in name order: the
// pods a drain moves, or the first that keeps the node and why.
func (c *ruleContext) node(pods []*v1.Pod) (move []*v1.Pod, keeps *v1.Pod, reason string) {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b *v1.Pod) int { return strings.Compare(cluster.PodKey(a), cluster.PodKey(b)) })
	if c.rules == RulesKarpenter {
		// ValidatePodsDisruptable reads do-not-disrupt on every pod
		// before any budget.
		for _, p := range pods {
			if !terminal(p) && p.DeletionTimestamp == nil && doNotDisruptActive(p, c.now) {
				_, why := karpenterDecides(p, c)
				return nil, p, why
			}
		}
	}
	for _, p := range pods {
		switch f, why := c.rules.decide(p, c); f {
		case blocks:
			return nil, p, why
		case moves:
			move = append(move, p)
		}
	}
	return move, nil, ""
}

// decide is the rule set's verdict on one pod of a node, and its reason
// when the pod keeps the node.
func (r Rules) decide(p *v1.Pod, c *ruleContext) (fate, string) {
	if r == RulesKarpenter {
		return karpenterDecides(p, c)
	}
	return autoscalerDecides(p, c)
}

// systemPodTimeout is cluster-autoscaler's
// --blocking-system-pod-distruption-timeout default: a kube-system pod
// without a budget created longer ago than this no longer keeps its
// node.
const systemPodTimeout = time.Hour

// autoscalerDecides: cluster-autoscaler's rules.Default, in its order,
// the first that decides winning (drainability.Rules.Drainable). The
// reasons quote its messages.
func autoscalerDecides(p *v1.Pod, c *ruleContext) (fate, string) {
	key := cluster.PodKey(p)
	if terminal(p) {
		// Its pod lister (AllPodLister) drops finished pods before any
		// rule reads them.
		return stays, ""
	}
	if _, ok := p.Annotations[MirrorPodAnnotation]; ok {
		return stays, "" // Mirror: skipped
	}
	if longTerminating(p, c.now) {
		return stays, "" // LongTerminating: skipped
	}
	if reason := c.controllerMissing(p); reason != "" {
		return blocks, reason
	}
	if ref := metav1.GetControllerOf(p); (ref != nil && ref.Kind == "DaemonSet") || p.Annotations[DaemonSetPodAnnotation] == "true" {
		return stays, ""
	}
	safe := p.Annotations[SafeToEvictAnnotation]
	if safe == "true" {
		return moves, "" // SafeToEvict: drained, no other rule read (PodDisruptionBudgets included)
	}
	if safe == "on-completion" {
		return blocks, fmt.Sprintf("cluster-autoscaler waits for the pod to complete: it is annotated %s: \"on-completion\"", SafeToEvictAnnotation)
	}
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return blocks, fmt.Sprintf("%s (the pod has no controller, so nothing would recreate it; annotate it %s: \"true\" to allow its eviction)", key+" is not replicated", SafeToEvictAnnotation)
	}
	switch ref.Kind {
	case "ReplicationController", "Job", "ReplicaSet", "StatefulSet":
	default:
		return blocks, fmt.Sprintf("%s (its controller is a %s, not a ReplicationController, Job, ReplicaSet or StatefulSet: --skip-nodes-with-custom-controller-pods; annotate it %s: \"true\" to allow its eviction)", key+" is not replicated", ref.Kind, SafeToEvictAnnotation)
	}
	if p.Namespace == metav1.NamespaceSystem && !c.anyBudgetSelects(p) {
		if !p.CreationTimestamp.IsZero() && c.now.After(p.CreationTimestamp.Add(systemPodTimeout)) {
			// --blocking-system-pod-distruption-timeout: past it the
			// pod is drained, no later rule read.
			return moves, ""
		}
		return blocks, fmt.Sprintf("%s (--skip-nodes-with-system-pods; give it a PodDisruptionBudget or annotate it %s: \"true\" to allow its eviction)", "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: "+p.Name, SafeToEvictAnnotation)
	}
	if safe == "false" {
		return blocks, fmt.Sprintf("%s (the pod is annotated %s: \"false\")", "pod annotated as not safe to evict present: "+p.Name, SafeToEvictAnnotation)
	}
	if v := blockingLocalVolume(p); v != "" {
		return blocks, fmt.Sprintf("%s (%s: --skip-nodes-with-local-storage; list it in %s or annotate the pod %s: \"true\" to allow its eviction)", "pod with local storage present: "+p.Name, v, SafeToEvictLocalVolumesAnnotation, SafeToEvictAnnotation)
	}
	if reason := c.budgetRefuses(p, "not enough pod disruption budget to move "+key); reason != "" {
		return blocks, reason
	}
	return moves, ""
}

// controllerMissing is cluster-autoscaler's ReplicaCount rule (on with
// --skip-nodes-with-custom-controller-pods, its default; with
// --min-replica-count 0): a pod whose ReplicationController, ReplicaSet,
// Job, StatefulSet or DaemonSet the cluster does not hold keeps its node,
// with its message (the listers' NotFound error after "err:"). An input
// that holds no controller of the kind at all (pods alone, as kubectl get
// pods writes them) is taken to come from a cluster that holds them, as
// Budgets takes it: the rule reads only kinds the input holds.
func (c *ruleContext) controllerMissing(p *v1.Pod) string {
	ref := metav1.GetControllerOf(p)
	if ref == nil || c.owners == nil {
		return ""
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ""
	}
	key := p.Namespace + "/" + p.Name
	has := func(kind string) bool { return !c.owners[kind] || c.owners[kind+"/"+p.Namespace+"/"+ref.Name] }
	notFound := func(resource string) string { return fmt.Sprintf("%s %q not found", resource, ref.Name) }
	why := " (cluster-autoscaler finds no such controller in the cluster: --skip-nodes-with-custom-controller-pods)"
	switch {
	case ref.Kind == "ReplicationController":
		if !has("ReplicationController") {
			return fmt.Sprintf("replication controller for %s is not available, err: %s", key, notFound("replicationcontroller")) + why
		}
	case ref.Kind == "DaemonSet" || p.Annotations[DaemonSetPodAnnotation] == "true":
		if gv.Group == "apps" && ref.Kind == "DaemonSet" && !has("DaemonSet") {
			return fmt.Sprintf("daemonset for %s is not present, err: %s", key, notFound("daemonset.apps")) + why
		}
	case ref.Kind == "Job":
		if !has("Job") {
			return fmt.Sprintf("job for %s is not available: err: %s", key, notFound("job.batch")) + why
		}
	case ref.Kind == "ReplicaSet":
		if !has("ReplicaSet") {
			return fmt.Sprintf("replication controller for %s is not available, err: %s", key, notFound("replicaset.apps")) + why
		}
	case ref.Kind == "StatefulSet" && gv.Group == "apps":
		if !has("StatefulSet") {
			return fmt.Sprintf("statefulset for %s is not available: err: %s", key, notFound("statefulset.apps")) + why
		}
	}
	return ""
}

// karpenterDecides: Karpenter's. A pod is rescheduled when active (or a
// StatefulSet's, terminating), not a DaemonSet's nor a mirror pod; no
// pod is kept for having no controller, local storage, or being in
// kube-system, and cluster-autoscaler's annotations are not read.
func karpenterDecides(p *v1.Pod, c *ruleContext) (fate, string) {
	key := cluster.PodKey(p)
	active := !terminal(p) && p.DeletionTimestamp == nil
	if active && doNotDisruptActive(p, c.now) {
		return blocks, fmt.Sprintf("%s (the pod is annotated %s)", `pod has "karpenter.sh/do-not-disrupt" annotation (Pod=`+key+")", DoNotDisruptAnnotation)
	}
	mirror := ownedBy(p, "v1", "Node")
	daemon := ownedBy(p, "apps/v1", "DaemonSet")
	if active && !mirror && !toleratesDisrupted(p) {
		if reason := c.budgetRefuses(p, "pdb prevents pod evictions"); reason != "" {
			return blocks, reason
		}
	}
	statefulTerminating := p.DeletionTimestamp != nil && ownedBy(p, "apps/v1", "StatefulSet")
	if (active || statefulTerminating) && !daemon && !mirror {
		return moves, ""
	}
	return stays, ""
}

// disruptedTaint is the taint Karpenter puts on the nodes it disrupts.
var disruptedTaint = v1.Taint{Key: "karpenter.sh/disrupted", Effect: v1.TaintEffectNoSchedule}

// toleratesDisrupted: the pod tolerates disruptedTaint (Karpenter never
// evicts it: it would come back).
func toleratesDisrupted(p *v1.Pod) bool {
	for i := range p.Spec.Tolerations {
		if p.Spec.Tolerations[i].ToleratesTaint(klog.Background(), &disruptedTaint, true) {
			return true
		}
	}
	return false
}

// ownedBy: any owner reference (not only the controller) of that
// apiVersion and kind, as Karpenter's IsOwnedBy reads them.
func ownedBy(p *v1.Pod, apiVersion, kind string) bool {
	for _, o := range p.OwnerReferences {
		if o.APIVersion == apiVersion && o.Kind == kind {
			return true
		}
	}
	return false
}

// doNotDisruptActive is Karpenter's IsDoNotDisruptActive: "true", or a
// positive duration not yet past since the pod started (a pod not
// started is held); anything else is ignored.
func doNotDisruptActive(p *v1.Pod, now time.Time) bool {
	v, ok := p.Annotations[DoNotDisruptAnnotation]
	if !ok {
		return false
	}
	if v == "true" {
		return true
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return false
	}
	return p.Status.StartTime == nil || now.Sub(p.Status.StartTime.Time) < d
}

// longTerminating is cluster-autoscaler's IsPodLongTerminating: deleted
// longer ago than its termination grace period and 30 s.
func longTerminating(p *v1.Pod, now time.Time) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	grace := int64(v1.DefaultTerminationGracePeriodSeconds)
	if p.Spec.TerminationGracePeriodSeconds != nil {
		grace = *p.Spec.TerminationGracePeriodSeconds
	}
	return p.DeletionTimestamp.Add(time.Duration(grace)*time.Second + 30*time.Second).Before(now)
}

func terminal(p *v1.Pod) bool {
	return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
}

// blockingLocalVolume names the pod's first local volume (hostPath, or
// emptyDir not in memory) not listed as safe to evict, "" when none.
func blockingLocalVolume(p *v1.Pod) string {
	var safe []string
	if v := p.Annotations[SafeToEvictLocalVolumesAnnotation]; v != "" {
		safe = strings.Split(v, ",") // exact names, as cluster-autoscaler splits them
	}
	for _, v := range p.Spec.Volumes {
		kind := ""
		switch {
		case v.HostPath != nil:
			kind = "hostPath"
		case v.EmptyDir != nil && v.EmptyDir.Medium != v1.StorageMediumMemory:
			kind = "emptyDir"
		}
		if kind == "" || slices.Contains(safe, v.Name) {
			continue
		}
		return fmt.Sprintf("%s volume %q", kind, v.Name)
	}
	return ""
}

func (c *ruleContext) anyBudgetSelects(p *v1.Pod) bool {
	for _, b := range c.budgets {
		if b.Selects(p) {
			return true
		}
	}
	return false
}

// budgetRefuses: the pod's budgets do not let it go now (both rule sets
// read the disruptions each allows, pod by pod, and do not add up a
// node's pods: the drain's evictions are retried, as kubectl drain,
// cluster-autoscaler and Karpenter retry a 429, until the replacements
// run). A pod that more than one budget selects keeps its node: the
// eviction API refuses it whatever the budgets allow. A Karpenter
// budget with unhealthyPodEvictionPolicy AlwaysAllow lets an unready pod
// go. msg is the rule set's own message.
func (c *ruleContext) budgetRefuses(p *v1.Pod, msg string) string {
	var names []string
	at := -1
	for i, b := range c.budgets {
		if b.Selects(p) {
			names = append(names, b.PDB.Namespace+"/"+b.PDB.Name)
			at = i
		}
	}
	switch {
	case len(names) == 0:
		return ""
	case len(names) > 1 && c.rules == RulesKarpenter:
		return fmt.Sprintf("eviction does not support multiple PDBs (PodDisruptionBudget(s)=[%s])", strings.Join(names, " "))
	case len(names) > 1:
		return fmt.Sprintf("PodDisruptionBudgets %s all select the pod: the eviction API refuses it (\"This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.\"); cluster-autoscaler would plan the drain and fail it", strings.Join(names, ", "))
	}
	b := c.budgets[at]
	if pol := b.PDB.Spec.UnhealthyPodEvictionPolicy; c.rules == RulesKarpenter && pol != nil && *pol == "AlwaysAllow" && notReady(p) {
		return ""
	}
	if c.healthy == nil {
		c.healthy = c.count()
	}
	if allowed := b.Allowed(c.healthy[at]); allowed < 1 {
		why := fmt.Sprintf("%d healthy, %d desired of %d expected", c.healthy[at], b.Desired, b.Expected)
		if b.Failed != "" {
			why = "the disruption controller cannot count it: " + b.Failed
		}
		if c.rules == RulesKarpenter {
			return fmt.Sprintf("%s (PodDisruptionBudget=[%s]): it allows no disruption now (%s)", msg, names[0], why)
		}
		return fmt.Sprintf("%s (PodDisruptionBudget %s allows no disruption now: %s)", msg, names[0], why)
	}
	return ""
}

// notReady: the pod's Ready condition is False.
func notReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionFalse
		}
	}
	return false
}
