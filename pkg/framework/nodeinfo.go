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
//
// Its invariant: two NodeInfos with the same generation have the same
// content (node, pods, sums, ports, image states, declared features).
// Every field is unexported, every change goes through a method that
// gives the NodeInfo a new generation, and a copy (Snapshot) keeps the
// generation only until either is changed. Per-node caches (the
// runtime's equivalence cache, plugins' memos) rely on it: a result
// recorded for a generation holds for any NodeInfo of that generation.
//
// The accessors return the NodeInfo's own slices and maps, not copies:
// callers must not modify them.
type NodeInfo struct {
	// The fields every cycle reads for every node come first, in one cache
	// line: the name, the generation and the index (the per-node loops
	// are bound by memory latency, not by arithmetic).

	// name is node.Name, kept here so that the per-node loops don't touch
	// the Node object.
	name       string
	generation int64
	index      int
	node       *v1.Node
	pods       []*PodInfo
	requested  Resource
	// nonZeroRequested is the sum with the scoring defaults (cpu, memory).
	nonZeroRequested             Resource
	allocatable                  Resource
	usedPorts                    HostPortInfo
	imageStates                  map[string]*ImageStateSummary
	podsWithAffinity             []*PodInfo
	podsWithRequiredAntiAffinity []*PodInfo
	declaredFeatures             ndf.FeatureSet
}

// NewNodeInfo returns a NodeInfo with the given pods and no node.
func NewNodeInfo(pods ...*v1.Pod) *NodeInfo {
	ni := &NodeInfo{usedPorts: HostPortInfo{}, generation: nextGeneration(), index: -1}
	for _, p := range pods {
		ni.AddPod(p)
	}
	return ni
}

// Generation identifies the NodeInfo's content: it changes on every
// change, and is unique over all NodeInfos (a copy shares it only until
// either is changed).
func (n *NodeInfo) Generation() int64 { return n.generation }

// Index is the node's position in the scheduling snapshot's list, set by
// the snapshot (SetIndex); per-node caches key by it. -1 outside a
// snapshot.
func (n *NodeInfo) Index() int { return n.index }

// SetIndex records the node's position in a snapshot's list. The index
// is where the NodeInfo is, not what it holds: it is not part of the
// content the generation names, and setting it keeps the generation.
func (n *NodeInfo) SetIndex(i int) { n.index = i }

// Pods are the pods on the node, assumed ones included.
func (n *NodeInfo) Pods() []*PodInfo { return n.pods }

// Requested is the sum of the pods' requests.
func (n *NodeInfo) Requested() Resource { return n.requested }

// NonZeroRequested is the sum of the pods' requests with the scoring
// defaults for cpu and memory.
func (n *NodeInfo) NonZeroRequested() Resource { return n.nonZeroRequested }

// Allocatable is the node's allocatable.
func (n *NodeInfo) Allocatable() Resource { return n.allocatable }

// UsedPorts are the host ports in use.
func (n *NodeInfo) UsedPorts() HostPortInfo { return n.usedPorts }

// ImageStates are the images on this node, with cluster-wide node counts
// (set by the snapshot).
func (n *NodeInfo) ImageStates() map[string]*ImageStateSummary { return n.imageStates }

// SetImageStates sets the images on this node with their cluster-wide
// node counts: a change of content, so a new generation.
func (n *NodeInfo) SetImageStates(states map[string]*ImageStateSummary) {
	n.imageStates = states
	n.generation = nextGeneration()
}

// PodsWithAffinity are the pods with any pod (anti-)affinity.
func (n *NodeInfo) PodsWithAffinity() []*PodInfo { return n.podsWithAffinity }

// PodsWithRequiredAntiAffinity are the pods with required anti-affinity.
func (n *NodeInfo) PodsWithRequiredAntiAffinity() []*PodInfo {
	return n.podsWithRequiredAntiAffinity
}

// DeclaredFeatures are the features the node declares in its status.
func (n *NodeInfo) DeclaredFeatures() ndf.FeatureSet { return n.declaredFeatures }

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
	n.allocatable = *NewResource(node.Status.Allocatable)
	n.declaredFeatures = ndf.DefaultFramework.TryMap(node.Status.DeclaredFeatures)
	n.generation = nextGeneration()
}

// RemoveNode clears the node, keeping its pods (they may still be deleted later).
func (n *NodeInfo) RemoveNode() {
	n.node = nil
	n.name = ""
	n.generation = nextGeneration()
}

// AddPod adds a pod.
func (n *NodeInfo) AddPod(pod *v1.Pod) { n.AddPodInfo(NewPodInfo(pod)) }

// AddPodInfo adds a pod whose PodInfo is already computed.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.pods = append(n.pods, pi)
	if HasAffinity(pi.Pod) {
		n.podsWithAffinity = append(n.podsWithAffinity, pi)
	}
	if pi.HasRequiredAntiAffinity() {
		n.podsWithRequiredAntiAffinity = append(n.podsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

// RemovePod removes the pod with pod's UID.
func (n *NodeInfo) RemovePod(pod *v1.Pod) error {
	for i, pi := range n.pods {
		if pi.Pod.UID == pod.UID {
			last := len(n.pods) - 1
			n.pods[i] = n.pods[last]
			n.pods[last] = nil
			n.pods = n.pods[:last]
			n.podsWithAffinity = removeFrom(n.podsWithAffinity, pod)
			n.podsWithRequiredAntiAffinity = removeFrom(n.podsWithRequiredAntiAffinity, pod)
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
		n.requested.AddResource(&pi.Requests)
	} else {
		n.requested.SubResource(&pi.Requests)
	}
	n.nonZeroRequested.MilliCPU += sign * pi.NonZeroCPU
	n.nonZeroRequested.Memory += sign * pi.NonZeroMem
	if n.usedPorts == nil {
		n.usedPorts = HostPortInfo{}
	}
	for _, p := range pi.HostPorts {
		if sign > 0 {
			n.usedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
		} else {
			n.usedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
		}
	}
	n.generation = nextGeneration()
}

// NodeName returns the node's name, or "" without a node.
func (n *NodeInfo) NodeName() string {
	if n == nil {
		return ""
	}
	return n.name
}

// Snapshot returns a copy that shares the (immutable) pods and node, and
// the generation: the content is equal until either is changed.
func (n *NodeInfo) Snapshot() *NodeInfo {
	out := &NodeInfo{
		node:                         n.node,
		name:                         n.name,
		pods:                         append([]*PodInfo(nil), n.pods...),
		podsWithAffinity:             append([]*PodInfo(nil), n.podsWithAffinity...),
		podsWithRequiredAntiAffinity: append([]*PodInfo(nil), n.podsWithRequiredAntiAffinity...),
		requested:                    *n.requested.Clone(),
		nonZeroRequested:             *n.nonZeroRequested.Clone(),
		// allocatable is only ever replaced whole (SetNode), never
		// changed in place: the copy shares its scalar map.
		allocatable:      n.allocatable,
		usedPorts:        n.usedPorts.Clone(),
		imageStates:      n.imageStates,
		declaredFeatures: n.declaredFeatures,
		generation:       n.generation,
		index:            n.index,
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
