package plannerfuzz

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

// The labels and the taint of the generated clusters.
const (
	// PoolLabel names a node's pool: general, or batch (tainted).
	PoolLabel = "pool"
	// TaintKey is the batch pool's taint (NoSchedule, value batch).
	TaintKey     = "dedicated"
	generalPool  = "general"
	batchPool    = "batch"
	highPriority = "high"
)

// Zones are the zones a case draws from, in order.
var Zones = []string{"zone-a", "zone-b", "zone-c"}

// Case is one drawn question: the cluster's objects (existing nodes,
// running and pending pods, workloads, DaemonSets, PDBs, priority
// classes) and the candidates, each a type in one zone with its price
// in hundredths (Cents) and its limit.
type Case struct {
	Seed    uint64
	Objects []runtime.Object
	Types   []questions.NodeType
	Cents   []int
	// What was drawn, for the one-line description and the statistics.
	Zones, Nodes, Pending, Running int
	Kinds                          map[string]int // pending pods by kind of workload
	DaemonSets, PDBs               int
	Priorities, Tainted            bool
}

// Greenfield: the case has no Node.
func (c *Case) Greenfield() bool { return c.Nodes == 0 }

// String is the case in one line.
func (c *Case) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d nodes in %d zones, %d pending (", c.Nodes, c.Zones, c.Pending)
	first := true
	for _, k := range kindOrder {
		if n := c.Kinds[k]; n > 0 {
			if !first {
				b.WriteString(" ")
			}
			first = false
			fmt.Fprintf(&b, "%s %d", k, n)
		}
	}
	fmt.Fprintf(&b, "), %d running", c.Running)
	if c.DaemonSets > 0 {
		fmt.Fprintf(&b, ", %d DaemonSets", c.DaemonSets)
	}
	if c.PDBs > 0 {
		fmt.Fprintf(&b, ", %d PDBs", c.PDBs)
	}
	if c.Priorities {
		b.WriteString(", priorities")
	}
	b.WriteString("; types")
	seen := map[string]bool{}
	for i, t := range c.Types {
		if seen[t.Type] {
			continue
		}
		seen[t.Type] = true
		var zones []string
		for j := i; j < len(c.Types); j++ {
			if c.Types[j].Type == t.Type {
				zones = append(zones, fmt.Sprintf("%s≤%d", strings.TrimPrefix(c.Types[j].Zone, "zone-"), c.Types[j].Limit))
			}
		}
		fmt.Fprintf(&b, " %s %s@%s", t.Type, Price(c.Cents[i]), strings.Join(zones, ","))
	}
	return b.String()
}

// Price writes hundredths as a price.
func Price(cents int) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

// The kinds of pending workloads.
const (
	kindPlain  = "plain"  // no constraint, or a pool selector
	kindPinned = "pinned" // a zone's nodeSelector
	kindBatch  = "batch"  // the tainted pool: its selector and toleration
	kindSpread = "spread" // zone topology spread, maxSkew 1, DoNotSchedule
	kindAnti   = "anti"   // required hostname anti-affinity to its own pods
)

var kindOrder = []string{kindPlain, kindPinned, kindBatch, kindSpread, kindAnti}

// shape is a node's or a type's size.
type shape struct{ cpu, memGi int }

// Generate draws the case of a seed: the same seed, the same case.
func Generate(seed uint64) *Case {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	g := &gen{r: r, c: &Case{Seed: seed, Kinds: map[string]int{}}}
	g.draw()
	return g.c
}

type gen struct {
	r     *rand.Rand
	c     *Case
	zones []string
	// free is each existing node's room left by the running pods, in
	// millicores and MiB.
	nodes []*v1.Node
	free  map[string]*[2]int
	apps  []string // the pending workloads' app labels
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) chance(p float64) bool    { return g.r.Float64() < p }

func (g *gen) draw() {
	c, r := g.c, g.r
	g.zones = Zones[:1+r.IntN(len(Zones))]
	c.Zones = len(g.zones)
	c.Tainted = g.chance(0.5)
	g.types()
	g.existing()
	if g.chance(0.25) {
		c.Priorities = true
		c.Objects = append(c.Objects, &schedulingv1.PriorityClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta: metav1.ObjectMeta{Name: highPriority}, Value: 1000})
	}
	if g.chance(0.4) {
		g.daemonSets()
	}
	g.pending()
	if g.chance(0.2) {
		g.pdbs()
	}
}

