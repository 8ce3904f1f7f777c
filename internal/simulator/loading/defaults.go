package loading

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// applyDefaults applies the API server's defaulting that scheduling depends
// on (as k8s.io/kubernetes/pkg/apis/core/v1 does), then the Priority
// admission plugin's resolution of priorityClassName.
func applyDefaults(c *cluster.Cluster) error {
	for _, n := range c.Nodes {
		DefaultNode(n)
	}
	all := c.Pods[:len(c.Pods):len(c.Pods)]
	for _, o := range c.Ordered {
		all = append(all, o.Waiting...)
	}
	if err := DefaultPods(c, all); err != nil {
		return err
	}
	return DefaultPodGroups(c, c.PodGroups)
}

// DefaultPodGroups applies the API's default disruptionMode (single) and
// resolves PodGroups' priority from their priorityClassName as the
// Priority admission plugin does (with GenericWorkload): the class's
// value, or the global default's, or 0; a priority already set must be
// that value.
func DefaultPodGroups(c *cluster.Cluster, groups []*schedulingv1beta1.PodGroup) error {
	classes, globalDefault, globalValue := priorityClasses(c)
	for _, pg := range groups {
		if pg.Namespace == "" {
			pg.Namespace = v1.NamespaceDefault
		}
		if pg.Spec.DisruptionMode == nil {
			// The API's declared default (+default={"single": {}}).
			pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
		}
		var v int32
		switch name := pg.Spec.PriorityClassName; {
		case name != "":
			var ok bool
			if v, ok = classes[name]; !ok {
				if !isSystemClass(name) {
					return SourceError(c.PodGroupSources[pg.Namespace+"/"+pg.Name], "PodGroup "+pg.Namespace+"/"+pg.Name, fmt.Errorf("spec.priorityClassName: Not found: no PriorityClass with name %s was found", name))
				}
				v = systemClassValue(name)
			}
		case globalDefault != nil:
			pg.Spec.PriorityClassName, v = *globalDefault, globalValue
		}
		if pg.Spec.Priority != nil && *pg.Spec.Priority != v {
			return SourceError(c.PodGroupSources[pg.Namespace+"/"+pg.Name], "PodGroup "+pg.Namespace+"/"+pg.Name, fmt.Errorf("spec.priority: Forbidden: priority set in the pod group (%d) must match the priority computed (%d) based on the priority class set in the spec", *pg.Spec.Priority, v))
		}
		pg.Spec.Priority = &v
	}
	return nil
}

func priorityClasses(c *cluster.Cluster) (map[string]int32, *string, int32) {
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
	return classes, globalDefault, globalValue
}

// DefaultNode applies the defaults a node gets: allocatable is its
// capacity when not given (as the kubelet reports it), and a UID.
func DefaultNode(n *v1.Node) {
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	}
	if n.UID == "" {
		n.UID = types.UID("node-" + n.Name)
	}
}

// DefaultPods applies pods' defaults (as the API server would on
// creation, against the cluster's PriorityClasses) and checks that their
// names are unique among them.
func DefaultPods(c *cluster.Cluster, all []*v1.Pod) error {
	classes, globalDefault, globalValue := priorityClasses(c)
	seen := map[string]bool{}
	for _, p := range all {
		if p.Namespace == "" {
			p.Namespace = v1.NamespaceDefault
		}
		k := cluster.PodKey(p)
		if seen[k] {
			return SourceError(c.Sources[k], "Pod "+k, fmt.Errorf("metadata.name: Duplicate value: %q: a pod of this namespace and name is already in the input (the API server answers: already exists)", p.Name))
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
					return SourceError(c.Sources[k], "Pod "+k, fmt.Errorf("spec.priorityClassName: Not found: no PriorityClass with name %s was found", name))
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
