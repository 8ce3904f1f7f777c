package questions

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// PendingAnnotation marks the pod to explain in a cluster file.
const PendingAnnotation = "kubesched.io/pending"

// FindPendingPod picks the pod to explain: the one annotated
// kubesched.io/pending: "true", else the single pod without spec.nodeName.
func FindPendingPod(c *cluster.Cluster) (*v1.Pod, error) {
	var annotated, unassigned []*v1.Pod
	for _, p := range c.Pods {
		if p.Annotations[PendingAnnotation] == "true" {
			annotated = append(annotated, p)
		}
		if p.Spec.NodeName == "" {
			unassigned = append(unassigned, p)
		}
	}
	switch {
	case len(annotated) == 1:
		return annotated[0], nil
	case len(annotated) > 1:
		return nil, fmt.Errorf("%d pods are annotated %s: \"true\"; annotate one, or pass --pod", len(annotated), PendingAnnotation)
	case len(unassigned) == 1:
		return unassigned[0], nil
	case len(unassigned) == 0:
		return nil, fmt.Errorf("no pending pod: no pod is annotated %s: \"true\" and every pod has spec.nodeName; pass --pod", PendingAnnotation)
	}
	return nil, fmt.Errorf("%d pods have no spec.nodeName; annotate the one to explain with %s: \"true\", or pass --pod", len(unassigned), PendingAnnotation)
}

// PodByName returns the cluster's pod namespace/name (a pod its workloads
// create included).
func PodByName(c *cluster.Cluster, key string) (*v1.Pod, error) {
	for _, p := range c.Pods {
		if cluster.PodKey(p) == key {
			return p, nil
		}
	}
	for _, o := range c.Ordered {
		for _, p := range o.Waiting {
			if cluster.PodKey(p) == key {
				return p, nil
			}
		}
	}
	return nil, fmt.Errorf("no pod %s in the cluster files", key)
}

// Explain evaluates pod, as it is, on every node of the world (which must
// not contain pod itself as a pending pod in its queue; it is only
// evaluated): what kube-scheduler would answer now. A claim from a
// template that the resourceclaim controller has not created yet makes
// kube-scheduler wait ("ResourceClaim not created yet"); the report says
// so in its notes.
func Explain(ctx context.Context, w *simulator.World, pod *v1.Pod) (*report.ExplainReport, error) {
	var notes []string
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName != nil && !cluster.ClaimGenerated(pod, pc.Name) {
			notes = append(notes, fmt.Sprintf("The pod's claim %q (ResourceClaimTemplate %s) is not created yet: kube-scheduler waits for the resourceclaim controller to create it; simulate creates it as the controller would.",
				pc.Name, *pc.ResourceClaimTemplateName))
		}
	}
	r, err := explain(ctx, w, pod)
	if r != nil {
		r.Notes = notes
	}
	return r, err
}

// OtherPending counts the cluster's pods other than pod that have no
// node: the pending pods of the files, a workload's and those a
// StatefulSet creates in turn included.
func OtherPending(c *cluster.Cluster, pod *v1.Pod) int {
	key, n := cluster.PodKey(pod), 0
	for _, p := range c.Pods {
		if p.Spec.NodeName == "" && cluster.PodKey(p) != key {
			n++
		}
	}
	for _, o := range c.Ordered {
		for _, p := range o.Waiting {
			if cluster.PodKey(p) != key {
				n++
			}
		}
	}
	return n
}

// NoteOtherPending says in r that the pod was judged against the
// running pods only while n other pods of the cluster files were pending:
// explain places none of them first (a simulation would, in its own
// order, and could fill the room the pod is shown to fit in).
func NoteOtherPending(r *report.ExplainReport, n int) {
	if n == 0 {
		return
	}
	r.PendingNotPlaced = n
	others := fmt.Sprintf("the %d other pending pods of the cluster files are", n)
	if n == 1 {
		others = "the other pending pod of the cluster files is"
	}
	r.Notes = append(r.Notes, fmt.Sprintf("Judged against the running pods only: %s not placed first. "+
		"kubesched simulate -f ... --explain %s explains the pod as its last attempt in the simulation saw the cluster.", others, r.Pod))
}

// ExplainNew evaluates pod as a pod just created: the claims it makes from
// templates are generated first, as the resourceclaim controller would
// (on a copy: the pod is only evaluated).
func ExplainNew(ctx context.Context, w *simulator.World, pod *v1.Pod) (*report.ExplainReport, error) {
	if cluster.NeedsClaims(pod) {
		pod = pod.DeepCopy()
		if err := w.GenerateClaims(pod); err != nil {
			return nil, err
		}
		w.Store.Flush()
	}
	return explain(ctx, w, pod)
}

func explain(ctx context.Context, w *simulator.World, pod *v1.Pod) (*report.ExplainReport, error) {
	ex, err := w.Scheduler.Explain(ctx, pod)
	if err != nil {
		return nil, err
	}
	r := toReport(ex)
	if ex.NominatedNode != "" {
		// Preemption evicted them from this (throwaway) world.
		preemptor := pod.Namespace + "/" + pod.Name
		r.Preemption = &report.ExplainPreemption{Node: ex.NominatedNode, Victims: []string{}}
		for victim, ev := range w.Store.Evicted {
			if ev.Preemptor == preemptor {
				r.Preemption.Victims = append(r.Preemption.Victims, victim)
			}
		}
		sort.Strings(r.Preemption.Victims)
	}
	return r, nil
}

func toReport(ex *scheduler.Explanation) *report.ExplainReport {
	r := &report.ExplainReport{Pod: ex.Pod.Namespace + "/" + ex.Pod.Name, Nodes: []report.ExplainNode{}, FeasibleCount: ex.FeasibleCount, BestNodes: ex.BestNodes, Message: ex.FitError}
	for _, n := range ex.Nodes {
		r.Nodes = append(r.Nodes, report.ExplainNode{Name: n.Name, Feasible: n.Feasible, Plugin: n.Plugin, Reasons: n.Reasons, Score: n.Score, Scores: n.Scores, Devices: n.Details, Why: n.Why})
	}
	return r
}
