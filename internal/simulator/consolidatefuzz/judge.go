package consolidatefuzz

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/plannerfuzz"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// Judge decides which sets of nodes of one case can be removed under a
// rule set. It simulates the case once to its end, as consolidate does
// (the pending pods placed where they fit), and judges every set on
// that settled cluster; the pods still pending then are left aside, as
// consolidate leaves them (a drain only takes room away).
type Judge struct {
	ctx      context.Context
	newWorld func(*cluster.Cluster) (*simulator.World, error)
	// settled is the loaded cluster after its simulation: the objects
	// beside the pods, and the controllers the budgets' count reads.
	settled *cluster.Cluster
	nodes   []*v1.Node
	// bound are the settled cluster's bound pods, by namespace/name.
	bound   []*v1.Pod
	budgets []*budget
	// Blocked says, for each node that cannot go whatever the set, why:
	// a pod the rule set keeps it for, or a budget that refuses a pod.
	Blocked map[string]string
	// moving are each node's pods that a drain moves.
	moving map[string][]*v1.Pod
	// free is each node's room left by its bound pods; need, the room its
	// moving pods need elsewhere.
	free, need map[string]amount
	// StrictCordon: a set is feasible only when every replacement is
	// placed while its nodes are cordoned (see Check).
	StrictCordon bool
	// Orders is how many orders of the replacements' creation a set is
	// simulated in (see Check); 0 or 1, the order its nodes are given in
	// only.
	Orders int
	sims   atomic.Int64
}

// NewJudge simulates the case's cluster to its end and reads, node by
// node, what the rule set does with its pods.
func NewJudge(ctx context.Context, env *plannerfuzz.Env, rules questions.Rules) (*Judge, error) {
	loaded, err := env.Load()
	if err != nil {
		return nil, fmt.Errorf("loading the case: %w", err)
	}
	w, err := env.NewWorld(loaded)
	if err != nil {
		return nil, err
	}
	if err := w.Run(ctx); err != nil {
		return nil, fmt.Errorf("the settling simulation: %w", err)
	}
	j := &Judge{ctx: ctx, newWorld: env.NewWorld, settled: w.Cluster, nodes: slices.Clone(w.Cluster.Nodes),
		Blocked: map[string]string{}, moving: map[string][]*v1.Pod{}, free: map[string]amount{}, need: map[string]amount{}}
	pending := map[string]bool{}
	for _, p := range w.PodResults() {
		if p.Status == report.StatusUnschedulable {
			pending[p.Namespace+"/"+p.Name] = true
		}
	}
	var all []*v1.Pod
	w.Store.EachPod(func(p *v1.Pod) { all = append(all, p) })
	slices.SortFunc(all, func(a, b *v1.Pod) int { return strings.Compare(cluster.PodKey(a), cluster.PodKey(b)) })
	j.budgets = countBudgets(w.Cluster, all)
	on := map[string][]*v1.Pod{}
	for _, p := range all {
		if p.Spec.NodeName != "" && !pending[cluster.PodKey(p)] {
			j.bound = append(j.bound, p)
			on[p.Spec.NodeName] = append(on[p.Spec.NodeName], p)
		}
	}
	o := ownersOf(w.Cluster)
	for _, n := range j.nodes {
		f := amount{n.Status.Allocatable.Cpu().MilliValue(), n.Status.Allocatable.Memory().Value(), n.Status.Allocatable.Pods().Value()}
		var need amount
		if rules == questions.RulesKarpenter && n.Annotations[questions.DoNotDisruptAnnotation] == "true" {
			j.Blocked[n.Name] = "the node is annotated do-not-disrupt"
		}
		for _, p := range on[n.Name] {
			r := requests(p)
			f.cpu, f.mem, f.pods = f.cpu-r.cpu, f.mem-r.mem, f.pods-1
			why, move := j.read(rules, p, o)
			if why != "" && j.Blocked[n.Name] == "" {
				j.Blocked[n.Name] = why
			}
			if move {
				j.moving[n.Name] = append(j.moving[n.Name], p)
				need.cpu, need.mem, need.pods = need.cpu+r.cpu, need.mem+r.mem, need.pods+1
			}
		}
		j.free[n.Name], j.need[n.Name] = f, need
	}
	return j, nil
}

// read is the rule set's reading of one running pod: what keeps its node
// ("" when nothing does) and whether a drain moves it. Both rule sets
// read each budget pod by pod (the drain's refused evictions are retried
// until the replacements run): a pod whose budget allows no disruption
// now keeps its node, and so does one that two budgets select (the
// eviction API refuses it).
func (j *Judge) read(rules questions.Rules, p *v1.Pod, o owners) (string, bool) {
	var sel []*budget
	for _, b := range j.budgets {
		if b.selects(p) {
			sel = append(sel, b)
		}
	}
	v := podVerdict(rules, p, o, len(sel) > 0)
	key := cluster.PodKey(p)
	switch {
	case v.fate == blocks:
		return fmt.Sprintf("pod %s: %s", key, v.why), false
	case v.readsBudgets && len(sel) > 1:
		return fmt.Sprintf("pod %s: budgets %s and %s both select it", key, sel[0].name(), sel[1].name()), false
	case v.readsBudgets && len(sel) == 1 && sel[0].allowed() < 1:
		return fmt.Sprintf("pod %s: budget %s", key, sel[0]), false
	}
	return "", v.fate == moves
}

