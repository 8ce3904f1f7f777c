package scheduler

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/internal/extender"
	"github.com/kubesched/kubesched/internal/framework/runtime"
	"github.com/kubesched/kubesched/internal/metrics"
	"github.com/kubesched/kubesched/pkg/framework"
)

// Scheduler extenders, called where kube-scheduler v1.37.2 calls them
// (schedule_one.go): Filter after the Filter plugins (also on a nominated
// node), Prioritize beside Score, Bind before the Bind plugins; preemption
// asks them through Handle.Extenders.

// buildExtenders makes the configuration's extenders, the ignorable ones
// last, and hands the managed resources marked ignoredByScheduler to every
// profile's NodeResourcesFit as its ignoredResources (replacing what the
// profile set, as upstream's buildExtenders does).
func buildExtenders(cfg *configv1.KubeSchedulerConfiguration) ([]framework.Extender, error) {
	if len(cfg.Extenders) == 0 {
		return nil, nil
	}
	var out, ignorable []framework.Extender
	var ignored []string
	for i := range cfg.Extenders {
		e, err := extender.New(&cfg.Extenders[i])
		if err != nil {
			return nil, fmt.Errorf("couldn't build extenders: extenders[%d]: %w", i, err)
		}
		if e.IsIgnorable() {
			ignorable = append(ignorable, e)
		} else {
			out = append(out, e)
		}
		for _, r := range cfg.Extenders[i].ManagedResources {
			if r.IgnoredByScheduler {
				ignored = append(ignored, r.Name)
			}
		}
	}
	out = append(out, ignorable...)
	if len(ignored) == 0 {
		return out, nil
	}
	for i := range cfg.Profiles {
		found := false
		for k := range cfg.Profiles[i].PluginConfig {
			pc := &cfg.Profiles[i].PluginConfig[k]
			if pc.Name != "NodeResourcesFit" {
				continue
			}
			args, ok := pc.Args.Object.(*configv1.NodeResourcesFitArgs)
			if !ok {
				return nil, fmt.Errorf("couldn't build extenders: want args to be of type NodeResourcesFitArgs, got %T", pc.Args.Object)
			}
			args.IgnoredResources = append([]string(nil), ignored...)
			found = true
			break
		}
		if !found {
			return nil, fmt.Errorf("couldn't build extenders: can't find NodeResourcesFitArgs in plugin config")
		}
	}
	return out, nil
}

// hasExtenderFilters: some extender filters.
func (s *Scheduler) hasExtenderFilters() bool {
	for _, e := range s.extenders {
		if e.IsFilter() {
			return true
		}
	}
	return false
}

// hasScoring: some score plugin or prioritizing extender. Without scoring
// and without extender filters, the first feasible node is the answer and
// Filter stops there (upstream's findNodesThatPassFilters).
func (s *Scheduler) hasScoring(fwk *runtime.Framework) bool {
	if fwk.HasScorePlugins() {
		return true
	}
	for _, e := range s.extenders {
		if e.IsPrioritizer() {
			return true
		}
	}
	return false
}

// findNodesThatPassExtenders runs the interested extenders' Filter in
// turn, each on what the previous one left. Their rejections go into
// statuses (an unresolvable one wins over a resolvable one for the same
// node), named after the extender for explain. An error fails the cycle
// unless the extender is ignorable.
func (s *Scheduler) findNodesThatPassExtenders(ctx context.Context, fwk *runtime.Framework, state *framework.CycleState, pod *v1.Pod, feasible []*framework.NodeInfo, statuses *framework.NodeToStatus) ([]*framework.NodeInfo, error) {
	for _, e := range s.extenders {
		if len(feasible) == 0 {
			break
		}
		if !e.IsInterested(pod) {
			continue
		}
		passed, failed, unresolvable, err := e.Filter(pod, feasible)
		if err != nil {
			if e.IsIgnorable() {
				klog.FromContext(ctx).Info("Skipping extender as it returned error and has ignorable flag set", "extender", e.Name(), "err", err)
				continue
			}
			return nil, err
		}
		for name, msg := range unresolvable {
			statuses.Set(name, framework.NewStatus(framework.UnschedulableAndUnresolvable, msg).WithPlugin(e.Name()))
		}
		for name, msg := range failed {
			if _, ok := unresolvable[name]; ok {
				continue
			}
			statuses.Set(name, framework.NewStatus(framework.Unschedulable, msg).WithPlugin(e.Name()))
		}
		for _, ni := range passed {
			if ni.Index() < 0 {
				// Node objects of the extender's own: the cycle's cache
				// entries are the snapshot's nodes, not these.
				fwk.DetachCycleCache(state)
				break
			}
		}
		feasible = passed
	}
	return feasible, nil
}

