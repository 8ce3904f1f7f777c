package questions

import (
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubesched/kubesched/internal/cache"
	"github.com/kubesched/kubesched/internal/cluster/memory"
	"github.com/kubesched/kubesched/internal/queue"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
)

// drainer tries consolidate's drains in one live world: the settled
// cluster, with the drains kept so far done in it, as a scheduler that
// keeps running would place each drain's pods (its random tie-breaks and
// the node it starts a partial search at go on from drain to drain). A
// drain costs the scheduling of the pods it evicts. One that fails is
// undone from the store's journal of the drain's writes: in place,
// through the same events as any write, when it wrote only nodes and
// pods; otherwise (claims, volumes, PodGroups written, or a pod that
// finished) by making the world again from what it held before the drain
// (stored objects are never changed in place, so the journal's old
// versions are that state). Making a world of 15,000 nodes costs a
// second.
type drainer struct {
	ctx      context.Context
	newWorld func(*cluster.Cluster) (*simulator.World, error)
	// base is the settled cluster: what a world made again shares with it
	// (namespaces, priority classes, services, the other objects).
	base *cluster.Cluster
	// basePending are the pods pending before any drain, left out.
	basePending map[string]bool

	w      *simulator.World
	nodes  []*v1.Node
	podsOn map[string][]*v1.Pod // the bound pods of each node, by namespace/name
	room   *roomBook
	// buf is pods' buffer, used again by each call.
	buf []*v1.Pod
	// stall says why a drain of names evicting moves may stall with the
	// replacements waiting left pending while the nodes are cordoned, ""
	// when it does not (nil: never).
	stall func(names []string, moves [][]*v1.Pod, waiting []*v1.Pod) string
}

func newDrainer(ctx context.Context, newWorld func(*cluster.Cluster) (*simulator.World, error), settled *cluster.Cluster, basePending map[string]bool) (*drainer, error) {
	d := &drainer{ctx: ctx, newWorld: newWorld, base: settled, basePending: basePending, nodes: settled.Nodes}
	if err := d.make(settled); err != nil {
		return nil, err
	}
	d.podsOn = byNode(settled.Pods)
	d.room = newRoomBook(settled.Nodes, settled.Pods)
	return d, nil
}

// make makes the live world of c and runs it (it has nothing pending: the
// settled cluster's pods all run).
func (d *drainer) make(c *cluster.Cluster) error {
	w, err := d.newWorld(c)
	if err != nil {
		return err
	}
	if err := w.Run(d.ctx); err != nil {
		return err
	}
	d.w = w
	return nil
}

// pods are the live world's pods, in no order, valid until the next
// call (a buffer used again: the PodDisruptionBudgets' check asks for
// every pod before each drain).
func (d *drainer) pods() []*v1.Pod {
	out := d.buf[:0]
	d.w.Store.EachPod(func(p *v1.Pod) { out = append(out, p) })
	d.buf = out
	return out
}

// drain removes node from the live world: the node deleted, its pods
// with it (as the pod garbage collector would), each pod of move
// replaced by a pending copy (its controller's replacement,
// its claims generated again). It returns the first pod the drain left
// without its place and why ("" when every copy runs and nothing was
// preempted); the drain is then undone.
func (d *drainer) drain(node string, move []*v1.Pod) (pod, reason string, err error) {
	return d.drainAll([]string{node}, [][]*v1.Pod{move}, true)
}

// drainAll drains the nodes together, as a plan that cordons them all
// before it evicts (cluster-autoscaler taints every node it will remove
// before the first drain; Karpenter taints its candidates): no pod
// moved goes to another of them. moves[i] are the pods of names[i] that
// move. With keep false the drain is undone even when every pod runs (a
// trial).
func (d *drainer) drainAll(names []string, moves [][]*v1.Pod, keep bool) (pod, reason string, err error) {
	return d.drainWith(names, moves, nil, nil, keep)
}

