// Command bench runs the benchmark suite in memory: scheduler_perf's
// workloads (internal/testing/perfgen, under upstream's names) and the
// generated mixed clusters of internal/testing/clustergen, each written as
// a manifest and given to the whole `kubesched simulate` command, built
// from this tree, in a child process. It prints a table of wall time
// (loading and the report included, as a user waits for it), pods/s,
// CPU seconds, CPU per pod and peak RSS, the median of -runs runs.
//
//	go run ./hack/bench                          # every workload
//	go run ./hack/bench -only SchedulingBasic -runs 3
//	go run ./hack/bench -baseline 1299a58        # also the code at that commit, alternated, with ratios
//	go run ./hack/bench -scale 10 -json out.json # 1/10 of the sizes; results as JSON too
//	go run ./hack/bench -format json             # manifests as one JSON List (kubectl get -o json)
//	go run ./hack/bench -only SchedulingBasic -write /tmp/w  # only write the manifest, e.g. to profile simulate on it
//	go run ./hack/bench -only SchedulingBasic -nodes 15000 -init 3000 -pods 30000   # other sizes (peak RSS per node and pod)
//
// With -baseline, both binaries read the same manifests, one run of each
// after the other, so the machine's drift affects both alike.
//
// SchedulingWithMixedChurn is not run here: its churn (a node, a 9-CPU
// pod and a Service recreated every second while the pods are scheduled)
// is on wall time, and a simulation schedules every pending pod at one
// virtual instant; `make bench-real` runs it against a real control plane.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/testing/clustergen"
	"github.com/kubesched/kubesched/internal/testing/perfgen"
)

// workload is one cluster to simulate.
type workload struct {
	Name    string
	Nodes   int
	Pending int
	objects func() []k8sruntime.Object
}

// sizes overrides the perfgen workloads' sizes when set (-nodes, -init, -pods).
var sizes struct{ nodes, init, pods int }

func suite(scale int) []workload {
	var out []workload
	for _, w := range append(perfgen.All(), perfgen.DRA()...) {
		if w.Churn != nil {
			continue // churn on wall time: only `make bench-real` runs it
		}
		if scale > 1 {
			w = w.Scaled(scale)
		}
		if sizes.nodes > 0 || sizes.init >= 0 || sizes.pods > 0 {
			if sizes.nodes > 0 {
				w.Nodes = sizes.nodes
			}
			if sizes.init >= 0 {
				w.InitPods = sizes.init
			}
			if sizes.pods > 0 {
				w.MeasurePods = sizes.pods
			}
			w.Size = fmt.Sprintf("%dNodes_%dInit_%dPods", w.Nodes, w.InitPods, w.MeasurePods)
		}
		out = append(out, workload{Name: w.FullName(), Nodes: w.Nodes, Pending: w.MeasurePods, objects: w.Objects})
	}
	// hack/bench's earlier workloads: three zones, node pools, priorities,
	// selectors, tolerations, host ports; all pods pending.
	for _, g := range []struct {
		name, workload string
		pods           int
	}{{"mixed", "", 10000}, {"anti-affinity", "anti-affinity", 2000}, {"spread", "spread", 5000}, {"service", "service", 5000}} {
		o := clustergen.Options{Nodes: max(1, 5000/scale), Pods: max(1, g.pods/scale), Seed: 1, Workload: g.workload}
		out = append(out, workload{Name: "clustergen/" + g.name, Nodes: o.Nodes, Pending: o.Pods, objects: func() []k8sruntime.Object { return clustergen.Generate(o) }})
	}
	// The planner's scale (issue 24): half the pods running, half to
	// place, many of them fitting nowhere, as gencluster -running 0.5
	// makes them.
	for _, g := range []struct{ nodes, pods int }{{5000, 50000}, {15000, 150000}} {
		o := clustergen.Options{Nodes: max(1, g.nodes/scale), Pods: max(1, g.pods/scale), RunningFraction: 0.5, Seed: 7}
		name := fmt.Sprintf("planner/%dNodes_%dPods_halfRunning", o.Nodes, o.Pods)
		out = append(out, workload{Name: name, Nodes: o.Nodes, Pending: o.Pods - int(float64(o.Pods)*0.5), objects: func() []k8sruntime.Object { return clustergen.Generate(o) }})
	}
	return out
}

// run is one child process's result.
type run struct {
	Wall, CPU float64 // seconds
	MaxRSSMB  float64
	Scheduled int
	Attempts  int
}

// Result is a workload's medians, as printed and as written with -json.
type Result struct {
	Workload     string  `json:"workload"`
	Binary       string  `json:"binary"`
	Nodes        int     `json:"nodes"`
	Pending      int     `json:"pending"`
	Scheduled    int     `json:"scheduled"`
	WallSeconds  float64 `json:"wallSeconds"`
	PodsPerSec   float64 `json:"podsPerSecond"`
	CPUSeconds   float64 `json:"cpuSeconds"`
	CPUMsPerPod  float64 `json:"cpuMsPerPod"`
	PeakRSSMB    float64 `json:"peakRSSMB"`
	Attempts     int     `json:"attempts"`
	AttemptsPerS float64 `json:"attemptsPerSecond"`
	SpeedupVsRef float64 `json:"speedupVsBaseline,omitempty"`
}

