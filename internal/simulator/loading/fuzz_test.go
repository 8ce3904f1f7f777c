package loading_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

// checkRejection: a rejection of manifest input is a LoadError naming the
// file and the document, or (for a path) an error naming the path.
func checkRejection(t *testing.T, path string, err error) {
	t.Helper()
	var le *loading.LoadError
	if errors.As(err, &le) {
		if le.File != path || le.Document < 1 {
			t.Fatalf("rejection names file %q document %d, want %q and a document: %v", le.File, le.Document, path, err)
		}
		return
	}
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("rejection does not name the file: %v", err)
	}
}

// simulateSmall runs a loaded cluster if it is small enough for a fuzz
// iteration, and checks the invariants (no node overcommitted by us); a
// simulation that does not finish within 20 s is a failure too.
func simulateSmall(t *testing.T, c *cluster.Cluster) {
	t.Helper()
	if len(c.Nodes) > 8 || len(c.Pods) > 16 {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		simulateChecked(t, c)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the simulation of %d nodes and %d pods did not finish within 20 s", len(c.Nodes), len(c.Pods))
	}
}

// simulateChecked runs the simulation and reports (with t.Errorf: it runs
// on its own goroutine) a broken invariant.
func simulateChecked(t *testing.T, c *cluster.Cluster) {
	cfg := simtest.DefaultConfig(t)
	w, err := simulator.NewWorld(context.Background(), c, cfg, plugins.NewInTreeRegistry(), 1)
	if err != nil {
		return // a cluster the world refuses, with an error, is fine
	}
	w.Run(context.Background())
	if errs := w.CheckInvariants(); len(errs) > 0 {
		t.Errorf("invariants: %v", errs)
		return
	}
	_ = w.Report()
	// An oracle independent of the scheduler's own accounting: on a node
	// where the scheduler placed pods, what they request (each counted as
	// at least zero) fits beside the pods the input had placed there. A
	// node the input itself overcommits only must not get more of the
	// overcommitted resource.
	ours := map[string]bool{}
	for _, p := range w.Pending {
		ours[p.Namespace+"/"+p.Name] = true
	}
	type use struct{ pre, ours framework.Resource }
	used := map[string]*use{}
	for _, p := range w.Store.Pods() {
		if p.Spec.NodeName == "" {
			continue
		}
		u := used[p.Spec.NodeName]
		if u == nil {
			u = &use{}
			used[p.Spec.NodeName] = u
		}
		r := framework.NewPodInfo(p).Requests
		add := &u.pre
		if ours[p.Namespace+"/"+p.Name] {
			add = &u.ours
		}
		add.MilliCPU += max(r.MilliCPU, 0)
		add.Memory += max(r.Memory, 0)
	}
	for _, n := range w.Store.Nodes() {
		u := used[n.Name]
		if u == nil {
			continue
		}
		alloc := framework.NewResource(n.Status.Allocatable)
		if u.ours.MilliCPU > 0 && u.pre.MilliCPU+u.ours.MilliCPU > alloc.MilliCPU ||
			u.ours.Memory > 0 && u.pre.Memory+u.ours.Memory > alloc.Memory {
			t.Errorf("node %s overcommitted by the scheduler: placed %dm cpu %d bytes beside %dm %d, allocatable %dm %d",
				n.Name, u.ours.MilliCPU, u.ours.Memory, u.pre.MilliCPU, u.pre.Memory, alloc.MilliCPU, alloc.Memory)
		}
	}
}

// FuzzLoad: whatever a manifest file holds (YAML, JSON, several
// documents, a v1 List), loading it never panics, a rejection names the
// file and the document, and what loads simulates without breaking the
// invariants.
// scenarioHead opens a Scenario document, its steps to follow.
const scenarioHead = "apiVersion: simulation.kubesched.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  steps:\n"

func FuzzLoad(f *testing.F) {
	if b, err := os.ReadFile("../../../examples/preemption.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":"1","pods":"10"}}},{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"500m"}}}]}}]}`))
	f.Add([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: 2, memory: 1Gi, pods: 5}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, resources: {requests: {cpu: 1}}}]\n"))
	f.Add([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: 2, pods: 5}}\n---\n" + scenarioHead +
		"  - at: 1m\n    cordon: [n]\n    create:\n    - {apiVersion: v1, kind: Pod, metadata: {name: p}}\n    scale: [{kind: Deployment, name: d, replicas: 2}]\n    taint: [{node: n, key: k, effect: NoSchedule}]\n"))
	f.Add([]byte("kind: Pod\n"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "m.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var c *cluster.Cluster
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			c, err = loading.Load([]string{path})
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("loading %d bytes did not finish within 20 s", len(data))
		}
		if err != nil {
			checkRejection(t, path, err)
			return
		}
		simulateSmall(t, c)
	})
}

// FuzzHostileQuantities: a node and two pods whose quantities are
// whatever the fuzzer makes (huge, negative, fractional, exponents,
// garbage). Each is either rejected naming the file, document and the
// field, or simulated without a panic and without overcommitting the node.
func FuzzHostileQuantities(f *testing.F) {
	f.Add("4", "8Gi", "10", "1", "1Gi", "2", "500m", "1")
	f.Add("1e3", "1Ei", "110", "9223372036854775807", "0.5", "1m", "-1", "1")
	f.Add("0", "0", "0", "1n", "1Ki", "1e-3", "+1", "0")
	f.Add("100000000000000000000", "1E", "1", "0.0001m", "1.5Gi", "2e2", "1e308", "1E")
	// Found by this target: a negative request made room on the node.
	f.Add("1", "1Gi", "10", "-1", "1Gi", "0", "0", "2")
	f.Fuzz(func(t *testing.T, nodeCPU, nodeMem, nodePods, podCPU, podMem, initCPU, gpu, otherCPU string) {
		manifest := fmt.Sprintf(`apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: %q, memory: %q, pods: %q, example.com/gpu: %q}
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers: [{name: c, resources: {requests: {cpu: %q, memory: %q, example.com/gpu: %q}, limits: {example.com/gpu: %q}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  overhead: {cpu: %q}
  initContainers: [{name: i, resources: {requests: {cpu: %q}}}]
  containers: [{name: c, resources: {requests: {cpu: %q}}}]
`, nodeCPU, nodeMem, nodePods, gpu, podCPU, podMem, gpu, gpu, initCPU, initCPU, otherCPU)
		path := filepath.Join(t.TempDir(), "hostile.yaml")
		if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := loading.Load([]string{path})
		if err != nil {
			checkRejection(t, path, err)
			var le *loading.LoadError
			if errors.As(err, &le) && le.Field == "" && strings.Contains(le.Msg, "quantit") {
				t.Fatalf("a bad quantity is rejected without naming its field: %v", err)
			}
			return
		}
		simulateSmall(t, c)
	})
}
