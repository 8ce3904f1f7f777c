package questions

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/kubesched/kubesched/internal/simulator/report"
)

// compareTop is how many nodes, workloads and moved pods' groups a folded
// table lists.
const compareTop = report.ExplainTopFeasible

// Write renders the comparison as table or json, the table folded past
// report.ExplainListAll rows per section.
func (c *Comparison) Write(out io.Writer, format string) error {
	return c.WriteShow(out, format, report.ExplainShowAuto)
}

// WriteShow renders the comparison; show says what the table lists: every
// node that differs, every workload's skew and every moved pod (all), the
// rows that differ most and the moves counted by workload (summary), or
// the first up to report.ExplainListAll rows per section and the second
// past them (auto). JSON always holds everything.
func (c *Comparison) WriteShow(out io.Writer, format string, show report.ExplainShow) error {
	switch format {
	case "json":
		return report.WriteJSON(out, c)
	case "table", "":
	default:
		return fmt.Errorf("unknown output format %q for --compare: want table or json", format)
	}
	fold := func(n int) bool {
		return show == report.ExplainShowSummary || (show == report.ExplainShowAuto && n > report.ExplainListAll)
	}
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\tA: %s\tB: %s\n", c.nameA, c.nameB)
	fmt.Fprintf(tw, "scheduled\t%d\t%d\n", c.A.Summary.Scheduled, c.B.Summary.Scheduled)
	fmt.Fprintf(tw, "unschedulable\t%d\t%d\n", c.A.Summary.Unschedulable, c.B.Summary.Unschedulable)
	fmt.Fprintf(tw, "preempted\t%d\t%d\n", c.A.Summary.Preempted, c.B.Summary.Preempted)
	inUseA, inUseB := 0, 0
	for _, n := range c.Nodes {
		inUseA += min(n.PodsA, 1)
		inUseB += min(n.PodsB, 1)
	}
	fmt.Fprintf(tw, "nodes with pods\t%d\t%d\n", inUseA, inUseB)
	tw.Flush()
	if len(c.Zones) > 0 {
		buf.WriteString("\n")
		tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ZONE\tPODS A\tPODS B\tCPU % A\tCPU % B\tMEMORY % A\tMEMORY % B")
		for _, z := range c.Zones {
			name := z.Zone
			if name == "" {
				name = "(no zone)"
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d%%\t%d%%\t%d%%\t%d%%\n", name, z.ScheduleA, z.ScheduleB, z.CPUA, z.CPUB, z.MemoryA, z.MemoryB)
		}
		tw.Flush()
	}
	c.writeNodes(&buf, fold)
	c.writeSpread(&buf, fold)
	buf.WriteString("\n")
	switch {
	case len(c.Moved) == 0:
		buf.WriteString("No pod is placed differently.\n")
	case fold(len(c.Moved)):
		c.writeMovedByGroup(&buf)
		fmt.Fprintf(&buf, "\n%d pods placed differently (--show all lists every one).\n", len(c.Moved))
	default:
		tw = tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "POD\tNODE A\tNODE B")
		for _, m := range c.Moved {
			fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", m.Namespace, m.Name, dash(m.A), dash(m.B))
		}
		tw.Flush()
		fmt.Fprintf(&buf, "\n%d pods placed differently.\n", len(c.Moved))
	}
	_, err := out.Write(buf.Bytes())
	return err
}

