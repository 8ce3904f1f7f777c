package difffuzz

import (
	"encoding/json"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Scenario is a cluster and one pending pod, in the layout of the
// conformance scenario files: Namespaces, Nodes, Services, assigned Pods,
// then the pending Pod (annotated kubesched.io/pending: "true").
type Scenario struct {
	Namespaces []*v1.Namespace
	Nodes      []*v1.Node
	// Others are the storage, DRA, scheduling and apps objects
	// (StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities,
	// PersistentVolumes, PersistentVolumeClaims, VolumeAttachments,
	// DeviceClasses, ResourceSlices, ResourceClaims and their templates,
	// PriorityClasses, ReplicaSets, StatefulSets), after the Nodes.
	Others   []runtime.Object
	Services []*v1.Service
	Pods     []*v1.Pod // assigned (spec.nodeName set)
	Pending  *v1.Pod
}

// Clone deep-copies the scenario.
func (s *Scenario) Clone() *Scenario {
	c := &Scenario{}
	for _, o := range s.Namespaces {
		c.Namespaces = append(c.Namespaces, o.DeepCopy())
	}
	for _, o := range s.Nodes {
		c.Nodes = append(c.Nodes, o.DeepCopy())
	}
	for _, o := range s.Others {
		c.Others = append(c.Others, o.DeepCopyObject())
	}
	for _, o := range s.Services {
		c.Services = append(c.Services, o.DeepCopy())
	}
	for _, o := range s.Pods {
		c.Pods = append(c.Pods, o.DeepCopy())
	}
	if s.Pending != nil {
		c.Pending = s.Pending.DeepCopy()
	}
	return c
}

// Objects lists the cluster's objects in file order, without the pending pod.
func (s *Scenario) Objects() []runtime.Object {
	var out []runtime.Object
	for _, o := range s.Namespaces {
		out = append(out, o)
	}
	for _, o := range s.Nodes {
		out = append(out, o)
	}
	out = append(out, s.Others...)
	for _, o := range s.Services {
		out = append(out, o)
	}
	for _, o := range s.Pods {
		out = append(out, o)
	}
	return out
}

// YAML renders the cluster (and the pending pod, when withPending) as one
// multi-document scenario file, with a header comment.
func (s *Scenario) YAML(header string, withPending bool) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(header), "\n") {
		if line != "" {
			b.WriteString("# " + line + "\n")
		}
	}
	objs := s.Objects()
	if withPending && s.Pending != nil {
		p := s.Pending.DeepCopy()
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[PendingAnnotation] = "true"
		objs = append(objs, p)
	}
	for i, o := range objs {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(ObjectYAML(o))
	}
	return b.String()
}

// PodYAML renders one pod as a document.
func PodYAML(p *v1.Pod) string { return ObjectYAML(p) }

// ObjectYAML renders one object with apiVersion and kind, leaving out the
// empty creationTimestamp and status the API types print.
func ObjectYAML(o runtime.Object) string {
	o = o.DeepCopyObject()
	gvks, _, err := scheme.Scheme.ObjectKinds(o)
	if err == nil && len(gvks) > 0 {
		o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind(gvks[0]))
	}
	if p, ok := o.(*v1.Pod); ok {
		// The stored status is the API server's (phase Pending, QoS class,
		// a SchedulingGated condition); of it the scheduler reads only the
		// claims' statuses.
		// A terminal phase is kept: the scheduler leaves such pods out.
		st := v1.PodStatus{ResourceClaimStatuses: p.Status.ResourceClaimStatuses}
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			st.Phase = p.Status.Phase
		}
		p.Status = st
	}
	js, err := json.Marshal(o)
	if err != nil {
		return fmt.Sprintf("# marshal: %v\n", err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return fmt.Sprintf("# marshal: %v\n", err)
	}
	dropDefaults(m)
	data, err := yaml.Marshal(m)
	if err != nil {
		return fmt.Sprintf("# marshal: %v\n", err)
	}
	return string(data)
}

// dropDefaults removes what the API types print empty and the defaults no
// plugin reads (both sides default them again when loading): UIDs the
// loaders set, generation, termination and DNS settings, pull policies,
// the node's empty daemonEndpoints and nodeInfo.
func dropDefaults(m map[string]any) {
	del := func(v any, keys ...string) {
		if mm, ok := v.(map[string]any); ok {
			for _, k := range keys {
				delete(mm, k)
			}
		}
	}
	empty := func(v any) bool {
		mm, ok := v.(map[string]any)
		return ok && len(mm) == 0
	}
	del(m["metadata"], "uid", "generation", "creationTimestamp")
	spec, _ := m["spec"].(map[string]any)
	del(spec, "dnsPolicy", "enableServiceLinks", "terminationGracePeriodSeconds")
	if spec != nil {
		if spec["schedulerName"] == "default-scheduler" {
			delete(spec, "schedulerName")
		}
		if spec["restartPolicy"] == "Always" {
			delete(spec, "restartPolicy")
		}
		if empty(spec["securityContext"]) {
			delete(spec, "securityContext")
		}
		for _, list := range []string{"containers", "initContainers"} {
			cs, _ := spec[list].([]any)
			for _, c := range cs {
				del(c, "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy")
			}
		}
		if len(spec) == 0 {
			delete(m, "spec")
		}
	}
	if st, ok := m["status"].(map[string]any); ok {
		if de, ok := st["daemonEndpoints"].(map[string]any); ok {
			if k, ok := de["kubeletEndpoint"].(map[string]any); ok && k["Port"] == float64(0) {
				delete(st, "daemonEndpoints")
			}
		}
		if ni, ok := st["nodeInfo"].(map[string]any); ok {
			blank := true
			for _, v := range ni {
				if v != "" {
					blank = false
				}
			}
			if blank {
				delete(st, "nodeInfo")
			}
		}
		if len(st) == 0 {
			delete(m, "status")
		}
	}
}
