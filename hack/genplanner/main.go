// Command genplanner writes the inputs of the planner peer benchmark
// (issue 43, `make bench-planner`): a greenfield cluster (pending pods of
// Deployments, no Node) and the node types to buy for it.
//
//	go run ./hack/genplanner -pods 1000 -seed 1 -o /tmp/planner-1000
//	kubesched capacity -f /tmp/planner-1000/cluster.yaml --node-types /tmp/planner-1000/types.yaml
//
// The node types are 9 on-demand AWS shapes, m5, c5 and r5 in large,
// 2xlarge and 4xlarge, at us-east-1 on-demand list prices (Linux), each
// offered in us-east-1a, us-east-1b and us-east-1c. Their allocatable is
// what an EKS node of the type gets, computed as Karpenter's AWS provider
// and the EKS AMI compute it:
//   - capacity memory: the nominal GiB less 7.5% VM overhead (Karpenter's
//     default vmMemoryOverheadPercent);
//   - pods: the ENI-limited max pods (29, 58, 234);
//   - kube-reserved CPU: 6% of the first core, 1% of the second, 0.5% of
//     the next two, 0.25% of the rest; memory: 11Mi per pod + 255Mi;
//   - eviction threshold: 100Mi of memory; no system-reserved (the EKS
//     AMI's default).
//
// The pods, in Deployments of the default namespace (their shares of -pods,
// each class split into Deployments of a seeded size):
//
//	class   share  requests     constraint
//	web     30%    500m / 1Gi   zone topology spread, maxSkew 1, DoNotSchedule
//	api     25%    1    / 2Gi   none
//	cache   15%    500m / 4Gi   none
//	batch   15%    2    / 4Gi   nodeSelector zone us-east-1a
//	ingest  13%    1    / 1Gi   nodeSelector zone us-east-1c
//	db       2%    2    / 8Gi   required pod anti-affinity per hostname
//
// Each spread or anti-affinity term selects its own Deployment's pods.
// With -daemonsets, three DaemonSets of priority system-node-critical
// (as such agents are) run on every node: a log agent (100m / 200Mi),
// node-exporter (50m / 64Mi) and the CNI (100m / 100Mi).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Region and Zones are where the node types are offered.
const Region = "us-east-1"

var Zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// The annotations of a node type (questions.HourlyCostAnnotation and
// questions.ZonesAnnotation; not imported: hack/ reads no internal
// package it does not need).
const (
	hourlyCostAnnotation = "simulation.kubesched.io/hourly-cost"
	zonesAnnotation      = "simulation.kubesched.io/zones"
)

// class is one kind of workload of the mix.
type class struct {
	name string
	// percent is its share of the pods.
	percent int
	cpu     string
	memory  string
	// minReplicas..maxReplicas bound the size of each of its Deployments.
	minReplicas, maxReplicas int
	// zone pins its pods to a zone by nodeSelector.
	zone string
	// spread: a zone topology spread constraint, maxSkew 1, DoNotSchedule.
	spread bool
	// antiAffinity: required pod anti-affinity per hostname.
	antiAffinity bool
}

// Classes is the mix of issue 43.
var Classes = []class{
	{name: "web", percent: 30, cpu: "500m", memory: "1Gi", minReplicas: 20, maxReplicas: 60, spread: true},
	{name: "api", percent: 25, cpu: "1", memory: "2Gi", minReplicas: 20, maxReplicas: 50},
	{name: "cache", percent: 15, cpu: "500m", memory: "4Gi", minReplicas: 10, maxReplicas: 30},
	{name: "batch", percent: 15, cpu: "2", memory: "4Gi", minReplicas: 10, maxReplicas: 40, zone: "us-east-1a"},
	{name: "ingest", percent: 13, cpu: "1", memory: "1Gi", minReplicas: 10, maxReplicas: 40, zone: "us-east-1c"},
	{name: "db", percent: 2, cpu: "2", memory: "8Gi", minReplicas: 3, maxReplicas: 6, antiAffinity: true},
}

// daemonSet is an agent on every node.
type daemonSet struct{ name, cpu, memory string }

var DaemonSets = []daemonSet{
	{name: "log-agent", cpu: "100m", memory: "200Mi"},
	{name: "node-exporter", cpu: "50m", memory: "64Mi"},
	{name: "cni", cpu: "100m", memory: "100Mi"},
}

// nodeType is an AWS instance type.
type nodeType struct {
	name    string
	vcpus   int64
	memGiB  int64
	maxPods int64
	price   string
}

