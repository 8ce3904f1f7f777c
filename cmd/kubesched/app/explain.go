package app

import (
	"fmt"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/kubesched/kubesched/cmd/kubesched/app/options"
	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator"
)

func newExplainCommand(s streams, registry fwkruntime.Registry) *cobra.Command {
	opts := options.NewOptions()
	cmd := &cobra.Command{
		Use:   "explain -f CLUSTER_PATH [--pod POD_FILE] [--config FILE] [-o table|json]",
		Short: "Show, node by node and plugin by plugin, why a pod fits or does not",
		Long: `explain runs PreFilter and Filter on every node of a cluster (read from
manifests) for one pod, and PreScore, Score and NormalizeScore on the nodes
that fit, with percentageOfNodesToScore taken as 100. It prints, per node,
whether the pod fits, the first plugin that rejected it with its reasons,
and the per-plugin weighted scores and their total.

The pod is the one in --pod, else the pod annotated kubesched.io/pending: "true"
in the cluster, else the only pod there without spec.nodeName.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cc, err := Setup(opts, registry)
			if err != nil {
				return err
			}
			cluster, err := simulator.Load(opts.Files)
			if err != nil {
				return err
			}
			reportSkipped(s, cluster)
			var pod *v1.Pod
			if opts.PodFile != "" {
				pc, err := simulator.Load([]string{opts.PodFile})
				if err != nil {
					return err
				}
				if len(pc.Pods) != 1 {
					return fmt.Errorf("--pod %s: want exactly one Pod, found %d", opts.PodFile, len(pc.Pods))
				}
				pod = pc.Pods[0]
			} else if pod, err = simulator.FindPendingPod(cluster); err != nil {
				return fmt.Errorf("%v: %w", opts.Files, err)
			}
			// The explained pod is evaluated, never queued or counted.
			kept := cluster.Pods[:0]
			for _, p := range cluster.Pods {
				if p.Namespace != pod.Namespace || p.Name != pod.Name {
					kept = append(kept, p)
				}
			}
			cluster.Pods = kept
			w, err := simulator.NewWorld(cmd.Context(), cluster, cc.ComponentConfig, cc.Registry, cc.Seed,
				scheduler.WithPercentageOfNodesToScore(100))
			if err != nil {
				return err
			}
			rep, err := w.Explain(cmd.Context(), pod)
			if err != nil {
				return fmt.Errorf("explaining pod %s/%s: %w", pod.Namespace, pod.Name, err)
			}
			return rep.Write(s.out, opts.Output)
		},
	}
	fss := &cliflag.NamedFlagSets{}
	opts.AddConfigFlags(fss)
	opts.AddManifestFlags(fss, "table", "json")
	opts.AddPodFlag(fss.FlagSet("input and output"))
	addFlagSets(cmd, fss)
	return cmd
}
