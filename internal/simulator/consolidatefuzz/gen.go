package consolidatefuzz

import (
	"fmt"
	"math/rand/v2"
	"strings"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/simulator/questions"
	st "github.com/kubesched/kubesched/internal/testing"
)

// Zones are the zones a case draws from, in order.
var Zones = []string{"zone-a", "zone-b", "zone-c"}

// The kinds of running workloads, by what a drain does with their pods.
const (
	kindDeployment  = "deployment"  // a Deployment, its ReplicaSet and its pods
	kindReplicaSet  = "replicaset"  // a ReplicaSet alone
	kindStatefulSet = "statefulset" // pods name-0, name-1, ...
	kindJob         = "job"         // restartPolicy Never, running
	kindBare        = "bare"        // no controller
	kindSystem      = "kube-system" // a ReplicaSet of kube-system
	kindMirror      = "mirror"      // a static pod's mirror, owned by its Node
	kindOrphan      = "orphan"      // its ReplicaSet is not in the input
)

var kindOrder = []string{kindDeployment, kindReplicaSet, kindStatefulSet, kindJob, kindBare, kindSystem, kindMirror, kindOrphan}

// kindWeights are the kinds' odds, in kindOrder.
var kindWeights = []int{34, 16, 12, 8, 4, 5, 3, 2}

// The constraints a workload's pods may have (one at most).
const (
	constraintNone       = ""
	constraintZone       = "zone"        // a zone's nodeSelector
	constraintAnti       = "anti"        // required hostname anti-affinity to its own pods
	constraintZoneSpread = "zone-spread" // zone topology spread, maxSkew 1, DoNotSchedule
	constraintHostSpread = "host-spread" // hostname topology spread, maxSkew 1, DoNotSchedule
)

const highPriority = "high"

// Case is one drawn cluster, its nodes priced, and the rule set to
// consolidate it with.
type Case struct {
	Seed    uint64
	Rules   questions.Rules
	Objects []runtime.Object
	// Nodes are the nodes' names, in order; Cents their prices in
	// hundredths (the annotation holds Cents/100).
	Nodes []string
	Cents map[string]int
	// Types are the node types consolidate may replace nodes by (none in
	// most cases), TypeCents their prices in hundredths.
	Types     []questions.NodeType
	TypeCents []int
	// What was drawn, for the one-line description and the statistics.
	Zones                 int
	Shapes                []string
	Kinds                 map[string]int // running pods by kind of workload
	Constraints           map[string]int // workloads by constraint
	Marks                 map[string]int // pods by annotation or volume the rules read
	DaemonSets, PDBs      int
	Pending               int // pods the input leaves pending
	Priorities, NodeBlock bool
}

// String is the case in one line.
func (c *Case) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d nodes in %d zones (%s), pods", c.Rules, len(c.Nodes), c.Zones, strings.Join(c.Shapes, ", "))
	for _, k := range kindOrder {
		if n := c.Kinds[k]; n > 0 {
			fmt.Fprintf(&b, " %s %d", k, n)
		}
	}
	for _, k := range []string{constraintZone, constraintAnti, constraintZoneSpread, constraintHostSpread} {
		if n := c.Constraints[k]; n > 0 {
			fmt.Fprintf(&b, ", %d %s", n, k)
		}
	}
	if len(c.Marks) > 0 {
		var marks []string
		for _, k := range []string{"safe-to-evict=false", "safe-to-evict=true", "do-not-disrupt", "emptyDir", "emptyDir listed safe"} {
			if n := c.Marks[k]; n > 0 {
				marks = append(marks, fmt.Sprintf("%s %d", k, n))
			}
		}
		fmt.Fprintf(&b, ", marked: %s", strings.Join(marks, " "))
	}
	if c.DaemonSets > 0 {
		fmt.Fprintf(&b, ", %d DaemonSets", c.DaemonSets)
	}
	if c.PDBs > 0 {
		fmt.Fprintf(&b, ", %d PDBs", c.PDBs)
	}
	if c.Pending > 0 {
		fmt.Fprintf(&b, ", %d pending", c.Pending)
	}
	if c.Priorities {
		b.WriteString(", priorities")
	}
	if c.NodeBlock {
		b.WriteString(", a node annotated do-not-disrupt")
	}
	if len(c.Types) > 0 {
		fmt.Fprintf(&b, ", %d node types", len(c.Types))
	}
	return b.String()
}

