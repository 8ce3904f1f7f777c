package cluster

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// daemonTemplate is the pod template of the DaemonSet's pods, with the
// tolerations and labels its controller adds, and its required node
// affinity.
func daemonTemplate(ds *appsv1.DaemonSet) (*v1.PodTemplateSpec, nodeaffinity.RequiredNodeAffinity) {
	tmpl := ds.Spec.Template.DeepCopy()
	addDaemonTolerations(&tmpl.Spec)
	tmpl.Labels = withLabel(tmpl.Labels, appsv1.ControllerRevisionHashLabelKey, computeHash(&ds.Spec.Template, ds.Status.CollisionCount))
	// The label carries the template generation the API server keeps in
	// an annotation (1 on creation).
	generation := ds.Annotations[daemonSetGenerationAnnotation]
	if generation == "" {
		generation = strconv.FormatInt(max(ds.Generation, 1), 10)
	}
	tmpl.Labels[daemonSetTemplateLabel] = generation
	return tmpl, nodeaffinity.NewRequiredNodeAffinity(tmpl.Spec.NodeSelector, tmpl.Spec.Affinity)
}

// daemonRunsOn: the DaemonSet controller runs a pod of tmpl on n (its
// node name, node selector and affinity match n, and n has no NoSchedule
// or NoExecute taint it does not tolerate).
func daemonRunsOn(tmpl *v1.PodTemplateSpec, required nodeaffinity.RequiredNodeAffinity, n *v1.Node) bool {
	if tmpl.Spec.NodeName != "" && tmpl.Spec.NodeName != n.Name {
		return false
	}
	if ok, _ := required.Match(n); !ok {
		return false
	}
	_, untolerated := v1helper.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, tmpl.Spec.Tolerations, func(t *v1.Taint) bool {
		return t.Effect == v1.TaintEffectNoExecute || t.Effect == v1.TaintEffectNoSchedule
	}, false)
	return !untolerated
}

// DaemonPods are the pods c's DaemonSets would run on a new node n, as
// their controller makes them, each named <daemonset>-<node>: what a node
// added to a cluster whose controllers no longer run (consolidate's
// settled cluster) must hold besides the pods placed on it.
func DaemonPods(c *Cluster, n *v1.Node) []*v1.Pod {
	var out []*v1.Pod
	for _, ds := range c.DaemonSets {
		tmpl, required := daemonTemplate(ds)
		if !daemonRunsOn(tmpl, required, n) {
			continue
		}
		p := podFromTemplate(tmpl, &ds.ObjectMeta, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))
		p.Spec.Affinity = pinToNode(p.Spec.Affinity, n.Name)
		p.Name = ds.Name + "-" + n.Name
		p.UID = types.UID("pod-" + p.Namespace + "-" + p.Name)
		out = append(out, p)
	}
	return out
}