func main() {
	runs := flag.Int("runs", 1, "runs per workload and binary; the table shows medians")
	only := flag.String("only", "", "comma-separated substrings of workload names to run (default all)")
	scale := flag.Int("scale", 1, "divide every node and pod count by this")
	baseline := flag.String("baseline", "", "a git revision whose kubesched also runs every workload, alternated with this tree's")
	jsonOut := flag.String("json", "", "also write the results to this file as JSON")
	flag.IntVar(&sizes.nodes, "nodes", 0, "override the scheduler_perf workloads' node count")
	flag.IntVar(&sizes.init, "init", -1, "override their init (bound) pod count")
	flag.IntVar(&sizes.pods, "pods", 0, "override their measured (pending) pod count")
	flag.StringVar(&writeDir, "write", "", "only write each selected workload's manifest into this directory (to profile `kubesched simulate` on it) and exit")
	format := flag.String("format", "yaml", "manifests as multi-document YAML (yaml) or one JSON List, as kubectl get -o json writes (json)")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `usage: go run ./hack/bench [flags]

bench runs the benchmark suite in memory: scheduler_perf's workloads (under
upstream's names) and generated mixed clusters, each written as a manifest
and given to the whole kubesched simulate command, built from this tree,
in a child process. It prints wall time (loading and the report included),
pods/s, CPU seconds, CPU per pod and peak RSS, the median of -runs runs.
With -baseline REV, the kubesched of that commit runs every workload too,
alternated with this tree's, and the table adds the ratios; -only and
-scale make a run shorter.

  go run ./hack/bench -only SchedulingBasic -runs 3
  go run ./hack/bench -scale 10 -baseline HEAD~1 -format json

flags:
`)
		flag.PrintDefaults()
	}
	flag.Parse()
	if *format != "yaml" && *format != "json" {
		fmt.Fprintf(os.Stderr, "bench: -format %q: want yaml or json\n", *format)
		os.Exit(2)
	}
	manifestFormat = *format
	if writeDir != "" {
		if err := writeOnly(*only, *scale); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := mainErr(*runs, *only, *scale, *baseline, *jsonOut); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// writeDir is -write's directory.
var writeDir string

// writeOnly writes the selected workloads' manifests into writeDir, one
// file per workload named after it, and prints their paths.
func writeOnly(only string, scale int) error {
	if err := os.MkdirAll(writeDir, 0o755); err != nil {
		return err
	}
	for _, w := range suite(scale) {
		if only != "" && !slices.ContainsFunc(strings.Split(only, ","), func(s string) bool { return strings.Contains(w.Name, s) }) {
			continue
		}
		file := filepath.Join(writeDir, strings.ReplaceAll(w.Name, "/", "_")+"."+manifestFormat)
		if err := write(file, w.objects()); err != nil {
			return err
		}
		fmt.Println(file)
	}
	return nil
}

func mainErr(runs int, only string, scale int, baseline, jsonOut string) error {
	dir, err := os.MkdirTemp("", "kubesched-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins := []string{filepath.Join(dir, "kubesched")}
	names := []string{"this tree"}
	if err := build(".", bins[0]); err != nil {
		return err
	}
	if baseline != "" {
		wt := filepath.Join(dir, "baseline")
		if out, err := exec.Command("git", "worktree", "add", "--detach", wt, baseline).CombinedOutput(); err != nil {
			return fmt.Errorf("git worktree add %s: %v: %s", baseline, err, out)
		}
		defer exec.Command("git", "worktree", "remove", "--force", wt).Run()
		bins = append(bins, filepath.Join(dir, "kubesched-baseline"))
		names = append(names, baseline)
		if err := build(wt, bins[1]); err != nil {
			return err
		}
	}
	fmt.Printf("# %s, %d CPUs, GOMAXPROCS %d, %s; medians of %d run(s); %s manifests; wall = the whole `kubesched simulate -f FILE -o json`\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), runtime.GOMAXPROCS(0), commit(), runs, manifestFormat)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "WORKLOAD\tBINARY\tNODES\tPENDING\tSCHEDULED\tWALL (s)\tPODS/S\tATTEMPTS/S\tCPU (s)\tCPU/POD (ms)\tPEAK RSS (MB)\t"
	if baseline != "" {
		header += "SPEEDUP\t"
	}
	fmt.Fprintln(tw, header)
	var results []Result
	for _, w := range suite(scale) {
		if only != "" && !slices.ContainsFunc(strings.Split(only, ","), func(s string) bool { return strings.Contains(w.Name, s) }) {
			continue
		}
		file := filepath.Join(dir, "cluster."+manifestFormat)
		if err := write(file, w.objects()); err != nil {
			return err
		}
		perBin := make([][]run, len(bins))
		for i := 0; i < runs; i++ {
			for b, bin := range bins {
				r, err := simulate(bin, file)
				if err != nil {
					return fmt.Errorf("%s with %s: %w", w.Name, names[b], err)
				}
				perBin[b] = append(perBin[b], r)
			}
		}
		var rows []Result
		for b := range bins {
			m := median(perBin[b])
			rows = append(rows, Result{Workload: w.Name, Binary: names[b], Nodes: w.Nodes, Pending: w.Pending, Scheduled: m.Scheduled,
				WallSeconds: m.Wall, PodsPerSec: float64(w.Pending) / m.Wall, CPUSeconds: m.CPU,
				CPUMsPerPod: 1000 * m.CPU / float64(w.Pending), PeakRSSMB: m.MaxRSSMB,
				Attempts: m.Attempts, AttemptsPerS: float64(m.Attempts) / m.Wall})
		}
		if len(rows) == 2 {
			rows[0].SpeedupVsRef = rows[1].WallSeconds / rows[0].WallSeconds
		}
		for _, r := range rows {
			line := fmt.Sprintf("%s\t%s\t%d\t%d\t%d\t%.2f\t%.0f\t%.0f\t%.2f\t%.3f\t%.0f\t", r.Workload, r.Binary, r.Nodes, r.Pending, r.Scheduled,
				r.WallSeconds, r.PodsPerSec, r.AttemptsPerS, r.CPUSeconds, r.CPUMsPerPod, r.PeakRSSMB)
			if baseline != "" {
				if r.SpeedupVsRef > 0 {
					line += fmt.Sprintf("%.1fx\t", r.SpeedupVsRef)
				} else {
					line += "\t"
				}
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
		results = append(results, rows...)
	}
	if jsonOut != "" {
		b, err := json.MarshalIndent(results, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(jsonOut, append(b, '\n'), 0o644)
	}
	return nil
}

func build(dir, out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/kubesched")
	cmd.Dir, cmd.Stderr = dir, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building kubesched in %s: %w", dir, err)
	}
	return nil
}

func commit() string {
	out, err := exec.Command("git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown commit"
	}
	return "commit " + strings.TrimSpace(string(out))
}

// manifestFormat is -format.
var manifestFormat = "yaml"

func write(path string, objs []k8sruntime.Object) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if manifestFormat == "json" {
		list := map[string]interface{}{"apiVersion": "v1", "kind": "List", "items": objs}
		if err := json.NewEncoder(w).Encode(list); err != nil {
			f.Close()
			return err
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	for _, obj := range objs {
		b, err := yaml.Marshal(obj)
		if err != nil {
			f.Close()
			return err
		}
		w.WriteString("---\n")
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// simulate runs one child and reads its wall time, CPU, peak RSS and the
// number of pods it placed.
func simulate(bin, file string) (run, error) {
	stats := file + ".stats.json"
	os.Remove(stats)
	args := []string{"simulate", "-f", file, "-o", "json"}
	if hasStats(bin) {
		args = append(args, "--stats", stats)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		return run{}, err
	}
	var rep struct {
		Summary struct {
			Scheduled int `json:"scheduled"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return run{}, fmt.Errorf("reading simulate's JSON: %w", err)
	}
	var st struct {
		Attempts  int     `json:"attempts"`
		PeakRSSMB float64 `json:"peakRSSMB"`
	}
	// A baseline built before simulate had --stats counts no attempts.
	if b, err := os.ReadFile(stats); err == nil {
		if err := json.Unmarshal(b, &st); err != nil {
			return run{}, fmt.Errorf("reading simulate --stats: %w", err)
		}
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	// The child's own peak, from --stats: the rusage of a child forked
	// by this process counts this process's peak too (the generated
	// cluster it holds), up to exec. A baseline without it falls back to
	// rusage, which says at most that much.
	rss := float64(ru.Maxrss) / 1024
	if st.PeakRSSMB > 0 {
		rss = st.PeakRSSMB
	}
	return run{Wall: wall.Seconds(), CPU: cpu.Seconds(), MaxRSSMB: rss, Scheduled: rep.Summary.Scheduled, Attempts: st.Attempts}, nil
}

// statsFlag caches whether a binary's simulate has --stats.
var statsFlag = map[string]bool{}

func hasStats(bin string) bool {
	has, ok := statsFlag[bin]
	if !ok {
		out, _ := exec.Command(bin, "simulate", "--help").CombinedOutput()
		has = strings.Contains(string(out), "--stats")
		statsFlag[bin] = has
	}
	return has
}

func median(rs []run) run {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Wall < rs[j].Wall })
	return rs[len(rs)/2]
}
