package simulator_test

import (
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"strings"
	"testing"
)

// TestDRAExtendedResources: a pod asking for example.com/gpu, which only a
// DeviceClass's extendedResourceName provides, gets a claim the scheduler
// creates with one of node-a's devices; a pod asking for two when one is
// left stays pending with kube-scheduler's message (the differential
// integration scenario saw the same on a real control plane).
func TestDRAExtendedResources(t *testing.T) {
	c, err := loading.Load([]string{"testdata/dra-extended.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	_, r := simtest.Simulate(t, c, 1)
	trainer, ok := podResult(r, "default", "trainer")
	if !ok || trainer.Node != "node-a" || len(trainer.Devices) != 1 || !strings.HasPrefix(trainer.Devices[0], "trainer-extended-resources-") ||
		!strings.HasSuffix(trainer.Devices[0], "/container-0-request-1: gpu.example.com/node-a/gpu-0") {
		t.Errorf("trainer: node %q, devices %q", trainer.Node, trainer.Devices)
	}
	greedy, _ := podResult(r, "default", "greedy")
	want := "0/2 nodes are available: 2 cannot allocate all claims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
	if greedy.Status != report.StatusUnschedulable || greedy.Message != want {
		t.Errorf("greedy: %s %q, want Unschedulable %q", greedy.Status, greedy.Message, want)
	}
}
