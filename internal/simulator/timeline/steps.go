package timeline

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
)

// Apply carries out one step on the world, then has the controllers
// react, and counts in res the pods it created and deleted: the step's
// own Pods and those the controllers created.
func Apply(w *simulator.World, st *cluster.Step, res *report.StepResult) error {
	bare := 0
	created, deleted, err := w.Change(func() error {
		var err error
		bare, err = apply(w, st)
		return err
	})
	if err != nil {
		return err
	}
	res.Created, res.Deleted = created+bare, deleted
	return nil
}

// apply makes the step's changes. It returns the Pods the step itself
// created (World.Change counts those the controllers create).
func apply(w *simulator.World, st *cluster.Step) (pods int, err error) {
	c := w.Cluster
	why := simulator.Gone{Status: report.StatusDeleted, Message: "deleted by step " + st.Name}
	source := "step " + st.Name
	if c.Scenario != nil {
		source = c.Scenario.Source + ", step " + st.Name
	}
	for _, obj := range st.Create {
		if err := create(w, obj, source); err != nil {
			return pods, err
		}
		if _, ok := obj.(*v1.Pod); ok {
			pods++
		}
	}
	for _, r := range st.Delete {
		if err := deleteRef(w, r, why); err != nil {
			return pods, err
		}
	}
	for _, r := range st.Scale {
		if err := scale(w, r, why); err != nil {
			return pods, err
		}
	}
	for _, n := range st.Cordon {
		if err := updateNode(w, n, "cordon", func(n *v1.Node) { n.Spec.Unschedulable = true }); err != nil {
			return pods, err
		}
	}
	for _, n := range st.Uncordon {
		if err := updateNode(w, n, "uncordon", func(n *v1.Node) { n.Spec.Unschedulable = false }); err != nil {
			return pods, err
		}
	}
	for _, name := range st.Drain {
		if err := updateNode(w, name, "drain", func(n *v1.Node) { n.Spec.Unschedulable = true }); err != nil {
			return pods, err
		}
		w.Drain(name, st.Name)
	}
	for _, name := range st.DeleteNodes {
		if err := deleteNode(w, name, st.Name); err != nil {
			return pods, err
		}
	}
	for _, t := range st.Taint {
		taint := v1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect}
		if err := updateNode(w, t.Node, "taint", func(n *v1.Node) {
			n.Spec.Taints = slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(x v1.Taint) bool { return x.MatchTaint(&taint) })
			n.Spec.Taints = append(n.Spec.Taints, taint)
		}); err != nil {
			return pods, err
		}
	}
	for _, t := range st.Untaint {
		taint := v1.Taint{Key: t.Key, Effect: t.Effect}
		if err := updateNode(w, t.Node, "untaint", func(n *v1.Node) {
			n.Spec.Taints = slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(x v1.Taint) bool { return x.MatchTaint(&taint) })
		}); err != nil {
			return pods, err
		}
	}
	return pods, nil
}

// create adds an object of a step to the world.
func create(w *simulator.World, obj runtime.Object, source string) error {
	c := w.Cluster
	switch o := obj.(type) {
	case *v1.Node:
		loading.DefaultNode(o)
		if err := w.Store.AddNode(o); err != nil {
			return fmt.Errorf("create Node %s: %w", o.Name, err)
		}
		c.Nodes = append(c.Nodes, o)
	case *v1.Pod:
		if o.Namespace == "" {
			o.Namespace = v1.NamespaceDefault
		}
		k := cluster.PodKey(o)
		if _, err := simulator.PodDuration(o); err != nil {
			return fmt.Errorf("create Pod %s: %w", k, err)
		}
		c.Sources[k] = source
		if err := loading.DefaultPods(c, []*v1.Pod{o}); err != nil {
			return err
		}
		c.Created(o)
		if err := w.AddPending(o); err != nil {
			return fmt.Errorf("create Pod %s: %w", k, err)
		}
	case *schedulingv1.PriorityClass:
		c.PriorityClasses = append(c.PriorityClasses, o)
	case *schedulingv1beta1.PodGroup:
		if o.Namespace == "" {
			o.Namespace = v1.NamespaceDefault
		}
		c.Add(source, o)
		if err := loading.DefaultPodGroups(c, []*schedulingv1beta1.PodGroup{o}); err != nil {
			return err
		}
		if w.Scheduler.Cache.PodGroupsEnabled() {
			if err := w.Store.AddPodGroup(o); err != nil {
				return fmt.Errorf("create PodGroup %s/%s: %w", o.Namespace, o.Name, err)
			}
		}
	case *resourceapi.ResourceClaim, *resourceapi.ResourceClaimTemplate, *resourceapi.ResourceSlice, *resourceapi.DeviceClass, *resourceapi.DeviceTaintRule:
		return w.CreateDRA(obj)
	default:
		c.AddCreated(source, obj)
		w.AddObject(obj)
	}
	return nil
}