// Price writes hundredths as a price.
func Price(cents int) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

// shape is a node's size.
type shape struct{ cpu, memGi int }

func (s shape) String() string { return fmt.Sprintf("c%dm%d", s.cpu, s.memGi) }

var shapes = []shape{{2, 8}, {4, 8}, {4, 16}, {8, 16}, {8, 32}, {16, 64}}

// Generate draws the case of a seed: the same seed, the same case.
func Generate(seed uint64) *Case {
	r := rand.New(rand.NewPCG(seed, 0x5851f42d4c957f2d))
	g := &gen{r: r, c: &Case{Seed: seed, Cents: map[string]int{}, Kinds: map[string]int{}, Constraints: map[string]int{}, Marks: map[string]int{}},
		free: map[string]*room{}, zoneOf: map[string]string{}, weight: map[string]float64{}}
	g.draw()
	g.nodeTypes(rand.New(rand.NewPCG(seed, typesStream)))
	return g.c
}

// typesStream seeds the node types' draws: a stream of their own, so
// that a seed draws the same cluster with or without them.
const typesStream = 0x2545f4914f6cdd1d

// typeShare is the share of the cases drawn with node types.
const typeShare = 0.3

// nodeTypes draws, in typeShare of the cases, 1 to 3 node types that
// consolidate may replace nodes by, each of a size of the table in one
// of the case's zones with the nodes' pod slots, priced as a node of its
// size at 70% to 110%: a type cheaper for its size is what makes a
// replacement pay (a big node mostly empty for a smaller one, two nodes
// for one).
func (g *gen) nodeTypes(r *rand.Rand) {
	if r.Float64() >= typeShare {
		return
	}
	c := g.c
	slots := g.nodes[0].Status.Allocatable.Pods().String()
	for i := range 1 + r.IntN(3) {
		s := shapes[r.IntN(len(shapes))]
		zone := g.zones[r.IntN(len(g.zones))]
		cents := max(1, int(float64(priceOf(r, s))*(0.7+0.4*r.Float64())+0.5))
		name := fmt.Sprintf("type-%d", i+1)
		n := st.MakeNode().Name(name).Label(v1.LabelTopologyZone, zone).Label(v1.LabelInstanceTypeStable, s.String()).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprint(s.cpu), v1.ResourceMemory: fmt.Sprintf("%dGi", s.memGi), v1.ResourcePods: slots}).Obj()
		n.Annotations = map[string]string{questions.HourlyCostAnnotation: Price(cents)}
		c.Types = append(c.Types, questions.NodeType{Type: name, Zone: zone, Node: n, Cost: float64(cents) / 100, Limit: 10})
		c.TypeCents = append(c.TypeCents, cents)
	}
}

// room is a node's room left, in millicores, MiB and pod slots.
type room struct{ cpu, mem, pods int }

// workload is what the PDBs and the pending pods are drawn over.
type workload struct {
	name, namespace string
	pods            int
	// scale are the replicas of its controller objects (a Deployment's
	// and its ReplicaSet's) that an extra pending pod raises; none for
	// the kinds without.
	scale []*int32
}

type gen struct {
	r      *rand.Rand
	c      *Case
	zones  []string
	nodes  []*v1.Node
	free   map[string]*room
	zoneOf map[string]string
	// weight makes some nodes busier than others: consolidation needs
	// nodes that are mostly empty next to nodes with room.
	weight    map[string]float64
	workloads []*workload
	// daemonSets are the DaemonSets' app labels.
	daemonSets []string
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) chance(p float64) bool    { return g.r.Float64() < p }

func (g *gen) draw() {
	c, r := g.c, g.r
	c.Rules = questions.RulesClusterAutoscaler
	if g.chance(0.5) {
		c.Rules = questions.RulesKarpenter
	}
	g.nodesOf()
	if g.chance(0.2) {
		c.Priorities = true
		c.Objects = append(c.Objects, &schedulingv1.PriorityClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta: metav1.ObjectMeta{Name: highPriority}, Value: 1000})
	}
	if g.chance(0.35) {
		g.daemons()
	}
	// Workloads until the requests reach a share of the CPU (15% to 60%),
	// ten at most.
	total := 0
	for _, n := range g.nodes {
		total += int(n.Status.Allocatable.Cpu().MilliValue())
	}
	target := int(float64(total) * (0.15 + 0.45*r.Float64()))
	for i := 0; i < 10 && g.used() < target; i++ {
		g.workload(i)
	}
	if g.chance(0.25) {
		g.pendingReplica()
	}
	if g.chance(0.1) {
		g.hopeless()
	}
	if g.chance(0.4) {
		for range 1 + r.IntN(2) {
			g.pdb()
		}
	}
}

