package realgen

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Region and Zones are where the cluster runs: an EKS cluster in
// us-east-1 with a subnet (and its nodes) in each of three zones.
const Region = "us-east-1"

// Zones are the cluster's zones, with the zone IDs EKS labels nodes with.
var Zones = []struct{ Name, ID string }{{"us-east-1a", "use1-az1"}, {"us-east-1b", "use1-az2"}, {"us-east-1c", "use1-az4"}}

// Pool is a managed node group of one instance type.
//
// Allocatable is what the EKS AMI's bootstrap leaves (its formula, for
// 110 pods): CPU minus kube-reserved (6% of the first core, 1% of the
// second, 0.5% of the next two, 0.25% of the rest: 110m on 16 cores);
// memory minus kube-reserved (11 MiB per pod + 255 MiB = 1465 MiB) and
// the hard eviction threshold (100 MiB); ephemeral storage (a 100 GiB
// root volume) minus the 10% nodefs eviction threshold. Max pods is 110,
// EKS's cap with prefix delegation below 30 vCPUs. Prices are us-east-1
// on-demand list prices per hour.
type Pool struct {
	// Name is the node group's (label eks.amazonaws.com/nodegroup).
	Name, InstanceType string
	CPU                int64 // cores
	MemoryGi           int64
	HourlyCost         string
	// Share is the pool's share of the nodes, in quarters.
	Share int
}

// Pools are the cluster's node groups: three general nodes for one
// memory-optimized node.
var Pools = []Pool{
	{Name: "general", InstanceType: "m6i.4xlarge", CPU: 16, MemoryGi: 64, HourlyCost: "0.768", Share: 3},
	{Name: "memory", InstanceType: "r6i.4xlarge", CPU: 16, MemoryGi: 128, HourlyCost: "1.008", Share: 1},
}

const (
	maxPods            = 110
	kubeReservedCPU    = 110 // millicores, 16 cores
	kubeReservedMemMi  = 11*maxPods + 255
	evictionHardMemMi  = 100
	rootVolumeGi       = 100
	nodegroupLabel     = "eks.amazonaws.com/nodegroup"
	capacityTypeLabel  = "eks.amazonaws.com/capacityType"
	nodegroupImage     = "eks.amazonaws.com/nodegroup-image"
	amiID              = "ami-0c2b0d3fb02824d92"
	cloudProviderLabel = "k8s.io/cloud-provider-aws"
	ebsZoneLabel       = "topology.ebs.csi.aws.com/zone"
	zoneIDLabel        = "topology.k8s.aws/zone-id"
)

// nodeLabels are the labels EKS (kubelet, the AWS cloud provider, the EBS CSI
// driver, the managed node group) sets on a node of pool p in zone z;
// hostname empty leaves out kubernetes.io/hostname (a node type).
func nodeLabels(p Pool, zone int, hostname string) map[string]string {
	l := map[string]string{
		v1.LabelArchStable:                 "amd64",
		v1.LabelOSStable:                   "linux",
		v1.LabelInstanceTypeStable:         p.InstanceType,
		v1.LabelTopologyRegion:             Region,
		"beta.kubernetes.io/arch":          "amd64",
		"beta.kubernetes.io/os":            "linux",
		"beta.kubernetes.io/instance-type": p.InstanceType,
		v1.LabelFailureDomainBetaRegion:    Region,
		nodegroupLabel:                     p.Name,
		capacityTypeLabel:                  "ON_DEMAND",
		nodegroupImage:                     amiID,
		cloudProviderLabel:                 "0c6c9b1d5ee0b3fbd1a1b7b2e4ef5c67",
	}
	if zone >= 0 {
		z := Zones[zone]
		l[v1.LabelTopologyZone] = z.Name
		l[v1.LabelFailureDomainBetaZone] = z.Name
		l[ebsZoneLabel] = z.Name
		l[zoneIDLabel] = z.ID
	}
	if hostname != "" {
		l[v1.LabelHostname] = hostname
	}
	return l
}