// drainWith is drainAll with a new node added (nil: none) and the pods
// its DaemonSets run there, agents, which must schedule too: a
// replacement.
func (d *drainer) drainWith(names []string, moves [][]*v1.Pod, add *v1.Node, agents []*v1.Pod, keep bool) (pod, reason string, err error) {
	nodes := d.nodes
	gone := make(map[string]bool, len(names))
	for _, n := range names {
		gone[n] = true
	}
	removals, evictions, listed := d.w.Store.Removals(), len(d.w.Store.Evicted), len(d.w.Pending)
	order := d.w.Scheduler.Cache.NodeOrder()
	d.w.Store.StartJournal()
	// The nodes are cordoned while their pods are evicted, and deleted
	// once the drain is done: a replacement may wait for the deletion (a
	// topology spread counts a cordoned node as a domain).
	d.nodes = slices.Clone(nodes)
	for i, n := range d.nodes {
		if gone[n.Name] {
			cp := n.DeepCopy()
			cp.Spec.Unschedulable = true
			if err := d.w.Store.UpdateNode(cp); err != nil {
				return "", "", err
			}
			d.nodes[i] = cp
		}
	}
	if add != nil {
		if err := d.w.Store.AddNode(add); err != nil {
			return "", "", err
		}
		d.nodes = append(d.nodes, add)
	}
	d.w.Cluster.Nodes = d.nodes
	copies := slices.Clone(agents) // the new node's agents first
	removed := 0
	for i, node := range names {
		for _, p := range d.podsOn[node] {
			removed++
			d.w.Remove(p, simulator.Gone{Status: report.StatusDeleted, Message: "drained from " + node})
			if !slices.Contains(moves[i], p) {
				continue // it goes with the node
			}
			cp := p.DeepCopy()
			cp.Spec.NodeName = ""
			// The replacement is a new pod: not being deleted, not started.
			cp.DeletionTimestamp, cp.DeletionGracePeriodSeconds = nil, nil
			cp.Status = v1.PodStatus{Phase: v1.PodPending}
			copies = append(copies, cp)
		}
	}
	for _, cp := range copies {
		if err := d.w.AddPending(cp); err != nil {
			return "", "", err
		}
	}
	d.w.Store.Flush() // the scheduler hears of the changes before it runs
	d.w.RenewLimit()
	err = d.w.Run(d.ctx)
	if err != nil {
		d.w.Store.StopJournal()
		return "", "", err
	}
	drained := "the node"
	if len(names) > 1 {
		drained = fmt.Sprintf("the %d nodes", len(names))
	}
	if add != nil {
		drained += " replaced by " + add.Name
	}
	// Replacements left pending while the nodes are cordoned wait for
	// their deletion, unless a budget stalls the drain first.
	waiting, preempted := d.waiting(copies, listed)
	if len(waiting) > 0 && !preempted && d.stall != nil {
		if why := d.stall(names, moves, waiting); why != "" {
			pod, reason = cluster.PodKey(waiting[0]), "with "+drained+" cordoned, "+why
		}
	}
	if pod == "" {
		for _, n := range names {
			if err := d.w.Store.DeleteNode(n); err != nil {
				d.w.Store.StopJournal()
				return "", "", err
			}
		}
		d.nodes = slices.DeleteFunc(d.nodes, func(n *v1.Node) bool { return gone[n.Name] })
		d.w.Cluster.Nodes = d.nodes
		d.w.Store.Flush()
		if len(waiting) > 0 {
			// A deletion is not an event that requeues a pod its
			// filters rejected: the scheduler retries it when it has
			// waited 5 minutes.
			d.w.Advance(d.w.Clock.Now().Add(queue.DefaultPodMaxInUnschedulablePodsDuration))
			d.w.Scheduler.Queue.FlushUnschedulablePodsLeftover()
			d.w.RenewLimit()
			if err := d.w.Run(d.ctx); err != nil {
				d.w.Store.StopJournal()
				return "", "", err
			}
		}
	}
	j := d.w.Store.StopJournal()
	// Pods that left but the nodes' and the victims: pods that finished.
	others := d.w.Store.Removals() - removals - uint64(removed) - uint64(len(d.w.Store.Evicted)-evictions)
	// Before the drain every pod ran (a drain that left one without its
	// place was undone): only the copies, the pods created meanwhile and
	// the pods they preempted can have changed.
	touched := append(copies, d.w.Pending[listed:]...)
	if pod == "" && (len(waiting) > 0 || preempted) {
		// Else every copy ran at once: nothing to look for.
		pod, reason = notAllRunning(d.w.PodResultsFor(touched), d.basePending, drained)
	}
	if pod != "" || !keep {
		d.nodes = nodes
		return pod, reason, d.undo(j, nodes, order, others > 0)
	}
	if others > 0 || add != nil {
		// Count every node again.
		all := slices.Clone(d.pods())
		slices.SortFunc(all, memory.ComparePods)
		d.podsOn, d.room = byNode(all), newRoomBook(d.nodes, all)
		return "", "", nil
	}
	for _, node := range names {
		delete(d.podsOn, node)
		d.room.dropNode(node)
	}
	for _, cp := range copies {
		cur, ok := d.w.Store.GetPod(cp.Namespace, cp.Name)
		if !ok {
			continue
		}
		at := d.podsOn[cur.Spec.NodeName]
		i, _ := slices.BinarySearchFunc(at, cur, memory.ComparePods)
		d.podsOn[cur.Spec.NodeName] = slices.Insert(at, i, cur)
		d.room.add(cur)
	}
	return "", "", nil
}