// amount is CPU (millicores), memory (bytes) and pod slots.
type amount struct{ cpu, mem, pods int64 }

// requests are a pod's requests, as the scheduler counts them.
func requests(p *v1.Pod) amount {
	r := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	return amount{r.Cpu().MilliValue(), r.Memory().Value(), 1}
}

// Verdict is the judge's word on a set of nodes.
type Verdict struct {
	Feasible bool
	// Why, when not feasible: the node kept and why, the room short, the
	// pod left without its place, or the drain that may stall.
	Why string
	// Waits, when feasible: some replacements wait for the nodes'
	// deletion (they are placed once the nodes are gone, not while the
	// nodes are cordoned), and why they wait.
	Waits string
	// Simulated: the verdict took a simulation.
	Simulated bool
}

// Sims counts the simulations the judge ran.
func (j *Judge) Sims() int { return int(j.sims.Load()) }

// Check judges the removal of the nodes. It is feasible when no node is
// Blocked and every replacement of their moving pods (unbound, its
// status cleared) is placed on the nodes left, nothing preempted. The
// nodes' other pods (DaemonSet and mirror pods) go with them.
//
// The plan cordons all its nodes before its first drain, so the
// replacements are first simulated with the nodes cordoned
// (spec.unschedulable). A topology spread still counts a cordoned node as
// a domain (nodeTaintsPolicy Ignore), one its replacements left empty:
// a replacement can then wait, pending, until the drained nodes are
// deleted, which the drain does not wait for. So when that simulation
// leaves a replacement pending, the nodes are simulated deleted too: if
// every replacement is placed then, the set is feasible and Waits says
// why they waited, unless a budget makes the drain wait for a replacement
// that cannot run before it ends (stall): its evictions past the
// disruptions it allows are retried until a replacement runs. With
// StrictCordon, any replacement pending while the nodes are cordoned
// makes the set infeasible.
//
// The scheduler places the replacements one at a time, in the order they
// are created, and a set that packs in one order may not in another. The
// replacements are created in the order the nodes are given (a plan's own
// order, that of its drains; the subsets of the exhaustive search, the
// nodes' order), each node's pods by name; with Orders > 1, the set must
// hold in Orders-1 shuffles of them too.
//
// Before simulating, the replacements' requests are checked against the
// room the nodes left have free: a sum that exceeds it cannot be placed.
// Check is safe for concurrent use.
func (j *Judge) Check(remove []string) (*Verdict, error) {
	gone := map[string]bool{}
	var need amount
	for _, n := range remove {
		if why := j.Blocked[n]; why != "" {
			return &Verdict{Why: fmt.Sprintf("%s is kept: %s", n, why)}, nil
		}
		if gone[n] {
			return nil, fmt.Errorf("node %s listed twice", n)
		}
		gone[n] = true
		nd := j.need[n]
		need.cpu, need.mem, need.pods = need.cpu+nd.cpu, need.mem+nd.mem, need.pods+nd.pods
	}
	var free amount
	for _, n := range j.nodes {
		if f := j.free[n.Name]; !gone[n.Name] && !n.Spec.Unschedulable {
			free.cpu, free.mem, free.pods = free.cpu+max(0, f.cpu), free.mem+max(0, f.mem), free.pods+max(0, f.pods)
		}
	}
	switch {
	case need.cpu > free.cpu:
		return &Verdict{Why: fmt.Sprintf("the moving pods request %dm CPU, the nodes left have %dm free", need.cpu, free.cpu)}, nil
	case need.mem > free.mem:
		return &Verdict{Why: fmt.Sprintf("the moving pods request %dMi, the nodes left have %dMi free", need.mem>>20, free.mem>>20)}, nil
	case need.pods > free.pods:
		return &Verdict{Why: fmt.Sprintf("%d pods move, the nodes left have %d slots free", need.pods, free.pods)}, nil
	}
	if need.pods == 0 {
		return &Verdict{Feasible: true}, nil
	}
	var waits string
	for order := range max(1, j.Orders) {
		v, err := j.inOrder(remove, gone, order)
		if err != nil {
			return nil, err
		}
		if !v.Feasible {
			if order > 0 {
				v.Why = fmt.Sprintf("in the judge's order %d: %s", order, v.Why)
			}
			return v, nil
		}
		if waits == "" {
			waits = v.Waits
		}
	}
	return &Verdict{Feasible: true, Waits: waits, Simulated: true}, nil
}

