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
	Explain *ExplainReport
}

type htmlPage struct {
	R            *Report
	Zones        []htmlZone
	HeatHeight   int
	Bars         []htmlBar
	BarsHeight   int
	Curves       []htmlCurve
	CurveLabels  []htmlMark
	Pods         []htmlPod
	ExplainLimit int
}

const cell, cellGap, heatLeft, heatWidth = 22, 3, 120, 880

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
	p := &htmlPage{R: r, ExplainLimit: ExplainLimit}
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
		for i, n := range nodes {
			cpu := 100 * float64(n.RequestedResources.MilliCPU) / float64(max(1, n.AllocatableResources.MilliCPU))
			mem := 100 * float64(n.RequestedResources.Memory) / float64(max(1, n.AllocatableResources.Memory))
			hz.Cells = append(hz.Cells, htmlCell{Name: n.Name, Color: heatColor(cpu),
				X: heatLeft + (i%perRow)*(cell+cellGap), Y: y + (i/perRow)*(cell+cellGap),
				Title: fmt.Sprintf("%s (pool %s): cpu %.0f%%, memory %.0f%%, %d pods", n.Name, n.Pool, cpu, mem, n.Pods)})
		}
		rows := (len(nodes) + perRow - 1) / perRow
		hz.Height = rows * (cell + cellGap)
		y += hz.Height + 10
		p.Zones = append(p.Zones, hz)
	}
	p.HeatHeight = max(y, 20)
	// Pending pods by reason.
	counts := map[string]int{}
	var order []string
	for _, pr := range r.Pods {
		if pr.Status == StatusUnschedulable || pr.Status == StatusNotCreated {
			if counts[pr.Message] == 0 {
				order = append(order, pr.Message)
			}
			counts[pr.Message]++
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return counts[order[i]] > counts[order[j]] })
	most := 1
	if len(order) > 0 {
		most = counts[order[0]]
	}
	for i, m := range order {
		p.Bars = append(p.Bars, htmlBar{N: i + 1, Pods: counts[m], Message: m, Y: i * 28, Width: max(2, 600*counts[m]/most)})
	}
	p.BarsHeight = max(len(order)*28, 20)
	// Timeline curves: pending pods and CPU requested over time.
	if t := r.Timeline; t != nil && len(t.Samples) > 0 {
		maxPending := 1
		for _, s := range t.Samples {
			maxPending = max(maxPending, s.Pending)
		}
		n := len(t.Samples)
		x := func(i int) int { return 60 + i*840/max(1, n-1) }
		curve := func(name, color string, v func(Sample) float64, top float64, unit string) htmlCurve {
			c := htmlCurve{Name: name, Color: color}
			var pts []string
			for i, s := range t.Samples {
				yy := 210 - int(200*v(s)/top)
				pts = append(pts, fmt.Sprintf("%d,%d", x(i), yy))
				c.Marks = append(c.Marks, htmlMark{X: x(i), Y: yy, Title: fmt.Sprintf("%s: %s %g%s", s.T, name, v(s), unit)})
			}
			c.Points = strings.Join(pts, " ")
			return c
		}
		p.Curves = []htmlCurve{
			curve("pending pods", "#c0392b", func(s Sample) float64 { return float64(s.Pending) }, float64(maxPending), ""),
			curve("cpu requested", "#2471a3", func(s Sample) float64 { return s.CPU }, 100, "%"),
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
		p.Pods = append(p.Pods, htmlPod{PodResult: pr, Explain: r.Explanations[pr.Namespace+"/"+pr.Name]})
	}
	return p
}

func (r *Report) writeHTML(out io.Writer) error {
	return htmlTemplate.Execute(out, r.htmlPage())
}

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"add": func(a, b int) int { return a + b },
}).Parse(htmlSource))