// resources are a node of pool p's capacity and allocatable.
func resources(p Pool) (capacity, allocatable v1.ResourceList) {
	memMi := p.MemoryGi * 1024
	capacity = v1.ResourceList{
		v1.ResourceCPU:              *resource.NewQuantity(p.CPU, resource.DecimalSI),
		v1.ResourceMemory:           resource.MustParse(fmt.Sprintf("%dGi", p.MemoryGi)),
		v1.ResourceEphemeralStorage: resource.MustParse(fmt.Sprintf("%dGi", rootVolumeGi)),
		v1.ResourcePods:             *resource.NewQuantity(maxPods, resource.DecimalSI),
	}
	allocatable = v1.ResourceList{
		v1.ResourceCPU:              *resource.NewMilliQuantity(p.CPU*1000-kubeReservedCPU, resource.DecimalSI),
		v1.ResourceMemory:           resource.MustParse(fmt.Sprintf("%dMi", memMi-kubeReservedMemMi-evictionHardMemMi)),
		v1.ResourceEphemeralStorage: resource.MustParse(fmt.Sprintf("%dGi", rootVolumeGi*9/10)),
		v1.ResourcePods:             *resource.NewQuantity(maxPods, resource.DecimalSI),
	}
	return capacity, allocatable
}

// nodes are the cluster's n nodes: each pool's share, each pool's nodes
// round-robin over the zones, named as EKS names them (the private DNS
// name of an address of the zone's subnet, 10.0.32z.0/19).
func nodes(n int) []*v1.Node {
	total := 0
	for _, p := range Pools {
		total += p.Share
	}
	var out []*v1.Node
	perZone := make([]int, len(Zones))
	for pi, p := range Pools {
		count := n * p.Share / total
		if pi == len(Pools)-1 {
			count = n - len(out)
		}
		for i := 0; i < count; i++ {
			zone := i % len(Zones)
			k := perZone[zone]
			perZone[zone]++
			name := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", 32*zone+k/250, 4+k%250)
			capacity, allocatable := resources(p)
			out = append(out, &v1.Node{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: nodeLabels(p, zone, name), Annotations: map[string]string{
					"alpha.kubernetes.io/provided-node-ip":                   fmt.Sprintf("10.0.%d.%d", 32*zone+k/250, 4+k%250),
					"node.alpha.kubernetes.io/ttl":                           "0",
					"volumes.kubernetes.io/controller-managed-attach-detach": "true",
				}},
				Spec: v1.NodeSpec{ProviderID: fmt.Sprintf("aws:///%s/i-0%016x", Zones[zone].Name, uint64(len(out))*0x9e3779b97f4a7c15>>4)},
				Status: v1.NodeStatus{Capacity: capacity, Allocatable: allocatable,
					Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady"}},
					NodeInfo:   v1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux", KubeletVersion: "v1.37.2-eks-3025e55", ContainerRuntimeVersion: "containerd://2.1.4"}},
			})
		}
	}
	return out
}

// NodeTypes are the pools' instance types as capacity --node-types reads
// them: a Node per type with its price and zones, labelled as a node of
// its pool is (no hostname, no zone: the search sets them).
func NodeTypes() []runtime.Object {
	zones := ""
	for i, z := range Zones {
		if i > 0 {
			zones += ","
		}
		zones += z.Name
	}
	var out []runtime.Object
	for _, p := range Pools {
		capacity, allocatable := resources(p)
		out = append(out, &v1.Node{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
			ObjectMeta: metav1.ObjectMeta{Name: p.InstanceType, Labels: nodeLabels(p, -1, ""), Annotations: map[string]string{
				"simulation.kubesched.io/hourly-cost": p.HourlyCost,
				"simulation.kubesched.io/zones":       zones,
			}},
			Status: v1.NodeStatus{Capacity: capacity, Allocatable: allocatable},
		})
	}
	return out
}