// used is the CPU the pods placed so far request, in millicores.
func (g *gen) used() int {
	u := 0
	for _, n := range g.nodes {
		u += int(n.Status.Allocatable.Cpu().MilliValue()) - g.free[n.Name].cpu
	}
	return u
}

// nodesOf draws 2 to 7 nodes of 1 or 2 sizes in 1 to 3 zones (no more
// than nodes); the first nodes cover every zone. Each is priced about 4 hundredths a core and half of one a
// GiB, give or take 15%; in a third of the cases the nodes of a size
// share one price (ties for the plan's order).
func (g *gen) nodesOf() {
	c, r := g.c, g.r
	a := shapes[r.IntN(len(shapes))]
	sizes := []shape{a}
	if g.chance(0.5) {
		for b := a; ; b = shapes[r.IntN(len(shapes))] {
			if b != a {
				sizes = append(sizes, b)
				break
			}
		}
	}
	for _, s := range sizes {
		c.Shapes = append(c.Shapes, s.String())
	}
	shared := map[shape]int{}
	if g.chance(0.33) {
		for _, s := range sizes {
			shared[s] = g.price(s)
		}
	}
	slots := "110"
	if g.chance(0.2) {
		slots = fmt.Sprint(4 + r.IntN(5))
	}
	count := 2 + r.IntN(6)
	g.zones = Zones[:1+r.IntN(min(len(Zones), count))]
	c.Zones = len(g.zones)
	for i := range count {
		s := sizes[r.IntN(len(sizes))]
		zone := g.zones[r.IntN(len(g.zones))]
		if i < len(g.zones) {
			zone = g.zones[i]
		}
		name := fmt.Sprintf("node-%d", i+1)
		cents := shared[s]
		if cents == 0 {
			cents = g.price(s)
		}
		n := st.MakeNode().Name(name).Label(v1.LabelTopologyZone, zone).Label(v1.LabelInstanceTypeStable, s.String()).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprint(s.cpu), v1.ResourceMemory: fmt.Sprintf("%dGi", s.memGi), v1.ResourcePods: slots}).Obj()
		n.Annotations = map[string]string{questions.HourlyCostAnnotation: Price(cents)}
		g.nodes = append(g.nodes, n)
		g.free[name] = &room{s.cpu * 1000, s.memGi * 1024, int(n.Status.Allocatable.Pods().Value())}
		g.zoneOf[name] = zone
		g.weight[name] = 0.1 + r.Float64()
		c.Nodes = append(c.Nodes, name)
		c.Cents[name] = cents
		c.Objects = append(c.Objects, n)
	}
	if g.chance(0.1) {
		// Karpenter keeps a node annotated do-not-disrupt; cluster-autoscaler
		// does not read it.
		n := g.nodes[r.IntN(len(g.nodes))]
		n.Annotations[questions.DoNotDisruptAnnotation] = "true"
		c.NodeBlock = true
	}
}

func (g *gen) price(s shape) int { return priceOf(g.r, s) }

// priceOf draws a price for a node of size s: about 4 hundredths a core
// and half of one a GiB, give or take 15%.
func priceOf(r *rand.Rand, s shape) int {
	return max(1, int(float64(4*s.cpu*100+s.memGi*50)/100*(0.85+0.3*r.Float64())+0.5))
}

// requests draws a pod's cpu (millicores) and memory (MiB).
func (g *gen) requests() (cpu, mem int) {
	cpus := []int{100, 250, 500, 500, 1000, 1000, 1500, 2000, 3000}
	mems := []int{128, 256, 512, 1024, 1024, 2048, 4096}
	return cpus[g.r.IntN(len(cpus))], mems[g.r.IntN(len(mems))]
}

