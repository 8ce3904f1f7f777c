// Package options holds the command-line options of kubesched's commands,
// their validation, and the step that turns them into a Config.
package options

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/sets"
	cliflag "k8s.io/component-base/cli/flag"
	configv1 "k8s.io/kube-scheduler/config/v1"

	schedconfig "github.com/kubesched/kubesched/cmd/kubesched/app/config"
	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/framework/runtime"
)

// Options are the flags shared by every command, plus each command's own.
type Options struct {
	// ConfigFile is a KubeSchedulerConfiguration; empty means defaults.
	ConfigFile string
	// Kubeconfig is for the commands that talk to a cluster.
	Kubeconfig string
	// Files are manifests (simulate, explain).
	Files []string
	// PodFile is explain's pod.
	PodFile string
	// Output is table, json or yaml.
	Output string
	// Seed seeds tie-breaking.
	Seed int64

	outputs []string
}

// NewOptions returns options with defaults.
func NewOptions() *Options {
	return &Options{Output: "table", Seed: 1}
}

// AddConfigFlags adds the flags every command shares.
func (o *Options) AddConfigFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("misc")
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "The path to a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1). Without it, upstream's defaults.")
}

// AddClusterFlags adds --kubeconfig.
func (o *Options) AddClusterFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("cluster")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file; in-cluster config when empty.")
}

// AddManifestFlags adds -f, -o and --seed; outputs lists the formats allowed.
func (o *Options) AddManifestFlags(fss *cliflag.NamedFlagSets, outputs ...string) {
	o.outputs = outputs
	fs := fss.FlagSet("input and output")
	fs.StringArrayVarP(&o.Files, "filename", "f", nil, "A manifest file, or a folder of .yaml/.yml/.json files (repeatable). Multi-document YAML and kind: List are read.")
	fs.StringVarP(&o.Output, "output", "o", o.Output, fmt.Sprintf("Output format: one of %v.", outputs))
	fs.Int64Var(&o.Seed, "seed", o.Seed, "Seed of the random source that breaks ties between equally scored nodes.")
}

// AddPodFlag adds explain's --pod.
func (o *Options) AddPodFlag(fs *pflag.FlagSet) {
	fs.StringVar(&o.PodFile, "pod", "", "A file holding the pod to explain (default: the pod annotated kubesched.io/pending: \"true\", else the only pod without spec.nodeName).")
}

// Validate checks the options themselves and returns every problem.
func (o *Options) Validate() []error {
	var errs []error
	if o.outputs != nil {
		if len(o.Files) == 0 {
			errs = append(errs, fmt.Errorf("-f/--filename: at least one manifest file or folder is required"))
		}
		ok := false
		for _, f := range o.outputs {
			ok = ok || f == o.Output
		}
		if !ok {
			errs = append(errs, fmt.Errorf("-o/--output: %q is not one of %v", o.Output, o.outputs))
		}
	}
	for _, f := range o.Files {
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Errorf("-f/--filename: %w", err))
		}
	}
	if o.PodFile != "" {
		if _, err := os.Stat(o.PodFile); err != nil {
			errs = append(errs, fmt.Errorf("--pod: %w", err))
		}
	}
	if o.ConfigFile != "" {
		if _, err := os.Stat(o.ConfigFile); err != nil {
			errs = append(errs, fmt.Errorf("--config: %w", err))
		}
	}
	return errs
}

// Config loads, defaults and validates the scheduler configuration.
func (o *Options) Config(registry runtime.Registry) (*schedconfig.Config, error) {
	cfg := &configv1.KubeSchedulerConfiguration{}
	if o.ConfigFile != "" {
		var err error
		if cfg, err = config.LoadFile(o.ConfigFile); err != nil {
			return nil, err
		}
	}
	known := sets.New[string]()
	for name := range registry {
		known.Insert(name)
	}
	config.SetDefaults(cfg, known)
	if errs := config.Validate(cfg, known); len(errs) > 0 {
		where := "the default configuration"
		if o.ConfigFile != "" {
			where = o.ConfigFile
		}
		msg := fmt.Sprintf("%s: invalid KubeSchedulerConfiguration (%d error(s)):", where, len(errs))
		for _, e := range errs {
			msg += "\n  " + e.Error()
		}
		return nil, errors.New(msg)
	}
	return &schedconfig.Config{ComponentConfig: cfg, Registry: registry, Seed: o.Seed}, nil
}
