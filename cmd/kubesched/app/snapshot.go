package app

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubesched/kubesched/internal/snapshot"
)

func newSnapshotCommand(s streams) *cobra.Command {
	var kubeconfig, output string
	cmd := &cobra.Command{
		Use:   "snapshot [--kubeconfig FILE] [-o FILE]",
		Short: "Write a live cluster as manifests simulate, explain and capacity read",
		Long: `snapshot lists a cluster through the API and writes, as multi-document YAML,
what scheduling reads: Nodes, the running and pending Pods, Namespaces,
PriorityClasses, Services, ReplicaSets, StatefulSets, ReplicationControllers,
PodDisruptionBudgets, storage objects (PersistentVolumeClaims,
PersistentVolumes, StorageClasses, CSINodes, CSIDrivers, VolumeAttachments,
CSIStorageCapacities), and the Deployments, Jobs and DaemonSets that own
pending pods.

It never reads Secrets or ConfigMaps, and drops what a simulation does not
need and must not leak: managedFields, annotations other than the ones
scheduling reads, containers' env, envFrom, command and args, and pods'
status beyond phase, conditions and resources.

The cluster is reached as kubectl reaches it: --kubeconfig, else
$KUBECONFIG, else ~/.kube/config, else in-cluster.

  kubesched snapshot -o cluster.yaml
  kubesched simulate -f cluster.yaml -f new-deployment.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			if kubeconfig != "" {
				rules.ExplicitPath = kubeconfig
			}
			restCfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
			if err != nil {
				return fmt.Errorf("no cluster to snapshot: --kubeconfig, $KUBECONFIG, ~/.kube/config and in-cluster give none: %w", err)
			}
			client, err := kubernetes.NewForConfig(rest.AddUserAgent(restCfg, "kubesched-snapshot"))
			if err != nil {
				return err
			}
			snap, err := snapshot.Take(cmd.Context(), client)
			if err != nil {
				return fmt.Errorf("snapshot of %s: %w", restCfg.Host, err)
			}
			header := fmt.Sprintf("# kubesched snapshot of %s at %s\n", restCfg.Host, time.Now().UTC().Format(time.RFC3339))
			out := s.out
			if output != "" && output != "-" {
				f, err := os.Create(output)
				if err != nil {
					return fmt.Errorf("-o: %w", err)
				}
				defer f.Close()
				out = f
			}
			if err := snap.Write(out, header); err != nil {
				return fmt.Errorf("-o %s: %w", output, err)
			}
			var counts []string
			for kind, n := range snap.Counts {
				counts = append(counts, fmt.Sprintf("%d %s", n, kind))
			}
			sort.Strings(counts)
			fmt.Fprintf(s.errOut, "wrote %s\n", strings.Join(counts, ", "))
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "The kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config, in-cluster).")
	cmd.Flags().StringVarP(&output, "output", "o", "", "The file to write (default: standard output).")
	return cmd
}
