package app

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// writeObjects writes builders' objects as one manifest file.
func writeObjects(t *testing.T, name string, objs ...runtime.Object) string {
	t.Helper()
	return writeFile(t, name, simtest.Manifest(t, objs...))
}

// A question is never answered by a world that stopped early, and a pod
// that fits nowhere does not stop capacity's count.
func TestCapacityAndSimulateAnswerOnlyFromAWorldThatFinished(t *testing.T) {
	cpu := func(n string) map[v1.ResourceName]string { return map[v1.ResourceName]string{v1.ResourceCPU: n} }
	// One node runs one hour-long pod at a time: 30 of them need 30 hours,
	// past the 24-hour limit.
	day := []runtime.Object{st.MakeNode().Name("n").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj()}
	for i := 0; i < 30; i++ {
		day = append(day, st.MakePod().Name(fmt.Sprintf("hour-%02d", i)).Annotation("simulation.kubesched.io/duration", "1h").Req(cpu("1")).Obj())
	}
	tooLong := writeObjects(t, "day.yaml", day...)
	huge := writeObjects(t, "huge.yaml",
		st.MakeNode().Name("huge").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1000", v1.ResourceMemory: "4000Gi", v1.ResourcePods: "5000"}).Obj(),
		st.MakePod().Name("fits-nowhere").Req(cpu("2000")).Obj())
	node := writeObjects(t, "node.yaml", st.MakeNode().Name("extra").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "1", v1.ResourceMemory: "1Gi"}).Obj())
	small := writeObjects(t, "small.yaml", st.MakePod().Name("small").Req(cpu("1")).Obj())
	limit := "the simulation stopped at its limit of 24h0m0s of virtual time with 6 pod(s) still to place"
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string
		wantStderr string
	}{
		{name: "simulate of a world that reaches its limit exits non-zero naming the limit", args: []string{"simulate", "-f", tooLong},
			wantCode: 1, wantStderr: limit},
		{name: "capacity of a world that reaches its limit gives no count", args: []string{"capacity", "-f", tooLong, "--pod", small},
			wantCode: 1, wantStderr: limit},
		{name: "capacity --add-nodes of a world that reaches its limit gives no node count", args: []string{"capacity", "-f", tooLong, "--add-nodes", node},
			wantCode: 1, wantStderr: limit},
		{name: "capacity counts to the max beside a pod that fits nowhere", args: []string{"capacity", "-f", huge, "--pod", small, "--max", "1000"},
			wantOut: "1000 more copies of default/small fit."},
		{name: "capacity says copies do not preempt, keeping the node counts", args: []string{"capacity", "-f", huge, "--pod", small, "--max", "1001"},
			wantOut: "The next copy does not fit: 0/1 nodes are available: 1 Insufficient cpu. capacity's copies do not preempt.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.wantCode, errOut)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantOut, truncate(out))
			}
			if !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, errOut)
			}
			if strings.Contains(errOut, "\r") {
				t.Errorf("a progress line reached stderr that is no terminal: %q", errOut)
			}
		})
	}
}
