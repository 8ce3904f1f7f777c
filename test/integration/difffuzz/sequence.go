package difffuzz

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Case is a cluster and a stream of pending pods scheduled one after
// another.
type Case struct {
	Cluster *Scenario
	Pods    []*v1.Pod
}

// DrawCase draws a cluster and 1-6 pending pods; a pod is sometimes a copy
// (new name) of an earlier one, as a workload's replicas are, so the
// equivalence cache and the plugins' memos see the same pod shape again,
// and sometimes the earlier pod with one term's labelSelector swapped
// between nil and {} (the shapes whose memo keys could collide).
func (g *Generator) DrawCase() *Case {
	c := &Case{Cluster: g.DrawCluster()}
	for range 1 + g.intn(6) {
		if n := len(c.Pods); n > 0 && g.chance(0.35) {
			p := c.Pods[g.intn(n)].DeepCopy()
			g.podSeq++
			p.Name = fmt.Sprintf("p%d", g.podSeq)
			p.UID = ""
			if g.chance(0.5) {
				swapSelector(p)
			}
			if o, errs := Admit(p); len(errs) == 0 {
				c.Pods = append(c.Pods, o.(*v1.Pod))
				continue
			}
		}
		if p := g.DrawPod(false); p != nil {
			c.Pods = append(c.Pods, p)
		}
	}
	return c
}

// swapSelector turns the first pod (anti-)affinity term's or spread
// constraint's nil labelSelector into {} or back.
func swapSelector(p *v1.Pod) {
	swap := func(sel **metav1LabelSelector) bool {
		if *sel == nil {
			*sel = &metav1LabelSelector{}
		} else if len((*sel).MatchLabels) == 0 && len((*sel).MatchExpressions) == 0 {
			*sel = nil
		} else {
			return false
		}
		return true
	}
	if a := p.Spec.Affinity; a != nil {
		for _, terms := range [][]v1.PodAffinityTerm{podAffinityReq(a), podAntiAffinityReq(a)} {
			for i := range terms {
				if swap(&terms[i].LabelSelector) {
					return
				}
			}
		}
		for _, terms := range [][]v1.WeightedPodAffinityTerm{podAffinityPref(a), podAntiAffinityPref(a)} {
			for i := range terms {
				if swap(&terms[i].PodAffinityTerm.LabelSelector) {
					return
				}
			}
		}
	}
	for i := range p.Spec.TopologySpreadConstraints {
		if swap(&p.Spec.TopologySpreadConstraints[i].LabelSelector) {
			return
		}
	}
}

// Step is one pod's answers.
type Step struct {
	Pod       *v1.Pod
	Upstream  *Answer
	Kubesched *Answer
	Diff      []string
	// Node is where the pod was placed ("" when it fits nowhere or is gated).
	Node string
}

