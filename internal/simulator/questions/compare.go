package questions

import (
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// Comparison is the same cluster simulated under two configurations.
type Comparison struct {
	A     *report.Report `json:"a"`
	B     *report.Report `json:"b"`
	Moved []Move         `json:"moved"`
	// Zones holds per zone the share of allocatable cpu and memory
	// requested at the end, under each configuration.
	Zones []ZoneUse `json:"zones"`
	// Nodes holds each node's pods and requested share at the end.
	Nodes []NodeUse `json:"nodes"`
	// Spread is, per workload, how unevenly its scheduled pods sit across
	// zones: the most pods in a zone less the fewest (zones with nodes).
	Spread []SpreadUse `json:"spread,omitempty"`

	nameA, nameB string
}

// NodeUse is a node's end state under each configuration; CPU and
// memory are the requested share of allocatable, in percent.
type NodeUse struct {
	Node    string `json:"node"`
	PodsA   int    `json:"podsA"`
	PodsB   int    `json:"podsB"`
	CPUA    int64  `json:"cpuA"`
	CPUB    int64  `json:"cpuB"`
	MemoryA int64  `json:"memoryA"`
	MemoryB int64  `json:"memoryB"`
}

// SpreadUse is a workload's zone skew under each configuration.
type SpreadUse struct {
	Workload string `json:"workload"`
	SkewA    int    `json:"skewA"`
	SkewB    int    `json:"skewB"`
}

// Move is a pod placed differently (a node, or "" for not scheduled).
type Move struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	A         string `json:"a"`
	B         string `json:"b"`
	// Group is what the folded table counts the pod under (World.PodGroup).
	Group string `json:"-"`
}

// ZoneUse is a zone's requested share of allocatable, in percent.
type ZoneUse struct {
	Zone      string `json:"zone"`
	CPUA      int64  `json:"cpuA"`
	CPUB      int64  `json:"cpuB"`
	MemoryA   int64  `json:"memoryA"`
	MemoryB   int64  `json:"memoryB"`
	ScheduleA int    `json:"podsA"`
	ScheduleB int    `json:"podsB"`
}

