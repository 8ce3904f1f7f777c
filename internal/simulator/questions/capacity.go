package questions

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// CapacityResult is capacity's answer: how many more copies of a pod fit,
// where, and why the next one does not.
type CapacityResult struct {
	// Pod names the template (namespace/name).
	Pod   string         `json:"pod"`
	Fits  int            `json:"fits"`
	Nodes map[string]int `json:"nodes"`
	Zones map[string]int `json:"zones"`
	// Next is the copy that no longer fits; nil when the limit was
	// reached first.
	Next *NextCopy `json:"next,omitempty"`
	// GangPods, for a Job whose pods form a gang, is how many pods each
	// copy (the whole Job) has; Nodes and Zones then count pods, and
	// Domains counts copies by the value of the group's topology key
	// ("key=value").
	GangPods int            `json:"gangPods,omitempty"`
	Domains  map[string]int `json:"domains,omitempty"`
}

// AddNodesResult is capacity --add-nodes' answer.
type AddNodesResult struct {
	// Node names the template.
	Node string `json:"node"`
	// AddNodes is the fewest nodes like it to add so that every pending
	// pod is scheduled and none preempted; Pending and Preempted, how many
	// pods are pending and preempted without them.
	AddNodes  int `json:"addNodes"`
	Pending   int `json:"pending"`
	Preempted int `json:"preempted,omitempty"`
}

// NextCopy is why the next copy does not fit: the FitError, and the
// copy explained node by node against the cluster it met.
type NextCopy struct {
	Message string                `json:"message"`
	Explain *report.ExplainReport `json:"explain,omitempty"`
}

