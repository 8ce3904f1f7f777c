package questions

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	"github.com/kubesched/kubesched/pkg/framework"
)

// gangCapacity answers capacity --workload for a Job whose pods form one
// pod group (WorkloadWithJob): a gang is placed whole or not at all, so a
// replica more means nothing; a copy is the whole Job. Copies of the Job
// (its spec, its own name and UID, never preempting) are created one at a
// time, each getting its PodGroup from the Job controller, and placed on
// the cluster as it is, until a copy is not bound whole or limit copies
// are. Nodes and Zones count the copies' pods; Domains counts the copies
// by the value of the group's topology key.
func gangCapacity(ctx context.Context, w *simulator.World, j *batchv1.Job, members int, limit int) (*CapacityResult, error) {
	if err := w.Run(ctx); err != nil {
		return nil, err
	}
	zoneOf, labels := map[string]string{}, map[string]map[string]string{}
	for _, n := range w.Store.Nodes() {
		zoneOf[n.Name] = n.Labels[v1.LabelTopologyZone]
		labels[n.Name] = n.Labels
	}
	res := &CapacityResult{Pod: "Job " + j.Namespace + "/" + j.Name, GangPods: members, Nodes: map[string]int{}, Zones: map[string]int{}}
	never := v1.PreemptNever
	for n := 1; n <= limit && ctx.Err() == nil; n++ {
		cp := j.DeepCopy()
		cp.Name = fmt.Sprintf("%s-copy-%d", j.Name, n)
		cp.UID, cp.ResourceVersion, cp.Status = "", "", batchv1.JobStatus{}
		cp.Spec.Selector = nil // generated again for the copy's UID
		cp.Spec.Completions = nil
		cp.Spec.Template.Spec.PreemptionPolicy = &never
		step := &cluster.Step{Name: "capacity", Create: []runtime.Object{cp}}
		if err := timeline.Apply(w, step, &report.StepResult{}); err != nil {
			return nil, err
		}
		w.Store.Flush()
		if err := w.ScheduleNow(ctx); err != nil {
			return nil, err
		}
		pods := w.Cluster.PodsOf("Job", cp.Namespace, cp.Name, w.Live)
		var pending *v1.Pod
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				pending = p
				break
			}
		}
		if pending != nil || len(pods) == 0 {
			res.Next = &NextCopy{Message: gangPendingMessage(w, pending)}
			break
		}
		res.Fits++
		for _, p := range pods {
			res.Nodes[p.Spec.NodeName]++
			if z := zoneOf[p.Spec.NodeName]; z != "" {
				res.Zones[z]++
			}
		}
		// The copy is bound whole within one domain: its first pod's.
		if key := gangTopologyKey(w, pods[0]); key != "" {
			domain := key + "=" + labels[pods[0].Spec.NodeName][key]
			if res.Domains == nil {
				res.Domains = map[string]int{}
			}
			res.Domains[domain]++
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// gangPendingMessage is why a copy's member stayed pending: its group's
// PodGroupInitiallyScheduled condition, which has the whole group's reason
// (its preemption's too), else the member's own condition (a member never
// tried has the group's reason without its preemption's part, as
// upstream's).
func gangPendingMessage(w *simulator.World, p *v1.Pod) string {
	if p == nil {
		return "the copy created no pod"
	}
	m := ""
	for _, pg := range w.Store.PodGroups() {
		if pg.Namespace == p.Namespace && pg.Name == framework.PodGroupName(p) {
			if c := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled); c != nil && c.Status == metav1.ConditionFalse {
				m = c.Message
			}
		}
	}
	if m == "" {
		m = scheduledMessage(p)
	}
	if m != "" {
		// "pod group preemption: not eligible ...": the copies were
		// made not to preempt; say so.
		return strings.Replace(m, "pod group "+notEligibleNever, copiesDoNotPreempt, 1)
	}
	return fmt.Sprintf("pod %s of the copy is pending", cluster.PodKey(p))
}

// gangTopologyKey is the topology key of p's PodGroup, "" for none.
func gangTopologyKey(w *simulator.World, p *v1.Pod) string {
	name := framework.PodGroupName(p)
	for _, pg := range w.Cluster.PodGroups {
		if pg.Namespace == p.Namespace && pg.Name == name {
			if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
				return c.Topology[0].Key
			}
		}
	}
	return ""
}
