package questions

import (
	"encoding/binary"
	"hash/fnv"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/internal/cluster/memory"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// On a large cluster every simulation of the whole cluster costs the
// scheduling of all its pods: tens of seconds at 15,000 nodes, and a
// search runs tens of them. Most of that work is the same in each: the
// pods the existing nodes take before any new node joins. The search
// then runs on the settled cluster instead: the cluster as the
// simulation without new nodes left it (its pods bound where the
// scheduler put them, those it could not place pending), with the new
// nodes and their DaemonSet pods joining it. That is how new nodes reach
// a running cluster (the scheduler has placed what it could; the pods
// still pending are what the nodes are bought for), and each simulation
// then schedules only the pending pods.
//
// A simulation of the whole cluster with the new nodes there from the
// start (simulate of the cluster with them added) may need more: the
// scheduler then also puts on the empty new nodes pods the existing ones
// would take, and what it leaves there is spread thinner. The answer
// says which it was decided by (NodesJoin); `simulate` with a timeline
// step that creates the nodes once the rest has settled checks it.

// settledMinNodes is the size, in existing nodes, from which the search
// runs on the settled cluster: below it a simulation of the whole
// cluster is cheap, and every step is judged as the answer is.
const settledMinNodes = 200

// settledBase is the settled cluster a search runs on.
type settledBase struct {
	// held is what the simulation without new nodes left (its pods,
	// claims and volumes); base is its cluster, for the objects beside.
	held held
	base *cluster.Cluster
	// probes are, per candidate, the DaemonSet pods of a new node of it
	// (daemonRequests'); each new node gets copies pinned to it.
	probes [][]*v1.Pod
}

// newSettledBase makes the settled cluster of w (the simulation without new
// nodes, run to its end).
func newSettledBase(w *simulator.World, probes [][]*v1.Pod) *settledBase {
	h := held{claims: w.Store.Claims()}
	// The pods in the order the cluster lists them (the order they
	// entered the world's queue), the store's current version of each.
	seen := map[string]bool{}
	for _, p := range w.Cluster.Pods {
		if cur := w.Live(p); cur != nil && !seen[cluster.PodKey(cur)] {
			seen[cluster.PodKey(cur)] = true
			h.pods = append(h.pods, cur)
		}
	}
	var rest []*v1.Pod
	w.Store.EachPod(func(p *v1.Pod) {
		if !seen[cluster.PodKey(p)] {
			rest = append(rest, p)
		}
	})
	// A pod preempted without a controller to make it again is pending
	// again: the nodes are bought for it too (in the whole cluster's
	// simulation with the new nodes, it may never be preempted).
	for k, ev := range w.Store.Evicted {
		if ev.Pod != nil && metav1.GetControllerOf(ev.Pod) == nil && !seen[k] {
			p := ev.Pod.DeepCopy()
			p.Spec.NodeName = ""
			p.Status = v1.PodStatus{Phase: v1.PodPending}
			rest = append(rest, p)
		}
	}
	slices.SortFunc(rest, memory.ComparePods)
	h.pods = append(h.pods, rest...)
	h.pvs, h.pvcs = w.Store.Volumes()
	return &settledBase{held: h, base: w.Cluster, probes: probes}
}

// cluster is the settled cluster with nodes joined (owner: each one's
// candidate) and their DaemonSet pods, which come after every pod
// already there (as a node joining a running cluster gets them).
func (b *settledBase) cluster(joined []*v1.Node, owner map[string]int, agentsFirst bool) *cluster.Cluster {
	nodes := append(slices.Clone(b.base.Nodes), joined...)
	// The settled pods in the queue's order (held.cluster would list
	// them by name).
	c := b.held.inOrder(b.base, nodes, nil)
	taken := map[string]bool{}
	for _, n := range joined {
		for _, probe := range b.probes[owner[n.Name]] {
			p := daemonCopy(probe, n.Name, taken)
			if agentsFirst {
				prio := int32(agentsFirstPriority)
				p.Spec.Priority = &prio
			}
			c.Pods = append(c.Pods, p)
			c.Sources[cluster.PodKey(p)] = b.base.Sources[cluster.PodKey(probe)]
		}
	}
	return c
}

// daemonCopy is a DaemonSet pod like probe for node: pinned to it, named
// after the DaemonSet's prefix and a hash of the node's name (names in
// taken are not used again).
func daemonCopy(probe *v1.Pod, node string, taken map[string]bool) *v1.Pod {
	p := probe.DeepCopy()
	const alphanums = "bcdfghjklmnpqrstvwxz2456789"
	for i := int64(0); ; i++ {
		h := fnv.New64a()
		h.Write([]byte(node))
		binary.Write(h, binary.LittleEndian, i)
		x := h.Sum64()
		b := make([]byte, 5)
		for j := range b {
			b[j] = alphanums[x%uint64(len(alphanums))]
			x /= uint64(len(alphanums))
		}
		name := probe.GenerateName + string(b)
		if probe.GenerateName == "" {
			name = probe.Name + "-" + string(b)
		}
		if !taken[p.Namespace+"/"+name] {
			taken[p.Namespace+"/"+name] = true
			p.Name = name
			break
		}
	}
	p.UID = types.UID("daemon-" + p.Namespace + "-" + p.Name)
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			term := &a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[t]
			for f := range term.MatchFields {
				if term.MatchFields[f].Key == metav1.ObjectNameField {
					term.MatchFields[f].Values = []string{node}
				}
			}
		}
	}
	return p
}

// simulateSettled is simulate on the settled cluster.
func (s *nodeTypeSearch) simulateSettled(counts []int, agentsFirst bool, variant int) (*nodeTypeWorld, error) {
	b := s.settled
	joined, owner := s.newNodes(counts, &cluster.Cluster{Nodes: b.base.Nodes}, variant)
	w, err := s.newWorld(b.cluster(joined, owner, agentsFirst))
	if err != nil {
		return nil, err
	}
	reseed(w, variant)
	if err := w.Run(s.ctx); err != nil {
		return nil, err
	}
	return s.result(w, counts, owner, joined)
}
