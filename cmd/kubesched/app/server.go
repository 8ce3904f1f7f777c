// Package app builds kubesched's Cobra commands: the root command (the
// scheduler against a cluster), simulate, explain, capacity, snapshot and
// version.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/klog/v2"

	schedconfig "github.com/kubesched/kubesched/cmd/kubesched/app/config"
	"github.com/kubesched/kubesched/cmd/kubesched/app/options"
	fwkruntime "github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// Version is set at build time with -ldflags "-X ...app.Version=v1.2.3".
var Version = "v0.1.0-dev"

// Option adds to the command, e.g. an out-of-tree plugin.
type Option func(fwkruntime.Registry)

// WithPlugin registers an out-of-tree plugin, so another binary can build
// kubesched with its own plugins without forking it.
func WithPlugin(name string, factory framework.PluginFactory) Option {
	return func(r fwkruntime.Registry) { r[name] = factory }
}

type streams struct {
	out, errOut io.Writer
	in          io.Reader // -f -
}

// NewCommand returns the kubesched command tree.
func NewCommand(registryOptions ...Option) *cobra.Command {
	return newCommand(streams{out: os.Stdout, errOut: os.Stderr, in: os.Stdin}, registryOptions...)
}

func newCommand(s streams, registryOptions ...Option) *cobra.Command {
	registry := plugins.NewInTreeRegistry()
	for _, o := range registryOptions {
		o(registry)
	}
	opts := options.NewOptions()
	cmd := &cobra.Command{
		Use:   "kubesched",
		Short: "kubesched schedules pods: a kube-scheduler compatible scheduler, simulator and explainer",
		Long: `kubesched is a Kubernetes pod scheduler with kube-scheduler's architecture:
it reads the same KubeSchedulerConfiguration, runs the same plugins with
upstream's defaults and binds through the same API. Its commands run the same
scheduling core on manifests, without a cluster:

  kubesched simulate -f examples/cluster.yaml
  kubesched explain -f examples/cluster.yaml --pod examples/pending-pod.yaml
  kubesched capacity -f examples/cluster.yaml --pod examples/pending-pod.yaml
  kubesched snapshot | kubesched capacity -f - --workload examples/capacity-workload.yaml

Without a command, kubesched runs against a cluster as kube-scheduler does
(kubesched --config FILE), with the flags below.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if errs := opts.Validate(); len(errs) > 0 {
				return errors.Join(errs...)
			}
			cc, err := Setup(opts, registry)
			if err != nil {
				return err
			}
			return runScheduler(cmd.Context(), cc, opts)
		},
	}
	cmd.SetOut(s.out)
	cmd.SetErr(s.errOut)
	fss := &cliflag.NamedFlagSets{}
	opts.AddConfigFlags(fss)
	opts.AddClusterFlags(fss)
	opts.AddServerFlags(fss)
	addFlagSets(cmd, fss)
	addKlogFlags(cmd)
	commands := []*cobra.Command{newSimulateCommand(s, registry), newExplainCommand(s, registry), newCapacityCommand(s, registry), newConsolidateCommand(s, registry), newSnapshotCommand(s), newVersionCommand(s)}
	cmd.AddCommand(commands...)
	setRootHelp(cmd, commands, *fss)
	return cmd
}

// Setup is the pipeline every command runs: Validate (all errors at once),
// then Config (load, default, validate the configuration), then Complete.
func Setup(opts *options.Options, registry fwkruntime.Registry) (schedconfig.CompletedConfig, error) {
	if errs := opts.Validate(); len(errs) > 0 {
		return schedconfig.CompletedConfig{}, errors.Join(errs...)
	}
	cfg, err := opts.Config(registry)
	if err != nil {
		return schedconfig.CompletedConfig{}, err
	}
	return cfg.Complete(), nil
}

func addFlagSets(cmd *cobra.Command, fss *cliflag.NamedFlagSets) {
	for _, n := range fss.Order {
		cmd.Flags().AddFlagSet(fss.FlagSets[n])
	}
}

func addKlogFlags(cmd *cobra.Command) {
	gfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gfs)
	v := gfs.Lookup("v")
	cmd.PersistentFlags().AddGoFlag(v)
	cmd.PersistentFlags().Lookup("v").Shorthand = "v"
}

func newVersionCommand(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(s.out, "kubesched %s (%s, %s/%s; KubeSchedulerConfiguration kubescheduler.config.k8s.io/v1, kube-scheduler v1.37 semantics)\n",
				Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

// Run executes the command and returns the process exit code; errors are
// printed once, on stderr.
func Run(ctx context.Context, cmd *cobra.Command, args []string) int {
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "Error: "+strings.TrimSpace(err.Error()))
		return 1
	}
	return 0
}