// dash is a node name, or "-" for none (not scheduled).
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func absInt[T int | int64](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// writeNodes lists the nodes whose end state differs; folded, the
// compareTop whose pod counts differ most (then requests), and how many
// more differ.
func (c *Comparison) writeNodes(buf *bytes.Buffer, fold func(int) bool) {
	var changed []NodeUse
	for _, n := range c.Nodes {
		if n.PodsA != n.PodsB || n.CPUA != n.CPUB || n.MemoryA != n.MemoryB {
			changed = append(changed, n)
		}
	}
	if len(changed) == 0 {
		return
	}
	header := "NODE (those that differ)"
	shown := changed
	if fold(len(changed)) {
		shown = append([]NodeUse(nil), changed...)
		sort.SliceStable(shown, func(i, j int) bool {
			x, y := shown[i], shown[j]
			if dx, dy := absInt(x.PodsB-x.PodsA), absInt(y.PodsB-y.PodsA); dx != dy {
				return dx > dy
			}
			return absInt(x.CPUB-x.CPUA)+absInt(x.MemoryB-x.MemoryA) > absInt(y.CPUB-y.CPUA)+absInt(y.MemoryB-y.MemoryA)
		})
		shown = shown[:min(len(shown), compareTop)]
		header = fmt.Sprintf("NODE (%d of the %d that differ, most pods moved first)", len(shown), len(changed))
	}
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tPODS A\tPODS B\tCPU %% A\tCPU %% B\tMEMORY %% A\tMEMORY %% B\n", header)
	for _, n := range shown {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d%%\t%d%%\t%d%%\t%d%%\n", n.Node, n.PodsA, n.PodsB, n.CPUA, n.CPUB, n.MemoryA, n.MemoryB)
	}
	tw.Flush()
	if more := len(changed) - len(shown); more > 0 {
		fmt.Fprintf(buf, "%d more nodes differ (--show all lists them).\n", more)
	}
}

// writeSpread lists each workload's zone skew; folded, the compareTop
// whose skew changes most.
func (c *Comparison) writeSpread(buf *bytes.Buffer, fold func(int) bool) {
	if len(c.Spread) == 0 {
		return
	}
	shown := c.Spread
	header := "WORKLOAD"
	if fold(len(shown)) {
		shown = append([]SpreadUse(nil), shown...)
		sort.SliceStable(shown, func(i, j int) bool {
			return absInt(shown[i].SkewB-shown[i].SkewA) > absInt(shown[j].SkewB-shown[j].SkewA)
		})
		shown = shown[:min(len(shown), compareTop)]
		header = fmt.Sprintf("WORKLOAD (%d of %d, most changed first)", len(shown), len(c.Spread))
	}
	buf.WriteString("\n")
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tZONE SKEW A\tZONE SKEW B\n", header)
	for _, s := range shown {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", s.Workload, s.SkewA, s.SkewB)
	}
	tw.Flush()
	if more := len(c.Spread) - len(shown); more > 0 {
		fmt.Fprintf(buf, "%d more workloads (--show all lists them).\n", more)
	}
}

// writeMovedByGroup counts the moved pods by workload (Move.Group): how
// many moved, how many of them pend under A and under B, and one of them.
func (c *Comparison) writeMovedByGroup(buf *bytes.Buffer) {
	type group struct {
		name                string
		moved, pendA, pendB int
		example             Move
	}
	index := map[string]int{}
	var groups []group
	for _, m := range c.Moved {
		i, ok := index[m.Group]
		if !ok {
			i = len(groups)
			index[m.Group] = i
			groups = append(groups, group{name: m.Group, example: m})
		}
		g := &groups[i]
		g.moved++
		if m.A == "" {
			g.pendA++
		}
		if m.B == "" {
			g.pendB++
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		if groups[i].moved != groups[j].moved {
			return groups[i].moved > groups[j].moved
		}
		return groups[i].name < groups[j].name
	})
	shown := groups[:min(len(groups), compareTop)]
	tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PODS PLACED DIFFERENTLY, BY WORKLOAD\tMOVED\tPENDING IN A\tPENDING IN B\tFOR EXAMPLE")
	for _, g := range shown {
		e := g.example
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s/%s: %s -> %s\n", g.name, g.moved, g.pendA, g.pendB, e.Namespace, e.Name, dash(e.A), dash(e.B))
	}
	tw.Flush()
	if more := len(groups) - len(shown); more > 0 {
		fmt.Fprintf(buf, "%d more workloads with pods placed differently.\n", more)
	}
}
