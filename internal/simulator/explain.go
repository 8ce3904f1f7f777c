package simulator

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/scheduler"
)

// PendingAnnotation marks the pod to explain in a cluster file.
const PendingAnnotation = "kubesched.io/pending"

// ExplainNode is one node in explain's JSON.
type ExplainNode struct {
	Name     string           `json:"name"`
	Feasible bool             `json:"feasible"`
	Plugin   string           `json:"plugin"`
	Reasons  []string         `json:"reasons"`
	Score    *int64           `json:"score"`
	Scores   map[string]int64 `json:"scores"`
	// Devices are the devices the node would allocate to the pod's
	// claims (dynamic resource allocation), "claim/request: driver/pool/device".
	Devices []string `json:"devices,omitempty"`
}

// ExplainReport is explain's JSON document.
type ExplainReport struct {
	Pod           string        `json:"pod"`
	Nodes         []ExplainNode `json:"nodes"`
	FeasibleCount int           `json:"feasibleCount"`
	BestNodes     []string      `json:"bestNodes"`
	// Message is the FitError a scheduling attempt would report when no node fits.
	Message string `json:"message,omitempty"`
	// Preemption is where preemption would make room, when no node fits.
	Preemption *ExplainPreemption `json:"preemption,omitempty"`
	// LastAttempt is the simulated attempt whose state this explains
	// (simulate --explain).
	LastAttempt *LastAttempt `json:"lastAttempt,omitempty"`
	// Notes say where the answer depends on what a controller has not
	// done yet.
	Notes []string `json:"notes,omitempty"`
}

// FindPendingPod picks the pod to explain: the one annotated
// kubesched.io/pending: "true", else the single pod without spec.nodeName.
func FindPendingPod(c *Cluster) (*v1.Pod, error) {
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
func PodByName(c *Cluster, key string) (*v1.Pod, error) {
	for _, p := range c.Pods {
		if podKey(p) == key {
			return p, nil
		}
	}
	for _, o := range c.Ordered {
		for _, p := range o.Waiting {
			if podKey(p) == key {
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
func (w *World) Explain(ctx context.Context, pod *v1.Pod) (*ExplainReport, error) {
	var notes []string
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName != nil && !claimGenerated(pod, pc.Name) {
			notes = append(notes, fmt.Sprintf("The pod's claim %q (ResourceClaimTemplate %s) is not created yet: kube-scheduler waits for the resourceclaim controller to create it; simulate creates it as the controller would.",
				pc.Name, *pc.ResourceClaimTemplateName))
		}
	}
	r, err := w.explain(ctx, pod)
	if r != nil {
		r.Notes = notes
	}
	return r, err
}

// ExplainNew evaluates pod as a pod just created: the claims it makes from
// templates are generated first, as the resourceclaim controller would
// (on a copy: the pod is only evaluated).
func (w *World) ExplainNew(ctx context.Context, pod *v1.Pod) (*ExplainReport, error) {
	if needsClaims(pod) {
		pod = pod.DeepCopy()
		if err := w.generateClaims(pod); err != nil {
			return nil, err
		}
		w.Store.Flush()
	}
	return w.explain(ctx, pod)
}

func (w *World) explain(ctx context.Context, pod *v1.Pod) (*ExplainReport, error) {
	ex, err := w.Scheduler.Explain(ctx, pod)
	if err != nil {
		return nil, err
	}
	r := toReport(ex)
	if ex.NominatedNode != "" {
		// Preemption evicted them from this (throwaway) world.
		preemptor := pod.Namespace + "/" + pod.Name
		r.Preemption = &ExplainPreemption{Node: ex.NominatedNode, Victims: []string{}}
		for victim, ev := range w.Store.Evicted {
			if ev.Preemptor == preemptor {
				r.Preemption.Victims = append(r.Preemption.Victims, victim)
			}
		}
		sort.Strings(r.Preemption.Victims)
	}
	return r, nil
}

// ExplainPreemption is where preemption would make room for a pod that
// fits nowhere, and whom it would evict.
type ExplainPreemption struct {
	Node    string   `json:"node"`
	Victims []string `json:"victims"`
}

func toReport(ex *scheduler.Explanation) *ExplainReport {
	r := &ExplainReport{Pod: ex.Pod.Namespace + "/" + ex.Pod.Name, Nodes: []ExplainNode{}, FeasibleCount: ex.FeasibleCount, BestNodes: ex.BestNodes, Message: ex.FitError}
	for _, n := range ex.Nodes {
		r.Nodes = append(r.Nodes, ExplainNode{Name: n.Name, Feasible: n.Feasible, Plugin: n.Plugin, Reasons: n.Reasons, Score: n.Score, Scores: n.Scores, Devices: n.Details})
	}
	return r
}

// Write renders the report as json or a table.
func (r *ExplainReport) Write(out io.Writer, format string) error {
	switch format {
	case "json":
		return writeJSON(out, r)
	case "table", "":
	default:
		return fmt.Errorf("unknown output format %q: want table or json", format)
	}
	if a := r.LastAttempt; a != nil {
		fmt.Fprintf(out, "As attempt %d of %s saw the cluster at %s (result: %s", a.Attempt, r.Pod, a.T, a.Result)
		if a.Node != "" {
			fmt.Fprintf(out, ", node %s", a.Node)
		}
		fmt.Fprintln(out, "):")
	}
	fmt.Fprintf(out, "Pod %s: %d/%d nodes feasible", r.Pod, r.FeasibleCount, len(r.Nodes))
	if len(r.BestNodes) > 0 {
		fmt.Fprintf(out, "; best: %s", strings.Join(r.BestNodes, ", "))
	}
	fmt.Fprintln(out)
	if r.Message != "" {
		fmt.Fprintln(out, r.Message)
	}
	if p := r.Preemption; p != nil {
		fmt.Fprintf(out, "Preemption would make room on %s by evicting %s.\n", p.Node, strings.Join(p.Victims, ", "))
	}
	for _, n := range r.Notes {
		fmt.Fprintln(out, "Note:", n)
	}
	fmt.Fprintln(out)
	var plugins []string
	seen := map[string]bool{}
	for _, n := range r.Nodes {
		for p := range n.Scores {
			if !seen[p] {
				seen[p] = true
				plugins = append(plugins, p)
			}
		}
	}
	sort.Strings(plugins)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	header := "NODE\tFITS\tSCORE\tREJECTED BY\tREASONS"
	for _, p := range plugins {
		header += "\t" + p
	}
	fmt.Fprintln(tw, header)
	for _, n := range r.Nodes {
		fits, score := "no", "-"
		if n.Feasible {
			fits = "yes"
			score = fmt.Sprint(*n.Score)
		}
		plugin := n.Plugin
		if plugin == "" {
			plugin = "-"
		}
		reasons := strings.Join(n.Reasons, "; ")
		if reasons == "" {
			reasons = "-"
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", n.Name, fits, score, plugin, reasons)
		for _, p := range plugins {
			if v, ok := n.Scores[p]; ok {
				line += fmt.Sprintf("\t%d", v)
			} else {
				line += "\t-"
			}
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The devices each feasible node would allocate (DRA), after the table.
	for _, n := range r.Nodes {
		if len(n.Devices) > 0 {
			if _, err := fmt.Fprintf(out, "%s would allocate: %s\n", n.Name, strings.Join(n.Devices, ", ")); err != nil {
				return err
			}
		}
	}
	return nil
}
