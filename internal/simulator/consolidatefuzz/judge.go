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

	"github.com/kubesched/kubesched/internal/queue"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/plannerfuzz"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// Judge decides which plans of one case (sets of nodes to remove, and
// sets of nodes to replace by a new node) hold under a rule set. It
// simulates the case once to its end, as consolidate does (the pending
// pods placed where they fit), and judges every plan on that settled
// cluster; the pods still pending then are left aside, as consolidate
// leaves them (a drain only takes room away, and a new node's room goes
// to the pods it replaces).
type Judge struct {
	ctx      context.Context
	newWorld func(*cluster.Cluster) (*simulator.World, error)
	// settled is the loaded cluster after its simulation: the objects
	// beside the pods, and the controllers the budgets' count reads.
	settled *cluster.Cluster
	nodes   []*v1.Node
	// bound are the settled cluster's bound pods, by namespace/name; on,
	// each node's.
	bound   []*v1.Pod
	on      map[string][]*v1.Pod
	budgets []*budget
	// Blocked says, for each node that cannot go whatever the set, why:
	// a pod the rule set keeps it for, or a budget that refuses a pod.
	Blocked map[string]string
	// moving are each node's pods that a drain moves; moves, their keys
	// (a replacement has its pod's: it moves again when a later drain of
	// the plan takes its node away).
	moving map[string][]*v1.Pod
	moves  map[string]bool
	// free is each node's room left by its bound pods.
	free map[string]amount
	// StrictCordon: a plan is feasible only when every replacement is
	// placed while its nodes are cordoned (see CheckPlan).
	StrictCordon bool
	// Orders is how many orders of the replacements' creation a plan is
	// simulated in (see CheckPlan); 0 or 1, the order its nodes are given
	// in only.
	Orders int
	// types are the node types a plan's swaps add a node of; typeRoom,
	// the room a new node of each leaves once its DaemonSets' pods run
	// (negative when they do not fit it), typeAgents those pods.
	types      []questions.NodeType
	typeRoom   []amount
	typeAgents [][]*v1.Pod
	sims       atomic.Int64
}

