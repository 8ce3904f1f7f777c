package questions

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// ExplainLastAttempt explains the watched pod (World.WatchPod) in the
// state its last attempt saw: every node evaluated, as explain does (the
// world's configuration, percentageOfNodesToScore 100).
func ExplainLastAttempt(ctx context.Context, w *simulator.World) (*report.ExplainReport, error) {
	key, s := w.LastSeen()
	if s == nil {
		why := "it is not in the simulation"
		switch {
		case createdAt(w, key):
			why = "it never left the queue (scheduling gates, or another scheduler's pod)"
		case w.Waiting(key):
			why = "its StatefulSet had not created it yet"
		}
		return nil, fmt.Errorf("--explain %s: the scheduler never attempted the pod: %s", key, why)
	}
	r, err := explainSeen(ctx, w, s)
	if err != nil {
		return nil, err
	}
	last := s.At
	r.LastAttempt = &last
	NoteGroup(r, w, s.Pod, true)
	return r, nil
}

// explainSeen explains a captured pod in a throwaway world of the
// captured nodes and pods and the cluster's other objects, made as this
// world was.
func explainSeen(ctx context.Context, w *simulator.World, s *simulator.Seen) (*report.ExplainReport, error) {
	c := w.Cluster
	at := &cluster.Cluster{Nodes: s.Nodes, Pods: s.Pods, Namespaces: c.Namespaces, PriorityClasses: c.PriorityClasses, Services: c.Services,
		ReplicaSets: c.ReplicaSets, StatefulSets: c.StatefulSets, RCs: c.RCs, Others: w.OthersNow(), Sources: c.Sources, WorkloadOf: map[string]int{}}
	ew, err := w.Like(ctx, at, scheduler.WithPercentageOfNodesToScore(100))
	if err != nil {
		return nil, err
	}
	return ExplainNew(ctx, ew, s.Pod)
}

// explainNow explains a pending pod against the world as it is, in a
// throwaway world with the same configuration.
func explainNow(ctx context.Context, w *simulator.World, pod *v1.Pod) (*report.ExplainReport, error) {
	return explainSeen(ctx, w, &simulator.Seen{Pod: pod.DeepCopy(), Nodes: w.Store.Nodes(), Pods: boundPods(w)})
}

func boundPods(w *simulator.World) []*v1.Pod {
	var bound []*v1.Pod
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		}
	}
	return bound
}

func createdAt(w *simulator.World, key string) bool {
	for _, p := range append(w.Pending, w.Foreign...) {
		if cluster.PodKey(p) == key {
			return true
		}
	}
	return false
}

// ExplainPending explains the report's first pending pods (at most
// report.ExplainLimit), each against the cluster as the simulation left
// it, for the HTML report.
func ExplainPending(ctx context.Context, w *simulator.World, r *report.Report) error {
	r.Explanations = map[string]*report.ExplainReport{}
	nodes := w.Store.Nodes()
	bound := boundPods(w)
	for _, pr := range r.Pods {
		if len(r.Explanations) >= report.ExplainLimit {
			break
		}
		if pr.Status != report.StatusUnschedulable {
			continue
		}
		pod, ok := w.Store.GetPod(pr.Namespace, pr.Name)
		if !ok {
			continue
		}
		rep, err := explainSeen(ctx, w, &simulator.Seen{Pod: pod.DeepCopy(), Nodes: nodes, Pods: bound})
		if err != nil {
			return fmt.Errorf("explaining %s/%s: %w", pr.Namespace, pr.Name, err)
		}
		r.Explanations[pr.Namespace+"/"+pr.Name] = rep
	}
	return nil
}