// Capacity places the cluster's pending pods, then copies of pod one at a
// time through the same scheduler until one does not fit or limit copies
// fit. Each copy is placed on the cluster as it is (World.ScheduleNow): it
// is attempted at once, as kube-scheduler attempts a new pod, and the
// pods left unschedulable are retried only when the copy's binding wakes
// them, not after waiting for their flush. Copies never preempt
// (preemptionPolicy Never): capacity counts free room, not room that
// evicting others would make.
func Capacity(ctx context.Context, c *cluster.Cluster, newWorld func(*cluster.Cluster) (*simulator.World, error), pod *v1.Pod, limit int) (*CapacityResult, error) {
	w, err := newWorld(c)
	if err != nil {
		return nil, err
	}
	if err := w.Run(ctx); err != nil {
		return nil, err
	}
	zoneOf := map[string]string{}
	for _, n := range w.Store.Nodes() {
		zoneOf[n.Name] = n.Labels[v1.LabelTopologyZone]
	}
	res := &CapacityResult{Pod: pod.Namespace + "/" + pod.Name, Nodes: map[string]int{}, Zones: map[string]int{}}
	never := v1.PreemptNever
	var placed []*v1.Pod
	for i := 0; i < limit && ctx.Err() == nil; i++ {
		p := pod.DeepCopy()
		p.Name = fmt.Sprintf("%s-copy-%d", pod.Name, i+1)
		p.UID = types.UID(fmt.Sprintf("%s-copy-%d", pod.UID, i+1))
		p.Spec.NodeName = ""
		p.Spec.PreemptionPolicy = &never
		p.Status = v1.PodStatus{}
		if err := w.AddPending(p); err != nil {
			return nil, err
		}
		w.Store.Flush()
		if err := w.ScheduleNow(ctx); err != nil {
			return nil, err
		}
		cur, ok := w.Store.GetPod(p.Namespace, p.Name)
		if !ok || cur.Spec.NodeName == "" {
			if res.Next, err = nextCopy(ctx, w, cur, copiesDoNotPreempt); err != nil {
				return nil, err
			}
			break
		}
		placed = append(placed, p)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The copies still bound: a pending pod of higher priority that a
	// copy's binding woke may have preempted earlier ones.
	for _, p := range placed {
		cur, ok := w.Store.GetPod(p.Namespace, p.Name)
		if !ok || cur.UID != p.UID || cur.Spec.NodeName == "" {
			continue
		}
		res.Fits++
		res.Nodes[cur.Spec.NodeName]++
		if z := zoneOf[cur.Spec.NodeName]; z != "" {
			res.Zones[z]++
		}
	}
	return res, nil
}

// The FitError of a copy ends with the preemption plugin's reason, which
// for a policy the user never set reads as if they had: capacity says
// plainly that its copies (or replicas) do not preempt.
const (
	notEligibleNever     = "preemption: not eligible due to preemptionPolicy=Never."
	copiesDoNotPreempt   = "capacity's copies do not preempt."
	replicasDoNotPreempt = "capacity's replicas do not preempt."
)

// nextCopy is why the copy p (nil when it is gone) was not placed: its
// FitError and its explanation against the world as it is, with the
// preemption part of both said as instead.
func nextCopy(ctx context.Context, w *simulator.World, p *v1.Pod, instead string) (*NextCopy, error) {
	next := &NextCopy{Message: strings.Replace(scheduledMessage(p), notEligibleNever, instead, 1)}
	if p == nil {
		return next, nil
	}
	ex, err := explainNow(ctx, w, p)
	if err != nil {
		return nil, err
	}
	ex.Message = strings.Replace(ex.Message, notEligibleNever, instead, 1)
	next.Explain = ex
	return next, nil
}

// scheduledMessage is the pod's PodScheduled condition message.
func scheduledMessage(p *v1.Pod) string {
	if p == nil {
		return "deleted"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodScheduled {
			return c.Message
		}
	}
	return ""
}

// AddNodes finds the fewest copies of node to add to the cluster so that
// every pending pod the scheduler is responsible for is scheduled and no
// pod is preempted (the pods unplaced counts, as --node-types does), by
// simulating each candidate count (doubling, then bisecting); the count
// returned was simulated and left none. limit bounds the search.
func AddNodes(ctx context.Context, load func() (*cluster.Cluster, error), newWorld func(*cluster.Cluster) (*simulator.World, error), node *v1.Node, limit int) (*AddNodesResult, error) {
	res := &AddNodesResult{Node: node.Name}
	var example string
	left := func(k int) ([]report.PodResult, error) {
		c, err := load()
		if err != nil {
			return nil, err
		}
		copies := NodeCopies(node, k, c)
		added := make(map[string]bool, len(copies))
		for _, n := range copies {
			added[n.Name] = true
		}
		if err := joinNodes(c, copies); err != nil {
			return nil, err
		}
		w, err := newWorld(c)
		if err != nil {
			return nil, err
		}
		if err := w.Run(ctx); err != nil {
			return nil, err
		}
		out := unplaced(w, w.PodResults(), nil, added)
		if len(out) > 0 {
			example = fmt.Sprintf("%s/%s: %s", out[0].Namespace, out[0].Name, out[0].Message)
		}
		return out, ctx.Err()
	}
	before, err := left(0)
	if err != nil || len(before) == 0 {
		return res, err
	}
	res.Pending, res.Preempted = count(before, report.StatusUnschedulable), count(before, report.StatusPreempted)
	lo, hi := 0, 1 // lo leaves pods without a place; hi is to be tried
	for {
		out, err := left(hi)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			break
		}
		if hi >= limit {
			return nil, fmt.Errorf("%d pods still pending or preempted with %d nodes like %s added (the limit, --max-nodes), e.g. %s", len(out), hi, node.Name, example)
		}
		lo, hi = hi, min(2*hi, limit)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		out, err := left(mid)
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	res.AddNodes = hi
	return res, nil
}

// NodeCopies makes k nodes like n, named <name>-new-<i> (their hostname
// label too), avoiding names the cluster uses.
func NodeCopies(n *v1.Node, k int, c *cluster.Cluster) []*v1.Node {
	used := map[string]bool{}
	for _, e := range c.Nodes {
		used[e.Name] = true
	}
	out := make([]*v1.Node, 0, k)
	for i := 1; len(out) < k; i++ {
		name := fmt.Sprintf("%s-new-%d", n.Name, i)
		if used[name] {
			continue
		}
		cp := n.DeepCopy()
		cp.Name, cp.UID = name, types.UID("node-"+name)
		if cp.Labels == nil {
			cp.Labels = map[string]string{}
		}
		cp.Labels[v1.LabelHostname] = name
		loading.DefaultNode(cp)
		out = append(out, cp)
	}
	return out
}

// SortedCounts returns m's keys by count, then name.
func SortedCounts(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return m[keys[i]] > m[keys[j]] || (m[keys[i]] == m[keys[j]] && keys[i] < keys[j])
	})
	return keys
}

// joinNodes adds the new nodes to c with the DaemonSet pods a joining node
// gets, defaulted as the API server would: the capacity they leave is what
// the pending pods can have.
func joinNodes(c *cluster.Cluster, nodes []*v1.Node) error {
	return loading.DefaultPods(c, c.JoinNodes(nodes))
}
