package simulator

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// applyDefaults applies the API server's defaulting that scheduling depends
// on (as k8s.io/kubernetes/pkg/apis/core/v1 does), then the Priority
// admission plugin's resolution of priorityClassName.
func (c *Cluster) applyDefaults() error {
	for _, n := range c.Nodes {
		if n.Status.Allocatable == nil && n.Status.Capacity != nil {
			n.Status.Allocatable = n.Status.Capacity.DeepCopy()
		}
		if n.UID == "" {
			n.UID = types.UID("node-" + n.Name)
		}
	}
	all := c.Pods[:len(c.Pods):len(c.Pods)]
	for _, o := range c.Ordered {
		all = append(all, o.Waiting...)
	}
	return c.defaultPods(all)
}

// defaultPods applies the pods' defaults (applyDefaults) and checks that
// their names are unique.
func (c *Cluster) defaultPods(all []*v1.Pod) error {
	classes := map[string]int32{}
	var globalDefault *string
	var globalValue int32
	for _, pc := range c.PriorityClasses {
		classes[pc.Name] = pc.Value
		if pc.GlobalDefault {
			name := pc.Name
			globalDefault, globalValue = &name, pc.Value
		}
	}
	seen := map[string]bool{}
	for _, p := range all {
		if p.Namespace == "" {
			p.Namespace = v1.NamespaceDefault
		}
		k := podKey(p)
		if seen[k] {
			return fmt.Errorf("%s: Pod %s: duplicate pod name", c.Sources[k], k)
		}
		seen[k] = true
		if p.UID == "" {
			p.UID = types.UID("pod-" + p.Namespace + "-" + p.Name)
		}
		if p.Spec.SchedulerName == "" {
			p.Spec.SchedulerName = v1.DefaultSchedulerName
		}
		defaultContainers(p, p.Spec.InitContainers)
		defaultContainers(p, p.Spec.Containers)
		if p.Spec.Priority == nil {
			switch name := p.Spec.PriorityClassName; {
			case name != "":
				v, ok := classes[name]
				if !ok && !isSystemClass(name) {
					return fmt.Errorf("%s: Pod %s: spec.priorityClassName: Not found: no PriorityClass with name %s was found", c.Sources[k], k, name)
				}
				if !ok {
					v = systemClassValue(name)
				}
				p.Spec.Priority = &v
			case globalDefault != nil:
				p.Spec.PriorityClassName = *globalDefault
				v := globalValue
				p.Spec.Priority = &v
			default:
				var zero int32
				p.Spec.Priority = &zero
			}
		}
	}
	return nil
}

func isSystemClass(name string) bool {
	return name == "system-cluster-critical" || name == "system-node-critical"
}

func systemClassValue(name string) int32 {
	if name == "system-node-critical" {
		return 2000001000
	}
	return 2000000000
}

// defaultContainers: requests default to limits; ports default to TCP;
// with hostNetwork, hostPort defaults to containerPort.
func defaultContainers(p *v1.Pod, cs []v1.Container) {
	for i := range cs {
		c := &cs[i]
		copied := false
		for name, q := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				if !copied {
					// The loader may share the list with other pods.
					c.Resources.Requests, copied = cloneForWrite(c.Resources.Requests), true
				}
				c.Resources.Requests[name] = q.DeepCopy()
			}
		}
		for j := range c.Ports {
			port := &c.Ports[j]
			if port.Protocol == "" {
				port.Protocol = v1.ProtocolTCP
			}
			if p.Spec.HostNetwork && port.HostPort == 0 {
				port.HostPort = port.ContainerPort
			}
		}
	}
}

// mergeAffinityLabelKeys does what kube-apiserver does to a pod it creates
// (MatchLabelKeysInPodAffinity, GA): each pod (anti-)affinity term with a
// labelSelector gets `key In (value)` for its matchLabelKeys and
// `key NotIn (value)` for its mismatchLabelKeys, with the pod's own label
// values (keys the pod lacks are skipped). The scheduler reads only the
// selector, so the simulator does it for the pods its controllers create;
// Pod objects in the input are taken as the API server stored them.
func mergeAffinityLabelKeys(p *v1.Pod) {
	a := p.Spec.Affinity
	if a == nil {
		return
	}
	merge := func(t *v1.PodAffinityTerm) {
		if t.LabelSelector == nil || (len(t.MatchLabelKeys) == 0 && len(t.MismatchLabelKeys) == 0) {
			return
		}
		add := func(keys []string, op metav1.LabelSelectorOperator) {
			for _, k := range keys {
				if v, ok := p.Labels[k]; ok {
					t.LabelSelector.MatchExpressions = append(t.LabelSelector.MatchExpressions,
						metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
				}
			}
		}
		add(t.MatchLabelKeys, metav1.LabelSelectorOpIn)
		add(t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
	}
	terms := func(required []v1.PodAffinityTerm, preferred []v1.WeightedPodAffinityTerm) {
		for i := range preferred {
			merge(&preferred[i].PodAffinityTerm)
		}
		for i := range required {
			merge(&required[i])
		}
	}
	if pa := a.PodAffinity; pa != nil {
		terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}