// NodeTypes are the 9 shapes, us-east-1 on-demand Linux prices per hour.
var NodeTypes = []nodeType{
	{"m5.large", 2, 8, 29, "0.096"},
	{"m5.2xlarge", 8, 32, 58, "0.384"},
	{"m5.4xlarge", 16, 64, 234, "0.768"},
	{"c5.large", 2, 4, 29, "0.085"},
	{"c5.2xlarge", 8, 16, 58, "0.34"},
	{"c5.4xlarge", 16, 32, 234, "0.68"},
	{"r5.large", 2, 16, 29, "0.126"},
	{"r5.2xlarge", 8, 64, 58, "0.504"},
	{"r5.4xlarge", 16, 128, 234, "1.008"},
}

// Options say what to generate.
type Options struct {
	Pods       int
	DaemonSets bool
	Seed       int64
}

// kubeReservedCPU is the EKS AMI's kube-reserved CPU in millicores.
func kubeReservedCPU(vcpus int64) int64 {
	m := float64(vcpus * 1000)
	band := func(lo, hi float64) float64 { return max(0, min(m, hi)-lo) }
	return int64(math.Ceil(0.06*band(0, 1000) + 0.01*band(1000, 2000) + 0.005*band(2000, 4000) + 0.0025*band(4000, math.Inf(1))))
}

// node is the Node manifest of a type: capacity and allocatable as above.
func (t nodeType) node() *v1.Node {
	capMemMi := int64(math.Floor(float64(t.memGiB*1024) * (1 - 0.075)))
	reservedMemMi := 11*t.maxPods + 255 + 100 // kube-reserved + eviction
	return &v1.Node{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{
			Name: t.name,
			Annotations: map[string]string{
				hourlyCostAnnotation: t.price,
				zonesAnnotation:      Zones[0] + "," + Zones[1] + "," + Zones[2],
			},
			Labels: map[string]string{
				v1.LabelOSStable:             "linux",
				v1.LabelArchStable:           "amd64",
				v1.LabelInstanceTypeStable:   t.name,
				v1.LabelTopologyRegion:       Region,
				"karpenter.sh/capacity-type": "on-demand",
			},
		},
		Status: v1.NodeStatus{
			Capacity: v1.ResourceList{
				v1.ResourceCPU:    *resource.NewQuantity(t.vcpus, resource.DecimalSI),
				v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", capMemMi)),
				v1.ResourcePods:   *resource.NewQuantity(t.maxPods, resource.DecimalSI),
			},
			Allocatable: v1.ResourceList{
				v1.ResourceCPU:    *resource.NewMilliQuantity(t.vcpus*1000-kubeReservedCPU(t.vcpus), resource.DecimalSI),
				v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", capMemMi-reservedMemMi)),
				v1.ResourcePods:   *resource.NewQuantity(t.maxPods, resource.DecimalSI),
			},
		},
	}
}

// Shares splits n pods over the classes by their percents, the largest
// remainders rounded up, so that they add up to n.
func Shares(n int) []int {
	counts := make([]int, len(Classes))
	type rem struct{ i, r int }
	var rems []rem
	left := n
	for i, c := range Classes {
		counts[i] = n * c.percent / 100
		left -= counts[i]
		rems = append(rems, rem{i, n * c.percent % 100})
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].r > rems[b].r })
	for k := 0; left > 0; k, left = k+1, left-1 {
		counts[rems[k%len(rems)].i]++
	}
	return counts
}

// deployment is a Deployment of class c.
func deployment(c class, name string, replicas int) *appsv1.Deployment {
	labels := map[string]string{"app": name, "tier": c.name}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	spec := v1.PodSpec{Containers: []v1.Container{{
		Name: c.name, Image: "registry.example.com/" + c.name + ":1.0",
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(c.cpu), v1.ResourceMemory: resource.MustParse(c.memory)}},
	}}}
	if c.zone != "" {
		spec.NodeSelector = map[string]string{v1.LabelTopologyZone: c.zone}
	}
	if c.spread {
		spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: sel}}
	}
	if c.antiAffinity {
		spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: v1.LabelHostname}}}}
	}
	r := int32(replicas)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &r, Selector: sel,
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}
}

// daemon is the DaemonSet of d, tolerating every taint.
func daemon(d daemonSet) *appsv1.DaemonSet {
	labels := map[string]string{"app": d.name}
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: "kube-system", Labels: labels},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: v1.PodSpec{
				PriorityClassName: "system-node-critical",
				Tolerations:       []v1.Toleration{{Operator: v1.TolerationOpExists}},
				Containers: []v1.Container{{Name: d.name, Image: "registry.example.com/" + d.name + ":1.0",
					Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
						v1.ResourceCPU: resource.MustParse(d.cpu), v1.ResourceMemory: resource.MustParse(d.memory)}}}},
			}}},
	}
}

