package simulator

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/scheduler"
)

// LastAttempt is when and how a pod's last scheduling attempt ended,
// as simulate --explain reports it.
type LastAttempt struct {
	T       string `json:"t"`
	Attempt int    `json:"attempt"`
	Result  string `json:"result"`
	Node    string `json:"node,omitempty"`
}

// seen is the world as one attempt of the watched pod saw it: the nodes,
// the bound pods (preemption's victims of that attempt put back) and the
// pod itself.
type seen struct {
	at    LastAttempt
	pod   *v1.Pod
	nodes []*v1.Node
	pods  []*v1.Pod
}

// WatchPod makes the world remember the state each scheduling attempt of
// pod namespace/name saw, for ExplainLastAttempt. Call it before Run.
func (w *World) WatchPod(key string) { w.watch = key }

// capture records the state an attempt of the watched pod saw; victims
// are the pods the attempt evicted.
func (w *World) capture(a scheduler.Attempt, line LastAttempt, victims []string) {
	s := &seen{at: line, pod: a.Pod.DeepCopy(), nodes: w.Store.Nodes()}
	s.pod.Spec.NodeName = ""
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName != "" && podKey(p) != w.watch {
			s.pods = append(s.pods, p)
		}
	}
	for _, k := range victims {
		if ev, ok := w.Store.Evicted[k]; ok && ev.Pod != nil {
			s.pods = append(s.pods, ev.Pod)
		}
	}
	w.lastSeen = s
}

// ExplainLastAttempt explains the watched pod in the state its last
// attempt saw: every node evaluated, as explain does (the world's
// configuration, percentageOfNodesToScore 100).
func (w *World) ExplainLastAttempt(ctx context.Context) (*ExplainReport, error) {
	s := w.lastSeen
	if s == nil {
		why := "it is not in the simulation"
		switch {
		case w.createdAt(w.watch):
			why = "it never left the queue (scheduling gates, or another scheduler's pod)"
		case w.waiting(w.watch):
			why = "its StatefulSet had not created it yet"
		}
		return nil, fmt.Errorf("--explain %s: the scheduler never attempted the pod: %s", w.watch, why)
	}
	r, err := w.explainSeen(ctx, s)
	if err != nil {
		return nil, err
	}
	last := s.at
	r.LastAttempt = &last
	return r, nil
}

// explainSeen explains a captured pod in a throwaway world of the
// captured nodes and pods and the cluster's other objects, made as this
// world was.
func (w *World) explainSeen(ctx context.Context, s *seen) (*ExplainReport, error) {
	c := w.cluster
	at := &Cluster{Nodes: s.nodes, Pods: s.pods, Namespaces: c.Namespaces, PriorityClasses: c.PriorityClasses, Services: c.Services,
		ReplicaSets: c.ReplicaSets, StatefulSets: c.StatefulSets, RCs: c.RCs, Others: w.othersNow(), Sources: c.Sources, WorkloadOf: map[string]int{}}
	opts := append(append([]scheduler.Option(nil), w.opts...), scheduler.WithPercentageOfNodesToScore(100))
	ew, err := NewWorld(ctx, at, w.cfg, w.registry, w.seed, opts...)
	if err != nil {
		return nil, err
	}
	return ew.ExplainNew(ctx, s.pod)
}

func (w *World) createdAt(key string) bool {
	for _, p := range append(w.Pending, w.Foreign...) {
		if podKey(p) == key {
			return true
		}
	}
	return false
}

func (w *World) waiting(key string) bool {
	for _, o := range w.ordered {
		for _, p := range o.Waiting {
			if podKey(p) == key {
				return true
			}
		}
	}
	return false
}

// explainLimit bounds the pending pods the HTML report explains.
const explainLimit = 100

// ExplainPending explains the report's first pending pods (at most
// explainLimit), each against the cluster as the simulation left it, for
// the HTML report.
func (w *World) ExplainPending(ctx context.Context, r *Report) error {
	r.explanations = map[string]*ExplainReport{}
	nodes := w.Store.Nodes()
	var bound []*v1.Pod
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		}
	}
	for _, pr := range r.Pods {
		if len(r.explanations) >= explainLimit {
			break
		}
		if pr.Status != StatusUnschedulable {
			continue
		}
		pod, ok := w.Store.GetPod(pr.Namespace, pr.Name)
		if !ok {
			continue
		}
		s := &seen{pod: pod.DeepCopy(), nodes: nodes, pods: bound}
		rep, err := w.explainSeen(ctx, s)
		if err != nil {
			return fmt.Errorf("explaining %s/%s: %w", pr.Namespace, pr.Name, err)
		}
		r.explanations[pr.Namespace+"/"+pr.Name] = rep
	}
	return nil
}
