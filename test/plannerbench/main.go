// Command plannerbench is the planner peer benchmark of issue 43 (`make
// bench-planner`): on each input hack/genplanner wrote (a folder holding
// cluster.yaml and types.yaml), it plans the nodes to buy with
// Karpenter's provisioning scheduler (sigs.k8s.io/karpenter, run in this
// process as its own benchmark runs it) and with `kubesched capacity
// --node-types`, places the pods on each plan's nodes with `kubesched
// simulate` (kube-scheduler's rules: the judge), and prints a markdown
// table: cost, nodes, pods placed, distance from the fractional lower
// bound, wall and CPU time.
//
//	go run . -kubesched ../../bin/kubesched DIR...
//
// It is its own module because Karpenter v1.15.0 needs Go 1.26.9 and its
// own Kubernetes libraries (v0.36), not the main module's.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

// plan is one tool's answer on one input, and how it fared.
type plan struct {
	Tool  string
	Nodes []planNode
	// Wall and CPU are the median run's (Runs runs, WallMin..WallMax).
	Wall, CPU        time.Duration
	WallMin, WallMax time.Duration
	Runs             int
	// Err is why there is no plan.
	Err   string
	Notes []string

	// Variants are the nodes of every run, when runs can differ.
	Variants [][]planNode

	// What simulate made of the plan.
	VerifyErr string
	placement
}

func cost(nodes []planNode) float64 {
	c := 0.0
	for _, n := range nodes {
		c += n.Price
	}
	return c
}