// filterWithExtenders runs the extenders on the plugins' feasible nodes
// and records a narrowing as the Extender plugin's rejection, which any
// cluster event may undo (upstream: the pod's UnschedulablePlugins gets
// framework.ExtenderName).
func (s *Scheduler) filterWithExtenders(ctx context.Context, fwk *runtime.Framework, state *framework.CycleState, pod *v1.Pod, feasible []*framework.NodeInfo, diagnosis *framework.Diagnosis) ([]*framework.NodeInfo, error) {
	if len(s.extenders) == 0 {
		return feasible, nil
	}
	after, err := s.findNodesThatPassExtenders(ctx, fwk, state, pod, feasible, diagnosis.NodeToStatus)
	if err != nil {
		return nil, err
	}
	if len(after) != len(feasible) {
		diagnosis.UnschedulablePlugins.Insert(framework.ExtenderName)
	}
	return after, nil
}

// extenderScore is one extender's weighted score of one node.
type extenderScore struct {
	extender string
	score    int64
}

// extenderScores asks every interested extender to prioritize nodes, in
// parallel; an extender's error only loses its scores. A score counts
// score × weight × MaxNodeScore/MaxExtenderPriority; nodes an extender
// does not name get nothing from it.
func (s *Scheduler) extenderScores(ctx context.Context, pod *v1.Pod, nodes []*framework.NodeInfo) map[string][]extenderScore {
	out := map[string][]extenderScore{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, e := range s.extenders {
		if !e.IsInterested(pod) {
			continue
		}
		wg.Add(1)
		go func(e framework.Extender) {
			metrics.Goroutines.WithLabelValues(metrics.PrioritizingExtender).Inc()
			defer func() {
				metrics.Goroutines.WithLabelValues(metrics.PrioritizingExtender).Dec()
				wg.Done()
			}()
			list, weight, err := e.Prioritize(pod, nodes)
			if err != nil {
				klog.FromContext(ctx).V(5).Info("Failed to run extender's priority function. No score given by this extender.", "error", err, "pod", klog.KObj(pod), "extender", e.Name())
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, hp := range *list {
				out[hp.Host] = append(out[hp.Host], extenderScore{e.Name(), hp.Score * weight * (framework.MaxNodeScore / extenderv1.MaxExtenderPriority)})
			}
		}(e)
	}
	wg.Wait()
	return out
}

// addExtenderScores adds the extenders' scores to the plugins' totals
// (and to the per-plugin scores when they are kept).
func (s *Scheduler) addExtenderScores(ctx context.Context, pod *v1.Pod, nodes []*framework.NodeInfo, scores []framework.NodePluginScores) {
	if len(s.extenders) == 0 || len(nodes) == 0 {
		return
	}
	byNode := s.extenderScores(ctx, pod, nodes)
	for i := range scores {
		for _, es := range byNode[scores[i].Name] {
			scores[i].TotalScore += es.score
			if scores[i].Scores != nil {
				scores[i].Scores = append(scores[i].Scores, framework.PluginScore{Name: es.extender, Score: es.score})
			}
		}
	}
}

// extendersBinding lets the first interested binding extender bind the
// pod; an ignorable one's error passes the turn on. bound says an
// extender took the binding (err is its outcome).
func (s *Scheduler) extendersBinding(ctx context.Context, pod *v1.Pod, node string) (bound bool, err error) {
	if s.noExtenderBinding {
		return false, nil
	}
	for _, e := range s.extenders {
		if !e.IsBinder() || !e.IsInterested(pod) {
			continue
		}
		err := e.Bind(&v1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
			Target:     v1.ObjectReference{Kind: "Node", Name: node},
		})
		if err != nil && e.IsIgnorable() {
			klog.FromContext(ctx).Info("Skipping extender in bind as it returned error and has ignorable flag set", "extender", e.Name(), "err", err)
			continue
		}
		return true, err
	}
	return false, nil
}