// Run schedules the case's pods one after another in both: each is
// explained by both and compared; kubesched's choice (the first of its
// best nodes) must be among upstream's best nodes (the comparison of best
// nodes covers it); the pod, bound there, is added to both sides. The same
// kubesched world serves the whole stream. It stops at the first
// divergence, which is the last step returned.
func Run(c *Case) ([]Step, error) {
	o, err := NewOracle(c.Cluster.Objects())
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	defer o.Close()
	k, err := NewKubesched(c.Cluster.YAML("", false))
	if err != nil {
		// The cluster's objects are API-valid: kubesched must take them.
		return []Step{{Pod: c.Pods[0], Diff: []string{"load: kubesched refuses the cluster: " + err.Error()}}}, nil
	}
	var steps []Step
	for _, p := range c.Pods {
		st := Step{Pod: p}
		var uerr error
		st.Upstream, uerr = o.Explain(p)
		kp, err := k.LoadPod(p)
		if err != nil {
			st.Diff = []string{"load: kubesched refuses the pending pod: " + err.Error()}
			return append(steps, st), nil
		}
		var kerr error
		st.Kubesched, kerr = k.Explain(kp)
		if uerr != nil || kerr != nil {
			// A plugin's Error status (the DRA allocator can return one)
			// ends the pod's cycle in both: they agree when both fail with
			// the same error, and the stream stops there.
			if d := errorDiff(uerr, kerr); d != "" {
				st.Diff = []string{d}
			}
			st.Upstream, st.Kubesched = nil, nil
			return append(steps, st), nil
		}
		st.Diff = Diff(st.Upstream, st.Kubesched)
		if len(st.Diff) == 0 && len(st.Kubesched.BestNodes) > 0 && len(p.Spec.SchedulingGates) == 0 {
			st.Node = st.Kubesched.BestNodes[0]
			if !contains(st.Upstream.BestNodes, st.Node) {
				st.Diff = append(st.Diff, fmt.Sprintf("placement: kubesched chose %s, not among upstream's best %v", st.Node, st.Upstream.BestNodes))
			}
		}
		steps = append(steps, st)
		if len(st.Diff) > 0 {
			return steps, nil
		}
		if st.Node == "" || !placeable(c.Cluster, p) {
			continue
		}
		bound := p.DeepCopy()
		bound.Spec.NodeName = st.Node
		if err := o.AddPod(bound); err != nil {
			return steps, fmt.Errorf("oracle bind %s: %w", p.Name, err)
		}
		if err := k.Bind(kp, st.Node); err != nil {
			return steps, fmt.Errorf("kubesched bind %s: %w", p.Name, err)
		}
	}
	return steps, nil
}

// placeable reports whether a pod placed on a node leaves a state the
// cluster could be in without the controllers and PreBind: no resource
// claims (they would be allocated and reserved), no request of an
// extended resource only a DeviceClass provides (its claim), no generic
// ephemeral volume, and only claims already bound. Other pods are
// explained but not placed.
func placeable(c *Scenario, p *v1.Pod) bool {
	if len(p.Spec.ResourceClaims) > 0 {
		return false
	}
	for _, ctr := range append(append([]v1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		if _, ok := ctr.Resources.Requests[draExtended]; ok {
			return false
		}
	}
	for _, v := range p.Spec.Volumes {
		if v.Ephemeral != nil {
			return false
		}
		if v.PersistentVolumeClaim == nil {
			continue
		}
		bound := false
		for _, o := range c.Others {
			if pvc, ok := o.(*v1.PersistentVolumeClaim); ok && pvc.Namespace == p.Namespace && pvc.Name == v.PersistentVolumeClaim.ClaimName {
				bound = pvc.Spec.VolumeName != "" && pvc.Annotations[bindCompleted] != ""
			}
		}
		if !bound {
			return false
		}
	}
	return true
}

// Flatten is the scenario at a step: the cluster, the earlier steps' pods
// as assigned pods, and the step's pod pending.
func Flatten(c *Case, steps []Step, at int) *Scenario {
	s := c.Cluster.Clone()
	for _, st := range steps[:at] {
		if st.Node != "" {
			b := st.Pod.DeepCopy()
			b.Spec.NodeName = st.Node
			s.Pods = append(s.Pods, b)
		}
	}
	s.Pending = steps[at].Pod.DeepCopy()
	return s
}

// Causes condenses a step's diff to its sorted distinct causes.
func Causes(diff []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range diff {
		c := Cause(d)
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// describe renders a step's divergence for a report.
func describe(st Step) string {
	return "pod " + st.Pod.Namespace + "/" + st.Pod.Name + ":\n  " + strings.Join(st.Diff, "\n  ")
}

// errorDiff compares the errors of upstream's and kubesched's explain of a
// pod: "" when both fail the same way (upstream's names the node, as
// "Filter on NODE: ", kubesched's the plugin's error alone).
func errorDiff(upstream, kubesched error) string {
	switch {
	case upstream != nil && kubesched != nil:
		if strings.HasSuffix(upstream.Error(), kubesched.Error()) {
			return ""
		}
		return fmt.Sprintf("error: upstream fails with %q, kubesched with %q", upstream, kubesched)
	case upstream != nil:
		return fmt.Sprintf("error: upstream fails with %q, kubesched does not", upstream)
	}
	return fmt.Sprintf("error: kubesched fails with %q, upstream does not", kubesched)
}
