package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
)

// The HTML report: one self-contained file (inline CSS, SVG and a few
// lines of script, nothing fetched at view time) with a heat map of the
// nodes' CPU use grouped by zone and pool, the pending pods by reason, the
// timeline's curves, the workloads, and a searchable pod table with the
// pending pods' explanations.

type htmlCell struct {
	Name, Title, Color string
	X, Y               int
}

type htmlZone struct {
	Name   string
	Y      int
	Cells  []htmlCell
	Height int
}

type htmlBar struct {
	N, Pods, Width, Y int
	Message           string
}

type htmlCurve struct {
	Name, Color, Points string
	Marks               []htmlMark
}

type htmlMark struct {
	X, Y  int
	Title string
}

type htmlPod struct {
	PodResult
	// Reason is a pending pod's reason number, as in the table.
	Reason  int
	Explain *htmlExplain
}

// htmlExplain is a pending pod's explanation with the nodes that fit or
// fail alike in one row: a few rows for thousands of nodes.
type htmlExplain struct {
	Feasible, Total int
	Groups          []htmlNodeGroup
}

type htmlNodeGroup struct {
	// Names names the nodes: all of up to three, else their count and the
	// first three.
	Names    string
	Feasible bool
	Plugin   string
	Reasons  []string
	count    int
	names    []string
}

// groupExplain folds an explanation's nodes by outcome (fits, plugin,
// reasons): the feasible first, then the most nodes first.
func groupExplain(e *ExplainReport) *htmlExplain {
	if e == nil {
		return nil
	}
	h := &htmlExplain{Feasible: e.FeasibleCount, Total: len(e.Nodes)}
	index := map[string]int{}
	for _, n := range e.Nodes {
		k := fmt.Sprintf("%t\x00%s\x00%s", n.Feasible, n.Plugin, strings.Join(n.Reasons, "\x00"))
		i, ok := index[k]
		if !ok {
			i = len(h.Groups)
			index[k] = i
			h.Groups = append(h.Groups, htmlNodeGroup{Feasible: n.Feasible, Plugin: n.Plugin, Reasons: n.Reasons})
		}
		g := &h.Groups[i]
		g.count++
		if len(g.names) < 3 {
			g.names = append(g.names, n.Name)
		}
	}
	sort.SliceStable(h.Groups, func(i, j int) bool {
		a, b := h.Groups[i], h.Groups[j]
		if a.Feasible != b.Feasible {
			return a.Feasible
		}
		return a.count > b.count
	})
	for i := range h.Groups {
		g := &h.Groups[i]
		g.Names = strings.Join(g.names, ", ")
		if g.count > len(g.names) {
			g.Names = fmt.Sprintf("%s: %s, …", Plural(g.count, "node"), g.Names)
		}
	}
	return h
}

type htmlPage struct {
	R     *Report
	Zones []htmlZone
	// Aggregated: one cell per pool in each zone (past heatNodesUpTo
	// nodes), its nodes' average.
	Aggregated   bool
	HeatHeight   int
	Groups       []PendingGroup
	PageSize     int
	Bars         []htmlBar
	BarsHeight   int
	Curves       []htmlCurve
	CurveLabels  []htmlMark
	Pods         []htmlPod
	ExplainLimit int
	// Jobs: a workload has completions to show.
	Jobs bool
}

const cell, cellGap, heatLeft, heatWidth = 22, 3, 120, 880

// heatNodesUpTo: past this many nodes the heat map has a cell per pool in
// each zone, not per node; pageSize is the pod table's page.
const heatNodesUpTo, pageSize = 1000, 500

// heatColor runs from green (idle) through yellow to red (full).
func heatColor(pct float64) string {
	pct = max(0, min(100, pct))
	var r, g int
	if pct < 50 {
		r, g = int(255*pct/50), 200
	} else {
		r, g = 255, int(200*(100-pct)/50)
	}
	return fmt.Sprintf("rgb(%d,%d,60)", r, g)
}

