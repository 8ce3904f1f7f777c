package plannerfuzz

import (
	"bytes"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// Env is how a case's cluster is loaded and simulated: as the command
// does, from a manifest of the objects (read as the standard input would
// be), with the default configuration and the in-tree plugins, seed 1.
// Load returns a new cluster at each call and is safe for concurrent use,
// as CheapestNodes needs.
type Env struct {
	Load     func() (*cluster.Cluster, error)
	NewWorld func(*cluster.Cluster) (*simulator.World, error)
}

// NewEnv writes the objects as a manifest and returns its Env.
func NewEnv(objs []runtime.Object) (*Env, error) {
	manifest, err := Manifest(objs)
	if err != nil {
		return nil, err
	}
	docs := loading.NewDocuments()
	load := func() (*cluster.Cluster, error) {
		return loading.LoadWith([]string{"-"}, bytes.NewReader(manifest), loading.Options{Documents: docs})
	}
	newWorld := func(c *cluster.Cluster) (*simulator.World, error) {
		cfg, err := defaultConfig()
		if err != nil {
			return nil, err
		}
		return simulator.NewWorld(context.Background(), c, cfg, plugins.NewInTreeRegistry(), 1)
	}
	return &Env{Load: load, NewWorld: newWorld}, nil
}

// Manifest writes objects as the documents of one YAML file, with their
// kinds, as a user would.
func Manifest(objs []runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	for _, obj := range objs {
		if obj.GetObjectKind().GroupVersionKind().Empty() {
			gvks, _, err := scheme.Scheme.ObjectKinds(obj)
			if err != nil {
				return nil, err
			}
			obj = obj.DeepCopyObject()
			obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		}
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

// defaultConfig is the default KubeSchedulerConfiguration, validated; a
// new one per world (a world may keep what it is given).
func defaultConfig() (*configv1.KubeSchedulerConfiguration, error) {
	cfg := &configv1.KubeSchedulerConfiguration{}
	known := scheduler.Known(plugins.NewInTreeRegistry())
	config.SetDefaults(cfg, known)
	if errs := config.Validate(cfg, known); len(errs) > 0 {
		return nil, fmt.Errorf("the default configuration: %w", errs.ToAggregate())
	}
	return cfg, nil
}