// Compare compares two simulations of one cluster; nameA and nameB label
// them in the table (e.g. the configuration files).
func Compare(a, b *simulator.World, nameA, nameB string) *Comparison {
	ra, rb := a.Report(), b.Report()
	cmp := &Comparison{A: ra, B: rb, Moved: []Move{}, nameA: nameA, nameB: nameB}
	placed := func(r *report.Report) map[string]string {
		m := map[string]string{}
		for _, p := range r.Pods {
			node := ""
			if p.Status == report.StatusScheduled {
				node = p.Node
			}
			m[p.Namespace+"/"+p.Name] = node
		}
		return m
	}
	pa, pb := placed(ra), placed(rb)
	keys := map[string]bool{}
	for k := range pa {
		keys[k] = true
	}
	for k := range pb {
		keys[k] = true
	}
	for k := range keys {
		if pa[k] != pb[k] {
			ns, name, _ := strings.Cut(k, "/")
			cmp.Moved = append(cmp.Moved, Move{Namespace: ns, Name: name, A: pa[k], B: pb[k]})
		}
	}
	if len(cmp.Moved) > 0 {
		byKey := make(map[string]*v1.Pod, len(a.Pending))
		for _, p := range a.Pending {
			byKey[p.Namespace+"/"+p.Name] = p
		}
		for i := range cmp.Moved {
			m := &cmp.Moved[i]
			k := m.Namespace + "/" + m.Name
			if p, ok := a.Store.GetPod(m.Namespace, m.Name); ok {
				m.Group = a.PodGroup(p)
			} else if p, ok := byKey[k]; ok {
				m.Group = a.PodGroup(p)
			} else {
				m.Group = "Pod " + k
			}
		}
	}
	sort.Slice(cmp.Moved, func(i, j int) bool {
		x, y := cmp.Moved[i], cmp.Moved[j]
		return x.Namespace < y.Namespace || (x.Namespace == y.Namespace && x.Name < y.Name)
	})
	za, zb := zoneUse(a, ra), zoneUse(b, rb)
	var zones []string
	for z := range za {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	for _, z := range zones {
		x, y := za[z], zb[z]
		cmp.Zones = append(cmp.Zones, ZoneUse{Zone: z, CPUA: x.cpu, CPUB: y.cpu, MemoryA: x.mem, MemoryB: y.mem, ScheduleA: x.pods, ScheduleB: y.pods})
	}
	nb := map[string]report.NodeResult{}
	for _, n := range rb.Nodes {
		nb[n.Name] = n
	}
	cmp.Nodes = []NodeUse{}
	for _, x := range ra.Nodes {
		y := nb[x.Name]
		cmp.Nodes = append(cmp.Nodes, NodeUse{Node: x.Name, PodsA: x.Pods, PodsB: y.Pods,
			CPUA: report.PercentFloor(x.RequestedResources.MilliCPU, x.AllocatableResources.MilliCPU), CPUB: report.PercentFloor(y.RequestedResources.MilliCPU, y.AllocatableResources.MilliCPU),
			MemoryA: report.PercentFloor(x.RequestedResources.Memory, x.AllocatableResources.Memory), MemoryB: report.PercentFloor(y.RequestedResources.Memory, y.AllocatableResources.Memory)})
	}
	sa, sb := zoneSkew(a), zoneSkew(b)
	for _, wl := range a.Cluster.Workloads {
		k := wl.String()
		if _, ok := sa[k]; ok {
			cmp.Spread = append(cmp.Spread, SpreadUse{Workload: k, SkewA: sa[k], SkewB: sb[k]})
		}
	}
	return cmp
}

// zoneSkew is, per workload with scheduled pods, the most of its pods in
// one zone less the fewest, over the zones that have nodes.
func zoneSkew(w *simulator.World) map[string]int {
	zoneOf := map[string]string{}
	zones := map[string]bool{}
	for _, n := range w.Store.Nodes() {
		z := n.Labels[v1.LabelTopologyZone]
		zoneOf[n.Name] = z
		zones[z] = true
	}
	counts := map[string]map[string]int{}
	for _, p := range w.Store.Pods() {
		i, ok := w.Cluster.WorkloadOf[cluster.PodKey(p)]
		if !ok || p.Spec.NodeName == "" {
			continue
		}
		k := w.Cluster.Workloads[i].String()
		if counts[k] == nil {
			counts[k] = map[string]int{}
		}
		counts[k][zoneOf[p.Spec.NodeName]]++
	}
	out := map[string]int{}
	for k, byZone := range counts {
		lo, hi := -1, 0
		for z := range zones {
			n := byZone[z]
			hi = max(hi, n)
			if lo < 0 || n < lo {
				lo = n
			}
		}
		out[k] = hi - max(lo, 0)
	}
	return out
}

type use struct {
	cpu, mem int64
	pods     int
}

// zoneUse sums the report's per-node requests by zone ("" for nodes
// without the zone label), as percent of allocatable.
func zoneUse(w *simulator.World, r *report.Report) map[string]use {
	zoneOf := map[string]string{}
	for _, n := range w.Store.Nodes() {
		zoneOf[n.Name] = n.Labels[v1.LabelTopologyZone]
	}
	type sum struct {
		reqCPU, allocCPU, reqMem, allocMem int64
		pods                               int
	}
	sums := map[string]*sum{}
	for _, n := range r.Nodes {
		z := zoneOf[n.Name]
		s := sums[z]
		if s == nil {
			s = &sum{}
			sums[z] = s
		}
		s.reqCPU += n.RequestedResources.MilliCPU
		s.allocCPU += n.AllocatableResources.MilliCPU
		s.reqMem += n.RequestedResources.Memory
		s.allocMem += n.AllocatableResources.Memory
		s.pods += n.Pods
	}
	out := map[string]use{}
	for z, s := range sums {
		out[z] = use{pods: s.pods, cpu: report.PercentFloor(s.reqCPU, s.allocCPU), mem: report.PercentFloor(s.reqMem, s.allocMem)}
	}
	return out
}
