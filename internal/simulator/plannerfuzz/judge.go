package plannerfuzz

import (
	"context"
	"fmt"
	"maps"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// Judge decides plans of one case by simulation: the same scheduling
// core as the planner's, the plan's nodes joined with their DaemonSet
// pods (questions.CheckPlan).
type Judge struct {
	ctx   context.Context
	env   *Env
	types []questions.NodeType
	// orders: see Limits.Orders.
	orders int
}

// NewJudge returns the judge of a case's types on env.
func NewJudge(ctx context.Context, env *Env, types []questions.NodeType) *Judge {
	return &Judge{ctx: ctx, env: env, types: types}
}

// Check simulates the cluster with counts nodes of each candidate added.
// It is safe for concurrent use.
func (j *Judge) Check(counts []int) (*questions.PlanCheck, error) {
	return questions.CheckPlan(j.ctx, j.env.Load, j.env.NewWorld, j.types, counts)
}

// InOrders is the verdict of counts in the judge's other orders of the
// new nodes (1 to Limits.Orders: names, order of joining, the scheduler's
// draws between equally scored nodes): the first that is not feasible, or
// nil when every one is. kube-scheduler breaks ties at random, so a plan
// that places every pod in one order only is not one a user can rely on.
func (j *Judge) InOrders(counts []int, allowed map[string]bool) (*Verdict, error) {
	for order := 1; order <= j.orders; order++ {
		check, err := questions.CheckPlanInOrder(j.ctx, j.env.Load, j.env.NewWorld, j.types, counts, order)
		if err != nil {
			return nil, err
		}
		if v := VerdictOf(check, allowed); !v.Feasible() {
			v.Order = order
			return v, nil
		}
	}
	return nil, nil
}

// daemonFirst is the priority CheckDaemonsFirst gives the new nodes'
// DaemonSet pods: system-node-critical's.
const daemonFirst = int32(2000001000)

// CheckDaemonsFirst is Check with the DaemonSet pods of the new nodes
// (those of no node of existing) scheduled before every other pod, as
// system-node-critical agents are: with every type at its limit and room
// short, the pods would otherwise take their room, and the pods left
// would be no set a plan could leave.
func (j *Judge) CheckDaemonsFirst(counts []int, existing map[string]bool) (*questions.PlanCheck, error) {
	first := func(c *cluster.Cluster) (*simulator.World, error) {
		for _, p := range c.Pods {
			if cluster.IsDaemonSetPod(p) && p.Spec.NodeName == "" && !existing[cluster.DaemonPodNode(p)] {
				prio := daemonFirst
				p.Spec.Priority = &prio
			}
		}
		return j.env.NewWorld(c)
	}
	return questions.CheckPlan(j.ctx, j.env.Load, first, j.types, counts)
}

// Starved: some DaemonSet pod of a new node is left unplaced.
func Starved(check *questions.PlanCheck) bool {
	for _, u := range check.Unplaced {
		if u.Daemon && u.NewNode {
			return true
		}
	}
	return false
}

// Verdict is a plan judged against the pods allowed to stay unplaced.
type Verdict struct {
	// Missing are the pods it leaves unplaced beyond those allowed: the
	// DaemonSet pods of its new nodes always count.
	Missing []questions.UnplacedPod
	// Empty are its new nodes holding no pod but DaemonSet pods.
	Empty []string
	Check *questions.PlanCheck
	// Order is the judge's order of the new nodes the verdict is of (0:
	// the plan's own; see InOrders).
	Order int
}

// Feasible: the plan leaves no pod unplaced beyond those allowed.
func (v *Verdict) Feasible() bool { return len(v.Missing) == 0 }

// VerdictOf judges a simulation's outcome: allowed are the pods (namespace/
// name) that may stay unplaced.
func VerdictOf(check *questions.PlanCheck, allowed map[string]bool) *Verdict {
	v := &Verdict{Check: check}
	for _, u := range check.Unplaced {
		if (u.Daemon && u.NewNode) || !allowed[u.Pod] {
			v.Missing = append(v.Missing, u)
		}
	}
	for _, n := range check.NewNodes {
		if check.NodePods[n] == 0 {
			v.Empty = append(v.Empty, n)
		}
	}
	return v
}

// Unplaceable are the pods a simulation leaves unplaced that a plan may
// leave unplaced too: all of them but the DaemonSet pods of its new
// nodes. Of the simulation with every candidate at its bound, they are
// the pods no plan places (the floor).
func Unplaceable(check *questions.PlanCheck) map[string]bool {
	out := map[string]bool{}
	for _, u := range check.Unplaced {
		if !(u.Daemon && u.NewNode) {
			out[u.Pod] = true
		}
	}
	return out
}

// daemonPods are the DaemonSet pods a new node of each candidate gets:
// one node of each joined to a cluster as loaded, its pods read by the
// node they are pinned to.
func daemonPods(env *Env, types []questions.NodeType) ([][]*v1.Pod, error) {
	c, err := env.Load()
	if err != nil {
		return nil, err
	}
	of := map[string]int{}
	var nodes []*v1.Node
	for i, t := range types {
		n := t.Node.DeepCopy()
		n.Name = fmt.Sprintf("plannerfuzz-candidate-%d", i)
		n.Labels = maps.Clone(n.Labels)
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[v1.LabelHostname] = n.Name
		of[n.Name] = i
		nodes = append(nodes, n)
	}
	out := make([][]*v1.Pod, len(types))
	for _, p := range c.JoinNodes(nodes) {
		if i, ok := of[cluster.DaemonPodNode(p)]; ok {
			out[i] = append(out[i], p)
		}
	}
	return out, nil
}
