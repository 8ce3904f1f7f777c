package realgen

import (
	"math"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator/report"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
)

// TestTheGeneratedClusterLoadsWithItsShares loads small generated
// clusters and simulates them: the pods the generator says run are
// bound, every pod it counts is there once simulated, the DaemonSets
// have a pod on every node, the nodes are three general for one memory
// node and as many in each zone, labelled as EKS labels them, and every
// pod is scheduled.
func TestTheGeneratedClusterLoadsWithItsShares(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{name: "30 nodes aiming at 1,500 pods, 90% running", opts: Options{Nodes: 30, Pods: 1500, Running: 0.9, Seed: 1}},
		{name: "a fixed replica scale, half running, two shops", opts: Options{Nodes: 24, ReplicasScale: 20, Running: 0.5, Seed: 2, Namespaces: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Generate(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			c := simtest.LoadObjects(t, g.Objects)
			bound := 0
			for _, p := range c.Pods {
				if p.Spec.NodeName != "" {
					bound++
				}
			}
			if bound != g.Running {
				t.Errorf("loaded %d pods bound, the generator counts %d running", bound, g.Running)
			}
			if tt.opts.ReplicasScale == 0 && math.Abs(float64(g.Pods-tt.opts.Pods)) > 0.02*float64(tt.opts.Pods) {
				t.Errorf("%d pods, want about %d", g.Pods, tt.opts.Pods)
			}
			if share := float64(g.Running-g.DaemonPods) / float64(g.Pods-g.DaemonPods); math.Abs(share-tt.opts.Running) > 0.05 {
				t.Errorf("%.2f of the workloads' pods run, want about %.2f", share, tt.opts.Running)
			}
			if g.DaemonPods != 4*tt.opts.Nodes {
				t.Errorf("%d DaemonSet pods, want 4 on each of %d nodes", g.DaemonPods, tt.opts.Nodes)
			}
			pools, zones := map[string]int{}, map[string]int{}
			for _, n := range c.Nodes {
				for _, l := range []string{v1.LabelHostname, v1.LabelTopologyZone, v1.LabelTopologyRegion, v1.LabelInstanceTypeStable, v1.LabelOSStable, v1.LabelArchStable, nodegroupLabel} {
					if n.Labels[l] == "" {
						t.Errorf("node %s has no label %s", n.Name, l)
					}
				}
				pools[n.Labels[nodegroupLabel]]++
				zones[n.Labels[v1.LabelTopologyZone]]++
			}
			if pools["general"] != 3*tt.opts.Nodes/4 || pools["memory"] != tt.opts.Nodes-3*tt.opts.Nodes/4 {
				t.Errorf("node groups %v, want three general nodes for one memory node", pools)
			}
			for _, z := range Zones {
				if d := zones[z.Name] - tt.opts.Nodes/len(Zones); d < -1 || d > 1 {
					t.Errorf("zones %v, want the nodes balanced over %d zones", zones, len(Zones))
				}
			}
			w, r := simtest.Simulate(t, c, 1)
			// The ordered StatefulSets' pods are created as the one before
			// runs: all are there once simulated.
			if n := len(w.Store.Pods()); n != g.Pods {
				t.Errorf("%d pods once simulated, the generator counts %d", n, g.Pods)
			}
			for _, p := range r.Pods {
				if p.Status != report.StatusScheduled {
					t.Errorf("pod %s/%s is %s: %s", p.Namespace, p.Name, p.Status, p.Message)
				}
			}
		})
	}
}

// TestTheSameOptionsGiveTheSameCluster generates twice with a seed, and
// once with another: the same manifest, then another placement.
func TestTheSameOptionsGiveTheSameCluster(t *testing.T) {
	manifest := func(seed int64) string {
		g, err := Generate(Options{Nodes: 12, Pods: 600, Running: 0.8, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return simtest.Manifest(t, g.Objects...)
	}
	first := manifest(3)
	if again := manifest(3); again != first {
		t.Error("the same options gave two manifests")
	}
	if other := manifest(4); other == first {
		t.Error("another seed gave the same manifest")
	}
}

// TestTheNodeTypesAreThePoolsPriced reads the node types: one per pool,
// priced, offered in the cluster's zones, allocatable as the pool's
// nodes.
func TestTheNodeTypesAreThePoolsPriced(t *testing.T) {
	types := NodeTypes()
	if len(types) != len(Pools) {
		t.Fatalf("%d node types, want one per pool (%d)", len(types), len(Pools))
	}
	for i, obj := range types {
		n := obj.(*v1.Node)
		p := Pools[i]
		if n.Name != p.InstanceType || n.Annotations["simulation.kubesched.io/hourly-cost"] != p.HourlyCost ||
			n.Annotations["simulation.kubesched.io/zones"] != "us-east-1a,us-east-1b,us-east-1c" {
			t.Errorf("node type %s: annotations %v, want %s priced %s in the three zones", n.Name, n.Annotations, p.InstanceType, p.HourlyCost)
		}
		_, alloc := resources(p)
		if !equalResources(n.Status.Allocatable, alloc) {
			t.Errorf("node type %s: allocatable %v, want the pool's %v", n.Name, n.Status.Allocatable, alloc)
		}
	}
}

func equalResources(a, b v1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		if q.Cmp(b[k]) != 0 {
			return false
		}
	}
	return true
}
