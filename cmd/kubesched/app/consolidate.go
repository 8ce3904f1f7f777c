package app

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/kubesched/kubesched/cmd/kubesched/app/options"
	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/gcpace"
	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

func newConsolidateCommand(s streams, registry fwkruntime.Registry) *cobra.Command {
	opts := options.NewOptions()
	maxDrains := 0
	var show, rules, cpuProfile, nodeTypes string
	cmd := &cobra.Command{
		Use:   "consolidate -f CLUSTER_PATH [--config FILE] [-o table|json]",
		Short: "Which nodes can be removed with every pod still running, and what keeps the others",
		Long: `consolidate simulates the cluster to its end (pending pods placed), then
finds the nodes it can remove with every pod still running. A plan cordons
all its nodes before the first drain (as cluster-autoscaler and Karpenter
do). The candidates are ordered the most expensive first (price per hour in
the node annotation simulation.kubesched.io/hourly-cost, 0 without it),
then those with the fewest pods to move: the longest run of them that
drains together is found by bisection, then each other candidate is
drained alone; a drain is kept when every pod it moves (its controller's
replacement) schedules on the nodes left, the pods pending before any
drain aside. The whole plan is then checked with all its nodes drained
together. It prints the nodes to remove, in order, the hourly saving, and
for each node kept, the pod that keeps it and why: the scheduler's reason
the pod would not fit elsewhere, or a rule.

Which pods a drain moves, which go with their node and which keep it is
the rule set's: --rules cluster-autoscaler (the default: cluster-autoscaler
1.36's drainability rules with its default flags) or --rules karpenter
(Karpenter v1.15's disruption rules); the README's table says how they
differ. Under both, a PodDisruptionBudget is counted as the disruption
controller counts it (expected pods from the controllers' scale, pending
ones included; healthy pods the Ready ones) and a pod keeps its node when
its budget allows no disruption now, or when two budgets select it.

The drains run one after another in one simulated cluster, as a scheduler
that keeps running would place the evicted pods; a drain that fails is
undone. A node whose pods request more CPU or memory than the other nodes
have free is kept without a simulation; past --max-drains simulated
drains, the nodes left are kept untried (by default every node is tried
up to 3,872 nodes, then fewer as the cluster grows, each drain costing in
proportion to its nodes: 1,000 at 15,000 nodes, where a drain costs
tens of milliseconds, one that fails up to a second when it must remake
the cluster: one whose pods use DRA claims or bind volumes).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gcpace.StartingHeap(gcpace.DefaultStartingHeap)
			shown, err := parseNodeShow("consolidate", show, opts.Output)
			if err != nil {
				return err
			}
			ruleSet, err := questions.ParseRules(rules)
			if err != nil {
				return err
			}
			stopProfile, err := startProfile(cpuProfile, "")
			if err != nil {
				return err
			}
			defer stopProfile()
			cc, err := Setup(opts, registry)
			if err != nil {
				return err
			}
			q, err := setUpQuestion(cmd.Context(), s, "consolidate", opts.Files, cc)
			if err != nil {
				return err
			}
			priced := pricedNodes(q.cluster) // before Consolidate simulates it
			var types []questions.NodeType
			if nodeTypes != "" {
				tc, err := loading.LoadFrom([]string{nodeTypes}, s.in)
				if err != nil {
					return fmt.Errorf("--node-types: %w", err)
				}
				if types, err = questions.NodeTypes(tc, nodeTypes, 1); err != nil {
					return fmt.Errorf("--node-types: %w", err)
				}
			}
			set, stop := stepProgress(s, q.progress, false)
			res, err := questions.Consolidate(cmd.Context(), q.load, q.newWorld, questions.ConsolidateOptions{MaxDrains: maxDrains, Rules: ruleSet, NodeTypes: types}, func(i, n int, node string) {
				set(fmt.Sprintf("draining node %d of %d (%s)", i+1, n, node))
			})
			stop()
			if err != nil {
				return err
			}
			if opts.Output == "json" {
				return writeJSON(s, res)
			}
			if len(res.Remove) == 0 {
				fmt.Fprintln(s.out, "No node can be removed with every pod still running.")
			} else {
				removal := res.HourlySaving
				for _, r := range res.Replace {
					removal -= r.HourlySaving
				}
				removal = questions.RoundCents(removal)
				saving := fmt.Sprintf("saving %g per hour", removal)
				switch {
				case !slices.ContainsFunc(res.Remove, func(n string) bool { return priced[n] }):
					saving = "saving an unknown cost (none of them has a " + questions.HourlyCostAnnotation + " annotation)"
				case len(res.Unpriced) > 0:
					saving = fmt.Sprintf("saving at least %g per hour (%d of them have no %s annotation and count 0)", removal, len(res.Unpriced), questions.HourlyCostAnnotation)
				}
				fmt.Fprintf(s.out, "Remove %d node(s), in this order, %s; every pod still runs (checked by simulation):\n\n", len(res.Remove), saving)
				writeRemoved(s, res.Remove, q.cluster, priced, shown)
			}
			if len(res.Replace) > 0 {
				fmt.Fprintf(s.out, "\nReplace, after the removals, each new node joining before its nodes are drained (checked by simulation, the new node's DaemonSet pods included):\n\n")
				for _, r := range res.Replace {
					fmt.Fprintf(s.out, "  %s\n", r)
				}
				fmt.Fprintf(s.out, "\nSaving %g per hour in all.\n", res.HourlySaving)
			}
			if len(res.Keep) > 0 {
				fmt.Fprintf(s.out, "\nKeep %d node(s):\n\n", len(res.Keep))
				writeKept(s, res.Keep, shown)
			}
			return nil
		},
	}
	fss := &cliflag.NamedFlagSets{}
	opts.AddConfigFlags(fss)
	opts.AddManifestFlags(fss, "table", "json")
	fss.FlagSet("input and output").StringVar(&show, "show", "", "What the table lists (-o table): summary (the nodes removed counted by instance type and zone, with the first 20 in order; the nodes kept, one row per reason with how many nodes it keeps and one of them) or all (every node). Default: all up to 50 nodes removed or kept, summary past them.")
	fss.FlagSet("input and output").StringVar(&rules, "rules", string(questions.RulesClusterAutoscaler), "The rule set the drains follow: cluster-autoscaler (its drainability rules with its default flags) or karpenter (its disruption rules). The README says how they differ.")
	fss.FlagSet("input and output").IntVar(&maxDrains, "max-drains", -1, "Simulate at most this many drains; the nodes left are kept untried. 0: no limit; -1, the default: every node up to 3,872 nodes, past them 15,000,000 / nodes (3,000 at 5,000 nodes, 1,000 at 15,000).")
	fss.FlagSet("input and output").StringVar(&nodeTypes, "node-types", "", "A file of Node manifests, each a node type with its price ("+questions.HourlyCostAnnotation+") and zones ("+questions.ZonesAnnotation+"), as capacity --node-types reads them: after the removals, sets of kept nodes are replaced by one new node of a type strictly cheaper than the set, as Karpenter's consolidation replaces them.")
	fss.FlagSet("debugging").StringVar(&cpuProfile, "cpuprofile", "", "Write a CPU profile of the whole command to this file.")
	addFlagSets(cmd, fss)
	return cmd
}

// writeKept prints the nodes consolidate keeps and why: one row per node,
// or, past report.ExplainListAll of them (or with --show summary), one row
// per reason (the most nodes first) with one of its nodes and pods.
func writeKept(s streams, keep []questions.KeptNode, show report.ExplainShow) {
	tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	if show == report.ExplainShowAll || (show == report.ExplainShowAuto && len(keep) <= report.ExplainListAll) {
		fmt.Fprintln(tw, "NODE\tPOD\tREASON")
		for _, k := range keep {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Node, k.Pod, k.Reason)
		}
		return
	}
	type group struct {
		example questions.KeptNode
		nodes   int
	}
	var groups []*group
	byReason := map[string]*group{}
	for _, k := range keep {
		key := withoutNumbers(k.Reason)
		g := byReason[key]
		if g == nil {
			g = &group{example: k}
			byReason[key] = g
			groups = append(groups, g)
		}
		g.nodes++
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].nodes > groups[j].nodes })
	fmt.Fprintln(tw, "NODES\tFOR EXAMPLE\tPOD\tREASON")
	for _, g := range groups {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", g.nodes, g.example.Node, g.example.Pod, g.example.Reason)
	}
	tw.Flush()
	fmt.Fprintln(s.out, "\n(reasons that differ only in their numbers share a row; --show all lists every node kept; -o json holds them all)")
}

// withoutNumbers is s with each run of digits replaced by "#": the
// reasons a failed drain gives count the nodes left ("0/1910 nodes are
// available: 163 Insufficient nvidia.com/gpu, ..."), which differ from
// drain to drain for the same cause.
func withoutNumbers(s string) string {
	var b strings.Builder
	digits := false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// removedListed is how many of the nodes to remove the folded table
// names in order.
const removedListed = 20

// writeRemoved prints the nodes to remove: each in order, or, past
// report.ExplainListAll of them (or with --show summary), how many of
// each instance type and zone with their saving, then the first
// removedListed in order.
func writeRemoved(s streams, remove []string, c *simcluster.Cluster, priced map[string]bool, show report.ExplainShow) {
	if show == report.ExplainShowAll || (show == report.ExplainShowAuto && len(remove) <= report.ExplainListAll) {
		for _, n := range remove {
			fmt.Fprintf(s.out, "  %s\n", n)
		}
		return
	}
	nodes := make(map[string]*v1.Node, len(c.Nodes))
	for _, n := range c.Nodes {
		nodes[n.Name] = n
	}
	type group struct {
		instanceType, zone string
		nodes              int
		saving             float64
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	anyPriced := false
	for _, name := range remove {
		key := [2]string{"-", "-"}
		var cost float64
		if n := nodes[name]; n != nil {
			if v := n.Labels[v1.LabelInstanceTypeStable]; v != "" {
				key[0] = v
			}
			if v := n.Labels[v1.LabelTopologyZone]; v != "" {
				key[1] = v
			}
			cost = questions.NodeHourlyCost(n)
		}
		anyPriced = anyPriced || priced[name]
		g := byKey[key]
		if g == nil {
			g = &group{instanceType: key[0], zone: key[1]}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.nodes++
		g.saving += cost
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].nodes > groups[j].nodes })
	tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
	header := "  NODES\tINSTANCE TYPE\tZONE"
	if anyPriced {
		header += "\tSAVING PER HOUR"
	}
	fmt.Fprintln(tw, header)
	for _, g := range groups {
		row := fmt.Sprintf("  %d\t%s\t%s", g.nodes, g.instanceType, g.zone)
		if anyPriced {
			row += fmt.Sprintf("\t%g", questions.RoundCents(g.saving))
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	listed := min(len(remove), removedListed)
	fmt.Fprintf(s.out, "\nThe first %d, in order:\n\n", listed)
	for _, n := range remove[:listed] {
		fmt.Fprintf(s.out, "  %s\n", n)
	}
	if more := len(remove) - listed; more > 0 {
		fmt.Fprintf(s.out, "  ... and %d more (--show all lists every node in order; -o json holds them all)\n", more)
	}
}

// pricedNodes are the nodes with a price annotation.
func pricedNodes(c *simcluster.Cluster) map[string]bool {
	out := map[string]bool{}
	for _, n := range c.Nodes {
		if _, ok := n.Annotations[questions.HourlyCostAnnotation]; ok {
			out[n.Name] = true
		}
	}
	return out
}
