package questions

import (
	"context"
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// PlanCheck is what a simulation of the cluster with a plan's new nodes
// added left: a judge of CheapestNodes' answers (the planner fuzzer's),
// kept apart from the search so that it does not share its shortcuts.
type PlanCheck struct {
	// Unplaced are the pods left without a place at the end, pending or
	// preempted, DaemonSet pods of the new nodes included and those of
	// the existing nodes too (a caller compares them with a reference).
	Unplaced []UnplacedPod
	// NewNodes are the added nodes' names, in the order of the counts.
	NewNodes []string
	// NodePods counts, for each new node, the pods bound to it at the end
	// that are not DaemonSet pods (a node that holds none of them is
	// empty: bought for nothing but its agents).
	NodePods map[string]int
	// DaemonPods counts, for each new node, its DaemonSet pods bound to
	// it at the end.
	DaemonPods map[string]int
}

// UnplacedPod is a pod a plan leaves without a place.
type UnplacedPod struct {
	// Pod is namespace/name.
	Pod string
	// Status is report.StatusUnschedulable or report.StatusPreempted.
	Status string
	Reason string
	// Daemon: a DaemonSet's pod; Node its node, NewNode whether that node
	// is one of the plan's.
	Daemon  bool
	Node    string
	NewNode bool
}

// CheckPlan simulates the cluster load returns with counts[i] nodes of
// types[i] added, named and joined as CheapestNodes' simulations add them
// (copies of each type's template named <type>-<zone>-new-<i>, each with
// the DaemonSet pods a joining node gets), and says which pods are left
// without a place and what each new node holds.
func CheckPlan(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), types []NodeType, counts []int) (*PlanCheck, error) {
	return CheckPlanInOrder(ctx, load, newWorld, types, counts, 0)
}

// CheckPlanInOrder is CheckPlan with the new nodes in another order: when
// order is not 0, shuffled by it, named check-<order>-<i> in that order,
// and the scheduler's draws between equally scored nodes seeded by it
// too (by a rule of its own, apart from the search's other orders). A
// plan kube-scheduler places is one it places in every order: its ties
// fall at random, and a cluster's nodes join in an order and under names
// of their own.
func CheckPlanInOrder(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), types []NodeType, counts []int, order int) (*PlanCheck, error) {
	if len(counts) != len(types) {
		return nil, fmt.Errorf("%d counts for %d node types", len(counts), len(types))
	}
	c, err := load()
	if err != nil {
		return nil, err
	}
	out := &PlanCheck{NodePods: map[string]int{}, DaemonPods: map[string]int{}}
	var joined []*v1.Node
	for i, k := range counts {
		if k < 0 || k > types[i].Limit {
			return nil, fmt.Errorf("%d nodes of %s in zone %q: want 0 to its limit %d", k, types[i].Type, types[i].Zone, types[i].Limit)
		}
		if k == 0 {
			continue
		}
		t := types[i]
		tmpl := t.Node.DeepCopy()
		if t.Zone != "" {
			tmpl.Name = t.Type + "-" + t.Zone
		}
		for _, n := range NodeCopies(tmpl, k, c) {
			out.NewNodes = append(out.NewNodes, n.Name)
			out.NodePods[n.Name] = 0
			out.DaemonPods[n.Name] = 0
			joined = append(joined, n)
		}
	}
	if order != 0 {
		r := rand.New(rand.NewPCG(uint64(order), 0x5eed))
		r.Shuffle(len(joined), func(a, b int) { joined[a], joined[b] = joined[b], joined[a] })
		out.NewNodes = out.NewNodes[:0]
		clear(out.NodePods)
		clear(out.DaemonPods)
		for i, n := range joined {
			n.Name = fmt.Sprintf("check-%d-%04d", order, i)
			n.Labels[v1.LabelHostname] = n.Name
			out.NewNodes = append(out.NewNodes, n.Name)
			out.NodePods[n.Name], out.DaemonPods[n.Name] = 0, 0
		}
	}
	if err := loading.DefaultPods(c, c.JoinNodes(joined)); err != nil {
		return nil, err
	}
	w, err := newWorld(c)
	if err != nil {
		return nil, err
	}
	if order != 0 {
		w.Scheduler.Reseed(int64(order)*104729 + 7)
	}
	if err := w.Run(ctx); err != nil {
		return nil, err
	}
	isNew := func(node string) bool { _, ok := out.NodePods[node]; return ok }
	for _, r := range w.PodResults() {
		switch r.Status {
		case report.StatusScheduled:
			if !isNew(r.Node) {
				continue
			}
			if p, ok := w.Store.GetPod(r.Namespace, r.Name); ok && cluster.IsDaemonSetPod(p) {
				out.DaemonPods[r.Node]++
			} else {
				out.NodePods[r.Node]++
			}
		case report.StatusUnschedulable, report.StatusPreempted:
			u := UnplacedPod{Pod: r.Namespace + "/" + r.Name, Status: r.Status, Reason: r.Message}
			var p *v1.Pod
			if got, ok := w.Store.GetPod(r.Namespace, r.Name); ok {
				p = got
			} else if ev, ok := w.Store.Evicted[u.Pod]; ok {
				p = ev.Pod
			}
			if p != nil && cluster.IsDaemonSetPod(p) {
				u.Daemon, u.Node = true, cluster.DaemonPodNode(p)
				u.NewNode = isNew(u.Node)
			}
			out.Unplaced = append(out.Unplaced, u)
		}
	}
	return out, ctx.Err()
}
