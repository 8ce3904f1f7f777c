package consolidatefuzz

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// fate is what a drain does with a pod: the judge's own reading of the
// README's table (section consolidate, "| pod | cluster-autoscaler
// (default) | karpenter |"), written apart from questions' rules so that
// the fuzzer checks them rather than repeats them.
type fate int

const (
	// moves: evicted; its controller's replacement must run elsewhere.
	moves fate = iota
	// stays: it goes with its node (DaemonSet's, mirror).
	stays
	// blocks: it keeps its node.
	blocks
)

func (f fate) String() string { return [...]string{"moves", "stays", "blocks"}[f] }

// owners are the controllers the input holds, by kind/namespace/name,
// and each kind it holds any of (cluster-autoscaler's ReplicaCount rule
// reads only the kinds the input holds: a dump of pods alone is taken to
// come from a cluster that has their controllers).
type owners map[string]bool

func ownersOf(c *cluster.Cluster) owners {
	o := owners{}
	add := func(kind string, m metav1.Object) {
		o[kind] = true
		o[kind+"/"+m.GetNamespace()+"/"+m.GetName()] = true
	}
	for _, x := range c.ReplicaSets {
		add("ReplicaSet", x)
	}
	for _, x := range c.RCs {
		add("ReplicationController", x)
	}
	for _, x := range c.Jobs {
		add("Job", x)
	}
	for _, x := range c.StatefulSets {
		add("StatefulSet", x)
	}
	for _, x := range c.DaemonSets {
		add("DaemonSet", x)
	}
	return o
}

// missing: the pod's controller is of a kind the input holds, and not
// one the input holds.
func (o owners) missing(p *v1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	if ref == nil {
		return false
	}
	switch ref.Kind {
	case "ReplicaSet", "ReplicationController", "Job", "StatefulSet", "DaemonSet":
		return o[ref.Kind] && !o[ref.Kind+"/"+p.Namespace+"/"+ref.Name]
	}
	return false
}

// verdict is a pod's fate under a rule set and whether that rule set
// reads its budgets (then a budget that allows no disruption, or two
// budgets selecting it, keep its node too); why says what blocks.
type verdict struct {
	fate         fate
	readsBudgets bool
	why          string
}

// podVerdict is the rule set's verdict on a running pod. selected says
// whether any budget selects the pod (cluster-autoscaler's kube-system
// rule asks).
func podVerdict(rules questions.Rules, p *v1.Pod, o owners, selected bool) verdict {
	if rules == questions.RulesKarpenter {
		return karpenterVerdict(p)
	}
	return autoscalerVerdict(p, o, selected)
}

// autoscalerVerdict: cluster-autoscaler 1.36's rules with default flags,
// in the order of its rules.Default (mirror, long terminating, replica
// count, DaemonSet, safe-to-evict, terminal, then the blocking ones:
// replicated, system, not-safe-to-evict, local storage, PDB): the first
// that decides wins. The pods drawn here are running and not terminating.
func autoscalerVerdict(p *v1.Pod, o owners, selected bool) verdict {
	ann := p.Annotations
	ref := metav1.GetControllerOf(p)
	switch {
	case ann[questions.MirrorPodAnnotation] != "":
		return verdict{fate: stays}
	case o.missing(p):
		return verdict{fate: blocks, why: "its " + ref.Kind + " is not in the cluster"}
	case ref != nil && ref.Kind == "DaemonSet", ann[questions.DaemonSetPodAnnotation] == "true":
		return verdict{fate: stays}
	case ann[questions.SafeToEvictAnnotation] == "true":
		return verdict{fate: moves} // no other rule read, budgets included
	case ann[questions.SafeToEvictAnnotation] == "on-completion":
		return verdict{fate: blocks, why: "safe-to-evict on-completion"}
	case ref == nil:
		return verdict{fate: blocks, why: "no controller"}
	case ref.Kind != "ReplicaSet" && ref.Kind != "ReplicationController" && ref.Kind != "Job" && ref.Kind != "StatefulSet":
		return verdict{fate: blocks, why: "controlled by a " + ref.Kind}
	case p.Namespace == metav1.NamespaceSystem && !selected:
		return verdict{fate: blocks, why: "kube-system without a budget"}
	case ann[questions.SafeToEvictAnnotation] == "false":
		return verdict{fate: blocks, why: "safe-to-evict false"}
	}
	if v := localVolume(p); v != "" {
		return verdict{fate: blocks, why: "local volume " + v}
	}
	return verdict{fate: moves, readsBudgets: true}
}

// karpenterVerdict: Karpenter v1.15's. do-not-disrupt "true" keeps the
// node; the budgets are read for every pod but mirror pods and those
// tolerating its disrupted taint (DaemonSet pods included); DaemonSet and
// mirror pods go with the node, every other pod moves (no controller,
// kube-system and local storage do not keep a node).
func karpenterVerdict(p *v1.Pod) verdict {
	if p.Annotations[questions.DoNotDisruptAnnotation] == "true" {
		return verdict{fate: blocks, why: "do-not-disrupt"}
	}
	mirror, daemon := ownedBy(p, "v1", "Node"), ownedBy(p, "apps/v1", "DaemonSet")
	v := verdict{fate: moves, readsBudgets: !mirror && !toleratesDisruption(p)}
	if mirror || daemon {
		v.fate = stays
	}
	return v
}

// ownedBy: any owner reference of that apiVersion and kind.
func ownedBy(p *v1.Pod, apiVersion, kind string) bool {
	for _, o := range p.OwnerReferences {
		if o.APIVersion == apiVersion && o.Kind == kind {
			return true
		}
	}
	return false
}

// toleratesDisruption: a toleration of Karpenter's karpenter.sh/disrupted
// NoSchedule taint (the key's or every key's, any effect or NoSchedule).
func toleratesDisruption(p *v1.Pod) bool {
	for _, t := range p.Spec.Tolerations {
		keyOK := t.Key == "karpenter.sh/disrupted" || (t.Key == "" && t.Operator == v1.TolerationOpExists)
		effectOK := t.Effect == "" || t.Effect == v1.TaintEffectNoSchedule
		if keyOK && effectOK && (t.Operator == v1.TolerationOpExists || t.Value == "") {
			return true
		}
	}
	return false
}

// localVolume names the first emptyDir (not in memory) or hostPath
// volume not listed in safe-to-evict-local-volumes, "" when none.
func localVolume(p *v1.Pod) string {
	listed := map[string]bool{}
	for _, name := range strings.Split(p.Annotations[questions.SafeToEvictLocalVolumesAnnotation], ",") {
		listed[name] = true
	}
	for _, v := range p.Spec.Volumes {
		local := v.HostPath != nil || (v.EmptyDir != nil && v.EmptyDir.Medium != v1.StorageMediumMemory)
		if local && !listed[v.Name] {
			return fmt.Sprintf("%q", v.Name)
		}
	}
	return ""
}
