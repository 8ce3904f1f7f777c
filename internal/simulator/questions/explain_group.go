package questions

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/pkg/framework"
)

// NoteGroup says in r what pod's group (the GenericWorkload gate) makes of
// the per-node verdicts: a gang's member may fit alone where the group does
// not, so the table of a member is half the answer. After a simulation
// (attempted), the note gives the group's condition and each member's last
// verdict, grouped by message; before one (explain), it says the pod was
// judged alone.
func NoteGroup(r *report.ExplainReport, w *simulator.World, pod *v1.Pod, attempted bool) {
	name := framework.PodGroupName(pod)
	if r == nil || name == "" || !w.Scheduler.Cache.PodGroupsEnabled() {
		return
	}
	var pg *schedulingv1beta1.PodGroup
	for _, g := range w.Store.PodGroups() {
		if g.Namespace == pod.Namespace && g.Name == name {
			pg = g
		}
	}
	key := framework.PodGroupKey(pod.Namespace, name)
	if pg == nil {
		r.Notes = append(r.Notes, fmt.Sprintf("The pod belongs to pod group %s, which is not in the cluster files: kube-scheduler keeps it out of the queue until the PodGroup exists.", key))
		return
	}
	policy := "basic"
	if g := pg.Spec.SchedulingPolicy.Gang; g != nil {
		policy = fmt.Sprintf("gang, minCount %d", g.MinCount)
	}
	if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
		// Held by TopologyAwareWorkloadScheduling, when it is on.
		policy += ", within one " + c.Topology[0].Key
	}
	if !attempted {
		r.Notes = append(r.Notes, fmt.Sprintf("The pod belongs to pod group %s (%s): it is judged here alone, while kube-scheduler places the group's pending pods together in one cycle (kubesched simulate -f ... --feature-gates=GenericWorkload=true --explain %s gives the group's verdict).", key, policy, r.Pod))
		return
	}
	verdict := "no verdict yet"
	if c := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled); c != nil {
		verdict = fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Reason)
		if c.Message != "" {
			verdict += ": " + c.Message
		}
	}
	byMessage := map[string][]string{}
	for _, p := range w.Store.Pods() {
		if p.Namespace != pod.Namespace || framework.PodGroupName(p) != name {
			continue
		}
		msg := "bound to " + p.Spec.NodeName
		if p.Spec.NodeName == "" {
			msg = "pending"
			for _, c := range p.Status.Conditions {
				if c.Type == v1.PodScheduled && c.Message != "" {
					msg = c.Message
				}
			}
		}
		byMessage[msg] = append(byMessage[msg], p.Name)
	}
	msgs := make([]string, 0, len(byMessage))
	for m := range byMessage {
		msgs = append(msgs, m)
	}
	sort.Strings(msgs)
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		names := byMessage[m]
		sort.Strings(names)
		parts = append(parts, strings.Join(names, ", ")+": "+m)
	}
	r.Notes = append(r.Notes, fmt.Sprintf("The pod belongs to pod group %s (%s), placed whole or not at all: %s. Its members: %s.", key, policy, verdict, strings.Join(parts, "; ")))
}