// daemons draws one or two DaemonSets of small agents, their room kept
// on every node (their pods are created and placed by the simulation);
// half tolerate every taint, as many agents do (Karpenter then reads
// neither their budget nor evicts them).
func (g *gen) daemons() {
	for i := range 1 + g.r.IntN(2) {
		name := fmt.Sprintf("agent-%d", i+1)
		cpu, mem := []int{50, 100, 200}[g.r.IntN(3)], []int{64, 128, 256}[g.r.IntN(3)]
		p := st.MakePod().Label("app", name).Req(map[v1.ResourceName]string{
			v1.ResourceCPU: fmt.Sprintf("%dm", cpu), v1.ResourceMemory: fmt.Sprintf("%dMi", mem)})
		if g.chance(0.5) {
			p.Toleration("", v1.TolerationOpExists, "", "")
		}
		ds := st.MakeDaemonSet(name, p)
		ds.UID = types.UID("uid-ds-" + name)
		g.c.Objects = append(g.c.Objects, ds)
		for _, n := range g.nodes {
			f := g.free[n.Name]
			f.cpu, f.mem, f.pods = f.cpu-cpu, f.mem-mem, f.pods-1
		}
		g.daemonSets = append(g.daemonSets, name)
		g.c.DaemonSets++
	}
}

// pickKind draws a workload's kind by kindWeights.
func (g *gen) pickKind() string {
	total := 0
	for _, w := range kindWeights {
		total += w
	}
	x := g.r.IntN(total)
	for i, w := range kindWeights {
		if x < w {
			return kindOrder[i]
		}
		x -= w
	}
	return kindDeployment
}

// workload draws the i-th running workload, its pods bound to nodes with
// room that its constraint allows.
func (g *gen) workload(i int) {
	c, r := g.c, g.r
	kind := g.pickKind()
	replicas := 1 + r.IntN(4)
	if kind == kindBare || kind == kindMirror || kind == kindOrphan {
		replicas = 1
	}
	name := fmt.Sprintf("%s-%d", strings.TrimPrefix(kind, "kube-"), i+1)
	ns := v1.NamespaceDefault
	if kind == kindSystem || kind == kindMirror {
		ns = metav1.NamespaceSystem
	}
	cpu, mem := g.requests()
	p := st.MakePod().Namespace(ns).Label("app", name).Req(map[v1.ResourceName]string{
		v1.ResourceCPU: fmt.Sprintf("%dm", cpu), v1.ResourceMemory: fmt.Sprintf("%dMi", mem)})
	constraint := constraintNone
	if kind != kindMirror {
		switch x := r.Float64(); {
		case x < 0.12:
			constraint = constraintZone
			p.NodeSelector(v1.LabelTopologyZone, g.pick(g.zones...))
		case x < 0.27 && replicas > 1:
			constraint = constraintAnti
			p.PodAntiAffinity(st.AffinityTerm(v1.LabelHostname, name))
		case x < 0.37 && replicas > 1:
			constraint = constraintZoneSpread
			p.SpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule, name)
		case x < 0.43 && replicas > 1:
			constraint = constraintHostSpread
			p.SpreadConstraint(1, v1.LabelHostname, v1.DoNotSchedule, name)
		}
	}
	g.mark(p)
	if c.Priorities && g.chance(0.4) {
		p.Spec.PriorityClassName = highPriority
	}
	if kind == kindJob {
		p.Spec.RestartPolicy = v1.RestartPolicyNever
	}
	at := g.place(p.Obj(), cpu, mem, replicas, constraint)
	if len(at) == 0 {
		return
	}
	if constraint != constraintNone {
		c.Constraints[constraint]++
	}
	c.Kinds[kind] += len(at)
	w := &workload{name: name, namespace: ns, pods: len(at)}
	g.workloads = append(g.workloads, w)
	n := int32(len(at))
	yes := true
	owner := func(apiVersion, kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}}
	}
	// bound is replica k of the workload, named and owned, on its node.
	bound := func(k int, podName string, refs []metav1.OwnerReference) {
		q := p.Obj().DeepCopy()
		q.Name, q.UID = podName, types.UID("uid-"+ns+"-"+podName)
		q.OwnerReferences = refs
		q.Spec.NodeName = at[k]
		running(q)
		c.Objects = append(c.Objects, q)
	}
	switch kind {
	case kindDeployment, kindReplicaSet, kindSystem:
		rs := st.MakeReplicaSet(name, n, p)
		rs.Namespace, rs.UID = ns, types.UID("uid-rs-"+ns+"-"+name)
		podPrefix := name
		if kind == kindDeployment {
			d := st.MakeDeployment(name, n, p)
			d.UID = types.UID("uid-deploy-" + name)
			rs.Name = name + "-rs"
			rs.UID = types.UID("uid-rs-" + ns + "-" + rs.Name)
			rs.OwnerReferences = owner("apps/v1", "Deployment", d.Name, string(d.UID))
			c.Objects = append(c.Objects, d)
			w.scale = append(w.scale, d.Spec.Replicas)
			podPrefix = rs.Name
		}
		c.Objects = append(c.Objects, rs)
		w.scale = append(w.scale, rs.Spec.Replicas)
		for k := range at {
			bound(k, fmt.Sprintf("%s-%d", podPrefix, k+1), owner("apps/v1", "ReplicaSet", rs.Name, string(rs.UID)))
		}
	case kindStatefulSet:
		ss := st.MakeStatefulSet(name, n, p).Obj()
		ss.UID = types.UID("uid-ss-" + name)
		c.Objects = append(c.Objects, ss)
		for k := range at {
			bound(k, fmt.Sprintf("%s-%d", name, k), owner("apps/v1", "StatefulSet", ss.Name, string(ss.UID)))
		}
	case kindJob:
		job := st.MakeJob(name, n, &n, p).Obj()
		job.UID = types.UID("uid-job-" + name)
		c.Objects = append(c.Objects, job)
		for k := range at {
			bound(k, fmt.Sprintf("%s-%d", name, k+1), owner("batch/v1", "Job", job.Name, string(job.UID)))
		}
	case kindBare:
		bound(0, name, nil)
	case kindMirror:
		node := at[0]
		bound(0, name+"-"+node, owner("v1", "Node", node, "node-"+node))
		q := c.Objects[len(c.Objects)-1].(*v1.Pod)
		q.Annotations = withKey(q.Annotations, questions.MirrorPodAnnotation, "mirror-"+name)
	case kindOrphan:
		bound(0, name+"-1", owner("apps/v1", "ReplicaSet", name+"-gone", "uid-rs-gone-"+name))
	}
}