// NewJudge simulates the case's cluster to its end and reads, node by
// node, what the rule set does with its pods; types are the node types
// the plans judged may add a node of (Plan.Swaps).
func NewJudge(ctx context.Context, env *plannerfuzz.Env, rules questions.Rules, types ...questions.NodeType) (*Judge, error) {
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
		Blocked: map[string]string{}, on: map[string][]*v1.Pod{}, moving: map[string][]*v1.Pod{}, moves: map[string]bool{}, free: map[string]amount{}}
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
	on := j.on
	for _, p := range all {
		if p.Spec.NodeName != "" && !pending[cluster.PodKey(p)] {
			j.bound = append(j.bound, p)
			on[p.Spec.NodeName] = append(on[p.Spec.NodeName], p)
		}
	}
	o := ownersOf(w.Cluster)
	for _, n := range j.nodes {
		f := amount{n.Status.Allocatable.Cpu().MilliValue(), n.Status.Allocatable.Memory().Value(), n.Status.Allocatable.Pods().Value()}
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
				j.moves[cluster.PodKey(p)] = true
			}
		}
		j.free[n.Name] = f
	}
	j.types = types
	for t := range types {
		node, agents := j.newNode(t, nil)
		room := amount{node.Status.Allocatable.Cpu().MilliValue(), node.Status.Allocatable.Memory().Value(), node.Status.Allocatable.Pods().Value()}
		for _, a := range agents {
			r := requests(a)
			room.cpu, room.mem, room.pods = room.cpu-r.cpu, room.mem-r.mem, room.pods-1
		}
		j.typeRoom, j.typeAgents = append(j.typeRoom, room), append(j.typeAgents, agents)
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

// Verdict is the judge's word on a plan.
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

// Check judges the removal of the nodes: CheckPlan of a plan without
// swaps.
func (j *Judge) Check(remove []string) (*Verdict, error) {
	return j.CheckPlan(Plan{Remove: remove})
}

// CheckPlan judges a plan: the removal of its nodes, then its swaps (each
// swap's nodes replaced by one new node of its type, with the pods its
// DaemonSets run there), in that order, as consolidate answers them
// (its replacements are done after the removals, each a drain of its
// own). It is feasible when no node it takes away is Blocked and, drain
// after drain, every replacement of the moving pods (unbound, its status
// cleared) and every DaemonSet pod of the new node is placed, nothing
// preempted. A node's other pods (DaemonSet and mirror pods) go with it;
// a replacement placed on a node a later swap takes away moves again.
//
// Each drain is simulated as it runs, in one world that goes on from
// drain to drain: the new node joins, the nodes are cordoned
// (spec.unschedulable) as a plan cordons them before its first
// eviction, their pods are evicted and replaced. A topology spread still
// counts a cordoned node as a domain (nodeTaintsPolicy Ignore), one its
// replacements left empty: a replacement can then wait, pending, until
// the drained nodes are deleted, which the drain does not wait for. So
// when the cordoned nodes leave a replacement pending, the world goes on
// as the cluster would: the replacements placed stay where they went,
// the nodes are deleted, and the ones waiting are retried when they have
// waited 5 minutes (a node's deletion is not an event that requeues a
// pod its filters rejected), where one of higher priority may preempt.
// If every replacement is placed then, nothing preempted, the drain holds
// and Waits says why they waited, unless a budget makes the drain wait
// for a replacement that cannot run before it ends (stall): its
// evictions past the disruptions it allows are retried until a
// replacement runs. With StrictCordon, any replacement pending while the
// nodes are cordoned makes the plan infeasible.
//
// The scheduler places the replacements one at a time, in the order they
// are created, and a plan that packs in one order may not in another. A
// drain creates the new node's DaemonSet pods first, then the
// replacements in the order its nodes are given (the removals in the
// plan's own order, that of its drains), each node's pods by name; with
// Orders > 1, the plan must hold in Orders-1 shuffles of each drain's
// replacements too.
//
// Before simulating, the plan is checked against the room the nodes
// have free (roomShort): pods that cannot be placed whatever the order
// make it infeasible unsimulated. CheckPlan is safe for concurrent use.
func (j *Judge) CheckPlan(p Plan) (*Verdict, error) {
	gone := map[string]bool{}
	for _, n := range p.gone() {
		if why := j.Blocked[n]; why != "" {
			return &Verdict{Why: fmt.Sprintf("%s is kept: %s", n, why)}, nil
		}
		if gone[n] {
			return nil, fmt.Errorf("node %s listed twice", n)
		}
		if _, ok := j.free[n]; !ok {
			return nil, fmt.Errorf("node %s is not a node of the case", n)
		}
		gone[n] = true
	}
	for _, s := range p.Swaps {
		if s.Type < 0 || s.Type >= len(j.types) {
			return nil, fmt.Errorf("swap of %v: no node type %d", s.Nodes, s.Type)
		}
	}
	if why := j.roomShort(p); why != "" {
		return &Verdict{Why: why}, nil
	}
	moves := false
	for n := range gone {
		moves = moves || len(j.moving[n]) > 0
	}
	if !moves && len(p.Swaps) == 0 {
		return &Verdict{Feasible: true}, nil
	}
	var waits string
	for order := range max(1, j.Orders) {
		v, err := j.inOrder(p, order)
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

// inOrder is CheckPlan's verdict with each drain's replacements created
// in one order: 0 is the order the nodes are given in (a plan's own, its
// drains'), each node's pods by name; order k > 0, a shuffle of them
// drawn from k.
func (j *Judge) inOrder(p Plan, order int) (*Verdict, error) {
	s, err := j.world()
	if err != nil {
		return nil, err
	}
	type drain struct {
		nodes []string
		swap  int // a type, or -1
	}
	var drains []drain
	if len(p.Remove) > 0 {
		drains = append(drains, drain{p.Remove, -1})
	}
	for _, sw := range p.Swaps {
		drains = append(drains, drain{sw.Nodes, sw.Type})
	}
	var waits string
	for i, d := range drains {
		why, wait, err := s.drain(d.nodes, d.swap, order)
		switch {
		case err != nil:
			return nil, err
		case why != "" && len(drains) > 1:
			return &Verdict{Why: fmt.Sprintf("drain %d of %d (%s): %s", i+1, len(drains), strings.Join(d.nodes, ", "), why), Simulated: true}, nil
		case why != "":
			return &Verdict{Why: why, Simulated: true}, nil
		case waits == "":
			waits = wait
		}
	}
	return &Verdict{Feasible: true, Waits: waits, Simulated: true}, nil
}

// stall says which budget may stall the drain, "" when none: one whose
// pods the drain evicts outnumber the disruptions it allows, and whose
// replacements waiting for the nodes' deletion are as many as it allows
// (the evictions past them wait for a replacement to run, and those wait
// for the drain to end).
func (j *Judge) stall(evicted, waiting []*v1.Pod) string {
	for _, b := range j.budgets {
		ev, waits := 0, 0
		for _, p := range evicted {
			if b.selects(p) {
				ev++
			}
		}
		for _, p := range waiting {
			if b.selects(p) {
				waits++
			}
		}
		if a := int(b.allowed()); waits > 0 && waits >= a && ev > a {
			return fmt.Sprintf("the drain may stall: budget %s, the plan evicts %d of its pods and %d replacements wait for the nodes' deletion", b, ev, waits)
		}
	}
	return ""
}

// sim is a plan's simulation: one world, the settled cluster with the
// drains done so far, and the pods the drain under way created, by key
// (each replacement, each new node's DaemonSet pod, an agent).
type sim struct {
	j      *Judge
	w      *simulator.World
	moved  map[string]*v1.Pod
	agents map[string]bool
}

// world is the settled cluster's world, its pods all running (those
// pending before the drains left out).
func (j *Judge) world() (*sim, error) {
	c := cluster.New()
	c.Nodes = slices.Clone(j.nodes)
	c.Pods = slices.Clone(j.bound)
	set := j.settled
	c.Namespaces, c.PriorityClasses, c.Services = set.Namespaces, set.PriorityClasses, set.Services
	c.ReplicaSets, c.StatefulSets, c.RCs = set.ReplicaSets, set.StatefulSets, set.RCs
	c.Others = set.Others
	j.sims.Add(1)
	w, err := j.newWorld(c)
	if err != nil {
		return nil, err
	}
	if err := w.Run(j.ctx); err != nil {
		return nil, err
	}
	return &sim{j: j, w: w}, nil
}

// drain does one drain of the plan in the world, as consolidate's drains
// do (drainWith): a new node of type swap joins (none when swap < 0),
// the nodes are cordoned, their pods deleted, the moving ones replaced by
// pending copies (the new node's DaemonSet pods first), and the world
// runs; a replacement left pending is retried once the nodes are deleted
// (see CheckPlan). It returns why the drain fails ("" when it holds) and,
// when it holds, why replacements waited for the deletion ("" when none
// did). The nodes are deleted when it holds.
func (s *sim) drain(nodes []string, swap, order int) (why, waits string, err error) {
	j, w := s.j, s.w
	gone := map[string]bool{}
	for _, n := range nodes {
		gone[n] = true
	}
	for i, n := range w.Cluster.Nodes {
		if gone[n.Name] {
			cp := n.DeepCopy()
			cp.Spec.Unschedulable = true
			if err := w.Store.UpdateNode(cp); err != nil {
				return "", "", err
			}
			w.Cluster.Nodes = slices.Clone(w.Cluster.Nodes)
			w.Cluster.Nodes[i] = cp
		}
	}
	s.moved, s.agents = map[string]*v1.Pod{}, map[string]bool{}
	var agents, copies, evicted []*v1.Pod
	if swap >= 0 {
		node, a := j.newNode(swap, w.Cluster.Nodes)
		if err := w.Store.AddNode(node); err != nil {
			return "", "", err
		}
		w.Cluster.Nodes = append(slices.Clone(w.Cluster.Nodes), node)
		agents = a
	}
	podsOn := map[string][]*v1.Pod{}
	w.Store.EachPod(func(p *v1.Pod) {
		if gone[p.Spec.NodeName] {
			podsOn[p.Spec.NodeName] = append(podsOn[p.Spec.NodeName], p)
		}
	})
	var on []*v1.Pod
	for _, n := range nodes {
		slices.SortFunc(podsOn[n], func(a, b *v1.Pod) int { return strings.Compare(cluster.PodKey(a), cluster.PodKey(b)) })
		on = append(on, podsOn[n]...)
	}
	for _, p := range on {
		w.Remove(p, simulator.Gone{Status: report.StatusDeleted, Message: "drained from " + p.Spec.NodeName})
		if !j.moves[cluster.PodKey(p)] {
			continue // it goes with the node
		}
		cp := p.DeepCopy()
		cp.Spec.NodeName = ""
		cp.DeletionTimestamp, cp.DeletionGracePeriodSeconds = nil, nil
		cp.Status = v1.PodStatus{Phase: v1.PodPending}
		copies = append(copies, cp)
		evicted = append(evicted, p)
	}
	if order > 0 {
		r := rand.New(rand.NewPCG(uint64(order), uint64(len(w.Cluster.Nodes))))
		r.Shuffle(len(copies), func(a, b int) { copies[a], copies[b] = copies[b], copies[a] })
	}
	for _, a := range agents {
		s.moved[cluster.PodKey(a)], s.agents[cluster.PodKey(a)] = a, true
	}
	for _, cp := range copies {
		s.moved[cluster.PodKey(cp)] = cp
	}
	for _, cp := range append(agents, copies...) {
		if err := w.AddPending(cp); err != nil {
			return "", "", err
		}
	}
	w.Store.Flush()
	w.RenewLimit()
	if err := w.Run(j.ctx); err != nil {
		return "", "", err
	}
	why, waiting, preempts := s.outcome()
	switch {
	case why == "":
		return "", "", s.deleteNodes(gone)
	case j.StrictCordon || preempts:
		// A pod preempted while the nodes are cordoned is gone for good.
		return why + " (with the nodes cordoned)", "", nil
	}
	if stall := j.stall(evicted, waiting); stall != "" {
		return stall + "; " + why, "", nil
	}
	if err := s.deleteNodes(gone); err != nil {
		return "", "", err
	}
	// A deletion is not an event that requeues a pod its filters
	// rejected: the scheduler retries it when it has waited 5 minutes.
	w.Advance(w.Clock.Now().Add(queue.DefaultPodMaxInUnschedulablePodsDuration))
	w.Scheduler.Queue.FlushUnschedulablePodsLeftover()
	w.RenewLimit()
	if err := w.Run(j.ctx); err != nil {
		return "", "", err
	}
	if deletedWhy, _, _ := s.outcome(); deletedWhy != "" {
		return fmt.Sprintf("once the nodes are deleted and the replacements waiting retried, %s (while the nodes were cordoned, %s)", deletedWhy, why), "", nil
	}
	return "", why, nil
}

// deleteNodes deletes the drained nodes from the world.
func (s *sim) deleteNodes(gone map[string]bool) error {
	w := s.w
	for n := range gone {
		if err := w.Store.DeleteNode(n); err != nil {
			return err
		}
	}
	w.Cluster.Nodes = slices.DeleteFunc(slices.Clone(w.Cluster.Nodes), func(n *v1.Node) bool { return gone[n.Name] })
	w.Store.Flush()
	return nil
}

// outcome is what the drain under way left: why the first of its pods
// is not placed or a pod is preempted ("" when none), its pods left
// pending, and whether a pod is preempted.
func (s *sim) outcome() (why string, waiting []*v1.Pod, preempts bool) {
	for _, p := range s.w.PodResults() {
		key := p.Namespace + "/" + p.Name
		switch {
		case p.Status == report.StatusPreempted:
			if !preempts {
				why, preempts = fmt.Sprintf("pod %s is preempted: %s", key, p.Message), true
			}
		case p.Status != report.StatusScheduled && s.moved[key] != nil:
			waiting = append(waiting, s.moved[key])
			if why != "" {
				continue
			}
			what := "the replacement of " + key
			if s.agents[key] {
				what = "the new node's DaemonSet pod " + key
			}
			why = fmt.Sprintf("%s is %s: %s", what, strings.ToLower(p.Status), p.Message)
		}
	}
	return why, waiting, preempts
}
