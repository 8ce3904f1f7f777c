package framework

import (
	"fmt"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
)

// Defaults used for scoring a container that requests no cpu or memory, so
// that zero-request pods still spread (upstream's non-zero requests).
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

var generation atomic.Int64

// nextGeneration returns a number larger than any handed out before; the
// cache uses it to copy only the NodeInfos that changed into a snapshot.
func nextGeneration() int64 { return generation.Add(1) }

// PodInfo is a pod with what the scheduler computes once from it.
type PodInfo struct {
	Pod *v1.Pod
	// Requests is what the pod requests (init and sidecar containers and
	// overhead included), as kubelet admits it.
	Requests Resource
	// NonZeroCPU and NonZeroMem are the requests with the scoring defaults
	// for containers that request nothing.
	NonZeroCPU, NonZeroMem int64
	// HostPorts are the host ports the pod's containers use.
	HostPorts []v1.ContainerPort
	// Priority is the pod's priority (spec.priority, 0 when unset): the
	// queue compares it for every move of a pod in its heaps.
	Priority int32
	// The pod's inter-pod affinity, parsed once.
	AffinityTerms
}

var nonZeroDefaults = v1.ResourceList{
	v1.ResourceCPU:    *resource.NewMilliQuantity(DefaultMilliCPURequest, resource.DecimalSI),
	v1.ResourceMemory: *resource.NewQuantity(DefaultMemoryRequest, resource.BinarySI),
}

// WithPod returns a PodInfo for pod that shares everything derived from
// pi's pod (requests, ports, affinity terms): for a copy of pi.Pod that
// differs only in fields none of them reads, such as spec.nodeName (the
// assumed pod). The derived data are read-only.
func (pi *PodInfo) WithPod(pod *v1.Pod) *PodInfo {
	out := *pi
	out.Pod = pod
	return &out
}

// NewPodInfo computes a PodInfo.
func NewPodInfo(pod *v1.Pod) *PodInfo {
	pi := &PodInfo{Pod: pod}
	pi.Requests, pi.NonZeroCPU, pi.NonZeroMem = PodRequests(pod)
	pi.HostPorts = HostPortsOf(pod)
	if pod.Spec.Priority != nil {
		pi.Priority = *pod.Spec.Priority
	}
	pi.parseAffinity()
	return pi
}

// HostPortsOf lists the container ports of a pod that claim a host port:
// its containers' and its sidecars' (init containers with restartPolicy
// Always, which run as long as the pod). A regular init container's ports
// are not counted: it has exited before the containers start
// (kube-scheduler's GetHostPorts).
func HostPortsOf(pod *v1.Pod) []v1.ContainerPort {
	var out []v1.ContainerPort
	add := func(cs []v1.Container, sidecarsOnly bool) {
		for i := range cs {
			if sidecarsOnly && (cs[i].RestartPolicy == nil || *cs[i].RestartPolicy != v1.ContainerRestartPolicyAlways) {
				continue
			}
			for _, p := range cs[i].Ports {
				if p.HostPort > 0 {
					out = append(out, p)
				}
			}
		}
	}
	add(pod.Spec.InitContainers, true)
	add(pod.Spec.Containers, false)
	return out
}

// ImageStateSummary is one image's size and how many nodes have it.
type ImageStateSummary struct {
	Size     int64
	NumNodes int
}

// NodeInfo is a node with the pods assigned (or assumed) to it and their
// aggregated requests.
type NodeInfo struct {
	// The fields every cycle reads for every node come first, in one cache
	// line: the name, the generation and the index (the per-node loops
	// are bound by memory latency, not by arithmetic).

	// name is node.Name, kept here so that the per-node loops don't touch
	// the Node object.
	name string
	// Generation changes on every mutation; it is unique over all
	// NodeInfos (a copy shares it only until either is mutated).
	Generation int64
	// Index is the node's position in the scheduling snapshot's list, set
	// by the snapshot; per-node caches (the equivalence cache) key by it.
	// -1 outside a snapshot.
	Index int
	node  *v1.Node
	// Pods on the node, assumed ones included.
	Pods []*PodInfo
	// Requested is the sum of the pods' requests.
	Requested Resource
	// NonZeroRequested is the sum with the scoring defaults (cpu, memory).
	NonZeroRequested Resource
	// Allocatable is the node's allocatable.
	Allocatable Resource
	// UsedPorts are the host ports in use.
	UsedPorts HostPortInfo
	// ImageStates are the images on this node, with cluster-wide node counts
	// (filled by the snapshot).
	ImageStates map[string]*ImageStateSummary
	// PodsWithAffinity are the pods with any pod (anti-)affinity.
	PodsWithAffinity []*PodInfo
	// PodsWithRequiredAntiAffinity are the pods with required anti-affinity.
	PodsWithRequiredAntiAffinity []*PodInfo
	// DeclaredFeatures are the features the node declares in its status.
	DeclaredFeatures ndf.FeatureSet
}

// NewNodeInfo returns a NodeInfo with the given pods and no node.
func NewNodeInfo(pods ...*v1.Pod) *NodeInfo {
	ni := &NodeInfo{UsedPorts: HostPortInfo{}, Generation: nextGeneration(), Index: -1}
	for _, p := range pods {
		ni.AddPod(p)
	}
	return ni
}

