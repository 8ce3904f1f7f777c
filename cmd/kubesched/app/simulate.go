package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"

	schedconfig "github.com/kubesched/kubesched/cmd/kubesched/app/config"
	"github.com/kubesched/kubesched/cmd/kubesched/app/options"
	"github.com/kubesched/kubesched/internal/features"
	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/gcpace"
	"github.com/kubesched/kubesched/internal/simulator"
	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
)

func newSimulateCommand(s streams, registry fwkruntime.Registry) *cobra.Command {
	opts := options.NewOptions()
	var cpuProfile, memProfile, compare, trace, explain, show, stats string
	cmd := &cobra.Command{
		Use:   "simulate -f PATH [-f PATH ...] [--config FILE [--compare FILE]] [--seed N] [--trace FILE] [--explain NS/NAME] [-o table|json|yaml|html] [--show summary|pending|all]",
		Short: "Schedule the pending pods of Kubernetes manifests on an in-memory cluster",
		Long: `simulate reads Nodes, Pods, PriorityClasses and Namespaces from manifests, treats
pods with spec.nodeName as running there, and schedules the pending pods whose
schedulerName is a profile of the configuration with the real scheduling core,
on virtual time (backoff and the unschedulable flush do not wait in real time).
The same input and seed give the same output, byte for byte.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gcpace.StartingHeap(gcpace.DefaultStartingHeap) // a batch command: see gcpace
			cc, err := Setup(opts, registry)
			if err != nil {
				return err
			}
			stop, err := startProfile(cpuProfile, memProfile)
			if err != nil {
				return err
			}
			defer stop()
			if explain != "" && (strings.Count(explain, "/") != 1 || opts.Output == "yaml" || opts.Output == "html") {
				return fmt.Errorf("--explain: want NAMESPACE/NAME, with -o table or json")
			}
			shown, err := report.ParseShow(show)
			if err != nil {
				return fmt.Errorf("--show: %w", err)
			}
			if cmd.Flags().Changed("show") && opts.Output != "table" {
				return fmt.Errorf("--show chooses what simulate's table lists: not with -o %s", opts.Output)
			}
			if cmd.Flags().Changed("show") && explain != "" {
				return fmt.Errorf("--show chooses what simulate's table lists: not with --explain")
			}
			if compare != "" {
				if explain != "" {
					return fmt.Errorf("--explain and --compare: explain under one configuration at a time")
				}
				if trace != "" {
					return fmt.Errorf("--trace and --compare: trace one configuration at a time")
				}
				return simulateCompare(cmd.Context(), s, opts, cc, registry, compare, compareShow(shown))
			}
			start := time.Now()
			cluster, err := loading.LoadWith(opts.Files, s.in, loadOptions(cc.Config))
			if err != nil {
				return err
			}
			reportSkipped(s, cluster, cc.Features)
			loaded := time.Now()
			w, err := simulator.NewWorld(cmd.Context(), cluster, cc.ComponentConfig, cc.Registry, cc.Seed, cc.SchedulerOptions()...)
			if err != nil {
				return err
			}
			if len(w.Foreign) > 0 {
				names := map[string]int{}
				for _, p := range w.Foreign {
					names[p.Spec.SchedulerName]++
				}
				var profiles []string
				for _, p := range cc.ComponentConfig.Profiles {
					if p.SchedulerName != nil {
						profiles = append(profiles, fmt.Sprintf("%q", *p.SchedulerName))
					}
				}
				fmt.Fprintf(s.errOut, "left pending: %s; the configuration's profiles schedule pods for %s\n",
					describeCounts(names, "pod(s) for scheduler %q"), strings.Join(profiles, ", "))
			}
			if trace != "" {
				f, err := os.Create(trace)
				if err != nil {
					return fmt.Errorf("--trace: %w", err)
				}
				defer f.Close()
				w.TraceTo(f)
			}
			if explain != "" {
				w.WatchPod(explain)
			}
			built := time.Now()
			stopProgress := showProgress(s, w)
			err = timeline.Run(cmd.Context(), w)
			stopProgress()
			if err != nil {
				return err
			}
			// Every run is checked: no node overcommitted by our
			// placements, taints and affinity honoured, no gang bound in
			// part (internal/simulator/invariants.go).
			if errs := w.CheckInvariants(); len(errs) > 0 {
				return fmt.Errorf("the simulation broke an invariant of the scheduler (a kubesched bug: please report it): %w", errors.Join(errs...))
			}
			if explain != "" {
				if err := w.FlushTrace(); err != nil {
					return fmt.Errorf("--trace %s: %w", trace, err)
				}
				rep, err := questions.ExplainLastAttempt(cmd.Context(), w)
				if err != nil {
					return err
				}
				return rep.Write(s.out, opts.Output)
			}
			ran := time.Now()
			if err := w.FlushTrace(); err != nil {
				return fmt.Errorf("--trace %s: %w", trace, err)
			}
			rep := w.Report()
			if opts.Output == "html" {
				if err := questions.ExplainPending(cmd.Context(), w, rep); err != nil {
					return err
				}
			}
			if opts.Output == "table" {
				err = rep.WriteTable(s.out, shown)
			} else {
				err = rep.Write(s.out, opts.Output)
			}
			klog.V(1).InfoS("Simulation phases", "load", loaded.Sub(start), "world", built.Sub(loaded), "run", ran.Sub(built), "report", time.Since(ran))
			if err == nil && stats != "" {
				err = writeStats(stats, w, map[string]time.Duration{"load": loaded.Sub(start), "world": built.Sub(loaded), "run": ran.Sub(built), "report": time.Since(ran)})
			}
			return err
		},
	}
	fss := &cliflag.NamedFlagSets{}
	opts.AddConfigFlags(fss)
	opts.AddManifestFlags(fss, "table", "json", "yaml", "html")
	fss.FlagSet("input and output").StringVar(&compare, "compare", "", "A second KubeSchedulerConfiguration: simulate the cluster under --config (A) and this one (B), and print the difference (pods placed and pending, per-zone use, pods placed differently).")
	fss.FlagSet("input and output").StringVar(&trace, "trace", "", "Write one JSON line per scheduling attempt to this file, in the order the scheduler made them: virtual time, pod, attempt number, result (Scheduled, Unschedulable, Preempted, Error), node, message and preemption victims.")
	fss.FlagSet("input and output").StringVar(&explain, "explain", "", "NAMESPACE/NAME: instead of the report, explain that pod node by node as its last scheduling attempt in the simulation saw the cluster (the nodes and the pods bound at that moment).")
	fss.FlagSet("input and output").StringVar(&show, "show", string(report.ShowPending), "What the table lists (-o table): summary (the counts, the pending pods' reasons, the workloads, the timeline), pending (and the pods not running, by reason) or all (and every pod and node). With --compare: summary or pending (the default) fold the nodes that differ and the pods that move past 50 (by workload; summary always), all lists them. JSON, YAML and HTML always hold everything.")
	fss.FlagSet("debugging").StringVar(&stats, "stats", "", "Write the run's counts as JSON to this file: scheduling attempts, failed ones answered by the memo of an identical failure, virtual time, and the seconds of each phase (load, world, run, report).")
	fss.FlagSet("debugging").StringVar(&cpuProfile, "cpuprofile", "", "Write a CPU profile of the whole command (loading, scheduling, the report) to this file.")
	fss.FlagSet("debugging").StringVar(&memProfile, "memprofile", "", "Write a profile of the whole command's allocations (go tool pprof -sample_index=alloc_space) to this file when it ends.")
	addFlagSets(cmd, fss)
	return cmd
}

// simulateCompare simulates the cluster under cc and under the
// configuration in file, and prints the comparison.
// compareShow is --show for --compare's table: summary folds every
// section, pending (the default) folds those past report.ExplainListAll
// rows, all lists everything.
func compareShow(s report.Show) report.ExplainShow {
	switch s {
	case report.ShowSummary:
		return report.ExplainShowSummary
	case report.ShowAll:
		return report.ExplainShowAll
	}
	return report.ExplainShowAuto
}

func simulateCompare(ctx context.Context, s streams, opts *options.Options, cc schedconfig.CompletedConfig, registry fwkruntime.Registry, file string, show report.ExplainShow) error {
	if opts.Output == "yaml" || opts.Output == "html" {
		return fmt.Errorf("--compare: -o %s is not supported; use table or json", opts.Output)
	}
	optsB := *opts
	optsB.ConfigFile = file
	ccB, err := Setup(&optsB, registry)
	if err != nil {
		return fmt.Errorf("--compare %s: %w", file, err)
	}
	var stdin []byte
	if slices.Contains(opts.Files, "-") {
		if stdin, err = io.ReadAll(s.in); err != nil {
			return err
		}
	}
	run := func(cc schedconfig.CompletedConfig, first bool) (*simulator.World, error) {
		cluster, err := loading.LoadWith(opts.Files, bytes.NewReader(stdin), loadOptions(cc.Config))
		if err != nil {
			return nil, err
		}
		if first {
			reportSkipped(s, cluster, cc.Features)
		}
		w, err := simulator.NewWorld(ctx, cluster, cc.ComponentConfig, cc.Registry, cc.Seed, cc.SchedulerOptions()...)
		if err != nil {
			return nil, err
		}
		if err := timeline.Run(ctx, w); err != nil {
			return nil, err
		}
		return w, nil
	}
	a, err := run(cc, true)
	if err != nil {
		return err
	}
	b, err := run(ccB, false)
	if err != nil {
		return err
	}
	nameA := opts.ConfigFile
	if nameA == "" {
		nameA = "(defaults)"
	}
	return questions.Compare(a, b, nameA, file).WriteShow(s.out, opts.Output, show)
}

// writeStats writes simulate --stats.
func writeStats(path string, w *simulator.World, phases map[string]time.Duration) error {
	_, _, virtual := w.Progress()
	seconds := map[string]float64{}
	for k, d := range phases {
		seconds[k] = d.Seconds()
	}
	st := map[string]interface{}{"attempts": w.Attempts(), "replayedFailures": w.Scheduler.ReplayedFailures(), "virtualSeconds": virtual.Seconds(), "phaseSeconds": seconds}
	if kb, ok := peakRSSKB(); ok {
		st["peakRSSMB"] = float64(kb) / 1024
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("--stats: %w", err)
	}
	return nil
}

// peakRSSKB is the process's peak resident set (VmHWM of
// /proc/self/status, Linux), in KiB. A parent's getrusage of its child
// can't say it: a Go parent forks its children sharing its memory until
// exec, and the kernel counts the parent's peak in the child's (hack/bench
// holding a generated 150,000-pod cluster reported 1.6 GB for a child
// that peaked at 1.1 GB).
func peakRSSKB() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

// startProfile starts a CPU profile when cpuPath is set; stop ends it and
// writes the allocations profile when memPath is set.
func startProfile(cpuPath, memPath string) (stop func(), err error) {
	writeAllocs := func() {
		if memPath == "" {
			return
		}
		f, err := os.Create(memPath)
		if err != nil {
			klog.ErrorS(err, "--memprofile")
			return
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			klog.ErrorS(err, "--memprofile")
		}
	}
	if cpuPath == "" {
		return writeAllocs, nil
	}
	f, err := os.Create(cpuPath)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close(); writeAllocs() }, nil
}

// loadOptions are the load's settings (-n, --default-storage-class) and
// what the gates change in the controllers the loader plays:
// WorkloadWithJob gives new Jobs a PodGroup.
func loadOptions(c *schedconfig.Config) loading.Options {
	gates := c.Features
	return loading.Options{
		JobPodGroups:        gates != nil && gates.Enabled(features.WorkloadWithJob),
		Namespace:           c.Namespace,
		DefaultStorageClass: c.DefaultStorageClass,
		HPAs:                hpaMode(c.HPAMax),
	}
}

// hpaMode is what --hpa-max makes of the HPAs' targets.
func hpaMode(max bool) simcluster.HPAReplicas {
	if max {
		return simcluster.HPAMax
	}
	return simcluster.HPABounds
}

// reportSkipped tells on stderr what the load took as it is but the user
// may not have meant: the kinds it skipped, and its warnings.
//
// PodGroups read without the GenericWorkload gate are said to be ignored:
// their pods are scheduled one by one, as kube-scheduler does without it.
func reportSkipped(s streams, c *simcluster.Cluster, gates featuregate.FeatureGate) {
	for _, w := range c.Warnings {
		fmt.Fprintf(s.errOut, "warning: %s\n", w)
	}
	if len(c.PodGroups) > 0 && (gates == nil || !gates.Enabled(features.GenericWorkload)) {
		fmt.Fprintf(s.errOut, "warning: %d PodGroup(s) ignored and their pods scheduled one by one: pod groups need --feature-gates=GenericWorkload=true (off by default, as in kube-scheduler v1.37)\n", len(c.PodGroups))
	}
	if gates == nil || !gates.Enabled(features.WorkloadWithJob) {
		n := 0
		for _, j := range c.Jobs {
			if j.Spec.Scheduling != nil {
				n++
			}
		}
		if n > 0 {
			fmt.Fprintf(s.errOut, "warning: spec.scheduling of %d Job(s) ignored (the API server drops it): a Job's PodGroup needs --feature-gates=WorkloadWithJob=true (alpha, off by default, as in kube-controller-manager v1.37)\n", n)
		}
	}
	if len(c.Skipped) == 0 {
		return
	}
	fmt.Fprintf(s.errOut, "skipped objects of kinds the simulator does not read: %s\n", describeCounts(c.Skipped, "%s"))
}

// reportTimelineIgnored tells on stderr that a command answering on the
// cluster as the files give it (explain, capacity, consolidate) does not
// replay the Scenario read with them: its answer would otherwise look like
// one about the timeline.
func reportTimelineIgnored(s streams, c *simcluster.Cluster, command string) {
	sc := c.Scenario
	if sc == nil || len(sc.Steps) == 0 {
		return
	}
	fmt.Fprintf(s.errOut, "warning: %s: Scenario %s (%s) is not replayed: %s answers on the cluster as the files give it at the start (simulate replays a timeline)\n",
		sc.Source, sc.Name, report.Plural(len(sc.Steps), "step"), command)
}

func describeCounts(m map[string]int, format string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d ", m[k])+fmt.Sprintf(format, k))
	}
	return strings.Join(parts, ", ")
}
