package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"
	configv1 "k8s.io/kube-scheduler/config/v1"

	schedconfig "github.com/kubesched/kubesched/cmd/kubesched/app/config"
	"github.com/kubesched/kubesched/cmd/kubesched/app/options"
	"github.com/kubesched/kubesched/internal/cluster/kube"
	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/gcpace"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator"
	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

func newExplainCommand(s streams, registry fwkruntime.Registry) *cobra.Command {
	opts := options.NewOptions()
	var show string
	cmd := &cobra.Command{
		Use:   "explain (-f CLUSTER_PATH [--pod POD_FILE] | [--kubeconfig FILE] pod NAMESPACE/NAME) [--config FILE] [-o table|json]",
		Short: "Show, node by node and plugin by plugin, why a pod fits or does not",
		Long: `explain runs PreFilter and Filter on every node of a cluster for one pod, and
PreScore, Score and NormalizeScore on the nodes that fit, with
percentageOfNodesToScore taken as 100. It prints, per node, whether the pod
fits, the first plugin that rejected it with its reasons, and the per-plugin
weighted scores and their total. Past 50 nodes the table lists the 20
best feasible nodes and folds the rejected ones by plugin and reasons
(--show all lists every node; -o json always holds them all).

The cluster comes from manifests (-f), or from a live cluster:
  kubesched explain pod default/web-0
reached as kubectl reaches it (--kubeconfig, else $KUBECONFIG, else
~/.kube/config, else in-cluster)
which lists the cluster's nodes and pods through the API: "why is my pod
pending?" without reading logs.

With -f, the pod is the one in --pod (a file; NAMESPACE/NAME of a pod in
the cluster files, one a workload creates included; or TYPE/NAME of a
workload, as kubectl logs takes it: deployment/web, sts/db, job/render,
in the namespace of -n, or in the one namespace that has it: the first
of its pods left without a node), else the pod annotated
kubesched.io/pending: "true" in the cluster, else the only pod there without
spec.nodeName.`,
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return nil
			case len(args) == 2 && args[0] == "pod" && strings.Count(args[1], "/") == 1:
				opts.LivePod = args[1]
				return nil
			}
			return fmt.Errorf("want no arguments (with -f) or 'pod NAMESPACE/NAME', got %q", args)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			shown, err := parseNodeShow("explain", show, opts.Output)
			if err != nil {
				return err
			}
			gcpace.StartingHeap(gcpace.DefaultStartingHeap) // a batch command: see gcpace
			cc, err := Setup(opts, registry)
			if err != nil {
				return err
			}
			var cluster *simcluster.Cluster
			var pod *v1.Pod
			if opts.LivePod != "" {
				cluster, pod, err = liveCluster(cmd.Context(), cc.ComponentConfig, opts.LivePod)
			} else {
				cluster, pod, err = manifestCluster(s, opts, cc.Config)
			}
			if err != nil {
				return err
			}
			pending := 0
			if opts.LivePod == "" {
				pending = questions.OtherPending(cluster, pod)
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
				append(cc.SchedulerOptions(), scheduler.WithPercentageOfNodesToScore(100))...)
			if err != nil {
				return err
			}
			rep, err := questions.Explain(cmd.Context(), w, pod)
			if err != nil {
				return fmt.Errorf("explaining pod %s/%s: %w", pod.Namespace, pod.Name, err)
			}
			questions.NoteOtherPending(rep, pending)
			questions.NoteGroup(rep, w, pod, false)
			return rep.WriteShow(s.out, opts.Output, shown)
		},
	}
	fss := &cliflag.NamedFlagSets{}
	opts.AddConfigFlags(fss)
	opts.AddClusterFlags(fss)
	opts.AddManifestFlags(fss, "table", "json")
	opts.AddPodFlag(fss.FlagSet("input and output"))
	fss.FlagSet("input and output").StringVar(&show, "show", "", "What the table lists (-o table): summary (the 20 best feasible nodes, the rejected ones folded by plugin and reasons) or all (every node). Default: all up to 50 nodes, summary past them.")
	addFlagSets(cmd, fss)
	return cmd
}

func manifestCluster(s streams, opts *options.Options, cfg *schedconfig.Config) (*simcluster.Cluster, *v1.Pod, error) {
	cluster, err := loading.LoadWith(opts.Files, s.in, loadOptions(cfg))
	if err != nil {
		return nil, nil, err
	}
	reportSkipped(s, cluster, cfg.Features)
	reportTimelineIgnored(s, cluster, "explain")
	if opts.PodFile == "" {
		pod, err := questions.FindPendingPod(cluster)
		if err != nil {
			return nil, nil, fmt.Errorf("%v: %w", opts.Files, err)
		}
		return cluster, pod, nil
	}
	if kind, name, ok := questions.WorkloadRef(opts.PodFile); ok {
		// -n, when given, is where to look; without it, any namespace
		// that alone has the workload.
		pod, err := questions.PodOfWorkload(cluster, kind, opts.Namespace, name)
		if err != nil {
			return nil, nil, fmt.Errorf("--pod: %w", err)
		}
		return cluster, pod, nil
	}
	if options.IsPodName(opts.PodFile) {
		pod, err := questions.PodByName(cluster, opts.PodFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--pod: %w", err)
		}
		return cluster, pod, nil
	}
	pod, err := loading.LoadPod(cluster, opts.PodFile, s.in, opts.Namespace)
	if err != nil {
		return nil, nil, fmt.Errorf("--pod: %w", err)
	}
	return cluster, pod, nil
}

// liveCluster lists the cluster through the API; the objects are already
// defaulted and admitted by the API server.
func liveCluster(ctx context.Context, cfg *configv1.KubeSchedulerConfiguration, target string) (*simcluster.Cluster, *v1.Pod, error) {
	var restCfg *rest.Config
	var err error
	if cfg.ClientConnection.Kubeconfig == "" {
		// A client command: kubectl's loading rules ($KUBECONFIG, then
		// ~/.kube/config), then in-cluster. The scheduler itself keeps
		// kube-scheduler's flags.
		restCfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, nil, fmt.Errorf("no --kubeconfig, and kubectl's configuration ($KUBECONFIG, ~/.kube/config, in-cluster) gives none: %w", err)
		}
	} else if restCfg, err = restConfig(cfg.ClientConnection); err != nil {
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(restCfg, "kubesched-explain"))
	if err != nil {
		return nil, nil, err
	}
	ns, name, _ := strings.Cut(target, "/")
	pod, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("pod %s: %w", target, err)
	}
	objs, err := kube.ListCluster(ctx, client)
	if err != nil {
		return nil, nil, err
	}
	c := &simcluster.Cluster{Nodes: objs.Nodes, Pods: objs.Pods, Namespaces: objs.Namespaces, Services: objs.Services,
		Others: objs.Others, Skipped: map[string]int{}, Sources: map[string]string{}}
	return c, pod, nil
}

// parseNodeShow reads the --show of a command whose table lists nodes
// (explain, capacity): summary or all; unset, the table decides by the
// cluster's size.
func parseNodeShow(command, show, output string) (report.ExplainShow, error) {
	shown := report.ExplainShow(show)
	switch shown {
	case report.ExplainShowAuto, report.ExplainShowSummary, report.ExplainShowAll:
	default:
		return "", fmt.Errorf("--show: Unsupported value: %q: supported values: \"summary\", \"all\"", show)
	}
	if shown != report.ExplainShowAuto && output != "table" {
		return "", fmt.Errorf("--show chooses what %s's table lists: not with -o %s", command, output)
	}
	return shown, nil
}
