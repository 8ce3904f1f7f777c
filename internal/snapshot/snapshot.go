// Package snapshot reads a live cluster into manifests the simulator
// loads: what scheduling reads, without what it does not need and must
// not leak.
package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/cluster/kube"
)

// keptAnnotations are the annotations scheduling or the simulator reads;
// every other annotation is dropped.
var keptAnnotations = map[string]bool{
	"volume.kubernetes.io/selected-node":             true, // VolumeBinding
	"pv.kubernetes.io/bind-completed":                true, // VolumeBinding
	"pv.kubernetes.io/bound-by-controller":           true, // VolumeBinding
	v1.BetaStorageClassAnnotation:                    true, // volume plugins' class of a claim
	"volume.kubernetes.io/storage-provisioner":       true,
	"volume.beta.kubernetes.io/storage-provisioner":  true,
	batchv1.JobCompletionIndexAnnotation:             true, // an Indexed Job's pods
	"deprecated.daemonset.template.generation":       true, // a DaemonSet's pod template label
	"kubesched.io/pending":                           true,
	"simulation.kubesched.io/duration":               true,
	"simulation.kubesched.io/hourly-cost":            true, // consolidate's price of a node
	"cluster-autoscaler.kubernetes.io/safe-to-evict": true, // consolidate's eviction rules
	"karpenter.sh/do-not-disrupt":                    true,
}

// Snapshot is a cluster as read, in the order it is written.
type Snapshot struct {
	Objects []runtime.Object
	// Counts are the objects written, by kind.
	Counts map[string]int
}

// Take lists the cluster: all nodes, the non-terminal pods, namespaces,
// Services, ReplicaSets, StatefulSets, ReplicationControllers,
// PodDisruptionBudgets, storage objects and PriorityClasses, and the
// Deployments, Jobs and DaemonSets that own pending pods (directly or
// through a ReplicaSet). Secrets and ConfigMaps are never read.
func Take(ctx context.Context, client kubernetes.Interface) (*Snapshot, error) {
	objs, err := kube.ListCluster(ctx, client)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Counts: map[string]int{}}
	pcs, err := client.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing priorityclasses: %w", err)
	}
	for i := range pcs.Items {
		s.add(&pcs.Items[i])
	}
	for _, o := range objs.Namespaces {
		s.add(o)
	}
	for _, o := range objs.Nodes {
		s.add(o)
	}
	for _, o := range objs.Services {
		s.add(o)
	}
	rsOwner := map[string]metav1.OwnerReference{}
	for _, o := range objs.Others {
		if rs, ok := o.(*appsv1.ReplicaSet); ok {
			if ref := metav1.GetControllerOf(rs); ref != nil {
				rsOwner[rs.Namespace+"/"+rs.Name] = *ref
			}
		}
		s.add(o.(runtime.Object))
	}
	// The workloads of pending pods: their controllers would act on them.
	owners := map[string]bool{}
	for _, p := range objs.Pods {
		ref := metav1.GetControllerOf(p)
		if p.Spec.NodeName != "" || ref == nil {
			continue
		}
		if ref.Kind == "ReplicaSet" {
			up, ok := rsOwner[p.Namespace+"/"+ref.Name]
			if !ok || up.Kind != "Deployment" {
				continue
			}
			ref = &up
		}
		owners[ref.Kind+"/"+p.Namespace+"/"+ref.Name] = true
	}
	keys := make([]string, 0, len(owners))
	for k := range owners {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts := strings.SplitN(k, "/", 3)
		kind, ns, name := parts[0], parts[1], parts[2]
		var obj runtime.Object
		var err error
		switch kind {
		case "Deployment":
			obj, err = client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		case "Job":
			obj, err = client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		case "DaemonSet":
			obj, err = client.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		default:
			continue // ReplicaSets, StatefulSets and RCs are all written
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s %s/%s, the owner of pending pods: %w", kind, ns, name, err)
		}
		s.add(obj)
	}
	for _, o := range objs.Pods {
		s.add(o)
	}
	return s, nil
}

// add strips an object and appends it, with its kind set.
func (s *Snapshot) add(obj runtime.Object) {
	obj = obj.DeepCopyObject()
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err == nil && len(gvks) > 0 {
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	}
	Strip(obj)
	s.Objects = append(s.Objects, obj)
	s.Counts[obj.GetObjectKind().GroupVersionKind().Kind]++
}

// Strip removes from an object what a simulation does not need and must
// not leak: managed fields, annotations scheduling does not read, the
// last-applied configuration, containers' environment (values and
// references to Secrets and ConfigMaps), command and arguments (which can
// hold credentials too), and pods' status beyond phase,
// conditions, nominated node, QoS class and containers' resources.
func Strip(obj runtime.Object) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
		kept := map[string]string{}
		for k, v := range m.GetAnnotations() {
			if keptAnnotations[k] {
				kept[k] = v
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		m.SetAnnotations(kept)
	}
	switch o := obj.(type) {
	case *v1.Pod:
		stripSpec(&o.Spec)
		st := v1.PodStatus{Phase: o.Status.Phase, Conditions: o.Status.Conditions, NominatedNodeName: o.Status.NominatedNodeName, QOSClass: o.Status.QOSClass}
		for _, cs := range o.Status.ContainerStatuses {
			st.ContainerStatuses = append(st.ContainerStatuses, v1.ContainerStatus{Name: cs.Name, AllocatedResources: cs.AllocatedResources, Resources: cs.Resources})
		}
		o.Status = st
	case *appsv1.Deployment:
		stripTemplate(&o.Spec.Template)
	case *appsv1.ReplicaSet:
		stripTemplate(&o.Spec.Template)
	case *appsv1.StatefulSet:
		stripTemplate(&o.Spec.Template)
	case *appsv1.DaemonSet:
		stripTemplate(&o.Spec.Template)
	case *batchv1.Job:
		stripTemplate(&o.Spec.Template)
	case *v1.ReplicationController:
		if o.Spec.Template != nil {
			stripTemplate(o.Spec.Template)
		}
	}
}

func stripTemplate(t *v1.PodTemplateSpec) {
	kept := map[string]string{}
	for k, v := range t.Annotations {
		if keptAnnotations[k] {
			kept[k] = v
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	t.Annotations = kept
	stripSpec(&t.Spec)
}

func stripSpec(spec *v1.PodSpec) {
	for _, cs := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			cs[i].Env, cs[i].EnvFrom = nil, nil
			cs[i].Command, cs[i].Args = nil, nil
		}
	}
	for i := range spec.EphemeralContainers {
		spec.EphemeralContainers[i].Env, spec.EphemeralContainers[i].EnvFrom = nil, nil
		spec.EphemeralContainers[i].Command, spec.EphemeralContainers[i].Args = nil, nil
	}
}

// Write writes the snapshot as multi-document YAML.
func (s *Snapshot) Write(out io.Writer, header string) error {
	var buf bytes.Buffer
	if header != "" {
		buf.WriteString(header)
	}
	for _, o := range s.Objects {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		buf.WriteString("---\n")
		buf.Write(b)
	}
	_, err := out.Write(buf.Bytes())
	return err
}