// mark draws the annotations and volumes the rule sets read.
func (g *gen) mark(p *st.PodWrapper) {
	switch x := g.r.Float64(); {
	case x < 0.04:
		p.Annotation(questions.SafeToEvictAnnotation, "false")
		g.c.Marks["safe-to-evict=false"]++
	case x < 0.09:
		p.Annotation(questions.SafeToEvictAnnotation, "true")
		g.c.Marks["safe-to-evict=true"]++
	case x < 0.13:
		p.Annotation(questions.DoNotDisruptAnnotation, "true")
		g.c.Marks["do-not-disrupt"]++
	}
	if g.chance(0.07) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
		if g.chance(0.5) {
			p.Annotation(questions.SafeToEvictLocalVolumesAnnotation, "scratch")
			g.c.Marks["emptyDir listed safe"]++
		} else {
			g.c.Marks["emptyDir"]++
		}
	}
}

// running makes a bound pod's status a running, ready pod's.
func running(p *v1.Pod) {
	start := metav1.NewTime(startTime)
	p.Status = v1.PodStatus{Phase: v1.PodRunning, StartTime: &start, Conditions: []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue}, {Type: v1.PodReady, Status: v1.ConditionTrue}}}
}

func withKey(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// place chooses nodes for up to n replicas of p (cpu millicores, mem
// MiB each), one at a time as the scheduler would admit them: room, the
// nodeSelector, hostname anti-affinity to its own replicas, and the
// spread's skew at most 1 over its domains (every node its selector
// admits). A node is drawn among those allowed by the nodes' weights;
// the replicas stop at the first that fits nowhere.
func (g *gen) place(p *v1.Pod, cpu, mem, n int, constraint string) []string {
	var eligible []*v1.Node
	for _, node := range g.nodes {
		if z, ok := p.Spec.NodeSelector[v1.LabelTopologyZone]; ok && g.zoneOf[node.Name] != z {
			continue
		}
		eligible = append(eligible, node)
	}
	perNode, perZone := map[string]int{}, map[string]int{}
	var out []string
	for range n {
		minNode, minZone := 1<<30, 1<<30
		for _, node := range eligible {
			minNode = min(minNode, perNode[node.Name])
			minZone = min(minZone, perZone[g.zoneOf[node.Name]])
		}
		var allowed []string
		total := 0.0
		for _, node := range eligible {
			f := g.free[node.Name]
			switch {
			case f.cpu < cpu || f.mem < mem || f.pods < 1:
				continue
			case constraint == constraintAnti && perNode[node.Name] > 0:
				continue
			case constraint == constraintHostSpread && perNode[node.Name] > minNode:
				continue
			case constraint == constraintZoneSpread && perZone[g.zoneOf[node.Name]] > minZone:
				continue
			}
			allowed = append(allowed, node.Name)
			total += g.weight[node.Name]
		}
		if len(allowed) == 0 {
			break
		}
		x := g.r.Float64() * total
		at := allowed[len(allowed)-1]
		for _, name := range allowed {
			if x < g.weight[name] {
				at = name
				break
			}
			x -= g.weight[name]
		}
		f := g.free[at]
		f.cpu, f.mem, f.pods = f.cpu-cpu, f.mem-mem, f.pods-1
		perNode[at]++
		perZone[g.zoneOf[at]]++
		out = append(out, at)
	}
	return out
}

// pendingReplica raises the replicas of a ReplicaSet's workload by one:
// the simulation creates the pod and places it where it can before the
// drains, or leaves it pending (the budgets count it either way).
func (g *gen) pendingReplica() {
	var ws []*workload
	for _, w := range g.workloads {
		if len(w.scale) > 0 {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return
	}
	w := ws[g.r.IntN(len(ws))]
	for _, s := range w.scale {
		*s++
	}
	g.c.Pending++
}

// hopeless adds a bare pod no node can hold, labelled as one of the
// workloads (a budget over them counts it with an integer minAvailable).
func (g *gen) hopeless() {
	p := st.MakePod().Name("hopeless").Label("app", "hopeless").Req(map[v1.ResourceName]string{v1.ResourceCPU: "64"}).Obj()
	if len(g.workloads) > 0 {
		w := g.workloads[g.r.IntN(len(g.workloads))]
		p.Namespace, p.Labels = w.namespace, map[string]string{"app": w.name}
	}
	g.c.Objects = append(g.c.Objects, p)
	g.c.Pending++
}

// pdb draws a PodDisruptionBudget over one workload (sometimes a
// DaemonSet's pods), or over every pod of a namespace (selector {}), of
// any of the forms the disruption controller counts.
func (g *gen) pdb() {
	r := g.r
	ns, app, pods := v1.NamespaceDefault, "", 1
	switch {
	case len(g.daemonSets) > 0 && g.chance(0.15):
		app, pods = g.daemonSets[r.IntN(len(g.daemonSets))], len(g.nodes)
	case len(g.workloads) > 0:
		w := g.workloads[r.IntN(len(g.workloads))]
		ns, app, pods = w.namespace, w.name, w.pods
	default:
		return
	}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	name := "pdb-" + app
	if g.chance(0.12) {
		sel, name = &metav1.LabelSelector{}, "pdb-all"
	}
	name = fmt.Sprintf("%s-%d", name, g.c.PDBs+1)
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: sel},
	}
	var v intstr.IntOrString
	switch r.IntN(6) {
	case 0:
		v = intstr.FromInt32(int32(r.IntN(3)))
		pdb.Spec.MaxUnavailable = &v
	case 1:
		v = intstr.FromString(g.pick("20%", "50%"))
		pdb.Spec.MaxUnavailable = &v
	case 2:
		v = intstr.FromInt32(int32([]int{1, pods - 1, pods}[r.IntN(3)]))
		pdb.Spec.MinAvailable = &v
	case 3:
		v = intstr.FromString(g.pick("50%", "75%", "100%"))
		pdb.Spec.MinAvailable = &v
	default:
		v = intstr.FromInt32(1)
		pdb.Spec.MaxUnavailable = &v
	}
	g.c.Objects = append(g.c.Objects, pdb)
	g.c.PDBs++
}
