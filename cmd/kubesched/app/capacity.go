package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	cliflag "k8s.io/component-base/cli/flag"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/cmd/kubesched/app/options"
	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/gcpace"
	"github.com/kubesched/kubesched/internal/simulator"
	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

func newCapacityCommand(s streams, registry fwkruntime.Registry) *cobra.Command {
	opts := options.NewOptions()
	var max, maxNodes int
	var balanceZones bool
	var show string
	var addNodes, workload, nodeTypes, nodesJoin, cpuProfile string
	var headroom bool
	cmd := &cobra.Command{
		Use:   "capacity -f CLUSTER_PATH (--pod POD_FILE [--max N] | --workload FILE [--max N] | --headroom [--max N] | --add-nodes NODE_FILE | --node-types FILE) [--config FILE] [-o table|json]",
		Short: "How many more copies of a pod fit, or how many nodes to add so that every pending pod does",
		Long: `capacity simulates the cluster (its pending pods placed first), then places
copies of the pod in --pod one at a time with the same scheduler until one
does not fit: it prints how many fit, on which nodes and zones, and why the
next one does not, with the explain table of that copy. Each copy is placed
on the cluster as it is, attempted at once as kube-scheduler attempts a new
pod: pods that fit nowhere are retried only when a copy's binding wakes
them, never waited for. Copies never preempt: capacity counts free room.

With --workload FILE (one Deployment, ReplicaSet, StatefulSet,
ReplicationController or Job), the workload joins the cluster as given, then
is scaled up one replica at a time, its controller naming and labelling each
pod (so default spreading and PodDisruptionBudgets apply), until a replica
does not fit.

With --headroom, it answers --workload's question for every Deployment,
ReplicaSet, StatefulSet, ReplicationController and Job of the input, each
alone, the other workloads as they are: one table, each row written as it
is known, or one JSON. The cluster is simulated once; a workload whose
replicas each node takes whatever the others hold (requests, pod slots,
host ports, anti-affinity to itself per node, claims provisioned where
the pod lands) is counted from that simulation, each node's room summed,
the next replica's reason asked of the scheduler with every node holding
its room; any other (hard topology spread, pod affinity, claims bound at
once, a simulation that left pods pending) is simulated afresh and scaled
one replica at a time, as many at once as there are CPUs: the same
answer.

With --node-types FILE (Node manifests, each a node type with the annotation
simulation.kubesched.io/hourly-cost, a decimal price per hour, and optionally
simulation.kubesched.io/zones, "a,b,c", and
simulation.kubesched.io/max-per-zone), it answers a cheap set of new nodes
that lets every pending pod schedule: per type and zone, how many, their
cost and the pods they take, and the pods no type can ever run, with why.
The search proposes like a packer and decides like the scheduler: the
linear relaxation of the packing (its cost is the lower bound the answer
reports) gives the types and zones, whole nodes are packed first-fit from
it, and the whole cluster with those nodes is simulated; the pods it
leaves pending are packed again and their nodes added, then nodes the
scheduler leaves little on are dropped while nothing more pends. On small
questions it also takes the floor first (every type added: what still
pends runs nowhere), searches by rounds of types, and simulates every
cheaper count vector whose nodes have a slot for each pod (the exact
search). The answer is then simulated with its new nodes in other orders
and names, and the scheduler's ties drawn otherwise, and repaired until
each order places as many pods. A type
on which no pod to schedule could run (its taints, labels, or too small a
size for every pod) is never added. The cheapest the search
finds, not a proven optimum; on answers of up to 40 nodes, with any one
node of it removed, some pod does not schedule.

With --node-types and --workload FILE, the nodes are sized for that
workload's pods (added to the cluster as given): the cluster's other
pending pods may stay pending.

With --add-nodes NODE_FILE (a Node manifest as template), it answers the
fewest nodes of that shape to add so that every pending pod of the cluster is
scheduled, each candidate count checked by simulating it.

A simulation that reaches its limit of virtual time with pods still to place
gives no answer: capacity says so and exits non-zero.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gcpace.StartingHeap(gcpace.DefaultStartingHeap) // a batch command: see gcpace
			stopProfile, err := startProfile(cpuProfile, "")
			if err != nil {
				return err
			}
			defer stopProfile()
			given := 0
			for _, f := range []string{opts.PodFile, addNodes, workload, nodeTypes} {
				if f == workload && nodeTypes != "" {
					continue // --node-types for a workload's pods
				}
				if f != "" {
					given++
				}
			}
			if headroom {
				given++
			}
			if given != 1 {
				return fmt.Errorf("want exactly one of --pod, --workload, --headroom, --add-nodes and --node-types")
			}
			// A limit of no node or copy asks nothing (and a negative one
			// sized a slice): refused, naming the flag.
			for _, l := range []struct {
				flag  string
				value int
			}{{"--max", max}, {"--max-nodes", maxNodes}} {
				if l.value < 1 {
					return fmt.Errorf("%s: Invalid value: %d: must be 1 or more", l.flag, l.value)
				}
			}
			settledMin := 0 // auto
			switch nodesJoin {
			case "auto":
			case "start":
				settledMin = -1
			case "settled":
				settledMin = 1
			default:
				return fmt.Errorf("--nodes-join: Unsupported value: %q: supported values: \"auto\", \"settled\", \"start\"", nodesJoin)
			}
			if nodesJoin != "auto" && nodeTypes == "" {
				return fmt.Errorf("--nodes-join: only with --node-types")
			}
			if (headroom || nodeTypes != "") && slices.Contains(opts.Files, "-") {
				return fmt.Errorf("--headroom and --node-types read the cluster once per simulation: give it as files, not -f -")
			}
			shown, err := parseNodeShow("capacity", show, opts.Output)
			if err != nil {
				return err
			}
			if shown != report.ExplainShowAuto && opts.PodFile == "" && (workload == "" || nodeTypes != "") {
				return fmt.Errorf("--show chooses how many nodes the table of --pod or --workload lists")
			}
			cc, err := Setup(opts, registry)
			if err != nil {
				return err
			}
			q, err := setUpQuestion(cmd.Context(), s, "capacity", opts.Files, cc)
			if err != nil {
				return err
			}
			load, cluster, progress, newWorld := q.load, q.cluster, q.progress, q.newWorld
			if addNodes != "" {
				nc, err := loading.LoadFrom([]string{addNodes}, s.in)
				if err != nil {
					return fmt.Errorf("--add-nodes: %w", err)
				}
				if len(nc.Nodes) != 1 {
					return fmt.Errorf("--add-nodes %s: want exactly one Node, found %d", addNodes, len(nc.Nodes))
				}
				if len(opts.Files) == 1 && opts.Files[0] == "-" {
					return fmt.Errorf("--add-nodes reads the cluster more than once: give it as files, not -f -")
				}
				stop := progressLine(s, progress.line)
				res, err := questions.AddNodes(cmd.Context(), load, newWorld, nc.Nodes[0], maxNodes)
				stop()
				if err != nil {
					return err
				}
				if opts.Output == "json" {
					return writeJSON(s, res)
				}
				if res.Pending == 0 && res.Preempted == 0 {
					fmt.Fprintln(s.out, "Nothing is pending: no node needs to be added.")
				} else {
					fmt.Fprintf(s.out, "%s, with %s like %s added (checked by simulation; %d leave some pod pending or preempted).\n", placedAndSpared(res.Pending, res.Preempted), report.Plural(res.AddNodes, "node"), res.Node, res.AddNodes-1)
				}
				return nil
			}
			if nodeTypes != "" {
				var target func(*simulator.World, *v1.Pod) bool
				if workload != "" {
					files := append(slices.Clone(opts.Files), workload)
					lo := loadOptions(cc.Config)
					lo.Documents = q.docs
					load = func() (*simcluster.Cluster, error) { return loading.LoadWith(files, s.in, lo) }
					wc, err := load()
					if err != nil {
						return fmt.Errorf("--workload: %w", err)
					}
					wl, err := workloadOfFile(wc, workload)
					if err != nil {
						return err
					}
					target = questions.OfWorkload(wl.Kind, wl.Namespace, wl.Name)
				}
				return capacityNodeTypes(cmd.Context(), s, nodeTypes, load, newWorld, progress, maxNodes, opts.Output,
					questions.NodeTypesOptions{Target: target, ResourcesIgnored: resourcesIgnored(cc.ComponentConfig), BalanceZones: balanceZones, SettledMinNodes: settledMin})
			}
			if headroom {
				return capacityHeadroom(cmd.Context(), s, load, newWorld, progress, max, opts.Output, cc.ComponentConfig)
			}
			if workload != "" {
				return capacityOfWorkload(cmd.Context(), s, opts.Files, workload, loadOptions(cc.Config), newWorld, progress, max, opts.Output, shown)
			}
			pod, err := loading.LoadPod(cluster, opts.PodFile, s.in, opts.Namespace)
			if err != nil {
				return fmt.Errorf("--pod: %w", err)
			}
			stop := progressLine(s, progress.line)
			res, err := questions.Capacity(cmd.Context(), cluster, newWorld, pod, max)
			stop()
			if err != nil {
				return err
			}
			if opts.Output == "json" {
				return writeJSON(s, res)
			}
			writeCapacity(s, res, max, shown)
			return nil
		},
	}
	fss := &cliflag.NamedFlagSets{}
	opts.AddConfigFlags(fss)
	opts.AddManifestFlags(fss, "table", "json")
	in := fss.FlagSet("input and output")
	in.StringVar(&opts.PodFile, "pod", "", "A file holding the pod to copy (\"-\": stdin).")
	in.StringVar(&show, "show", "", "What the table of --pod or --workload lists (-o table): summary (the 20 nodes with the most copies, and the next copy's explanation folded) or all (every node). Default: all up to 50 nodes, summary past them.")
	in.IntVar(&max, "max", 10000, "Stop after this many copies (or replicas, per workload) fit.")
	in.StringVar(&workload, "workload", "", "A file holding one Deployment, ReplicaSet, StatefulSet, ReplicationController or Job: add it to the cluster and answer how many more replicas fit, each created as its controller would.")
	in.BoolVar(&headroom, "headroom", false, "Answer --workload's question for every Deployment, ReplicaSet, StatefulSet, ReplicationController and Job of the input, each alone.")
	in.StringVar(&addNodes, "add-nodes", "", "A file holding a Node: answer how many nodes like it to add so that every pending pod is scheduled.")
	in.StringVar(&nodeTypes, "node-types", "", "A file of Node manifests, each a node type with its price ("+questions.HourlyCostAnnotation+") and optionally its zones ("+questions.ZonesAnnotation+") and a limit per zone ("+questions.MaxPerZoneAnnotation+"): answer a cheap set of new nodes that schedules every pending pod.")
	in.BoolVar(&balanceZones, "balance-zones", false, "With --node-types, spread each type's nodes evenly over the zones it is offered in (counts differing by one at most, as cluster-autoscaler's --balance-similar-node-groups), adding nodes where an even split leaves pods pending.")
	in.StringVar(&nodesJoin, "nodes-join", "auto", "With --node-types, when the new nodes join in the simulations that decide the answer: start (there from the start, as simulate of the cluster with them added decides), settled (once the scheduler has placed what the existing nodes take, as nodes an autoscaler adds for pending pods join: on a large cluster each simulation then schedules only the pods still pending) or auto (settled from 200 existing nodes, start below).")
	in.IntVar(&maxNodes, "max-nodes", 1000, "With --add-nodes, give up past this many nodes; with --node-types, the limit per type and zone of the types without one.")
	fss.FlagSet("debugging").StringVar(&cpuProfile, "cpuprofile", "", "Write a CPU profile of the whole command to this file.")
	addFlagSets(cmd, fss)
	return cmd
}

func writeJSON(s streams, v interface{}) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = s.out.Write(append(b, '\n'))
	return err
}

// capacityOfWorkload answers capacity --workload.
func capacityOfWorkload(ctx context.Context, s streams, files []string, file string, lo loading.Options, newWorld func(*simcluster.Cluster) (*simulator.World, error), progress *questionProgress, max int, output string, show report.ExplainShow) error {
	if slices.Contains(files, "-") && file == "-" {
		return fmt.Errorf("--workload -: the standard input can be read only once")
	}
	// The workload is read with the cluster: its pods may name the
	// cluster's PriorityClasses, namespaces and storage classes.
	cluster, err := loading.LoadWith(append(slices.Clone(files), file), s.in, lo)
	if err != nil {
		return fmt.Errorf("--workload: %w", err)
	}
	// The cluster files' warnings were told with their first load; the
	// workload file's are told here (it replaces a workload of -f, ...).
	for _, w := range cluster.Warnings {
		if strings.HasPrefix(w, file+": document ") {
			fmt.Fprintf(s.errOut, "warning: %s\n", w)
		}
	}
	wl, err := workloadOfFile(cluster, file)
	if err != nil {
		return err
	}
	progress.nodes = len(cluster.Nodes)
	w, err := newWorld(cluster)
	if err != nil {
		return err
	}
	stop := progressLine(s, progress.line)
	res, err := questions.WorkloadCapacity(ctx, w, wl.Kind, wl.Namespace, wl.Name, max)
	stop()
	if err != nil {
		return fmt.Errorf("--workload %s: %w", file, err)
	}
	if output == "json" {
		return writeJSON(s, res)
	}
	writeCapacity(s, res, max, show)
	return nil
}

// resourcesIgnored: some profile's NodeResourcesFit ignores resources
// (ignoredResources, ignoredResourceGroups), or an extender's managed
// resource is ignoredByScheduler.
func resourcesIgnored(cfg *configv1.KubeSchedulerConfiguration) bool {
	for _, e := range cfg.Extenders {
		for _, r := range e.ManagedResources {
			if r.IgnoredByScheduler {
				return true
			}
		}
	}
	for _, p := range cfg.Profiles {
		for _, pc := range p.PluginConfig {
			if a, ok := pc.Args.Object.(*configv1.NodeResourcesFitArgs); ok && (len(a.IgnoredResources) > 0 || len(a.IgnoredResourceGroups) > 0) {
				return true
			}
		}
	}
	return false
}

// workloadOfFile is the one workload cluster read from file.
func workloadOfFile(cluster *simcluster.Cluster, file string) (simcluster.Workload, error) {
	var fromFile []simcluster.Workload
	for _, wl := range cluster.Workloads {
		if strings.HasPrefix(wl.Source, file+": document ") {
			fromFile = append(fromFile, wl)
		}
	}
	if len(fromFile) != 1 {
		return simcluster.Workload{}, fmt.Errorf("--workload %s: want exactly one Deployment, ReplicaSet, StatefulSet, ReplicationController or Job, found %d workloads", file, len(fromFile))
	}
	return fromFile[0], nil
}

// capacityNodeTypes answers capacity --node-types.
func capacityNodeTypes(ctx context.Context, s streams, file string, load func() (*simcluster.Cluster, error), newWorld func(*simcluster.Cluster) (*simulator.World, error), progress *questionProgress, maxNodes int, output string, nopts questions.NodeTypesOptions) error {
	tc, err := loading.LoadFrom([]string{file}, s.in)
	if err != nil {
		return fmt.Errorf("--node-types: %w", err)
	}
	types, err := questions.NodeTypes(tc, file, maxNodes)
	if err != nil {
		return fmt.Errorf("--node-types: %w", err)
	}
	stop := progressLine(s, progress.line)
	res, err := questions.CheapestNodes(ctx, load, newWorld, types, nopts)
	stop()
	if err != nil {
		return err
	}
	if output == "json" {
		return writeJSON(s, res)
	}
	switch {
	case len(res.Add) == 0 && len(res.Pending) == 0 && nopts.Target != nil:
		fmt.Fprintln(s.out, "No pod of the workload is pending: no node needs to be added.")
	case len(res.Add) == 0 && len(res.Pending) == 0:
		fmt.Fprintln(s.out, "Nothing is pending: no node needs to be added.")
	case len(res.Add) == 0:
		fmt.Fprintln(s.out, "No node type lets any pending pod schedule.")
	default:
		nodes, placed := addedTotals(res)
		checked := "checked by simulation"
		if res.NodesJoin == questions.JoinSettled {
			checked = "checked by simulation of the cluster as the scheduler leaves it, the new nodes joining it then (--nodes-join settled)"
		}
		did := placedAndSpared(res.Scheduled, res.Spared)
		if res.NodesJoin == questions.JoinSettled && res.Spared > 0 {
			// The preemptions happened before the nodes joined: the pods
			// they took the place of are placed again, not spared.
			did = fmt.Sprintf("%s scheduled, and %s preempted before the nodes join placed again", report.Plural(res.Scheduled, "pending pod"), report.Plural(res.Spared, "pod"))
		}
		fmt.Fprintf(s.out, "Add %s (%g per hour): %s, %s.\n\n", report.Plural(nodes, "node"), res.HourlyCost, did, checked)
		tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TYPE\tZONE\tCOUNT\tHOURLY COST\tPODS")
		for _, a := range res.Add {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%g\t%d\n", a.Type, a.Zone, a.Count, a.HourlyCost, a.Pods)
		}
		tw.Flush()
		if res.LowerBound > 0 {
			fmt.Fprintf(s.out, "\nNo answer costs less than %g per hour (fractional nodes holding the pending pods' requests): this one is %.1f%% above that bound.\n", res.LowerBound, 100*(res.HourlyCost/res.LowerBound-1))
		}
		switch {
		case res.Orders > 0 && res.OrdersShort == 0:
			fmt.Fprintf(s.out, "\nChecked in %d other orders of the new nodes and draws between equally scored nodes (kube-scheduler breaks such ties at random): each places as many pods.\n", res.Orders)
		case res.Orders > 0:
			fmt.Fprintf(s.out, "\nChecked in %d other orders of the new nodes and draws between equally scored nodes (kube-scheduler breaks such ties at random): %d leave more pods pending.\n", res.Orders, res.OrdersShort)
		}
		if placed > res.Scheduled && res.NodesJoin != questions.JoinSettled {
			fmt.Fprintf(s.out, "\nPODS counts every pod the simulation placed on the new nodes (%d, DaemonSet pods aside), not only the %d they are added for: with the nodes there from the start, the scheduler also puts there pods that would otherwise run on existing nodes.\n", placed, res.Scheduled)
		}
	}
	if len(res.Limits) > 0 {
		fmt.Fprintf(s.out, "\nThe search stopped at the limit of: %s (%s, or --max-nodes).\n", strings.Join(res.Limits, ", "), questions.MaxPerZoneAnnotation)
	}
	if len(res.Pending) > 0 {
		fmt.Fprintf(s.out, "\n%s no node type can run:\n\n", report.Plural(len(res.Pending), "pod"))
		tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "POD\tREASON")
		for _, p := range res.Pending {
			fmt.Fprintf(tw, "%s\t%s\n", p.Pod, p.Reason)
		}
		tw.Flush()
	}
	return nil
}

// placedAndSpared says what added nodes do: schedule pending pods and
// spare preempted ones.
func placedAndSpared(scheduled, spared int) string {
	out := fmt.Sprintf("%s scheduled", report.Plural(scheduled, "pending pod"))
	if spared > 0 {
		out += fmt.Sprintf(", and %s no longer preempted", report.Plural(spared, "pod"))
	}
	return out
}

// addedTotals sums the answer's COUNT and PODS columns.
func addedTotals(r *questions.NodeTypesResult) (nodes, pods int) {
	for _, a := range r.Add {
		nodes += a.Count
		pods += a.Pods
	}
	return nodes, pods
}

func writeCapacity(s streams, r *questions.CapacityResult, maxCopies int, show report.ExplainShow) {
	unit := "COPIES"
	if r.GangPods > 0 {
		// A gang's copy is the whole Job: the tables count its pods.
		fmt.Fprintf(s.out, "%d more copies of %s (a gang of %d pods, each copy placed whole) fit.\n", r.Fits, r.Pod, r.GangPods)
		unit = "PODS"
	} else {
		fmt.Fprintf(s.out, "%d more copies of %s fit.\n", r.Fits, r.Pod)
	}
	if r.Fits > 0 {
		// The summaries (domains, zones) first, then the nodes: past
		// report.ExplainListAll of them, those with the most copies.
		fmt.Fprintln(s.out)
		// One tabwriter aligns the tables alike; the empty cell between
		// them is padded, so the lines are trimmed on the way out.
		var tables bytes.Buffer
		tw := tabwriter.NewWriter(&tables, 0, 0, 2, ' ', 0)
		if len(r.Domains) > 0 {
			fmt.Fprintln(tw, "DOMAIN\t"+unit)
			for _, d := range questions.SortedCounts(r.Domains) {
				fmt.Fprintf(tw, "%s\t%d\n", d, r.Domains[d])
			}
			fmt.Fprintln(tw, "\t")
		}
		if len(r.Zones) > 0 {
			fmt.Fprintln(tw, "ZONE\t"+unit)
			for _, z := range questions.SortedCounts(r.Zones) {
				fmt.Fprintf(tw, "%s\t%d\n", z, r.Zones[z])
			}
			fmt.Fprintln(tw, "\t")
		}
		nodes := questions.SortedCounts(r.Nodes)
		more := 0
		if show == report.ExplainShowSummary || (show == report.ExplainShowAuto && len(nodes) > report.ExplainListAll) {
			more = max(0, len(nodes)-report.ExplainTopFeasible)
			nodes = nodes[:len(nodes)-more]
		}
		fmt.Fprintln(tw, "NODE\t"+unit)
		for _, n := range nodes {
			fmt.Fprintf(tw, "%s\t%d\n", n, r.Nodes[n])
		}
		tw.Flush()
		for line := range strings.Lines(tables.String()) {
			fmt.Fprintln(s.out, strings.TrimRight(line, " \n"))
		}
		if more > 0 {
			fmt.Fprintf(s.out, "... and %s hold copies too (--show all lists every node; -o json holds them all).\n", report.Plural(more, "more node"))
		}
	}
	fmt.Fprintln(s.out)
	if r.Next != nil {
		fmt.Fprintf(s.out, "The next copy does not fit: %s\n", r.Next.Message)
		if r.Next.Explain != nil {
			fmt.Fprintln(s.out)
			r.Next.Explain.WriteShow(s.out, "table", show)
		}
	} else {
		fmt.Fprintf(s.out, "Stopped at --max %d; more may fit.\n", maxCopies)
	}
}
