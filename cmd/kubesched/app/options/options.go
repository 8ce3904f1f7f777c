// Package options holds the command-line options of kubesched's commands,
// their validation, and the step that turns them into a Config.
package options

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	cliflag "k8s.io/component-base/cli/flag"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/component-base/featuregate"
	configv1 "k8s.io/kube-scheduler/config/v1"

	schedconfig "github.com/kubesched/kubesched/cmd/kubesched/app/config"
	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/features"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/pkg/plugins/gangscheduling"
	"github.com/kubesched/kubesched/pkg/plugins/podgrouppodscount"
	"github.com/kubesched/kubesched/pkg/plugins/topologyaware"
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
	// LivePod is explain's "pod NAMESPACE/NAME" on a live cluster.
	LivePod string
	// Output is table, json or yaml.
	Output string
	// Seed seeds tie-breaking.
	Seed int64
	// Features are the feature gates (--feature-gates).
	Features featuregate.MutableFeatureGate
	// Namespace is -n/--namespace: the namespace of the manifests'
	// namespaced objects that name none.
	Namespace string
	// DefaultStorageClass is --default-storage-class.
	DefaultStorageClass string
	// HPAMax is --hpa-max.
	HPAMax bool

	// Serving: HTTPS with delegated authentication and authorization, as
	// kube-scheduler serves (--bind-address, --secure-port 10259, a
	// self-signed certificate unless --tls-cert-file is given), and plain
	// HTTP on HTTPAddress (empty disables; meant for loopback).
	SecureServing  *apiserveroptions.SecureServingOptions
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
	HTTPAddress    string

	// LeaderElection overrides the config file's leaderElection block for
	// the flags that were set, as kube-scheduler's flags do.
	LeaderElection componentbaseconfigv1alpha1.LeaderElectionConfiguration
	leFlags        *pflag.FlagSet

	outputs []string
}

// NewOptions returns options with defaults.
func NewOptions() *Options {
	return &Options{Output: "table", Seed: 1, Features: features.New()}
}

// AddConfigFlags adds the flags every command shares.
func (o *Options) AddConfigFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("misc")
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "The path to a KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1). Without it, upstream's defaults.")
	o.Features.AddFlag(fss.FlagSet("feature gate"))
}

// AddClusterFlags adds --kubeconfig.
func (o *Options) AddClusterFlags(fss *cliflag.NamedFlagSets) {
	fs := fss.FlagSet("cluster")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file (overrides clientConnection.kubeconfig); in-cluster config when neither is set.")
}

// AddServerFlags adds the flags of the scheduler's own run: serving and
// leader election, with kube-scheduler's names and defaults.
func (o *Options) AddServerFlags(fss *cliflag.NamedFlagSets) {
	o.SecureServing = apiserveroptions.NewSecureServingOptions()
	o.SecureServing.BindPort = 10259
	o.SecureServing.ServerCert.CertDirectory = ""
	o.SecureServing.ServerCert.PairName = "kubesched"
	o.Authentication = apiserveroptions.NewDelegatingAuthenticationOptions()
	o.Authentication.TolerateInClusterLookupFailure = true
	o.Authentication.RemoteKubeConfigFileOptional = true
	o.Authorization = apiserveroptions.NewDelegatingAuthorizationOptions()
	o.Authorization.RemoteKubeConfigFileOptional = true
	o.SecureServing.AddFlags(fss.FlagSet("secure serving"))
	o.Authentication.AddFlags(fss.FlagSet("authentication"))
	o.Authorization.AddFlags(fss.FlagSet("authorization"))
	fs := fss.FlagSet("insecure serving")
	fs.StringVar(&o.HTTPAddress, "http-address", "", "Also serve /healthz, /livez, /readyz and /metrics over plain HTTP without authentication on this address, e.g. 127.0.0.1:10251 (for local use; keep it on loopback).")
	le := fss.FlagSet("leader election")
	o.leFlags = le
	le.BoolVar(ptrBool(&o.LeaderElection.LeaderElect), "leader-elect", true, "Start a leader election client and gain leadership before scheduling.")
	le.DurationVar(&o.LeaderElection.LeaseDuration.Duration, "leader-elect-lease-duration", 15*time.Second, "The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership.")
	le.DurationVar(&o.LeaderElection.RenewDeadline.Duration, "leader-elect-renew-deadline", 10*time.Second, "The interval between attempts by the acting master to renew a leadership slot before it stops leading.")
	le.DurationVar(&o.LeaderElection.RetryPeriod.Duration, "leader-elect-retry-period", 2*time.Second, "The duration the clients should wait between attempting acquisition and renewal of a leadership.")
	le.StringVar(&o.LeaderElection.ResourceNamespace, "leader-elect-resource-namespace", "kube-system", "The namespace of the resource object used for locking during leader election.")
	le.StringVar(&o.LeaderElection.ResourceName, "leader-elect-resource-name", "kube-scheduler", "The name of the resource object used for locking during leader election.")
}

func ptrBool(p **bool) *bool {
	if *p == nil {
		*p = new(bool)
	}
	return *p
}

