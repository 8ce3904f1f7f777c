package simulator_test

import (
	"context"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
)

func podResult(r *report.Report, ns, name string) (report.PodResult, bool) {
	for _, p := range r.Pods {
		if p.Namespace == ns && p.Name == name {
			return p, true
		}
	}
	return report.PodResult{}, false
}

// TestDRAExample holds the bundled DRA example to what its header says.
func TestDRAExample(t *testing.T) {
	c, err := loading.Load([]string{"../../examples/dra.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	_, r := simtest.Simulate(t, c, 1)
	tests := []struct {
		name, pod string
		// nodes the pod may land on ("" for pending), devices it gets
		nodes   []string
		devices int
		message string
	}{
		{name: "a job pod asking for one GPU gets one", pod: "ml/train-small-c6swd", nodes: []string{"gpu-a1", "gpu-a2", "gpu-b1", "gpu-b2"}, devices: 1},
		{name: "a job pod asking for two GPUs gets two of one node", pod: "ml/train-pair-8k8bs", nodes: []string{"gpu-a1", "gpu-a2", "gpu-b1", "gpu-b2"}, devices: 2},
		{name: "the class's CEL selector keeps big-model on an 80Gi GPU", pod: "ml/big-model", nodes: []string{"gpu-a1", "gpu-a2", "gpu-b2"}, devices: 1},
		{name: "the claim's CEL selector puts render on the L4 node", pod: "ml/render", nodes: []string{"gpu-b1"}, devices: 1},
		{name: "allocationMode All takes every GPU of the node", pod: "ml/whole-node", nodes: []string{"gpu-b2"}, devices: 2},
		{name: "eight GPUs of one node fit nowhere", pod: "ml/too-many", message: "0/5 nodes are available: 5 cannot allocate all claims."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, name, _ := strings.Cut(tt.pod, "/")
			p, ok := podResult(r, ns, name)
			if !ok {
				t.Fatalf("no result for %s", tt.pod)
			}
			if tt.nodes == nil {
				if p.Status != report.StatusUnschedulable || !strings.HasPrefix(p.Message, tt.message) {
					t.Errorf("%s: %s %q, want Unschedulable %q", tt.pod, p.Status, p.Message, tt.message)
				}
				return
			}
			if p.Status != report.StatusScheduled || !contains(tt.nodes, p.Node) {
				t.Errorf("%s: %s on %q, want Scheduled on one of %v", tt.pod, p.Status, p.Node, tt.nodes)
			}
			if len(p.Devices) != tt.devices {
				t.Errorf("%s: devices %v, want %d", tt.pod, p.Devices, tt.devices)
			}
			for _, d := range p.Devices {
				if !strings.Contains(d, "gpu.example.com/"+p.Node+"/") {
					t.Errorf("%s on %s got a device of another node: %s", tt.pod, p.Node, d)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAFinishedPodFreesItsDevice: one GPU, two pods asking for it. The
// second waits; when the first finishes, its claim is deallocated (as the
// resourceclaim controller does) and the second gets the same GPU.
func TestAFinishedPodFreesItsDevice(t *testing.T) {
	first := st.MakePod().Name("first").Image("x").Annotation(cluster.DurationAnnotation, "10m").ClaimFromTemplate("gpu", "one-gpu", "").Obj()
	second := st.MakePod().Name("second").Image("x").ClaimFromTemplate("gpu", "one-gpu", "").Obj()
	objs := []runtime.Object{
		st.MakeNode().Name("a").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "10"}).Obj(),
		st.DeviceClass("gpu", "gpu.example.com"),
		st.MakeSlice("a", "gpu.example.com").Device("gpu-0").Obj(),
		st.ClaimTemplate("one-gpu", "gpu", 1),
		first, second,
	}
	w, r := simtest.Simulate(t, simtest.LoadObjects(t, objs), 1)
	p, _ := podResult(r, "default", "second")
	if p.Status != report.StatusScheduled || len(p.Devices) != 1 || !strings.HasSuffix(p.Devices[0], "gpu.example.com/a/gpu-0") {
		t.Errorf("second: %s on %q with %v, want Scheduled with gpu-0 once first finished", p.Status, p.Node, p.Devices)
	}
	if f, _ := podResult(r, "default", "first"); f.Status != report.StatusFinished {
		t.Errorf("first: %s, want %s", f.Status, report.StatusFinished)
	}
	// The first pod's claim was released: of the two generated claims,
	// only the second's is allocated, and reserved for it.
	var allocated []string
	for _, c := range w.Store.Claims() {
		if c.Status.Allocation != nil {
			allocated = append(allocated, c.OwnerReferences[0].Name)
		}
	}
	if len(allocated) != 1 || allocated[0] != "second" {
		t.Errorf("allocated claims belong to %v, want [second]", allocated)
	}
}

// TestANewResourceSliceWakesAWaitingPod: a pod waits for a GPU no node
// has; a timeline step publishes a node's ResourceSlice (the driver
// started) and the pod is placed there, woken by the slice's event.
func TestANewResourceSliceWakesAWaitingPod(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"cluster.yaml": `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: a}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu}
  spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: one-gpu, namespace: default}
  spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
- apiVersion: v1
  kind: Pod
  metadata: {name: job, namespace: default}
  spec:
    containers: [{name: main, image: busybox, resources: {claims: [{name: gpu}]}}]
    resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
`,
		"scenario.yaml": `apiVersion: simulation.kubesched.io/v1alpha1
kind: Scenario
metadata: {name: driver-starts}
spec:
  steps:
  - at: 10m
    name: the driver publishes node a's GPU
    create:
    - apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {name: a-gpu}
      spec: {driver: gpu.example.com, nodeName: a, pool: {name: a, resourceSliceCount: 1}, devices: [{name: gpu-0}]}
`,
	}
	var paths []string
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	c, err := loading.Load(paths)
	if err != nil {
		t.Fatal(err)
	}
	w, err := simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := timeline.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	for _, err := range w.CheckInvariants() {
		t.Errorf("invariant broken: %v", err)
	}
	p, _ := podResult(w.Report(), "default", "job")
	if p.Status != report.StatusScheduled || p.Node != "a" || len(p.Devices) != 1 {
		t.Errorf("job: %s on %q with %v (%s), want Scheduled on a with gpu-0 after the slice appeared", p.Status, p.Node, p.Devices, p.Message)
	}
}

// TestCapacityCountsFreeDevices: copies of a one-GPU pod fill the GPUs the
// example leaves free (14 GPUs, 11 taken), and the next copy is explained
// against the claims as they are then, not as the manifests had them.
func TestCapacityCountsFreeDevices(t *testing.T) {
	c, err := loading.Load([]string{"../../examples/dra.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	probe := st.MakePod().Name("probe").Namespace("ml").UID("probe").ClaimFromTemplate("gpu", "one-gpu", "").Obj()
	newWorld := func(c *cluster.Cluster) (*simulator.World, error) {
		return simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	}
	res, err := questions.Capacity(context.Background(), c, newWorld, probe, 100)
	if err != nil {
		t.Fatal(err)
	}
	if res.Fits != 3 {
		t.Errorf("%d copies fit, want the 3 free GPUs", res.Fits)
	}
	if res.Next == nil || res.Next.Explain == nil {
		t.Fatalf("no explanation of the next copy: %+v", res.Next)
	}
	for _, n := range res.Next.Explain.Nodes {
		if n.Feasible || len(n.Reasons) != 1 || n.Reasons[0] != "cannot allocate all claims" {
			t.Errorf("next copy on %s: feasible=%v %v, want rejected with \"cannot allocate all claims\"", n.Name, n.Feasible, n.Reasons)
		}
	}
}

// TestADeviceWithBindingConditionsIsAttachedInSimulation: PreBind waits
// for a device's binding conditions; the simulation plays the driver and
// sets them at once, so the pod binds.
func TestADeviceWithBindingConditionsIsAttachedInSimulation(t *testing.T) {
	slice := st.MakeSlice("a", "gpu.example.com").Device("gpu-0").Obj()
	slice.Spec.Devices[0].BindingConditions = []string{"Attached"}
	slice.Spec.Devices[0].BindingFailureConditions = []string{"AttachFailed"}
	objs := []runtime.Object{
		st.MakeNode().Name("a").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "10"}).Obj(),
		st.DeviceClass("gpu", "gpu.example.com"), slice, st.ClaimTemplate("one-gpu", "gpu", 1),
		st.MakePod().Name("job").Image("x").ClaimFromTemplate("gpu", "one-gpu", "").Obj(),
	}
	w, r := simtest.Simulate(t, simtest.LoadObjects(t, objs), 1)
	if p, _ := podResult(r, "default", "job"); p.Status != report.StatusScheduled {
		t.Fatalf("job: %s (%s), want Scheduled", p.Status, p.Message)
	}
	c := w.Store.Claims()[0]
	if len(c.Status.Devices) != 1 || len(c.Status.Devices[0].Conditions) != 1 || c.Status.Devices[0].Conditions[0].Type != "Attached" {
		t.Errorf("device status %+v, want the Attached condition the simulated driver set", c.Status.Devices)
	}
	var pending []string
	for _, e := range w.Store.Events() {
		if e.Reason == "BindingConditionsPending" {
			pending = append(pending, e.Message)
		}
	}
	if len(pending) != 1 || pending[0] != "waiting for binding conditions for device on node a" {
		t.Errorf("BindingConditionsPending events %q, want one for node a", pending)
	}
}

// TestExplainTakesAPodAsItIs: explain answers what kube-scheduler would
// answer now. A pod whose claim from a template the resourceclaim
// controller has not created yet waits ("ResourceClaim not created yet"),
// and the report says why; a claim the controller made is allocated.
func TestExplainTakesAPodAsItIs(t *testing.T) {
	tests := []struct {
		name       string
		pod        *v1.Pod
		wantReason string
		wantNotes  int
	}{
		{name: "a template's claim not created yet makes every node wait for it",
			pod:        st.MakePod().Name("waiting").Namespace("ml").UID("waiting").ClaimFromTemplate("gpu", "one-gpu", "").Obj(),
			wantReason: `pod "ml/waiting": ResourceClaim not created yet`, wantNotes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loading.Load([]string{"../../examples/dra.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			w, err := simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := questions.Explain(context.Background(), w, tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range rep.Nodes {
				if n.Feasible || n.Plugin != "DynamicResources" || len(n.Reasons) != 1 || n.Reasons[0] != tt.wantReason {
					t.Errorf("%s: feasible=%v plugin=%q %v, want rejected by DynamicResources with %q", n.Name, n.Feasible, n.Plugin, n.Reasons, tt.wantReason)
				}
			}
			if len(rep.Notes) != tt.wantNotes {
				t.Errorf("notes %q, want %d", rep.Notes, tt.wantNotes)
			}
		})
	}
}

// TestExplainSaysWhichRequestCannotBeAllocated: "cannot allocate all
// claims" names no request; explain says which request of which claim
// fails on the node, and why.
func TestExplainSaysWhichRequestCannotBeAllocated(t *testing.T) {
	const driver = "gpu.example.com"
	node := st.MakeNode().Name("n1").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "16Gi", v1.ResourcePods: "10"}).Obj()
	slice := st.MakeSlice("n1", driver).Device("gpu-0", "model", "a100").Device("gpu-1", "model", "l4").Obj()
	class := st.DeviceClass("gpu", driver)
	holder := st.MakePod().Name("holder").UID("holder").Container(nil).Node("n1").Claim("gpu", "held").Obj()
	held := st.MakeClaim("held").Request("gpu", "gpu", 2).AllocatedOn("n1", driver, "gpu-0", "gpu-1").ReservedFor(holder).Obj()
	sameModel := st.MakeClaim("same-model").Request("a", "gpu", 1).Request("b", "gpu", 1).Obj()
	sameModel.Spec.Devices.Constraints = []resourceapi.DeviceConstraint{{MatchAttribute: ptr.To(resourceapi.FullyQualifiedName(driver + "/model"))}}
	tests := []struct {
		name   string
		claims []runtime.Object
		claim  string
		want   string
	}{
		{name: "a request for more devices than the node has is too many to match",
			claim: "three", claims: []runtime.Object{st.MakeClaim("three").Request("gpu", "gpu", 3).Obj()},
			want: "claim default/three, request gpu: too few of the node's devices match it (its device class, its selectors and its count)"},
		{name: "a request whose devices another claim holds finds too few free",
			claim: "one", claims: []runtime.Object{st.MakeClaim("one").Request("gpu", "gpu", 1).Obj(), held, holder},
			want: "claim default/one, request gpu: enough of the node's devices match it, but too few of them are free (the others are allocated to other claims)"},
		{name: "requests that fit alone but break the claim's constraint together are named as a claim",
			claim: "same-model", claims: []runtime.Object{sameModel},
			want: "claim default/same-model: each request fits alone, but not all of them together (the claim's constraints, or requests that want the same devices)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := append([]runtime.Object{node, slice, class}, tt.claims...)
			w, err := simulator.NewWorld(context.Background(), simtest.LoadObjects(t, objs), simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
			if err != nil {
				t.Fatal(err)
			}
			pod := st.MakePod().Name("wants").UID("wants").Claim("gpu", tt.claim).Obj()
			rep, err := questions.Explain(context.Background(), w, pod)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Nodes) != 1 || rep.Nodes[0].Feasible {
				t.Fatalf("nodes %+v, want n1 rejected", rep.Nodes)
			}
			if got := rep.Nodes[0].Why; len(got) != 1 || got[0] != tt.want {
				t.Errorf("why %q, want %q", got, tt.want)
			}
		})
	}
}