// Node returns the node, nil when the node is gone but pods remain.
func (n *NodeInfo) Node() *v1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// SetNode sets the node and its allocatable.
func (n *NodeInfo) SetNode(node *v1.Node) {
	n.node = node
	n.name = node.Name
	n.Allocatable = *NewResource(node.Status.Allocatable)
	n.DeclaredFeatures = ndf.DefaultFramework.TryMap(node.Status.DeclaredFeatures)
	n.Generation = nextGeneration()
}

// RemoveNode clears the node, keeping its pods (they may still be deleted later).
func (n *NodeInfo) RemoveNode() {
	n.node = nil
	n.name = ""
	n.Generation = nextGeneration()
}

// AddPod adds a pod.
func (n *NodeInfo) AddPod(pod *v1.Pod) { n.AddPodInfo(NewPodInfo(pod)) }

// AddPodInfo adds a pod whose PodInfo is already computed.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if HasAffinity(pi.Pod) {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if pi.HasRequiredAntiAffinity() {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

// RemovePod removes the pod with pod's UID.
func (n *NodeInfo) RemovePod(pod *v1.Pod) error {
	for i, pi := range n.Pods {
		if pi.Pod.UID == pod.UID {
			last := len(n.Pods) - 1
			n.Pods[i] = n.Pods[last]
			n.Pods[last] = nil
			n.Pods = n.Pods[:last]
			n.PodsWithAffinity = removeFrom(n.PodsWithAffinity, pod)
			n.PodsWithRequiredAntiAffinity = removeFrom(n.PodsWithRequiredAntiAffinity, pod)
			n.update(pi, -1)
			return nil
		}
	}
	return fmt.Errorf("no pod %s/%s (uid %s) on node %s", pod.Namespace, pod.Name, pod.UID, n.NodeName())
}

func removeFrom(list []*PodInfo, pod *v1.Pod) []*PodInfo {
	for i, pi := range list {
		if pi.Pod.UID == pod.UID {
			last := len(list) - 1
			list[i] = list[last]
			list[last] = nil
			return list[:last]
		}
	}
	return list
}

func (n *NodeInfo) update(pi *PodInfo, sign int64) {
	if sign > 0 {
		n.Requested.AddResource(&pi.Requests)
	} else {
		n.Requested.SubResource(&pi.Requests)
	}
	n.NonZeroRequested.MilliCPU += sign * pi.NonZeroCPU
	n.NonZeroRequested.Memory += sign * pi.NonZeroMem
	if n.UsedPorts == nil {
		n.UsedPorts = HostPortInfo{}
	}
	for _, p := range pi.HostPorts {
		if sign > 0 {
			n.UsedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
		} else {
			n.UsedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
		}
	}
	n.Generation = nextGeneration()
}

// NodeName returns the node's name, or "" without a node.
func (n *NodeInfo) NodeName() string {
	if n == nil {
		return ""
	}
	return n.name
}

// Snapshot returns a copy that shares the (immutable) pods and node.
func (n *NodeInfo) Snapshot() *NodeInfo {
	out := &NodeInfo{
		node:                         n.node,
		name:                         n.name,
		Pods:                         append([]*PodInfo(nil), n.Pods...),
		PodsWithAffinity:             append([]*PodInfo(nil), n.PodsWithAffinity...),
		PodsWithRequiredAntiAffinity: append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...),
		Requested:                    *n.Requested.Clone(),
		NonZeroRequested:             *n.NonZeroRequested.Clone(),
		Allocatable:                  *n.Allocatable.Clone(),
		UsedPorts:                    n.UsedPorts.Clone(),
		ImageStates:                  n.ImageStates,
		DeclaredFeatures:             n.DeclaredFeatures,
		Generation:                   n.Generation,
		Index:                        n.Index,
	}
	return out
}

// HostPortInfo records host ports in use: ip -> protocol/port.
type HostPortInfo map[string]map[ProtocolPort]struct{}

// ProtocolPort is a protocol and a port.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

const defaultHostIP = "0.0.0.0"

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = defaultHostIP
	}
	if protocol == "" {
		protocol = string(v1.ProtocolTCP)
	}
	return ip, strings.ToUpper(protocol)
}

// Add records a port.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	ip, protocol = sanitize(ip, protocol)
	if h[ip] == nil {
		h[ip] = map[ProtocolPort]struct{}{}
	}
	h[ip][ProtocolPort{protocol, port}] = struct{}{}
}

// Remove forgets a port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	ip, protocol = sanitize(ip, protocol)
	if m := h[ip]; m != nil {
		delete(m, ProtocolPort{protocol, port})
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// CheckConflict is true when the port is taken: on the same IP, or on any
// IP when either side binds 0.0.0.0.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if ip == defaultHostIP {
		for _, m := range h {
			if _, ok := m[pp]; ok {
				return true
			}
		}
		return false
	}
	for _, k := range [2]string{ip, defaultHostIP} {
		if _, ok := h[k][pp]; ok {
			return true
		}
	}
	return false
}

// Clone deep-copies h.
func (h HostPortInfo) Clone() HostPortInfo {
	out := make(HostPortInfo, len(h))
	for ip, m := range h {
		c := make(map[ProtocolPort]struct{}, len(m))
		for k := range m {
			c[k] = struct{}{}
		}
		out[ip] = c
	}
	return out
}
