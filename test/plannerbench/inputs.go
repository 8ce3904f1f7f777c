package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The annotations of a kubesched node type.
const (
	hourlyCostAnnotation = "simulation.kubesched.io/hourly-cost"
	zonesAnnotation      = "simulation.kubesched.io/zones"
)

// nodeType is one node type of the types file: its Node, price and zones.
type nodeType struct {
	Name  string
	Node  *corev1.Node
	Price float64
	Zones []string
}

// input is one benchmark input: what hack/genplanner wrote into a folder.
type input struct {
	Dir         string
	ClusterFile string
	TypesFile   string
	Deployments []*appsv1.Deployment
	DaemonSets  []*appsv1.DaemonSet
	Types       []nodeType
}

// Label names the input in the table.
func (in *input) Label() string {
	s := thousands(in.AppPods()) + " pods"
	if len(in.DaemonSets) > 0 {
		s += fmt.Sprintf(", %d DaemonSets", len(in.DaemonSets))
	}
	return s
}

// AppPods counts the Deployments' replicas.
func (in *input) AppPods() int {
	n := 0
	for _, d := range in.Deployments {
		n += int(replicas(d))
	}
	return n
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

// documents splits a multi-document YAML file.
func documents(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			out = append(out, doc)
		}
	}
}

// readInput reads dir/cluster.yaml and dir/types.yaml.
func readInput(dir string) (*input, error) {
	in := &input{Dir: dir, ClusterFile: filepath.Join(dir, "cluster.yaml"), TypesFile: filepath.Join(dir, "types.yaml")}
	docs, err := documents(in.ClusterFile)
	if err != nil {
		return nil, err
	}
	for i, doc := range docs {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", in.ClusterFile, i+1, err)
		}
		switch meta.Kind {
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict(doc, d); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", in.ClusterFile, i+1, err)
			}
			in.Deployments = append(in.Deployments, d)
		case "DaemonSet":
			d := &appsv1.DaemonSet{}
			if err := yaml.UnmarshalStrict(doc, d); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", in.ClusterFile, i+1, err)
			}
			in.DaemonSets = append(in.DaemonSets, d)
		case "":
		default:
			return nil, fmt.Errorf("%s: document %d: kind %s: the benchmark reads Deployments and DaemonSets only", in.ClusterFile, i+1, meta.Kind)
		}
	}
	docs, err = documents(in.TypesFile)
	if err != nil {
		return nil, err
	}
	for i, doc := range docs {
		n := &corev1.Node{}
		if err := yaml.UnmarshalStrict(doc, n); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", in.TypesFile, i+1, err)
		}
		if n.Kind == "" {
			continue // comments only
		}
		if n.Kind != "Node" {
			return nil, fmt.Errorf("%s: document %d: kind %s: want Node", in.TypesFile, i+1, n.Kind)
		}
		price, err := strconv.ParseFloat(n.Annotations[hourlyCostAnnotation], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: Node %s: %s: %w", in.TypesFile, n.Name, hourlyCostAnnotation, err)
		}
		var zones []string
		for _, z := range strings.Split(n.Annotations[zonesAnnotation], ",") {
			if z = strings.TrimSpace(z); z != "" {
				zones = append(zones, z)
			}
		}
		if len(zones) == 0 {
			return nil, fmt.Errorf("%s: Node %s: no %s", in.TypesFile, n.Name, zonesAnnotation)
		}
		in.Types = append(in.Types, nodeType{Name: n.Name, Node: n, Price: price, Zones: zones})
	}
	if len(in.Types) == 0 {
		return nil, fmt.Errorf("%s: no node type", in.TypesFile)
	}
	return in, nil
}

// pods are the Deployments' pods as the ReplicaSet controller would make
// them (pending, named and labelled from the template, a UID each).
func (in *input) pods() []*corev1.Pod {
	var out []*corev1.Pod
	for _, d := range in.Deployments {
		for i := range int(replicas(d)) {
			name := fmt.Sprintf("%s-%05d", d.Name, i)
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name: name, Namespace: namespace(d.Namespace),
					UID:    types.UID(fmt.Sprintf("%s-%s", namespace(d.Namespace), name)),
					Labels: d.Spec.Template.Labels,
				},
				Spec:   *d.Spec.Template.Spec.DeepCopy(),
				Status: corev1.PodStatus{Phase: corev1.PodPending},
			}
			out = append(out, p)
		}
	}
	return out
}

func namespace(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// podRequests sums a pod's requests (containers, or the largest init
// container, as the scheduler does), in milli-units.
func podRequests(spec *corev1.PodSpec) (cpu, mem int64) {
	for _, c := range spec.Containers {
		cpu += c.Resources.Requests.Cpu().MilliValue()
		mem += c.Resources.Requests.Memory().Value()
	}
	for _, c := range spec.InitContainers {
		cpu = max(cpu, c.Resources.Requests.Cpu().MilliValue())
		mem = max(mem, c.Resources.Requests.Memory().Value())
	}
	return cpu, mem
}

// planNode is one node a plan buys.
type planNode struct {
	Type  string
	Zone  string
	Price float64
	// Pods counts the pods the planner put on it (0 if it does not say).
	Pods int
}

// sortNodes orders nodes by type and zone.
func sortNodes(nodes []planNode) {
	sort.SliceStable(nodes, func(i, j int) bool {
		if nodes[i].Type != nodes[j].Type {
			return nodes[i].Type < nodes[j].Type
		}
		return nodes[i].Zone < nodes[j].Zone
	})
}

// nodeManifests writes the plan's nodes as Node manifests: each a copy
// of its type's Node, named, in its zone, with the hostname label a
// kubelet gives it.
func (in *input) nodeManifests(prefix string, nodes []planNode) ([]byte, error) {
	byName := map[string]*corev1.Node{}
	for _, t := range in.Types {
		byName[t.Name] = t.Node
	}
	var b bytes.Buffer
	for i, pn := range nodes {
		tmpl, ok := byName[pn.Type]
		if !ok {
			return nil, fmt.Errorf("plan node %d: unknown type %q", i, pn.Type)
		}
		n := tmpl.DeepCopy()
		n.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
		n.Name = fmt.Sprintf("%s-%04d", prefix, i)
		n.Annotations = nil
		n.Labels = mergeLabels(n.Labels, map[string]string{
			corev1.LabelHostname:     n.Name,
			corev1.LabelTopologyZone: pn.Zone,
		})
		y, err := yaml.Marshal(n)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes(), nil
}

func mergeLabels(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
