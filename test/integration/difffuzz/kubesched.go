package difffuzz

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator"
	simcluster "github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// noPostFilter is the default profile with PostFilter off: explain then
// reports the FitError without preemption's part (as the oracle does) and
// never evicts from the world kept across a sequence.
const noPostFilter = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    postFilter:
      disabled:
      - name: "*"
`

// Kubesched is kubesched's side: one simulator World, built from a
// scenario file as `kubesched explain` loads it, kept across the pods of a
// sequence so the plugins' per-node memos and the equivalence cache carry
// over from pod to pod.
type Kubesched struct {
	cluster *simcluster.Cluster
	world   *simulator.World
}

// NewKubesched loads a scenario's YAML (without a pending pod) and builds
// the world, percentageOfNodesToScore 100.
func NewKubesched(scenarioYAML string) (*Kubesched, error) {
	c, err := loading.LoadFrom([]string{"-"}, strings.NewReader(scenarioYAML))
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	cfg, err := config.Decode([]byte(noPostFilter))
	if err != nil {
		return nil, err
	}
	known := scheduler.Known(plugins.NewInTreeRegistry())
	config.SetDefaults(cfg, known)
	if errs := config.Validate(cfg, known); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	w, err := simulator.NewWorld(context.Background(), c, cfg, plugins.NewInTreeRegistry(), 1, scheduler.WithPercentageOfNodesToScore(100))
	if err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	return &Kubesched{cluster: c, world: w}, nil
}

// LoadPod reads a pod as `explain --pod FILE` does (kubesched's defaults).
func (k *Kubesched) LoadPod(p *v1.Pod) (*v1.Pod, error) {
	return loading.LoadPod(k.cluster, "-", strings.NewReader(PodYAML(p)), "")
}

// Explain answers for a pending pod loaded by LoadPod.
func (k *Kubesched) Explain(p *v1.Pod) (*Answer, error) {
	rep, err := questions.Explain(context.Background(), k.world, p)
	if err != nil {
		return nil, err
	}
	a := &Answer{Pod: rep.Pod, FeasibleCount: rep.FeasibleCount, BestNodes: rep.BestNodes, Message: rep.Message, Nodes: []NodeAnswer{}}
	if a.BestNodes == nil {
		a.BestNodes = []string{}
	}
	for _, n := range rep.Nodes {
		a.Nodes = append(a.Nodes, NodeAnswer{Name: n.Name, Feasible: n.Feasible, Plugin: n.Plugin, Reasons: n.Reasons, Score: n.Score, Scores: n.Scores})
	}
	return a, nil
}

// Bind adds the pod, placed on node, to the world as a running pod.
func (k *Kubesched) Bind(p *v1.Pod, node string) error {
	b := p.DeepCopy()
	b.Spec.NodeName = node
	if err := k.world.Store.AddPod(b); err != nil {
		return err
	}
	k.world.Store.Flush()
	return nil
}