// waiting are the drain's copies left pending (not those pending before
// the drains), and whether a pod was preempted.
func (d *drainer) waiting(copies []*v1.Pod, listed int) ([]*v1.Pod, bool) {
	touched := append(slices.Clone(copies), d.w.Pending[listed:]...)
	byKey := make(map[string]*v1.Pod, len(touched))
	for _, p := range touched {
		byKey[p.Namespace+"/"+p.Name] = p
	}
	var out []*v1.Pod
	preempted := false
	for _, r := range d.w.PodResultsFor(touched) {
		key := r.Namespace + "/" + r.Name
		switch {
		case r.Status == report.StatusPreempted:
			preempted = true
		case r.Status == report.StatusUnschedulable && !d.basePending[key] && byKey[key] != nil:
			out = append(out, byKey[key])
		}
	}
	return out, preempted
}

// longestTrials bounds longestTogether's trials: log2 of a million
// candidates.
const longestTrials = 20

// longestTogether finds by bisection the longest run names[:k], k ≥ 2,
// that drains together (drainAll) and drains it, returning k (0 when
// none of 2 or more does) and the trials simulated. The bisection
// assumes that a run that drains has shorter runs that drain too, as
// Karpenter's does; the run found is drained again for good, and kept
// only if it drains again (the scheduler's tie-breaks go on from trial
// to trial). maxDrains bounds the trials with the run (0: no bound).
func (d *drainer) longestTogether(names []string, moves [][]*v1.Pod, maxDrains int) (int, int, error) {
	lo, hi, best, tried := 2, len(names), 0, 0
	for lo <= hi && tried < longestTrials && (maxDrains == 0 || tried+1 < maxDrains) {
		mid := (lo + hi) / 2
		tried++
		pod, _, err := d.drainAll(names[:mid], moves[:mid], false)
		if err != nil {
			return 0, tried, err
		}
		if pod == "" {
			best, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	if best == 0 {
		return 0, tried, nil
	}
	tried++
	pod, _, err := d.drainAll(names[:best], moves[:best], true)
	if err != nil || pod != "" {
		return 0, tried, err
	}
	return best, tried, nil
}

// longestHolding is how many of the plan's first nodes drain together,
// known to be at least known: all of them when the whole plan does, else
// the longest start found by bisection above known; with the pod and
// reason the whole plan failed on. It leaves the world as it was.
func (d *drainer) longestHolding(plan []string, moves [][]*v1.Pod, known int) (int, string, string, error) {
	pod, reason, err := d.drainAll(plan, moves, false)
	if err != nil || pod == "" {
		return len(plan), "", "", err
	}
	lo, hi, best := known+1, len(plan)-1, known
	for tried := 0; lo <= hi && tried < longestTrials; tried++ {
		mid := (lo + hi) / 2
		p, _, err := d.drainAll(plan[:mid], moves[:mid], false)
		if err != nil {
			return 0, "", "", err
		}
		if p == "" {
			best, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best, pod, reason, nil
}

// undo takes a failed drain back, by its journal j: in place, the
// store's writes undone, when the drain wrote only nodes and pods and no
// pod finished meanwhile (a pod added back would not finish again);
// otherwise by making the world again from what it held before: its
// objects now, those the drain wrote as they were before, and nodes.
// Either way the nodes are in the scheduler's order as before the drain
// (order: the node added again is not last in its zone), as a world made
// anew lists them by name.
func (d *drainer) undo(j *memory.Journal, nodes []*v1.Node, order cache.NodeOrder, finished bool) error {
	d.w.Cluster.Nodes = nodes
	if !finished && !j.Other && len(j.Claims)+len(j.PVs)+len(j.PVCs) == 0 {
		if err := d.w.Store.Undo(j); err != nil {
			return err
		}
		// The pods the drain removed are back: their results too.
		var back []string
		for k, old := range j.Pods {
			if old != nil {
				back = append(back, k)
			}
		}
		d.w.Restored(back)
		d.w.Store.Flush()
		return d.w.Scheduler.Cache.RestoreNodeOrder(order)
	}
	var h held
	for _, p := range d.pods() {
		if _, ok := j.Pods[cluster.PodKey(p)]; !ok {
			h.pods = append(h.pods, p)
		}
	}
	for _, p := range j.Pods {
		if p != nil {
			h.pods = append(h.pods, p)
		}
	}
	for _, c := range d.w.Store.Claims() {
		if _, ok := j.Claims[c.Namespace+"/"+c.Name]; !ok {
			h.claims = append(h.claims, c)
		}
	}
	for _, c := range j.Claims {
		if c != nil {
			h.claims = append(h.claims, c)
		}
	}
	slices.SortFunc(h.claims, func(a, b *resourceapi.ResourceClaim) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	// The volumes in the store's order (by key): those the drain wrote as
	// they were, those it created left out (volumes are never deleted).
	pvs, pvcs := d.w.Store.Volumes()
	if pvs != nil {
		h.pvs = make([]*v1.PersistentVolume, 0, len(pvs))
		for _, pv := range pvs {
			if old, ok := j.PVs[pv.Name]; !ok {
				h.pvs = append(h.pvs, pv)
			} else if old != nil {
				h.pvs = append(h.pvs, old)
			}
		}
	}
	if pvcs != nil {
		h.pvcs = make([]*v1.PersistentVolumeClaim, 0, len(pvcs))
		for _, pvc := range pvcs {
			if old, ok := j.PVCs[pvc.Namespace+"/"+pvc.Name]; !ok {
				h.pvcs = append(h.pvcs, pvc)
			} else if old != nil {
				h.pvcs = append(h.pvcs, old)
			}
		}
	}
	return d.make(h.cluster(d.base, nodes, nil))
}

// held is what a world holds at a moment, for making it again.
type held struct {
	pods   []*v1.Pod // in no order
	claims []*resourceapi.ResourceClaim
	// pvs and pvcs are nil without volume listers.
	pvs  []*v1.PersistentVolume
	pvcs []*v1.PersistentVolumeClaim
}

// cluster is the cluster of nodes that holds h, the rest as in c, with
// the pods in skip left out and without the workloads' controllers
// (their pods are made).
func (h held) cluster(c *cluster.Cluster, nodes []*v1.Node, skip map[string]bool) *cluster.Cluster {
	pods := slices.Clone(h.pods)
	slices.SortFunc(pods, memory.ComparePods)
	return held{pods: pods, claims: h.claims, pvs: h.pvs, pvcs: h.pvcs}.inOrder(c, nodes, skip)
}

// inOrder is cluster with the pods in h's order.
func (h held) inOrder(c *cluster.Cluster, nodes []*v1.Node, skip map[string]bool) *cluster.Cluster {
	out := cluster.New()
	out.Nodes = nodes
	for _, p := range h.pods {
		k := cluster.PodKey(p)
		if skip[k] {
			continue
		}
		out.Pods = append(out.Pods, p)
		out.Sources[k] = c.Sources[k]
	}
	out.Namespaces, out.PriorityClasses, out.Services = c.Namespaces, c.PriorityClasses, c.Services
	out.ReplicaSets, out.StatefulSets, out.RCs = c.ReplicaSets, c.StatefulSets, c.RCs
	// The claims and volumes as the world left them: the claims
	// generated for its pods, the devices allocated to the pods it bound,
	// the volumes bound and provisioned for them.
	for _, o := range c.Others {
		switch o.(type) {
		case *resourceapi.ResourceClaim:
			continue
		case *v1.PersistentVolume, *v1.PersistentVolumeClaim:
			if h.pvs != nil {
				continue
			}
		}
		out.Others = append(out.Others, o)
	}
	for _, cl := range h.claims {
		out.Others = append(out.Others, cl)
	}
	for _, pv := range h.pvs {
		out.Others = append(out.Others, pv)
	}
	for _, pvc := range h.pvcs {
		out.Others = append(out.Others, pvc)
	}
	return out
}

// settle is the cluster w ran to: its nodes, the pods it left (bound or
// pending, but those in skip) and the objects beside them, without the
// workloads' controllers (their pods are made). The pods are the store's
// own, shared: nothing changes a stored pod in place (a write stores a
// new version), so the worlds made from the settled cluster cannot
// change them either.
func settle(w *simulator.World, skip map[string]bool) *cluster.Cluster {
	h := held{claims: w.Store.Claims()}
	w.Store.EachPod(func(p *v1.Pod) { h.pods = append(h.pods, p) })
	h.pvs, h.pvcs = w.Store.Volumes()
	return h.cluster(w.Cluster, w.Cluster.Nodes, skip)
}

// byNode are the bound pods of pods by node name, each node's in the
// order of pods.
func byNode(pods []*v1.Pod) map[string][]*v1.Pod {
	on := map[string][]*v1.Pod{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			on[p.Spec.NodeName] = append(on[p.Spec.NodeName], p)
		}
	}
	return on
}

// roomBook answers noRoomElsewhere: the CPU and memory each schedulable
// node has allocatable and its bound pods request, and the free room
// summed over them, kept as drains remove nodes and bind pods. Each
// pod's requests are computed once (by pod: the drains share the pods
// they do not touch).
type roomBook struct {
	requests    map[*v1.Pod]framework.Resource
	alloc, used map[string]framework.Resource // schedulable nodes only
	total       framework.Resource
}

func newRoomBook(nodes []*v1.Node, pods []*v1.Pod) *roomBook {
	b := &roomBook{requests: map[*v1.Pod]framework.Resource{}, alloc: map[string]framework.Resource{}, used: map[string]framework.Resource{}}
	for _, n := range nodes {
		if !n.Spec.Unschedulable {
			b.alloc[n.Name] = allocatableOf(n)
		}
	}
	for _, p := range pods {
		if _, ok := b.alloc[p.Spec.NodeName]; ok && !terminal(p) {
			r, u := b.request(p), b.used[p.Spec.NodeName]
			u.MilliCPU += r.MilliCPU
			u.Memory += r.Memory
			u.AllowedPodNumber++
			b.used[p.Spec.NodeName] = u
		}
	}
	for n := range b.alloc {
		f := b.free(n)
		b.total.MilliCPU += f.MilliCPU
		b.total.Memory += f.Memory
		b.total.AllowedPodNumber += f.AllowedPodNumber
	}
	return b
}

// allocatableOf is the CPU, memory and pod slots a node has for pods.
func allocatableOf(n *v1.Node) framework.Resource {
	return framework.Resource{MilliCPU: n.Status.Allocatable.Cpu().MilliValue(), Memory: n.Status.Allocatable.Memory().Value(),
		AllowedPodNumber: n.Status.Allocatable.Pods().Value()}
}

func (b *roomBook) request(p *v1.Pod) framework.Resource {
	if r, ok := b.requests[p]; ok {
		return r
	}
	r := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	out := framework.Resource{MilliCPU: r.Cpu().MilliValue(), Memory: r.Memory().Value()}
	b.requests[p] = out
	return out
}

// free is a node's free room (none on a node that is not schedulable).
func (b *roomBook) free(node string) framework.Resource {
	a, u := b.alloc[node], b.used[node]
	return framework.Resource{MilliCPU: max(0, a.MilliCPU-u.MilliCPU), Memory: max(0, a.Memory-u.Memory),
		AllowedPodNumber: max(0, a.AllowedPodNumber-u.AllowedPodNumber)}
}

// dropNode takes a removed node's room out.
func (b *roomBook) dropNode(node string) {
	f := b.free(node)
	b.total.MilliCPU -= f.MilliCPU
	b.total.Memory -= f.Memory
	b.total.AllowedPodNumber -= f.AllowedPodNumber
	delete(b.alloc, node)
	delete(b.used, node)
}

// add counts a pod bound to its node.
func (b *roomBook) add(p *v1.Pod) {
	n := p.Spec.NodeName
	if _, ok := b.alloc[n]; !ok {
		return
	}
	was, r, u := b.free(n), b.request(p), b.used[n]
	u.MilliCPU += r.MilliCPU
	u.Memory += r.Memory
	u.AllowedPodNumber++
	b.used[n] = u
	now := b.free(n)
	b.total.MilliCPU += now.MilliCPU - was.MilliCPU
	b.total.Memory += now.Memory - was.Memory
	b.total.AllowedPodNumber += now.AllowedPodNumber - was.AllowedPodNumber
}

// noRoomElsewhere says why the evicted pods of node cannot all fit on
// the other schedulable nodes, by their CPU and memory requests and
// their number against the room and pod slots those nodes have free;
// "" when they might.
func (b *roomBook) noRoomElsewhere(node string, evicted []*v1.Pod) string {
	if len(evicted) == 0 {
		return ""
	}
	return b.noRoomFor([]string{node}, [][]*v1.Pod{evicted}, framework.Resource{})
}

// zeroRoom is no extra room.
var zeroRoom framework.Resource

// noRoomFor is noRoomElsewhere for the pods of several nodes drained
// together, extra (a new node's room) added to the others'.
func (b *roomBook) noRoomFor(nodes []string, moves [][]*v1.Pod, extra framework.Resource) string {
	var need framework.Resource
	free := b.total
	free.MilliCPU += extra.MilliCPU
	free.Memory += extra.Memory
	free.AllowedPodNumber += extra.AllowedPodNumber
	for i, node := range nodes {
		for _, p := range moves[i] {
			r := b.request(p)
			need.MilliCPU += r.MilliCPU
			need.Memory += r.Memory
			need.AllowedPodNumber++
		}
		own := b.free(node)
		free.MilliCPU -= own.MilliCPU
		free.Memory -= own.Memory
		free.AllowedPodNumber -= own.AllowedPodNumber
	}
	switch {
	case need.MilliCPU > free.MilliCPU:
		return fmt.Sprintf("its pods request %dm CPU; the other nodes have %dm free", need.MilliCPU, free.MilliCPU)
	case need.Memory > free.Memory:
		return fmt.Sprintf("its pods request %d bytes of memory; the other nodes have %d free", need.Memory, free.Memory)
	case need.AllowedPodNumber > free.AllowedPodNumber:
		return fmt.Sprintf("its %d pods need as many pod slots; the other nodes have %d free", need.AllowedPodNumber, free.AllowedPodNumber)
	}
	return ""
}