// inOrder is Check's verdict with the replacements created in one order:
// 0 is the order the nodes are given in (a plan's own, its drains'),
// each node's pods by name; order k > 0, a shuffle of them drawn from k.
func (j *Judge) inOrder(remove []string, gone map[string]bool, order int) (*Verdict, error) {
	why, waiting, preempts, err := j.simulate(remove, gone, false, order)
	switch {
	case err != nil:
		return nil, err
	case why == "":
		return &Verdict{Feasible: true, Simulated: true}, nil
	case j.StrictCordon || preempts:
		// A pod preempted while the nodes are cordoned is gone for good.
		return &Verdict{Why: why + " (with the nodes cordoned)", Simulated: true}, nil
	}
	deletedWhy, _, _, err := j.simulate(remove, gone, true, order)
	switch {
	case err != nil:
		return nil, err
	case deletedWhy != "":
		return &Verdict{Why: deletedWhy, Simulated: true}, nil
	}
	if stall := j.stall(remove, waiting); stall != "" {
		return &Verdict{Why: stall + "; " + why, Simulated: true}, nil
	}
	return &Verdict{Feasible: true, Waits: why, Simulated: true}, nil
}

// stall says which budget may stall the drain, "" when none: one whose
// pods the plan evicts outnumber the disruptions it allows, and whose
// replacements waiting for the nodes' deletion are as many as it allows
// (the evictions past them wait for a replacement to run, and those wait
// for the drain to end).
func (j *Judge) stall(remove []string, waiting []*v1.Pod) string {
	for _, b := range j.budgets {
		evicted, waits := 0, 0
		for _, n := range remove {
			for _, p := range j.moving[n] {
				if b.selects(p) {
					evicted++
				}
			}
		}
		for _, p := range waiting {
			if b.selects(p) {
				waits++
			}
		}
		if a := int(b.allowed()); waits > 0 && waits >= a && evicted > a {
			return fmt.Sprintf("the drain may stall: budget %s, the plan evicts %d of its pods and %d replacements wait for the nodes' deletion", b, evicted, waits)
		}
	}
	return ""
}

// simulate places the replacements of the moving pods of the nodes gone,
// the nodes cordoned or deleted, the replacements created in the order
// (inOrder's): why the first replacement is not placed or a pod is
// preempted ("" when none), the moving pods whose replacements are left
// pending, and whether a pod is preempted.
func (j *Judge) simulate(remove []string, gone map[string]bool, deleted bool, order int) (why string, waiting []*v1.Pod, preempts bool, err error) {
	c := cluster.New()
	for _, n := range j.nodes {
		switch {
		case gone[n.Name] && deleted:
			continue
		case gone[n.Name]:
			n = n.DeepCopy()
			n.Spec.Unschedulable = true
		}
		c.Nodes = append(c.Nodes, n)
	}
	for _, p := range j.bound {
		if !gone[p.Spec.NodeName] {
			c.Pods = append(c.Pods, p)
		}
	}
	var moving []*v1.Pod
	for _, n := range remove {
		moving = append(moving, j.moving[n]...)
	}
	if order > 0 {
		r := rand.New(rand.NewPCG(uint64(order), 0))
		r.Shuffle(len(moving), func(a, b int) { moving[a], moving[b] = moving[b], moving[a] })
	}
	moved := map[string]*v1.Pod{}
	for _, p := range moving {
		cp := p.DeepCopy()
		cp.Spec.NodeName = ""
		cp.DeletionTimestamp, cp.DeletionGracePeriodSeconds = nil, nil
		cp.Status = v1.PodStatus{Phase: v1.PodPending}
		c.Pods = append(c.Pods, cp)
		moved[cluster.PodKey(cp)] = p
	}
	s := j.settled
	c.Namespaces, c.PriorityClasses, c.Services = s.Namespaces, s.PriorityClasses, s.Services
	c.ReplicaSets, c.StatefulSets, c.RCs = s.ReplicaSets, s.StatefulSets, s.RCs
	c.Others = s.Others
	j.sims.Add(1)
	w, err := j.newWorld(c)
	if err != nil {
		return "", nil, false, err
	}
	if err := w.Run(j.ctx); err != nil {
		return "", nil, false, err
	}
	for _, p := range w.PodResults() {
		key := p.Namespace + "/" + p.Name
		switch {
		case p.Status == report.StatusPreempted:
			if !preempts {
				why, preempts = fmt.Sprintf("pod %s is preempted: %s", key, p.Message), true
			}
		case p.Status != report.StatusScheduled && moved[key] != nil:
			waiting = append(waiting, moved[key])
			if why == "" {
				why = fmt.Sprintf("the replacement of %s is %s: %s", key, strings.ToLower(p.Status), p.Message)
			}
		}
	}
	return why, waiting, preempts, nil
}
