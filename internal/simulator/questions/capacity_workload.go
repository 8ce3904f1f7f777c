package questions

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	"github.com/kubesched/kubesched/pkg/framework"
)

// WorkloadCapacity answers capacity --workload: the cluster (with the
// workload in it) is simulated, then the workload is scaled up one
// replica at a time, its controller creating each pod as it would (names,
// labels, owners: default spreading and PDBs apply), until the new pod
// does not fit or limit more fit. Each replica is placed on the cluster as
// it is (World.ScheduleNow), as Capacity places its copies. Its pods never
// preempt, as capacity's copies.
func WorkloadCapacity(ctx context.Context, w *simulator.World, kind, ns, name string, limit int) (*CapacityResult, error) {
	return workloadCapacity(ctx, w, kind, ns, name, limit, true, nil)
}

// workloadCapacity is WorkloadCapacity; explain false leaves the next
// replica's explanation out (its message stays), and placed, when set,
// counts the replicas placed as they are.
func workloadCapacity(ctx context.Context, w *simulator.World, kind, ns, name string, limit int, explain bool, placed *atomic.Int64) (*CapacityResult, error) {
	if ns == "" {
		ns = v1.NamespaceDefault
	}
	i := w.Cluster.WorkloadIndex(kind, ns, name)
	if i < 0 {
		return nil, fmt.Errorf("no %s %s/%s in the cluster", kind, ns, name)
	}
	if j, ok := w.Cluster.WorkloadObject(i).(*batchv1.Job); ok {
		if members := gangMembers(w, j); members > 0 {
			return gangCapacity(ctx, w, j, members, limit)
		}
	}
	replicas, _, err := neverPreempt(w, i, cluster.Workload{Kind: kind, Namespace: ns, Name: name})
	if err != nil {
		return nil, err
	}
	if err := w.Run(ctx); err != nil {
		return nil, err
	}
	zoneOf := map[string]string{}
	for _, n := range w.Store.Nodes() {
		zoneOf[n.Name] = n.Labels[v1.LabelTopologyZone]
	}
	// The workload's pods are looked at once each: those it had, at the
	// first step (one of them may be pending), then each step's new ones
	// (a pod bound stays bound: replicas do not preempt). Rescanning them
	// all at every step made 10,000 replicas quadratic.
	had := map[string]bool{}
	marks := map[string]int{}
	for _, p := range w.Cluster.PodsOfSince(kind, ns, name, w.Live, marks) {
		had[cluster.PodKey(p)] = true
	}
	res := &CapacityResult{Pod: kind + " " + ns + "/" + name, Nodes: map[string]int{}, Zones: map[string]int{}}
	for n := 0; n < limit && ctx.Err() == nil; n++ {
		step := &cluster.Step{Name: "capacity", Scale: []cluster.ScaleRef{{Kind: kind, Namespace: ns, Name: name, Replicas: replicas() + 1}}}
		if err := timeline.Apply(w, step, &report.StepResult{}); err != nil {
			return nil, err
		}
		w.Store.Flush()
		if err := w.ScheduleNow(ctx); err != nil {
			return nil, err
		}
		pods := w.Cluster.PodsOfSince(kind, ns, name, w.Live, marks)
		if n == 0 {
			pods = w.Cluster.PodsOf(kind, ns, name, w.Live)
		}
		var pending *v1.Pod
		for _, p := range pods {
			k := cluster.PodKey(p)
			if p.Spec.NodeName == "" {
				pending = p
				continue
			}
			if !had[k] {
				had[k] = true
				res.Fits++
				if placed != nil {
					placed.Add(1)
				}
				res.Nodes[p.Spec.NodeName]++
				if z := zoneOf[p.Spec.NodeName]; z != "" {
					res.Zones[z]++
				}
			}
		}
		if pending != nil {
			if _, created := w.Store.GetPod(pending.Namespace, pending.Name); !created {
				res.Next = &NextCopy{Message: fmt.Sprintf("pod %s is not created: its StatefulSet waits for the pod before it to run", cluster.PodKey(pending))}
				break
			}
			if !explain {
				res.Next = &NextCopy{Message: replicaMessage(pending)}
				break
			}
			var err error
			if res.Next, err = nextCopy(ctx, w, pending, replicasDoNotPreempt); err != nil {
				return nil, err
			}
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return res, nil
}

// neverPreempt readies workload wl, of index i (WorkloadIndex), to be
// scaled up as capacity counts its replicas: its template's pods never
// preempt (a Deployment's ReplicaSets' templates too), a Job's
// completions are cleared (room for parallel pods, not a run to
// completion). It returns the workload's replica count as the scale step
// reads it, and what undoes the change.
func neverPreempt(w *simulator.World, i int, wl cluster.Workload) (replicas func() int32, undo func(), err error) {
	never := v1.PreemptNever
	var undos []func()
	set := func(spec *v1.PodSpec) {
		was := spec.PreemptionPolicy
		spec.PreemptionPolicy = &never
		undos = append(undos, func() { spec.PreemptionPolicy = was })
	}
	switch o := w.Cluster.WorkloadObject(i).(type) {
	case *appsv1.Deployment:
		set(&o.Spec.Template.Spec)
		replicas = func() int32 { return deref32(o.Spec.Replicas) }
		// Its ReplicaSet was made from the template before the policy
		// was set: its template gets it too.
		for _, rs := range w.Cluster.ReplicaSetsOf(o.Namespace, o.Name) {
			set(&rs.Spec.Template.Spec)
		}
	case *appsv1.ReplicaSet:
		set(&o.Spec.Template.Spec)
		replicas = func() int32 { return deref32(o.Spec.Replicas) }
	case *appsv1.StatefulSet:
		set(&o.Spec.Template.Spec)
		replicas = func() int32 { return deref32(o.Spec.Replicas) }
	case *v1.ReplicationController:
		if o.Spec.Template != nil {
			set(&o.Spec.Template.Spec)
		}
		replicas = func() int32 { return deref32(o.Spec.Replicas) }
	case *batchv1.Job:
		set(&o.Spec.Template.Spec)
		was := o.Spec.Completions
		o.Spec.Completions = nil // room for parallel pods, not a run to completion
		undos = append(undos, func() { o.Spec.Completions = was })
		replicas = func() int32 { return deref32(o.Spec.Parallelism) }
	default:
		return nil, nil, fmt.Errorf("%s: capacity scales Deployments, ReplicaSets, StatefulSets, ReplicationControllers and Jobs (a DaemonSet runs one pod per node)", wl)
	}
	return replicas, func() {
		for _, u := range undos {
			u()
		}
	}, nil
}

// replicaMessage is why replica p was not placed: its FitError, with the
// preemption part said as capacity's replicas do not preempt.
func replicaMessage(p *v1.Pod) string {
	return strings.Replace(scheduledMessage(p), notEligibleNever, replicasDoNotPreempt, 1)
}

func deref32(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

// gangMembers is how many pods the Job runs as one gang (its PodGroup has
// the gang policy): its parallelism; 0 when its pods form no gang.
func gangMembers(w *simulator.World, j *batchv1.Job) int {
	for _, p := range w.Cluster.PodsOf("Job", j.Namespace, j.Name, w.Live) {
		name := framework.PodGroupName(p)
		for _, pg := range w.Cluster.PodGroups {
			if pg.Namespace == p.Namespace && pg.Name == name && pg.Spec.SchedulingPolicy.Gang != nil && w.Scheduler.Cache.PodGroupsEnabled() {
				return int(deref32(j.Spec.Parallelism))
			}
		}
		return 0
	}
	return 0
}
