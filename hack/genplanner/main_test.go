package main

import (
	"bytes"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator/loading"
)

func TestGenerateLoadsWithTheMix(t *testing.T) {
	for _, tc := range []struct {
		pods       int
		daemonSets bool
		seed       int64
	}{
		{pods: 1000, seed: 1},
		{pods: 1000, daemonSets: true, seed: 1},
		{pods: 5000, seed: 1},
		{pods: 37, seed: 9},
		{pods: 0, daemonSets: true, seed: 2},
	} {
		o := Options{Pods: tc.pods, DaemonSets: tc.daemonSets, Seed: tc.seed}
		dir := t.TempDir()
		if err := run(o, dir, false); err != nil {
			t.Fatal(err)
		}

		// The shares: each class within one pod of its percent.
		shares := Shares(tc.pods)
		sum := 0
		for i, n := range shares {
			sum += n
			if want := float64(tc.pods*Classes[i].percent) / 100; float64(n) < want-1 || float64(n) > want+1 {
				t.Errorf("%+v: %s has %d pods, want %.1f", o, Classes[i].name, n, want)
			}
		}
		if sum != tc.pods {
			t.Errorf("%+v: shares add up to %d", o, sum)
		}

		// The cluster loads: no Node, the DaemonSets, and Deployments
		// whose replicas per class are the shares.
		c, err := loading.Load([]string{filepath.Join(dir, "cluster.yaml")})
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if len(c.Nodes) != 0 {
			t.Errorf("%+v: %d nodes, want none (greenfield)", o, len(c.Nodes))
		}
		if want := map[bool]int{false: 0, true: len(DaemonSets)}[tc.daemonSets]; len(c.DaemonSets) != want {
			t.Errorf("%+v: %d DaemonSets, want %d", o, len(c.DaemonSets), want)
		}
		byTier := map[string]int{}
		for _, d := range c.Deployments {
			tier := d.Spec.Template.Labels["tier"]
			byTier[tier] += int(*d.Spec.Replicas)
			spec := d.Spec.Template.Spec
			switch tier {
			case "web":
				if len(spec.TopologySpreadConstraints) != 1 || spec.TopologySpreadConstraints[0].WhenUnsatisfiable != v1.DoNotSchedule {
					t.Errorf("%s: want one DoNotSchedule spread constraint, got %+v", d.Name, spec.TopologySpreadConstraints)
				}
			case "batch", "ingest":
				if spec.NodeSelector[v1.LabelTopologyZone] == "" {
					t.Errorf("%s: not pinned to a zone", d.Name)
				}
			case "db":
				if spec.Affinity == nil || len(spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
					t.Errorf("%s: want required anti-affinity", d.Name)
				}
			}
		}
		for i, cl := range Classes {
			if byTier[cl.name] != shares[i] {
				t.Errorf("%+v: %s Deployments hold %d replicas, want %d", o, cl.name, byTier[cl.name], shares[i])
			}
		}

		// The types load as node types: 9, in 3 zones, allocatable
		// within capacity.
		types, err := loading.Load([]string{filepath.Join(dir, "types.yaml")})
		if err != nil {
			t.Fatal(err)
		}
		if len(types.Nodes) != 9 {
			t.Fatalf("%d node types, want 9", len(types.Nodes))
		}
		for _, n := range types.Nodes {
			if n.Annotations[zonesAnnotation] != "us-east-1a,us-east-1b,us-east-1c" || n.Annotations[hourlyCostAnnotation] == "" {
				t.Errorf("%s: annotations %v", n.Name, n.Annotations)
			}
			for _, r := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods} {
				a, c := n.Status.Allocatable[r], n.Status.Capacity[r]
				if a.Sign() <= 0 || a.Cmp(c) > 0 {
					t.Errorf("%s: %s allocatable %s, capacity %s", n.Name, r, a.String(), c.String())
				}
			}
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	gen := func(seed int64) []byte {
		var c, ty bytes.Buffer
		if err := Write(Options{Pods: 500, DaemonSets: true, Seed: seed}, &c, &ty); err != nil {
			t.Fatal(err)
		}
		return append(c.Bytes(), ty.Bytes()...)
	}
	if !bytes.Equal(gen(3), gen(3)) {
		t.Error("the same seed gave different bytes")
	}
	if bytes.Equal(gen(3), gen(4)) {
		t.Error("two seeds gave the same bytes")
	}
}

func TestEKSAllocatable(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cpu, memory string
		capacityMem string
	}{
		// kube-reserved CPU 70m, 90m, 110m; memory 11Mi*pods+255Mi and
		// 100Mi eviction off 92.5% of the nominal memory.
		{"m5.large", "1930m", "6903Mi", "7577Mi"},
		{"c5.2xlarge", "7910m", "14162Mi", "15155Mi"},
		{"r5.4xlarge", "15890m", "118312Mi", "121241Mi"},
	} {
		for _, nt := range NodeTypes {
			if nt.name != tc.name {
				continue
			}
			n := nt.node()
			cpu, mem, capMem := n.Status.Allocatable[v1.ResourceCPU], n.Status.Allocatable[v1.ResourceMemory], n.Status.Capacity[v1.ResourceMemory]
			if cpu.String() != tc.cpu || mem.String() != tc.memory || capMem.String() != tc.capacityMem {
				t.Errorf("%s: allocatable %s/%s capacity memory %s, want %s/%s %s", tc.name, cpu.String(), mem.String(), capMem.String(), tc.cpu, tc.memory, tc.capacityMem)
			}
		}
	}
}
