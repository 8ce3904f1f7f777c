// Command bench runs simulate's core on generated workloads and prints a
// table of throughput and peak memory, one child process per run so that
// each peak RSS is its own (it includes reading the generated manifests, as
// simulate's does; the wall time is scheduling only):
//
//	go run ./hack/bench                       # the issue-4 workloads on 5,000 nodes
//	go run ./hack/bench -nodes 1000 -runs 3   # smaller, median of 3
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/testing/clustergen"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// workload is a generated cluster to schedule.
type workload struct {
	Name     string
	Workload string // clustergen.Options.Workload
	Pods     int
}

var workloads = []workload{
	{"mixed", "", 10000},
	{"anti-affinity", "anti-affinity", 2000},
	{"spread", "spread", 5000},
	{"service", "service", 5000},
}

// result is one run, as a child reports it.
type result struct {
	Scheduled int     `json:"scheduled"`
	Seconds   float64 `json:"seconds"`
	MaxRSSKB  int64   `json:"maxRSSKB"`
}

func main() {
	nodes := flag.Int("nodes", 5000, "nodes in every cluster")
	runs := flag.Int("runs", 1, "runs per workload; the table shows the median")
	only := flag.String("only", "", "comma-separated workloads to run (default all)")
	child := flag.String("child", "", "internal: run this workload once and print a JSON result")
	flag.Parse()
	if *child != "" {
		for _, w := range workloads {
			if w.Name == *child {
				if err := runOnce(w, *nodes); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				return
			}
		}
		fmt.Fprintf(os.Stderr, "unknown workload %q\n", *child)
		os.Exit(2)
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "WORKLOAD\tNODES\tPODS\tSCHEDULED\tWALL (s)\tPODS/S\tPEAK RSS (MB)\t")
	for _, w := range workloads {
		if *only != "" && !contains(strings.Split(*only, ","), w.Name) {
			continue
		}
		var rs []result
		for i := 0; i < *runs; i++ {
			out, err := exec.Command(self, "-child", w.Name, "-nodes", fmt.Sprint(*nodes)).Output()
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", w.Name, err)
				os.Exit(1)
			}
			var r result
			if err := json.Unmarshal(out, &r); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", w.Name, err)
				os.Exit(1)
			}
			rs = append(rs, r)
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].Seconds < rs[j].Seconds })
		m := rs[len(rs)/2]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.0f\t%d\t\n", w.Name, *nodes, w.Pods, m.Scheduled, m.Seconds, float64(w.Pods)/m.Seconds, m.MaxRSSKB/1024)
	}
	tw.Flush()
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runOnce generates the cluster, schedules it as simulate does (default
// profile), and prints the result with this process's peak RSS.
func runOnce(w workload, nodes int) error {
	// Through YAML and the loader, as simulate reads manifests (defaulting
	// included); only scheduling is timed.
	f, err := os.CreateTemp("", "bench-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	for _, obj := range clustergen.Generate(clustergen.Options{Nodes: nodes, Pods: w.Pods, Seed: 1, Workload: w.Workload}) {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		if _, err := f.Write(append([]byte("---\n"), b...)); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	c, err := simulator.Load([]string{f.Name()})
	if err != nil {
		return err
	}
	cfg := &configv1.KubeSchedulerConfiguration{}
	registry := plugins.NewInTreeRegistry()
	config.SetDefaults(cfg, scheduler.Known(registry))
	ctx := context.Background()
	world, err := simulator.NewWorld(ctx, c, cfg, registry, 1)
	if err != nil {
		return err
	}
	start := time.Now()
	world.Run(ctx)
	elapsed := time.Since(start)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(result{Scheduled: world.Report().Summary.Scheduled, Seconds: elapsed.Seconds(), MaxRSSKB: ru.Maxrss})
}