func (r *Report) htmlPage() *htmlPage {
	p := &htmlPage{R: r, ExplainLimit: ExplainLimit, PageSize: pageSize, Groups: r.PendingGroups(), Aggregated: len(r.Nodes) > heatNodesUpTo}
	// Heat map: one row block per zone, nodes sorted by pool then name.
	byZone := map[string][]NodeResult{}
	for _, n := range r.Nodes {
		byZone[n.Zone] = append(byZone[n.Zone], n)
	}
	zones := make([]string, 0, len(byZone))
	for z := range byZone {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	perRow := max(1, heatWidth/(cell+cellGap))
	y := 0
	for _, z := range zones {
		nodes := byZone[z]
		sort.Slice(nodes, func(i, j int) bool {
			return nodes[i].Pool < nodes[j].Pool || (nodes[i].Pool == nodes[j].Pool && nodes[i].Name < nodes[j].Name)
		})
		name := z
		if name == "" {
			name = "(no zone)"
		}
		hz := htmlZone{Name: name, Y: y}
		if p.Aggregated {
			nodes = poolCells(nodes)
		}
		for i, n := range nodes {
			cpu := 100 * float64(n.RequestedResources.MilliCPU) / float64(max(1, n.AllocatableResources.MilliCPU))
			title := fmt.Sprintf("%s (pool %s): cpu %s, memory %s, %s", n.Name, n.Pool,
				wholePercent(n.RequestedResources.MilliCPU, n.AllocatableResources.MilliCPU),
				wholePercent(n.RequestedResources.Memory, n.AllocatableResources.Memory), Plural(n.Pods, "pod"))
			if p.Aggregated {
				title = fmt.Sprintf("pool %s: %s, cpu %s, memory %s requested of their allocatable, %s", n.Pool, n.Name,
					wholePercent(n.RequestedResources.MilliCPU, n.AllocatableResources.MilliCPU),
					wholePercent(n.RequestedResources.Memory, n.AllocatableResources.Memory), Plural(n.Pods, "pod"))
			}
			hz.Cells = append(hz.Cells, htmlCell{Name: n.Name, Color: heatColor(cpu),
				X: heatLeft + (i%perRow)*(cell+cellGap), Y: y + (i/perRow)*(cell+cellGap), Title: title})
		}
		rows := (len(nodes) + perRow - 1) / perRow
		hz.Height = rows * (cell + cellGap)
		y += hz.Height + 10
		p.Zones = append(p.Zones, hz)
	}
	p.HeatHeight = max(y, 20)
	// Pending pods by reason, numbered as in the table.
	reasons, number := r.PendingReasons()
	most := 1
	if len(reasons) > 0 {
		most = reasons[0].Pods
	}
	for i, re := range reasons {
		p.Bars = append(p.Bars, htmlBar{N: i + 1, Pods: re.Pods, Message: re.Message, Y: i * 28, Width: max(2, 600*re.Pods/most)})
	}
	p.BarsHeight = max(len(reasons)*28, 20)
	// Timeline curves: pending pods and CPU requested over time.
	if t := r.Timeline; t != nil && len(t.Samples) > 0 {
		maxPending := 1
		for _, s := range t.Samples {
			maxPending = max(maxPending, s.Pending)
		}
		n := len(t.Samples)
		x := func(i int) int { return 60 + i*840/max(1, n-1) }
		curve := func(name, color string, v func(Sample) float64, top float64, format string) htmlCurve {
			c := htmlCurve{Name: name, Color: color}
			var pts []string
			for i, s := range t.Samples {
				yy := 210 - int(200*v(s)/top)
				pts = append(pts, fmt.Sprintf("%d,%d", x(i), yy))
				c.Marks = append(c.Marks, htmlMark{X: x(i), Y: yy, Title: s.T + ": " + name + " " + fmt.Sprintf(format, v(s))})
			}
			c.Points = strings.Join(pts, " ")
			return c
		}
		p.Curves = []htmlCurve{
			curve("pending pods", "#c0392b", func(s Sample) float64 { return float64(s.Pending) }, float64(maxPending), "%.0f"),
			curve("cpu requested", "#2471a3", func(s Sample) float64 { return s.CPU }, 100, "%.1f%%"),
		}
		for _, st := range t.Steps {
			for i, s := range t.Samples {
				if s.T == st.At {
					p.CurveLabels = append(p.CurveLabels, htmlMark{X: x(i), Title: st.Name})
					break
				}
			}
		}
	}
	for _, pr := range r.Pods {
		hp := htmlPod{PodResult: pr, Explain: groupExplain(r.Explanations[pr.Namespace+"/"+pr.Name])}
		if pendingWithReason(&pr) {
			hp.Reason = number[pr.Message]
		}
		p.Pods = append(p.Pods, hp)
	}
	for _, wl := range r.Workloads {
		p.Jobs = p.Jobs || wl.Completions != ""
	}
	return p
}

// poolCells sums nodes (of one zone, sorted by pool) by pool: one
// NodeResult per pool, named by its node count.
func poolCells(nodes []NodeResult) []NodeResult {
	var out []NodeResult
	count := 0
	for _, n := range nodes {
		if len(out) == 0 || out[len(out)-1].Pool != n.Pool {
			if len(out) > 0 {
				out[len(out)-1].Name = Plural(count, "node")
			}
			out = append(out, NodeResult{Pool: n.Pool, Zone: n.Zone})
			count = 0
		}
		g := &out[len(out)-1]
		count++
		g.Pods += n.Pods
		g.RequestedResources.MilliCPU += n.RequestedResources.MilliCPU
		g.RequestedResources.Memory += n.RequestedResources.Memory
		g.AllocatableResources.MilliCPU += n.AllocatableResources.MilliCPU
		g.AllocatableResources.Memory += n.AllocatableResources.Memory
	}
	if len(out) > 0 {
		out[len(out)-1].Name = Plural(count, "node")
	}
	return out
}

func (r *Report) writeHTML(out io.Writer) error {
	return htmlTemplate.Execute(out, r.htmlPage())
}

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"add":    func(a, b int) int { return a + b },
	"plural": Plural,
}).Parse(htmlSource))