// types draws 2 to 4 priced types, each offered in 1 to all of the
// case's zones with a limit of 1 to 12 per zone; the first is of the
// general pool, the others of the batch pool sometimes when the case
// has one.
func (g *gen) types() {
	c, r := g.c, g.r
	shapes := []shape{{2, 4}, {2, 8}, {4, 8}, {4, 16}, {4, 32}, {8, 16}, {8, 32}, {16, 32}, {16, 64}}
	n := 2 + r.IntN(3)
	used := map[shape]bool{}
	for i := range n {
		s := shapes[r.IntN(len(shapes))]
		for used[s] {
			s = shapes[r.IntN(len(shapes))]
		}
		used[s] = true
		pool := generalPool
		if i > 0 && c.Tainted && g.chance(0.35) {
			pool = batchPool
		}
		name := fmt.Sprintf("c%dm%d", s.cpu, s.memGi)
		if pool == batchPool {
			name = "b" + name
		}
		// About 4 hundredths a core and half of one a GiB, give or take
		// 20%: the types' prices per core differ, as real ones do.
		cents := max(1, int(float64(4*s.cpu*100+s.memGi*50)/100*(0.8+0.4*r.Float64())+0.5))
		tmpl := st.MakeNode().Name(name).Label(PoolLabel, pool).Label(v1.LabelInstanceTypeStable, name).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprint(s.cpu), v1.ResourceMemory: fmt.Sprintf("%dGi", s.memGi), v1.ResourcePods: "110"})
		if pool == batchPool {
			tmpl.Taint(TaintKey, batchPool, v1.TaintEffectNoSchedule)
		}
		tmpl.Annotations = map[string]string{questions.HourlyCostAnnotation: Price(cents)}
		// A nonempty subset of the zones, in the zones' order.
		var zones []string
		for len(zones) == 0 {
			zones = nil
			for _, z := range g.zones {
				if g.chance(0.6) {
					zones = append(zones, z)
				}
			}
		}
		for _, z := range zones {
			// Limits of 1 to 6 bind often; 6 to 12, seldom.
			limit := 1 + r.IntN(6)
			if g.chance(0.4) {
				limit = 6 + r.IntN(7)
			}
			node := tmpl.Obj().DeepCopy()
			node.Labels[v1.LabelTopologyZone] = z
			c.Types = append(c.Types, questions.NodeType{Type: name, Zone: z, Node: node, Cost: float64(cents) / 100, Limit: limit})
			c.Cents = append(c.Cents, cents)
		}
	}
}

// existing draws 0 (a fifth of the cases: greenfield) to 5 nodes, and
// up to two running pods on each.
func (g *gen) existing() {
	c, r := g.c, g.r
	if g.chance(0.2) {
		return
	}
	g.free = map[string]*[2]int{}
	shapes := []shape{{2, 8}, {4, 8}, {4, 16}, {8, 32}}
	for i := range 1 + r.IntN(5) {
		s := shapes[r.IntN(len(shapes))]
		name := fmt.Sprintf("node-%d", i+1)
		pool := generalPool
		if c.Tainted && g.chance(0.25) {
			pool = batchPool
		}
		nw := st.MakeNode().Name(name).Label(PoolLabel, pool).Label(v1.LabelTopologyZone, g.pick(g.zones...)).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprint(s.cpu), v1.ResourceMemory: fmt.Sprintf("%dGi", s.memGi), v1.ResourcePods: "110"})
		if pool == batchPool {
			nw.Taint(TaintKey, batchPool, v1.TaintEffectNoSchedule)
		}
		n := nw.Obj()
		g.nodes = append(g.nodes, n)
		g.free[name] = &[2]int{s.cpu * 1000, s.memGi * 1024}
		c.Objects = append(c.Objects, n)
		c.Nodes++
		for j := range r.IntN(3) {
			cpu, mem := g.requests()
			f := g.free[name]
			if cpu > f[0]*6/10 || mem > f[1]*6/10 {
				continue
			}
			f[0] -= cpu
			f[1] -= mem
			p := st.MakePod().Name(fmt.Sprintf("running-%d-%d", i+1, j+1)).Label("app", "running").Node(name).Phase(v1.PodRunning).
				Req(map[v1.ResourceName]string{v1.ResourceCPU: fmt.Sprintf("%dm", cpu), v1.ResourceMemory: fmt.Sprintf("%dMi", mem)})
			if pool == batchPool {
				p.Toleration(TaintKey, v1.TolerationOpEqual, batchPool, v1.TaintEffectNoSchedule)
			}
			c.Objects = append(c.Objects, p.Obj())
			c.Running++
		}
	}
}