func deleteRef(w *simulator.World, r cluster.ObjectRef, why simulator.Gone) error {
	ns := r.Namespace
	if ns == "" && r.Kind != "Node" {
		ns = v1.NamespaceDefault
	}
	switch r.Kind {
	case "Pod":
		p, ok := w.Store.GetPod(ns, r.Name)
		if !ok {
			return fmt.Errorf("delete: Pod %s/%s not found", ns, r.Name)
		}
		w.Remove(p, why)
	case "Node":
		return deleteNode(w, r.Name, strings.TrimPrefix(why.Message, "deleted by step "))
	case "PodGroup":
		// Its pods stay, waiting for a PodGroup of that name again (as in
		// a cluster: nothing deletes a PodGroup's pods with it).
		i := slices.IndexFunc(w.Cluster.PodGroups, func(pg *schedulingv1beta1.PodGroup) bool { return pg.Namespace == ns && pg.Name == r.Name })
		if i < 0 {
			return fmt.Errorf("delete: PodGroup %s/%s not found", ns, r.Name)
		}
		w.Cluster.PodGroups = slices.Delete(w.Cluster.PodGroups, i, i+1)
		if w.Scheduler.Cache.PodGroupsEnabled() {
			if err := w.Store.DeletePodGroup(ns, r.Name); err != nil {
				return fmt.Errorf("delete: PodGroup %s/%s: %w", ns, r.Name, err)
			}
		}
	default:
		i := w.Cluster.WorkloadIndex(r.Kind, ns, r.Name)
		if i < 0 {
			return fmt.Errorf("delete: %s %s/%s not found", r.Kind, ns, r.Name)
		}
		for _, p := range w.Cluster.PodsOf(r.Kind, ns, r.Name, w.Live) {
			w.Remove(p, why)
		}
		w.Cluster.DeleteWorkload(i)
	}
	return nil
}

func scale(w *simulator.World, r cluster.ScaleRef, why simulator.Gone) error {
	ns := r.Namespace
	if ns == "" {
		ns = v1.NamespaceDefault
	}
	i := w.Cluster.WorkloadIndex(r.Kind, ns, r.Name)
	if i < 0 {
		return fmt.Errorf("scale: %s %s/%s not found", r.Kind, ns, r.Name)
	}
	n := r.Replicas
	var excess []*v1.Pod
	switch o := w.Cluster.WorkloadObject(i).(type) {
	case *appsv1.Deployment, *appsv1.ReplicaSet, *v1.ReplicationController, *batchv1.Job:
		switch o := o.(type) {
		case *appsv1.Deployment:
			o.Spec.Replicas = &n
			for _, rs := range w.Cluster.ReplicaSetsOf(ns, o.Name) {
				rs.Spec.Replicas = &n
			}
		case *appsv1.ReplicaSet:
			o.Spec.Replicas = &n
		case *v1.ReplicationController:
			o.Spec.Replicas = &n
		case *batchv1.Job:
			o.Spec.Parallelism = &n
		}
		// Scaling up deletes nothing: the pods are not looked at (capacity
		// --workload scales up by one thousands of times).
		if w.Cluster.LiveCount(r.Kind, ns, r.Name) > int(n) {
			excess = newestFirst(w.Cluster.PodsOf(r.Kind, ns, r.Name, w.Live), int(n))
		}
	case *appsv1.StatefulSet:
		// Its controller deletes the pods past the replicas, highest
		// ordinal first, when its policy lets it (World.Change runs it).
		o.Spec.Replicas = &n
	}
	for _, p := range excess {
		w.Remove(p, simulator.Gone{Status: report.StatusDeleted, Message: "scaled down by step " + strings.TrimPrefix(why.Message, "deleted by step ")})
	}
	return nil
}

// newestFirst picks the pods a ReplicaSet deletes to keep n: unscheduled
// ones first, then the most recently created.
func newestFirst(pods []*v1.Pod, n int) []*v1.Pod {
	if len(pods) <= n {
		return nil
	}
	order := make([]int, len(pods))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ua, ub := pods[order[a]].Spec.NodeName == "", pods[order[b]].Spec.NodeName == ""
		if ua != ub {
			return ua
		}
		return order[a] > order[b]
	})
	out := make([]*v1.Pod, 0, len(pods)-n)
	for _, i := range order[:len(pods)-n] {
		out = append(out, pods[i])
	}
	return out
}

func updateNode(w *simulator.World, name, verb string, change func(*v1.Node)) error {
	var node *v1.Node
	for _, n := range w.Store.Nodes() {
		if n.Name == name {
			node = n
		}
	}
	if node == nil {
		return fmt.Errorf("%s: Node %s not found", verb, name)
	}
	n := node.DeepCopy()
	change(n)
	for i, cn := range w.Cluster.Nodes {
		if cn.Name == name {
			w.Cluster.Nodes[i] = n
		}
	}
	return w.Store.UpdateNode(n)
}

// deleteNode deletes a node, the pods bound to it (the pod garbage
// collector's work) and the DaemonSet pods pinned to it.
func deleteNode(w *simulator.World, name, step string) error {
	if err := w.Store.DeleteNode(name); err != nil {
		return fmt.Errorf("delete: Node %s: %w", name, err)
	}
	w.Cluster.Nodes = slices.DeleteFunc(w.Cluster.Nodes, func(n *v1.Node) bool { return n.Name == name })
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName == name || (p.Spec.NodeName == "" && cluster.IsDaemonSetPod(p) && cluster.DaemonPodNode(p) == name) {
			w.Remove(p, simulator.Gone{Status: report.StatusDeleted, Node: p.Spec.NodeName, Message: "its node " + name + " was deleted by step " + step})
		}
	}
	return nil
}
