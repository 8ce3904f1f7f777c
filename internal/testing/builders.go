// Package testing holds builders for the objects tests need, so tests read
// as what they set up (MakePod().Name("p").Req(...).Obj()) rather than as YAML.
package testing

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodWrapper builds a Pod.
type PodWrapper struct{ v1.Pod }

// MakePod starts a pod in namespace default with the default scheduler.
func MakePod() *PodWrapper {
	return &PodWrapper{v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: v1.NamespaceDefault},
		Spec:       v1.PodSpec{SchedulerName: v1.DefaultSchedulerName},
	}}
}

// Obj returns the pod.
func (p *PodWrapper) Obj() *v1.Pod { return &p.Pod }

// Name sets the name (and a UID derived from it).
func (p *PodWrapper) Name(n string) *PodWrapper {
	p.Pod.Name = n
	if p.Pod.UID == "" {
		p.Pod.UID = types.UID("uid-" + n)
	}
	return p
}

// UID sets the UID.
func (p *PodWrapper) UID(u string) *PodWrapper { p.Pod.UID = types.UID(u); return p }

// Namespace sets the namespace.
func (p *PodWrapper) Namespace(ns string) *PodWrapper { p.Pod.Namespace = ns; return p }

// Annotation sets an annotation.
func (p *PodWrapper) Annotation(k, v string) *PodWrapper {
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[k] = v
	return p
}

// Node assigns the pod to a node.
func (p *PodWrapper) Node(n string) *PodWrapper { p.Spec.NodeName = n; return p }

// SchedulerName sets spec.schedulerName.
func (p *PodWrapper) SchedulerName(n string) *PodWrapper { p.Spec.SchedulerName = n; return p }

// Priority sets spec.priority.
func (p *PodWrapper) Priority(v int32) *PodWrapper { p.Spec.Priority = &v; return p }

// Label adds a label.
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
	return p
}

// Phase sets status.phase.
func (p *PodWrapper) Phase(ph v1.PodPhase) *PodWrapper { p.Status.Phase = ph; return p }

// Container adds a container requesting the given resources ("cpu": "500m").
func (p *PodWrapper) Container(requests map[v1.ResourceName]string) *PodWrapper {
	p.Spec.Containers = append(p.Spec.Containers, container(len(p.Spec.Containers), requests))
	return p
}

// Req adds a container with requests (alias of Container, reads well in tables).
func (p *PodWrapper) Req(requests map[v1.ResourceName]string) *PodWrapper {
	return p.Container(requests)
}

// Image adds a container with an image.
func (p *PodWrapper) Image(image string) *PodWrapper {
	c := container(len(p.Spec.Containers), nil)
	c.Image = image
	p.Spec.Containers = append(p.Spec.Containers, c)
	return p
}

// InitReq adds an init container with requests.
func (p *PodWrapper) InitReq(requests map[v1.ResourceName]string) *PodWrapper {
	c := container(len(p.Spec.InitContainers), requests)
	c.Name = "init-" + c.Name
	p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	return p
}

// SidecarReq adds a restartable (sidecar) init container with requests.
func (p *PodWrapper) SidecarReq(requests map[v1.ResourceName]string) *PodWrapper {
	c := container(len(p.Spec.InitContainers), requests)
	c.Name = "sidecar-" + c.Name
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	return p
}

// PodRequests sets pod-level requests (spec.resources.requests).
func (p *PodWrapper) PodRequests(rl map[v1.ResourceName]string) *PodWrapper {
	p.Spec.Resources = &v1.ResourceRequirements{Requests: resourceList(rl)}
	return p
}

// Overhead sets spec.overhead.
func (p *PodWrapper) Overhead(rl map[v1.ResourceName]string) *PodWrapper {
	p.Spec.Overhead = resourceList(rl)
	return p
}

// HostPort adds a container with a host port.
func (p *PodWrapper) HostPort(port int32, protocol v1.Protocol, hostIP string) *PodWrapper {
	c := container(len(p.Spec.Containers), nil)
	c.Ports = []v1.ContainerPort{{ContainerPort: port, HostPort: port, Protocol: protocol, HostIP: hostIP}}
	p.Spec.Containers = append(p.Spec.Containers, c)
	return p
}

