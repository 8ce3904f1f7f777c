package questions_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

const rackKey = "topology.kubernetes.io/rack"

// rackNodes: rack-1 has two nodes of 8 CPUs, rack-2 four.
func rackNodes() []runtime.Object {
	var out []runtime.Object
	for r, n := range []int{2, 4} {
		for i := 0; i < n; i++ {
			out = append(out, st.MakeNode().Name(fmt.Sprintf("rack-%d-node-%d", r+1, i)).Label(rackKey, fmt.Sprintf("rack-%d", r+1)).
				Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "8", v1.ResourceMemory: "32Gi", v1.ResourcePods: "110"}).Obj())
		}
	}
	return out
}

// gangJob is a Job of four 3-CPU workers, one gang held to one rack.
func gangJob(name string) runtime.Object {
	pod := st.MakePod().Req(map[v1.ResourceName]string{v1.ResourceCPU: "3"})
	return st.MakeJob(name, 4, nil, pod).GangIn(rackKey).Obj()
}

// placementWorld loads objs with WorkloadWithJob and builds a world with
// GenericWorkload and TopologyAwareWorkloadScheduling.
func placementWorld(t *testing.T, objs []runtime.Object) *simulator.World {
	t.Helper()
	path := simtest.WriteFile(t, "c.yaml", simtest.Manifest(t, objs...))
	c, err := loading.LoadWith([]string{path}, nil, loading.Options{JobPodGroups: true})
	if err != nil {
		t.Fatal(err)
	}
	return simtest.PlacementWorld(t, c, 1)
}

func TestGangJobCapacityCountsWholeCopiesAndHoldsWhenSimulated(t *testing.T) {
	w := placementWorld(t, append(rackNodes(), gangJob("train")))
	res, err := questions.WorkloadCapacity(context.Background(), w, "Job", "", "train", 100)
	if err != nil {
		t.Fatal(err)
	}
	// 3-CPU workers, two per 8-CPU node: the Job and two copies, one
	// rack each time (rack-1 holds one gang, rack-2 two).
	if res.Fits != 2 || res.GangPods != 4 || res.Next == nil {
		t.Fatalf("fits %d of %d pods, next %+v; want 2 copies of 4 and a reason", res.Fits, res.GangPods, res.Next)
	}
	for _, want := range []string{"0/2 placements are available", "capacity's copies do not preempt."} {
		if !strings.Contains(res.Next.Message, want) {
			t.Errorf("next copy's reason %q lacks %q", res.Next.Message, want)
		}
	}
	copies := 0
	for _, n := range res.Domains {
		copies += n
	}
	if copies != res.Fits {
		t.Errorf("domains %v count %d copies, want %d", res.Domains, copies, res.Fits)
	}
	// Simulate the Job with Fits copies beside it: every pod bound; with
	// one more, that one's pods are all pending and no other's.
	for extra, wantPending := range map[int]int{0: 0, 1: 4} {
		objs := append(rackNodes(), gangJob("train"))
		for i := 1; i <= res.Fits+extra; i++ {
			objs = append(objs, gangJob(fmt.Sprintf("train-copy-%d", i)))
		}
		w := placementWorld(t, objs)
		if err := w.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		pending := 0
		for _, p := range w.Store.Pods() {
			if p.Spec.NodeName == "" {
				pending++
			}
		}
		if pending != wantPending {
			t.Errorf("with %d copies: %d pods pending, want %d", res.Fits+extra, pending, wantPending)
		}
		for _, e := range w.CheckInvariants() {
			t.Errorf("with %d copies: invariant: %v", res.Fits+extra, e)
		}
	}
}