func main() {
	bin := flag.String("kubesched", "../../bin/kubesched", "the kubesched binary")
	karpRuns := flag.Int("karpenter-runs", 3, "Karpenter solves per input (the median's time is shown)")
	ksRuns := flag.Int("kubesched-runs", 1, "kubesched capacity runs per input (the median's time is shown)")
	timeout := flag.Duration("timeout", time.Hour, "the limit of one kubesched capacity run")
	tools := flag.String("tools", "karpenter,kubesched", "the planners to run, comma separated")
	work := flag.String("work", "", "where the plans' Node manifests are written (default: a temporary folder, removed)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: plannerbench [flags] DIR...\n\nEach DIR holds cluster.yaml and types.yaml from hack/genplanner.\n\nflags:\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if _, err := os.Stat(*bin); err != nil {
		fmt.Fprintf(os.Stderr, "plannerbench: -kubesched: %v (make build)\n", err)
		os.Exit(2)
	}
	dir := *work
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "plannerbench:", err)
			os.Exit(1)
		}
	} else {
		d, err := os.MkdirTemp("", "plannerbench-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "plannerbench:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	want := map[string]bool{}
	for _, t := range strings.Split(*tools, ",") {
		want[strings.TrimSpace(t)] = true
	}

	var results []inputResult
	for _, d := range flag.Args() {
		in, err := readInput(d)
		if err != nil {
			fmt.Fprintln(os.Stderr, "plannerbench:", err)
			os.Exit(1)
		}
		res := inputResult{In: in}
		res.Bound, res.BoundMix = in.bound()
		sub, err := os.MkdirTemp(dir, "input-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "plannerbench:", err)
			os.Exit(1)
		}
		if want["karpenter"] {
			progress("%s: Karpenter, %d solves", in.Label(), *karpRuns)
			p, err := runKarpenter(in, *karpRuns)
			if err != nil {
				p = &plan{Tool: "Karpenter v1.15.0", Err: err.Error()}
			}
			progress("%s: Karpenter: $%.3f/h, %d nodes, solve %s; placing its pods with kubesched simulate", in.Label(), cost(p.Nodes), len(p.Nodes), round(p.Wall))
			verify(*bin, sub, in, p, *timeout)
			res.Plans = append(res.Plans, p)
		}
		if want["kubesched"] {
			progress("%s: kubesched capacity --node-types, %d run(s), up to %s each", in.Label(), *ksRuns, *timeout)
			p := runCapacity(*bin, in, *ksRuns, *timeout, nil)
			progress("%s: kubesched: $%.3f/h, %d nodes, %s%s; placing its pods with kubesched simulate", in.Label(), cost(p.Nodes), len(p.Nodes), round(p.Wall), errSuffix(p.Err))
			verify(*bin, sub, in, p, *timeout)
			res.Plans = append(res.Plans, p)
		}
		results = append(results, res)
	}
	printTable(os.Stdout, results)
}

type inputResult struct {
	In       *input
	Bound    float64
	BoundMix map[string]float64
	Plans    []*plan
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "==> %s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
}

func errSuffix(err string) string {
	if err == "" {
		return ""
	}
	return " (error: " + err + ")"
}

// round shortens a duration for the table.
func round(d time.Duration) string {
	switch {
	case d >= 100*time.Second:
		return fmt.Sprintf("%.0f s", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

// printTable writes the markdown table and, under it, each plan's nodes
// and notes.
func printTable(w io.Writer, results []inputResult) {
	fmt.Fprintln(w, "| input | tool | $/h | nodes | pods placed by kube-scheduler's rules | vs lower bound | wall | CPU |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Fprintf(w, "| %s | fractional lower bound | %.2f | %s | | | | |\n", r.In.Label(), r.Bound, mixString(r.BoundMix))
		for _, p := range r.Plans {
			if p.Err != "" {
				fmt.Fprintf(w, "| %s | %s | no plan: %s | | | | %s | %s |\n", r.In.Label(), p.Tool, strings.ReplaceAll(p.Err, "|", "/"), round(p.Wall), round(p.CPU))
				continue
			}
			c := cost(p.Nodes)
			wall := round(p.Wall)
			if strings.HasPrefix(p.Tool, "Karpenter") {
				wall = "solve " + wall
			}
			if p.Runs > 1 {
				wall += fmt.Sprintf(" (%s–%s, median of %d)", round(p.WallMin), round(p.WallMax), p.Runs)
			}
			fmt.Fprintf(w, "| %s | %s | %.2f | %d | %s | %+.1f%% | %s | %s |\n", r.In.Label(), p.Tool, c, len(p.Nodes),
				placed(p), 100*(c/r.Bound-1), wall, round(p.CPU))
		}
	}
	fmt.Fprintln(w)
	for _, r := range results {
		for _, p := range r.Plans {
			if p.Err != "" {
				continue
			}
			fmt.Fprintf(w, "- %s, %s: %s", r.In.Label(), p.Tool, nodesString(p.Nodes))
			if p.EmptyNodes > 0 {
				fmt.Fprintf(w, "; %d node(s) hold no workload pod under kube-scheduler's rules", p.EmptyNodes)
			}
			for _, n := range p.Notes {
				fmt.Fprintf(w, "; %s", n)
			}
			fmt.Fprintln(w)
		}
	}
}

func placed(p *plan) string {
	if p.VerifyErr != "" {
		return "not checked: " + strings.ReplaceAll(p.VerifyErr, "|", "/")
	}
	s := fmt.Sprintf("%s / %s", thousands(p.Placed), thousands(p.Total))
	if p.Placed < p.Total {
		s += fmt.Sprintf(" (**%s pending**)", thousands(p.Total-p.Placed))
	}
	if p.DaemonTotal > 0 {
		s += fmt.Sprintf(", DaemonSet pods %s / %s", thousands(p.DaemonPlaced), thousands(p.DaemonTotal))
	}
	return s
}

// mixString is the bound's fractional mix, e.g. "12.3 c5.4xlarge + 4.1 m5.4xlarge".
func mixString(mix map[string]float64) string {
	var names []string
	for n := range mix {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	total := 0.0
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%.1f %s", mix[n], n))
		total += mix[n]
	}
	if math.IsNaN(total) {
		return ""
	}
	return strings.Join(parts, " + ")
}

// nodesString counts nodes by type, then zone: "12 c5.4xlarge (a 4, b 4, c 4), ...".
func nodesString(nodes []planNode) string {
	if len(nodes) == 0 {
		return "no node"
	}
	sorted := append([]planNode(nil), nodes...)
	sortNodes(sorted)
	var parts []string
	for i := 0; i < len(sorted); {
		j := i
		zones := map[string]int{}
		var order []string
		for ; j < len(sorted) && sorted[j].Type == sorted[i].Type; j++ {
			if zones[sorted[j].Zone] == 0 {
				order = append(order, sorted[j].Zone)
			}
			zones[sorted[j].Zone]++
		}
		var zs []string
		for _, z := range order {
			zs = append(zs, fmt.Sprintf("%s %d", z, zones[z]))
		}
		parts = append(parts, fmt.Sprintf("%d %s (%s)", j-i, sorted[i].Type, strings.Join(zs, ", ")))
		i = j
	}
	return strings.Join(parts, ", ")
}
