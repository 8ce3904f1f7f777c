package loading_test

import (
	"fmt"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

const goodNode = `apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
`

func TestLoadReportsBadInputWithFileDocumentAndField(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{name: "malformed YAML names the document", content: goodNode + "---\nkind: Pod\n  metadata: [\n",
			want: []string{"document 2", "malformed YAML"}},
		{name: "an object without a name names metadata.name", content: goodNode + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  namespace: x\n",
			want: []string{"document 2", "(Pod)", "metadata.name: Required value"}},
		{name: "an unparseable quantity names its field", content: goodNode + `---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: x
    resources:
      requests: {cpu: "two"}
`, want: []string{"document 2", "Pod default/p", "spec.containers[0].resources.requests.cpu", `"two"`}},
		{name: "a negative request is refused as the API server refuses it", content: goodNode + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, resources: {requests: {cpu: \"-1\"}}}]\n",
			want: []string{"document 2", "Pod default/p", "spec.containers[0].resources.requests.cpu", `"-1": must be greater than or equal to 0`}},
		{name: "a quantity too large to count in milli-units is refused", content: strings.Replace(goodNode, `cpu: "4"`, `cpu: "1e16"`, 1),
			want: []string{"document 1", "Node n1", `"1e16": must be at most 9223372036854775`}},
		{name: "a negative request deep in an ephemeral volume's claim template is found", content: goodNode + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes: [{name: v, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: \"-1Gi\"}}}}}}]\n  containers: [{name: c, image: x}]\n",
			want: []string{"document 2", "Pod default/p", "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests.storage", `"-1Gi": must be greater than or equal to 0`}},
		{name: "a negative limit in a ReplicaSet's pod template is found", content: goodNode + "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      initContainers: [{name: i, image: x, resources: {limits: {memory: \"-5\"}}}]\n      containers: [{name: c, image: x}]\n",
			want: []string{"document 2", "ReplicaSet default/r", "spec.template.spec.initContainers[0].resources.limits.memory", `"-5"`}},
		{name: "memory past what an int64 counts in bytes is refused", content: strings.Replace(goodNode, `memory: 8Gi`, `memory: "1e19"`, 1),
			want: []string{"document 1", "Node n1", "status.capacity.memory", `"1e19": must be at most 9223372036854775807`}},
		{name: "a pod's overhead too large to count is refused", content: goodNode + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  overhead: {cpu: \"1e17\"}\n  containers: [{name: c, image: x}]\n",
			want: []string{"document 2", "Pod default/p", "spec.overhead.cpu", `"1e17": must be at most`}},
		{name: "a bad quantity outranks an unknown field in the same object", content: goodNode + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelecter: {a: b}\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"-1\"}}}]\n",
			want: []string{"document 2", "Pod default/p", "spec.containers[0].resources.requests.cpu"}},
		{name: "a node's bad capacity names its field", content: strings.Replace(goodNode, `memory: 8Gi`, `memory: 8GB!`, 1),
			want: []string{"document 1", "Node n1", "status.capacity.memory"}},
		{name: "an unknown field is an error, not ignored", content: goodNode + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  nodeSelecter: {a: b}\n",
			want: []string{"document 2", "Pod default/p", `unknown field "spec.nodeSelecter"`}},
		{name: "a missing kind is an error", content: "apiVersion: v1\nmetadata: {name: x}\n", want: []string{"document 1", "kind: Required value"}},
		{name: "a pod naming a missing PriorityClass is refused as admission would", content: goodNode + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  priorityClassName: gold\n  containers: [{name: c, image: x}]\n",
			want: []string{"Pod default/p", "no PriorityClass with name gold was found"}},
		{name: "an unknown field beside a spec another pod has is still refused", content: goodNode + "---\n" + sharedSpecPod("p", "") + "---\n" +
			strings.Replace(sharedSpecPod("q", ""), "metadata: {", "metadata: {labelz: {a: b}, ", 1),
			want: []string{"document 3", "Pod default/q", `unknown field "metadata.labelz"`}},
		{name: "a spec key that differs in case only is refused beside a shared spec", content: goodNode + "---\n" + sharedSpecPod("p", "") + "---\n" +
			sharedSpecPod("q", "") + "Spec: {}\n",
			want: []string{"document 3", "Pod default/q", `unknown field "Spec"`}},
		{name: "an unparseable quantity in the status of a pod with a shared spec names its field", content: goodNode + "---\n" + sharedSpecPod("p", "") + "---\n" +
			sharedSpecPod("q", "") + "status:\n  containerStatuses: [{name: c, ready: false, restartCount: 0, image: x, imageID: abc, allocatedResources: {cpu: \"two\"}}]\n",
			want: []string{"document 3", "Pod default/q", "status.containerStatuses[0].allocatedResources.cpu", `"two"`}},
		{name: "a negative allocated resource is refused as a negative request is", content: goodNode + "---\n" +
			sharedSpecPod("q", "") + "status:\n  containerStatuses: [{name: c, ready: false, restartCount: 0, image: x, imageID: abc, allocatedResources: {cpu: \"-1\"}}]\n",
			want: []string{"document 2", "Pod default/q", "status.containerStatuses[0].allocatedResources.cpu", `"-1": must be greater than or equal to 0`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := simtest.WriteFile(t, "bad.yaml", tt.content)
			_, err := loading.Load([]string{path})
			if err == nil {
				t.Fatal("no error, want one")
			}
			for _, w := range append(tt.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestLoadReadsListsFoldersAndDefaults(t *testing.T) {
	dir := t.TempDir()
	list := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status:
    capacity: {cpu: "4", memory: 8Gi, pods: "110"}
- apiVersion: v1
  kind: Pod
  metadata: {name: p}
  spec:
    hostNetwork: true
    containers:
    - name: c
      image: x
      ports: [{containerPort: 8080}]
      resources:
        limits: {cpu: "1", memory: 1Gi}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: cm}
`
	prio := `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: base}
value: 50
globalDefault: true
`
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.yml"), []byte(prio), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loading.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 1 || len(c.Pods) != 1 || c.Skipped["ConfigMap"] != 1 {
		t.Fatalf("loaded %d nodes, %d pods, skipped %v; want 1, 1, ConfigMap:1", len(c.Nodes), len(c.Pods), c.Skipped)
	}
	n, p := c.Nodes[0], c.Pods[0]
	if _, ok := n.Status.Allocatable[v1.ResourceCPU]; !ok {
		t.Error("node allocatable was not defaulted from capacity")
	}
	ctr := p.Spec.Containers[0]
	if q := ctr.Resources.Requests[v1.ResourceCPU]; q.String() != "1" {
		t.Errorf("cpu request = %v, want defaulted from the limit to 1", q.String())
	}
	if port := ctr.Ports[0]; port.Protocol != v1.ProtocolTCP || port.HostPort != 8080 {
		t.Errorf("port = %+v, want TCP and hostPort 8080 (hostNetwork)", port)
	}
	if p.Namespace != "default" || p.Spec.SchedulerName != v1.DefaultSchedulerName {
		t.Errorf("namespace %q, schedulerName %q; want default and default-scheduler", p.Namespace, p.Spec.SchedulerName)
	}
	if p.Spec.Priority == nil || *p.Spec.Priority != 50 || p.Spec.PriorityClassName != "base" {
		t.Errorf("priority = %v (%q), want 50 from the global default class", p.Spec.Priority, p.Spec.PriorityClassName)
	}
}

func TestLoadLargeListsInOrder(t *testing.T) {
	list := func(bad ...int) string {
		var items []string
		for i := 1; i <= 300; i++ {
			cpu := "100m"
			if slices.Contains(bad, i) {
				cpu = "-1"
			}
			items = append(items, fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%03d"},"spec":{"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":%q}}}]}}`, i, cpu))
		}
		return `{"apiVersion":"v1","kind":"List","items":[` + strings.Join(items, ",") + `]}`
	}
	tests := []struct {
		name    string
		content string
		wantErr string
	}{
		{name: "the items of a JSON List, decoded in parallel, keep their order", content: list()},
		{name: "of two bad items the first is reported, with its index", content: list(150, 180),
			wantErr: `document 1, item 150 (Pod default/p150): spec.containers[0].resources.requests.cpu: Invalid value: "-1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loading.Load([]string{simtest.WriteFile(t, "list.json", tt.content)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Pods) != 300 {
				t.Fatalf("%d pods loaded, want 300", len(c.Pods))
			}
			for i, p := range c.Pods {
				if want := fmt.Sprintf("p%03d", i+1); p.Name != want {
					t.Fatalf("pod %d is %s, want %s", i, p.Name, want)
				}
			}
		})
	}
}

// sharedSpecPod is a pod whose spec every call shares, bound to node.
func sharedSpecPod(name, node string) string {
	spec := "spec:\n  containers: [{name: c, image: x, ports: [{containerPort: 80}], resources: {limits: {cpu: 100m}}}]\n"
	if node != "" {
		spec += "  nodeName: " + node + "\n"
	}
	return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name + ", labels: {app: " + name + "}}\n" + spec
}

func TestObjectsWithEqualSpecsOrStatusesKeepTheirOwnFields(t *testing.T) {
	const secondNode = "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n  labels: {pool: b}\nstatus:\n  capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}\n"
	content := goodNode + secondNode + "---\n" + sharedSpecPod("p", "") + "---\n" + sharedSpecPod("q", "n1") + "---\n" +
		sharedSpecPod("r", `"n\u0032"`) + "---\n" + sharedSpecPod("s", "")
	c, err := loading.Load([]string{simtest.WriteFile(t, "c.yaml", content)})
	if err != nil {
		t.Fatal(err)
	}
	if err := loading.DefaultPods(c, c.Pods); err != nil {
		t.Fatal(err)
	}
	wantNode := map[string]string{"p": "", "q": "n1", "r": "n2", "s": ""}
	if len(c.Pods) != len(wantNode) {
		t.Fatalf("%d pods, want %d", len(c.Pods), len(wantNode))
	}
	for _, p := range c.Pods {
		if p.Spec.NodeName != wantNode[p.Name] {
			t.Errorf("pod %s on %q, want %q", p.Name, p.Spec.NodeName, wantNode[p.Name])
		}
		if p.Labels["app"] != p.Name {
			t.Errorf("pod %s has labels %v, want its own", p.Name, p.Labels)
		}
		cs := p.Spec.Containers
		if len(cs) != 1 || cs[0].Ports[0].Protocol != v1.ProtocolTCP || cs[0].Resources.Requests.Cpu().MilliValue() != 100 {
			t.Errorf("pod %s has containers %+v, want one defaulted as the API server does", p.Name, cs)
		}
	}
	if len(c.Nodes) != 2 || c.Nodes[1].Labels["pool"] != "b" || c.Nodes[0].Labels["pool"] != "" {
		t.Errorf("nodes' labels %v and %v, want each its own", c.Nodes[0].Labels, c.Nodes[1].Labels)
	}
	for _, n := range c.Nodes {
		if n.Status.Allocatable.Cpu().Value() != 4 {
			t.Errorf("node %s allocatable %v, want its capacity", n.Name, n.Status.Allocatable)
		}
	}
}

func TestASharedSpecsNodeNameReadsAsTheFullDecodeWouldReadIt(t *testing.T) {
	pod := func(name, nodeName string) string {
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"},"spec":{"containers":[{"name":"c","image":"x"}],"nodeName":"` + nodeName + `"}}`
	}
	tests := []struct {
		name, nodeName, want string
	}{
		{name: "a plain name is read as it is", nodeName: "n1", want: "n1"},
		{name: "an escape is unescaped", nodeName: `n\u0031`, want: "n1"},
		{name: "bytes that are not UTF-8 are replaced", nodeName: "n\xff", want: "n\ufffd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The nodes named, so the pods bound to them are kept.
			node := func(name string) string {
				return `{"apiVersion":"v1","kind":"Node","metadata":{"name":"` + name + `"},"status":{"capacity":{"cpu":"1"}}}`
			}
			list := `{"apiVersion":"v1","kind":"List","items":[` + node("n0") + "," + node(tt.nodeName) + "," +
				pod("first", "n0") + "," + pod("second", tt.nodeName) + `]}`
			c, err := loading.Load([]string{simtest.WriteFile(t, "c.json", list)})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Pods[1].Spec.NodeName; got != tt.want {
				t.Errorf("nodeName %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadTakesTheLargestQuantitiesTheAPIServerTakes(t *testing.T) {
	tests := []struct{ name, content string }{
		{"a node with 7Ei of memory", strings.Replace(goodNode, `memory: 8Gi`, `memory: 7Ei`, 1)},
		{"a pod requesting 7Ei of memory", goodNode + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x, resources: {requests: {memory: 7Ei}}}]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := loading.Load([]string{simtest.WriteFile(t, "c.yaml", tt.content)}); err != nil {
				t.Errorf("Load: %v, want it taken as kube-apiserver takes it", err)
			}
		})
	}
}
