package simulator_test

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/pkg/plugins"
)

func TestInvariantCheckCatchesOvercommitAndTaints(t *testing.T) {
	path := simtest.WriteFile(t, "c.yaml", `apiVersion: v1
kind: Node
metadata: {name: small}
spec:
  taints: [{key: dedicated, value: db, effect: NoSchedule}]
status:
  capacity: {cpu: "1", memory: 1Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
`)
	c, err := loading.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	w, err := simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), nil, 1)
	if err == nil {
		t.Fatal("a world without plugins was built")
	}
	w, err = simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	if err != nil {
		t.Fatal(err)
	}
	// Bypass the scheduler: bind as a buggy scheduler would.
	if err := w.Store.Bind(context.Background(), &v1.Binding{ObjectMeta: c.Pods[0].ObjectMeta, Target: v1.ObjectReference{Name: "small"}}); err != nil {
		t.Fatal(err)
	}
	errs := w.CheckInvariants()
	var all []string
	for _, e := range errs {
		all = append(all, e.Error())
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"cpu requested 2000m > allocatable 1000m", "untolerated taint dedicated=db:NoSchedule"} {
		if !strings.Contains(joined, want) {
			t.Errorf("invariant errors %q miss %q", joined, want)
		}
	}
}
