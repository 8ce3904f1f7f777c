package consolidatefuzz

import (
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// Swap is one replacement of a plan: its nodes replaced by one new node
// of a node type (Type, an index of the case's Types and of the judge's).
type Swap struct {
	Nodes []string
	Type  int
}

// Plan is what a plan does: the nodes it removes, and its swaps.
type Plan struct {
	Remove []string
	Swaps  []Swap
}

// gone are the nodes the plan takes away: those it removes, then each
// swap's, in order.
func (p Plan) gone() []string {
	out := slices.Clone(p.Remove)
	for _, s := range p.Swaps {
		out = append(out, s.Nodes...)
	}
	return out
}

// Cents is the plan's saving in hundredths: the prices of the nodes it
// removes, and of each swap's nodes less its new node's; removal, the
// removals' part.
func (p Plan) Cents(c *Case) (total, removal int) {
	for _, n := range p.Remove {
		removal += c.Cents[n]
	}
	total = removal
	for _, s := range p.Swaps {
		total += s.Cents(c)
	}
	return total, removal
}

// Cents is the swap's saving in hundredths: its nodes' prices less its
// new node's.
func (s Swap) Cents(c *Case) int {
	cents := -c.TypeCents[s.Type]
	for _, n := range s.Nodes {
		cents += c.Cents[n]
	}
	return cents
}

// String is the plan in one line with its saving: "node-2, node-4 +
// node-1, node-3 by type-2 in zone-a (0.31) = 0.73" (removes node-2 and
// node-4, replaces node-1 and node-3 by one new node of type-2, priced
// 0.31, in zone-a).
func (p Plan) String(c *Case) string {
	if len(p.Remove) == 0 && len(p.Swaps) == 0 {
		return "nothing"
	}
	var parts []string
	if len(p.Remove) > 0 {
		parts = append(parts, strings.Join(p.Remove, ", "))
	}
	for _, s := range p.Swaps {
		parts = append(parts, fmt.Sprintf("%s by %s (%s)", strings.Join(s.Nodes, ", "), typeName(c.Types[s.Type]), Price(c.TypeCents[s.Type])))
	}
	cents, _ := p.Cents(c)
	return strings.Join(parts, " + ") + " = " + Price(cents)
}

// newNode is the new node of type t a swap adds to a cluster of nodes,
// named as consolidate names it (the type's template named type-zone,
// then its first copy whose name the nodes do not hold), and the pods
// the DaemonSets run on it, as consolidate makes them.
func (j *Judge) newNode(t int, nodes []*v1.Node) (*v1.Node, []*v1.Pod) {
	typ := j.types[t]
	tmpl := typ.Node.DeepCopy()
	if typ.Zone != "" {
		tmpl.Name = typ.Type + "-" + typ.Zone
	}
	node := questions.NodeCopies(tmpl, 1, &cluster.Cluster{Nodes: nodes})[0]
	return node, cluster.DaemonPods(j.settled, node)
}

// typeName is a type's name and zone.
func typeName(t questions.NodeType) string {
	if t.Zone == "" {
		return t.Type
	}
	return t.Type + " in " + t.Zone
}

// place is a node a plan's pods may go to in the end: a node it leaves
// or adds, its room free and its labels, and the pods it holds.
type place struct {
	room   amount
	labels labels.Set
	pods   []*v1.Pod
}

// roomShort says why the plan's moving pods cannot all be placed,
// whatever the order, "" when they may: every such check is one the
// scheduler's placements must pass, nothing preempted. The removals'
// pods against the room of the nodes left while they drain; then every
// moving pod (the swaps' too) against the room of the nodes the plan
// ends with, the new nodes' room less their DaemonSets' pods: in sum, by
// node selector (the pods of one against the nodes it admits), each pod
// against each node alone, and the pods of a required hostname
// anti-affinity to each other against the nodes without a pod it
// selects.
func (j *Judge) roomShort(p Plan) string {
	removed := map[string]bool{}
	for _, n := range p.Remove {
		removed[n] = true
	}
	gone := map[string]bool{}
	for _, n := range p.gone() {
		gone[n] = true
	}
	if len(p.Swaps) > 0 {
		if why := j.sumShort(p.Remove, j.places(removed, nil)); why != "" {
			return why
		}
	}
	var places []place
	for _, s := range p.Swaps {
		if r := j.typeRoom[s.Type]; r.cpu < 0 || r.mem < 0 || r.pods < 0 {
			return fmt.Sprintf("the DaemonSets' pods do not fit a new node of type %s", typeName(j.types[s.Type]))
		}
		places = append(places, place{j.typeRoom[s.Type], j.types[s.Type].Node.Labels, j.typeAgents[s.Type]})
	}
	places = j.places(gone, places)
	nodes := p.gone()
	if why := j.sumShort(nodes, places); why != "" {
		return why
	}
	var moving []*v1.Pod
	for _, n := range nodes {
		moving = append(moving, j.moving[n]...)
	}
	bySelector := map[string][]*v1.Pod{}
	var selectors []string
	for _, pod := range moving {
		r := requests(pod)
		sel := labels.SelectorFromSet(pod.Spec.NodeSelector)
		if !slices.ContainsFunc(places, func(pl place) bool {
			return r.cpu <= pl.room.cpu && r.mem <= pl.room.mem && pl.room.pods >= 1 && sel.Matches(pl.labels)
		}) {
			return fmt.Sprintf("pod %s (%dm CPU, %dMi) fits on none of the nodes left", cluster.PodKey(pod), r.cpu, r.mem>>20)
		}
		if len(pod.Spec.NodeSelector) > 0 {
			k := sel.String()
			if bySelector[k] == nil {
				selectors = append(selectors, k)
			}
			bySelector[k] = append(bySelector[k], pod)
		}
	}
	for _, k := range selectors {
		sel := labels.SelectorFromSet(bySelector[k][0].Spec.NodeSelector)
		var admitted []place
		for _, pl := range places {
			if sel.Matches(pl.labels) {
				admitted = append(admitted, pl)
			}
		}
		if why := sumOf(bySelector[k], admitted); why != "" {
			return fmt.Sprintf("on the nodes left of %s, %s", k, why)
		}
	}
	return antiShort(moving, places)
}

// places are the nodes not in gone, schedulable, as places, after more.
func (j *Judge) places(gone map[string]bool, more []place) []place {
	for _, n := range j.nodes {
		if !gone[n.Name] && !n.Spec.Unschedulable {
			more = append(more, place{j.free[n.Name], n.Labels, j.on[n.Name]})
		}
	}
	return more
}

// sumShort checks the moving pods of nodes against the room of places,
// in sum.
func (j *Judge) sumShort(nodes []string, places []place) string {
	var moving []*v1.Pod
	for _, n := range nodes {
		moving = append(moving, j.moving[n]...)
	}
	return sumOf(moving, places)
}

// sumOf says when the pods' requests exceed the places' room in sum.
func sumOf(pods []*v1.Pod, places []place) string {
	var need, free amount
	for _, p := range pods {
		r := requests(p)
		need.cpu, need.mem, need.pods = need.cpu+r.cpu, need.mem+r.mem, need.pods+1
	}
	for _, pl := range places {
		f := pl.room
		free.cpu, free.mem, free.pods = free.cpu+max(0, f.cpu), free.mem+max(0, f.mem), free.pods+max(0, f.pods)
	}
	switch {
	case need.cpu > free.cpu:
		return fmt.Sprintf("the moving pods request %dm CPU, the nodes left have %dm free", need.cpu, free.cpu)
	case need.mem > free.mem:
		return fmt.Sprintf("the moving pods request %dMi, the nodes left have %dMi free", need.mem>>20, free.mem>>20)
	case need.pods > free.pods:
		return fmt.Sprintf("%d pods move, the nodes left have %d slots free", need.pods, free.pods)
	}
	return ""
}

// antiShort checks the moving pods of each required hostname
// anti-affinity term that selects them all (a workload's replicas kept
// apart) against the places holding no pod it selects: one place each.
func antiShort(moving []*v1.Pod, places []place) string {
	type group struct {
		ns   string
		sel  labels.Selector
		pods int
	}
	var groups []*group
	for _, p := range moving {
		if p.Spec.Affinity == nil || p.Spec.Affinity.PodAntiAffinity == nil {
			continue
		}
		for _, t := range p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			sel, err := metav1.LabelSelectorAsSelector(t.LabelSelector)
			if err != nil || t.TopologyKey != v1.LabelHostname || len(t.Namespaces) > 0 || t.NamespaceSelector != nil || !sel.Matches(labels.Set(p.Labels)) {
				continue
			}
			i := slices.IndexFunc(groups, func(g *group) bool { return g.ns == p.Namespace && g.sel.String() == sel.String() })
			if i < 0 {
				groups = append(groups, &group{ns: p.Namespace, sel: sel})
				i = len(groups) - 1
			}
			groups[i].pods++
		}
	}
	for _, g := range groups {
		free := 0
		for _, pl := range places {
			if pl.room.pods >= 1 && !slices.ContainsFunc(pl.pods, func(q *v1.Pod) bool { return q.Namespace == g.ns && g.sel.Matches(labels.Set(q.Labels)) }) {
				free++
			}
		}
		if g.pods > free {
			return fmt.Sprintf("%d moving pods of anti-affinity %s are to be kept apart, %d of the nodes left hold none", g.pods, g.sel, free)
		}
	}
	return ""
}