// applyOverrides writes the flags the user set over the configuration.
func (o *Options) applyOverrides(cfg *configv1.KubeSchedulerConfiguration) {
	if o.Kubeconfig != "" {
		cfg.ClientConnection.Kubeconfig = o.Kubeconfig
	}
	if o.leFlags == nil {
		return
	}
	le, src := &cfg.LeaderElection, &o.LeaderElection
	o.leFlags.Visit(func(f *pflag.Flag) {
		switch f.Name {
		case "leader-elect":
			v := *src.LeaderElect
			le.LeaderElect = &v
		case "leader-elect-lease-duration":
			le.LeaseDuration = src.LeaseDuration
		case "leader-elect-renew-deadline":
			le.RenewDeadline = src.RenewDeadline
		case "leader-elect-retry-period":
			le.RetryPeriod = src.RetryPeriod
		case "leader-elect-resource-namespace":
			le.ResourceNamespace = src.ResourceNamespace
		case "leader-elect-resource-name":
			le.ResourceName = src.ResourceName
		}
	})
}

// AddManifestFlags adds -f, -o and --seed; outputs lists the formats allowed.
func (o *Options) AddManifestFlags(fss *cliflag.NamedFlagSets, outputs ...string) {
	o.outputs = outputs
	fs := fss.FlagSet("input and output")
	fs.StringArrayVarP(&o.Files, "filename", "f", nil, "A manifest file, a folder of .yaml/.yml/.json files, or - for the standard input (repeatable). Multi-document YAML and kind: List are read.")
	fs.StringVarP(&o.Output, "output", "o", o.Output, fmt.Sprintf("Output format: one of %v.", outputs))
	fs.Int64Var(&o.Seed, "seed", o.Seed, "Seed of the random source that breaks ties between equally scored nodes.")
	fs.StringVarP(&o.Namespace, "namespace", "n", "", "The namespace of the manifests' namespaced objects that name none, as kubectl apply -n (default: default).")
	fs.StringVar(&o.DefaultStorageClass, "default-storage-class", "", "The StorageClass given to PersistentVolumeClaims without one when no StorageClass in the manifests is marked storageclass.kubernetes.io/is-default-class, as the cluster's default class would be.")
	fs.BoolVar(&o.HPAMax, "hpa-max", false, "Scale every HorizontalPodAutoscaler's target to its maxReplicas: the what-if of every HPA scaled out (default: each target's replicas within its HPA's bounds, as the HPA controller keeps them).")
}

// IsPodName reports whether --pod names a pod (NAMESPACE/NAME) rather than
// a file: it has one slash and no such file exists.
func IsPodName(s string) bool {
	if strings.Count(s, "/") != 1 || strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") {
		return false
	}
	_, err := os.Stat(s)
	return err != nil
}

// AddPodFlag adds explain's --pod.
func (o *Options) AddPodFlag(fs *pflag.FlagSet) {
	fs.StringVar(&o.PodFile, "pod", "", "A file holding the pod to explain, NAMESPACE/NAME of a pod in the cluster files, or TYPE/NAME of a workload there (deployment/web, sts/db; namespace from -n) (default: the pod annotated kubesched.io/pending: \"true\", else the only pod without spec.nodeName).")
}

// Validate checks the options themselves and returns every problem.
func (o *Options) Validate() []error {
	var errs []error
	if o.Namespace != "" {
		// The API server takes only a DNS label as a namespace.
		for _, msg := range validation.IsDNS1123Label(o.Namespace) {
			errs = append(errs, fmt.Errorf("-n/--namespace: Invalid value: %q: %s", o.Namespace, msg))
		}
	}
	if o.outputs != nil {
		if len(o.Files) > 0 && o.LivePod != "" {
			errs = append(errs, fmt.Errorf("-f/--filename and 'pod NAMESPACE/NAME' exclude each other: explain reads manifests or a live cluster"))
		}
		if len(o.Files) == 0 && o.LivePod == "" {
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
		if f == "-" {
			continue // the standard input
		}
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Errorf("-f/--filename: %w", err))
		}
	}
	if o.SecureServing != nil {
		errs = append(errs, o.SecureServing.Validate()...)
		errs = append(errs, o.Authentication.Validate()...)
		errs = append(errs, o.Authorization.Validate()...)
	}
	if o.PodFile == "-" && slices.Contains(o.Files, "-") {
		errs = append(errs, fmt.Errorf("--pod -: the standard input is already read by -f -"))
	} else if o.PodFile != "" && o.PodFile != "-" && !IsPodName(o.PodFile) {
		if _, err := os.Stat(o.PodFile); err != nil {
			errs = append(errs, fmt.Errorf("--pod: %w", err))
		}
	}
	if o.ConfigFile != "" {
		if _, err := os.Stat(o.ConfigFile); err != nil {
			errs = append(errs, fmt.Errorf("--config: %w", err))
		}
	}
	if o.Features != nil {
		if err := features.Unbuilt(o.Features); err != nil {
			errs = append(errs, err)
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
	o.applyOverrides(cfg)
	if o.Features != nil && o.Features.Enabled(features.GenericWorkload) {
		// Pod groups' plugin exists only with its gate, as the other
		// plugins upstream adds to the default profile with a gate.
		registry[gangscheduling.Name] = gangscheduling.New
		if o.Features.Enabled(features.TopologyAwareWorkloadScheduling) {
			registry[topologyaware.Name] = topologyaware.New
			registry[podgrouppodscount.Name] = podgrouppodscount.New
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
	return &schedconfig.Config{ComponentConfig: cfg, Registry: registry, Seed: o.Seed, Features: o.Features,
		Namespace: o.Namespace, DefaultStorageClass: o.DefaultStorageClass, HPAMax: o.HPAMax}, nil
}