// InitHostPort adds an init container claiming a host port: a sidecar
// (restartPolicy Always) when sidecar is true.
func (p *PodWrapper) InitHostPort(port int32, protocol v1.Protocol, sidecar bool) *PodWrapper {
	c := container(len(p.Spec.InitContainers), nil)
	c.Name = "init-" + c.Name
	c.Ports = []v1.ContainerPort{{ContainerPort: port, HostPort: port, Protocol: protocol}}
	if sidecar {
		always := v1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
	}
	p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	return p
}

// NodeSelector adds a nodeSelector entry.
func (p *PodWrapper) NodeSelector(k, v string) *PodWrapper {
	if p.Spec.NodeSelector == nil {
		p.Spec.NodeSelector = map[string]string{}
	}
	p.Spec.NodeSelector[k] = v
	return p
}

func (p *PodWrapper) nodeAffinity() *v1.NodeAffinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.NodeAffinity == nil {
		p.Spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	return p.Spec.Affinity.NodeAffinity
}

// RequiredNodeAffinityIn adds a required term: key In values.
func (p *PodWrapper) RequiredNodeAffinityIn(key string, values ...string) *PodWrapper {
	return p.RequiredNodeAffinityTerm(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}})
}

// RequiredNodeAffinityTerm adds a required term (terms are ORed).
func (p *PodWrapper) RequiredNodeAffinityTerm(t v1.NodeSelectorTerm) *PodWrapper {
	na := p.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms, t)
	return p
}

// PreferredNodeAffinityIn adds a preferred term: key In values, with weight.
func (p *PodWrapper) PreferredNodeAffinityIn(weight int32, key string, values ...string) *PodWrapper {
	na := p.nodeAffinity()
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, v1.PreferredSchedulingTerm{
		Weight: weight, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}},
	})
	return p
}

// Toleration adds a toleration.
func (p *PodWrapper) Toleration(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect})
	return p
}

// SchedulingGates adds gates.
func (p *PodWrapper) SchedulingGates(names ...string) *PodWrapper {
	for _, n := range names {
		p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, v1.PodSchedulingGate{Name: n})
	}
	return p
}

func container(i int, requests map[v1.ResourceName]string) v1.Container {
	return v1.Container{Name: "c" + string(rune('0'+i)), Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: resourceList(requests)}}
}

func resourceList(m map[v1.ResourceName]string) v1.ResourceList {
	if m == nil {
		return nil
	}
	rl := v1.ResourceList{}
	for k, v := range m {
		rl[k] = resource.MustParse(v)
	}
	return rl
}

// NodeWrapper builds a Node.
type NodeWrapper struct{ v1.Node }

// MakeNode starts a node with 110 pods allocatable.
func MakeNode() *NodeWrapper {
	return &NodeWrapper{v1.Node{Status: v1.NodeStatus{
		Capacity:    v1.ResourceList{v1.ResourcePods: resource.MustParse("110")},
		Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("110")},
	}}}
}

// Obj returns the node.
func (n *NodeWrapper) Obj() *v1.Node { return &n.Node }

// Name sets the name and the hostname label.
func (n *NodeWrapper) Name(name string) *NodeWrapper {
	n.Node.Name = name
	n.UID = types.UID("node-" + name)
	return n.Label(v1.LabelHostname, name)
}

// Label adds a label.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper {
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[k] = v
	return n
}

// Capacity sets capacity and allocatable for the resources given.
func (n *NodeWrapper) Capacity(rl map[v1.ResourceName]string) *NodeWrapper {
	for k, v := range rl {
		n.Status.Capacity[k] = resource.MustParse(v)
		n.Status.Allocatable[k] = resource.MustParse(v)
	}
	return n
}

// Taint adds a taint.
func (n *NodeWrapper) Taint(key, value string, effect v1.TaintEffect) *NodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: key, Value: value, Effect: effect})
	return n
}

// Unschedulable cordons the node.
func (n *NodeWrapper) Unschedulable() *NodeWrapper { n.Spec.Unschedulable = true; return n }

// Image adds an image the node has.
func (n *NodeWrapper) Image(size int64, names ...string) *NodeWrapper {
	n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: names, SizeBytes: size})
	return n
}