// Cluster is the cluster's objects: the DaemonSets (with -daemonsets),
// then the Deployments in a seeded order (the order they are created in,
// so the classes mix in the scheduling queue).
func Cluster(o Options) []any {
	r := rand.New(rand.NewSource(o.Seed))
	var out []any
	if o.DaemonSets {
		for _, d := range DaemonSets {
			out = append(out, daemon(d))
		}
	}
	var deps []any
	for i, n := range Shares(o.Pods) {
		c := Classes[i]
		for k := 1; n > 0; k++ {
			size := c.minReplicas + r.Intn(c.maxReplicas-c.minReplicas+1)
			if n-size < c.minReplicas {
				size = n // the rest, rather than a runt
			}
			deps = append(deps, deployment(c, fmt.Sprintf("%s-%02d", c.name, k), size))
			n -= size
		}
	}
	r.Shuffle(len(deps), func(i, j int) { deps[i], deps[j] = deps[j], deps[i] })
	return append(out, deps...)
}

// Types is the node types' Nodes.
func Types() []any {
	var out []any
	for _, t := range NodeTypes {
		out = append(out, t.node())
	}
	return out
}

// write writes objs as multi-document YAML after a header comment.
func write(w io.Writer, header string, objs []any) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(header)
	for _, obj := range objs {
		// Through JSON to a map, pruned of the zero values the API types
		// marshal (status.nodeInfo, creationTimestamp: null, ...).
		j, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		var m any
		if err := json.Unmarshal(j, &m); err != nil {
			return err
		}
		b, err := yaml.Marshal(prune(m))
		if err != nil {
			return err
		}
		bw.WriteString("---\n")
		bw.Write(b)
	}
	return bw.Flush()
}

// prune drops the nulls, zeros, empty strings, lists and maps of v: none
// of this generator's fields means anything by them.
func prune(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if e = prune(e); e == nil {
				delete(v, k)
			} else {
				v[k] = e
			}
		}
		if len(v) == 0 {
			return nil
		}
	case []any:
		out := v[:0]
		for _, e := range v {
			if e = prune(e); e != nil {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case string:
		if v == "" {
			return nil
		}
	case float64:
		if v == 0 {
			return nil
		}
	}
	return v
}

// Write writes the cluster and the node types of o.
func Write(o Options, cluster, types io.Writer) error {
	header := fmt.Sprintf("# Generated by: go run ./hack/genplanner -pods %d -seed %d", o.Pods, o.Seed)
	if o.DaemonSets {
		header += " -daemonsets"
	}
	header += "\n"
	if cluster != nil {
		if err := write(cluster, header, Cluster(o)); err != nil {
			return err
		}
	}
	if types != nil {
		return write(types, header+"# 9 on-demand AWS types, us-east-1 list prices, allocatable as on EKS (see hack/genplanner)\n", Types())
	}
	return nil
}

func main() {
	var o Options
	var dir string
	var typesOnly bool
	flag.IntVar(&o.Pods, "pods", 1000, "number of pending pods (of Deployments)")
	flag.BoolVar(&o.DaemonSets, "daemonsets", false, "add three DaemonSets that run on every node")
	flag.Int64Var(&o.Seed, "seed", 1, "random seed (Deployment sizes and order)")
	flag.StringVar(&dir, "o", "", "write cluster.yaml and types.yaml into this folder (created) instead of the standard output")
	flag.BoolVar(&typesOnly, "types", false, "without -o: write the node types, not the cluster, to the standard output")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `usage: go run ./hack/genplanner [flags] [-o DIR]

genplanner writes the inputs of the planner peer benchmark (make
bench-planner): a cluster of pending pods of Deployments and no Node, and
9 AWS node types over 3 zones for capacity --node-types. The same flags
give the same bytes.

flags:
`)
		flag.PrintDefaults()
	}
	flag.Parse()
	if o.Pods < 0 || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(o, dir, typesOnly); err != nil {
		fmt.Fprintln(os.Stderr, "genplanner:", err)
		os.Exit(1)
	}
}

func run(o Options, dir string, typesOnly bool) error {
	if dir == "" {
		if typesOnly {
			return Write(o, nil, os.Stdout)
		}
		return Write(o, os.Stdout, nil)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var c, t bytes.Buffer
	if err := Write(o, &c, &t); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), c.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "types.yaml"), t.Bytes(), 0o644)
}