// requests draws a pod's cpu (millicores) and memory (MiB).
func (g *gen) requests() (cpu, mem int) {
	cpus := []int{250, 500, 500, 1000, 1000, 1500, 2000, 3000}
	mems := []int{256, 512, 1024, 1024, 2048, 4096}
	return cpus[g.r.IntN(len(cpus))], mems[g.r.IntN(len(mems))]
}

// daemonSets draws one or two DaemonSets of small agents; each tolerates
// the batch taint half the time.
func (g *gen) daemonSets() {
	for i := range 1 + g.r.IntN(2) {
		name := fmt.Sprintf("agent-%d", i+1)
		p := st.MakePod().Label("app", name).Req(map[v1.ResourceName]string{
			v1.ResourceCPU:    g.pick("100m", "200m", "500m", "1"),
			v1.ResourceMemory: g.pick("128Mi", "256Mi", "512Mi")})
		if g.chance(0.5) {
			p.Toleration(TaintKey, v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)
		}
		g.c.Objects = append(g.c.Objects, st.MakeDaemonSet(name, p))
		g.c.DaemonSets++
	}
}

// pending draws 5 to 40 pending pods in 1 to 5 workloads of the kinds.
func (g *gen) pending() {
	c, r := g.c, g.r
	left := 5 + r.IntN(36)
	nw := 1 + r.IntN(5)
	for w := 0; left > 0; w++ {
		// An even share of the pods left; an anti-affine workload takes
		// 2 to 6 of it, and the rest go to the next workload (a plain one
		// past the last drawn).
		n := (left + max(nw-w, 1) - 1) / max(nw-w, 1)
		kinds := []string{kindPlain, kindPinned, kindSpread, kindAnti}
		if c.Tainted {
			kinds = append(kinds, kindBatch)
		}
		kind := kinds[r.IntN(len(kinds))]
		if w >= nw {
			kind = kindPlain
		}
		if kind == kindAnti {
			n = min(n, 2+r.IntN(5))
		}
		left -= n
		app := fmt.Sprintf("%s-%d", kind, w+1)
		g.apps = append(g.apps, app)
		cpu, mem := g.requests()
		p := st.MakePod().Label("app", app).Req(map[v1.ResourceName]string{
			v1.ResourceCPU: fmt.Sprintf("%dm", cpu), v1.ResourceMemory: fmt.Sprintf("%dMi", mem)})
		switch kind {
		case kindPlain:
			if g.chance(0.3) {
				p.NodeSelector(PoolLabel, generalPool)
			}
		case kindPinned:
			p.NodeSelector(v1.LabelTopologyZone, g.pick(g.zones...))
			if g.chance(0.5) {
				p.NodeSelector(PoolLabel, generalPool)
			}
		case kindBatch:
			p.NodeSelector(PoolLabel, batchPool).Toleration(TaintKey, v1.TolerationOpEqual, batchPool, v1.TaintEffectNoSchedule)
		case kindSpread:
			p.SpreadConstraint(1, v1.LabelTopologyZone, v1.DoNotSchedule, app)
			// Most spread workloads keep to the general pool: their
			// domains are the zones with general nodes. The others count
			// the batch pool's zones too (nodeTaintsPolicy Ignore).
			if g.chance(0.75) {
				p.NodeSelector(PoolLabel, generalPool)
			}
		case kindAnti:
			p.PodAntiAffinity(st.AffinityTerm(v1.LabelHostname, app))
		}
		if c.Priorities && g.chance(0.4) {
			p.Spec.PriorityClassName = highPriority
		}
		c.Kinds[kind] += n
		c.Pending += n
		switch x := r.IntN(10); {
		case x < 5:
			c.Objects = append(c.Objects, st.MakeDeployment(app, int32(n), p))
		case x < 8:
			c.Objects = append(c.Objects, st.MakeReplicaSet(app, int32(n), p))
		default:
			for i := range n {
				q := p.Obj().DeepCopy()
				q.Name = fmt.Sprintf("%s-%d", app, i+1)
				q.UID = types.UID("uid-" + q.Name)
				c.Objects = append(c.Objects, q)
			}
		}
	}
}

// pdbs draws a PodDisruptionBudget over the running pods or over a
// pending workload.
func (g *gen) pdbs() {
	sel := "running"
	if g.c.Running == 0 || g.chance(0.5) {
		sel = g.apps[g.r.IntN(len(g.apps))]
	}
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: "pdb-" + sel, Namespace: v1.NamespaceDefault},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": sel}}},
	}
	one := intstr.FromInt32(1)
	if g.chance(0.5) {
		pdb.Spec.MinAvailable = &one
	} else {
		pdb.Spec.MaxUnavailable = &one
	}
	g.c.Objects = append(g.c.Objects, pdb)
	g.c.PDBs++
}
