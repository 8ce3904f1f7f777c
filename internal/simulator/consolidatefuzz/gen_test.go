package consolidatefuzz

import (
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/plannerfuzz"
	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// TestTheGenerator checks the drawn cases' shape over 300 seeds: each
// within its ranges, the same seed drawing the same case, and every
// feature drawn somewhere (a feature never drawn is a fuzzer that tests
// less than it says).
func TestTheGenerator(t *testing.T) {
	const seeds = 300
	cases := make([]*Case, seeds)
	for i := range cases {
		cases[i] = Generate(uint64(i + 1))
	}
	checks := []struct {
		name string
		ok   func(c *Case) string // "" or what is wrong
	}{
		{"a case has 2 to 7 priced nodes of 1 or 2 sizes in 1 to 3 zones, no more zones than nodes", func(c *Case) string {
			if n := len(c.Nodes); n < 2 || n > 7 || c.Zones < 1 || c.Zones > 3 || c.Zones > n || len(c.Shapes) < 1 || len(c.Shapes) > 2 {
				return c.String()
			}
			for _, n := range c.Nodes {
				if c.Cents[n] <= 0 {
					return "node " + n + " has no price"
				}
			}
			return ""
		}},
		{"a case has none or 1 to 3 node types, each priced, in one of its zones", func(c *Case) string {
			if len(c.Types) > 3 || len(c.TypeCents) != len(c.Types) {
				return fmt.Sprintf("%d types, %d prices", len(c.Types), len(c.TypeCents))
			}
			for i, t := range c.Types {
				if c.TypeCents[i] <= 0 || t.Cost != float64(c.TypeCents[i])/100 || t.Node.Labels[v1.LabelTopologyZone] != t.Zone || !slices.Contains(Zones[:c.Zones], t.Zone) {
					return fmt.Sprintf("type %s in %q at %d hundredths (cost %g)", t.Type, t.Zone, c.TypeCents[i], t.Cost)
				}
			}
			return ""
		}},
		{"the same seed draws the same case", func(c *Case) string {
			if !equality.Semantic.DeepEqual(c, Generate(c.Seed)) {
				return "two draws differ"
			}
			return ""
		}},
		{"the bound pods fit their nodes, DaemonSet pods included", func(c *Case) string {
			alloc, used := map[string]int64{}, map[string]int64{}
			var daemon int64
			for _, o := range c.Objects {
				switch o := o.(type) {
				case *v1.Node:
					alloc[o.Name] = o.Status.Allocatable.Cpu().MilliValue()
				case *v1.Pod:
					if o.Spec.NodeName != "" {
						used[o.Spec.NodeName] += requests(o).cpu
					}
				case *appsv1.DaemonSet:
					daemon += requests(&v1.Pod{Spec: o.Spec.Template.Spec}).cpu
				}
			}
			for n, a := range alloc {
				if used[n]+daemon > a {
					return fmt.Sprintf("node %s: %dm requested of %dm", n, used[n]+daemon, a)
				}
			}
			return ""
		}},
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range cases {
				if msg := tc.ok(c); msg != "" {
					t.Fatalf("seed %d: %s", c.Seed, msg)
				}
			}
		})
	}
	t.Run("every feature is drawn", func(t *testing.T) {
		seen := map[string]bool{}
		for _, c := range cases {
			seen["rules "+string(c.Rules)] = true
			for k, n := range c.Kinds {
				seen["kind "+k] = seen["kind "+k] || n > 0
			}
			for k := range c.Constraints {
				seen["constraint "+k] = true
			}
			for k := range c.Marks {
				seen["mark "+k] = true
			}
			seen["DaemonSets"] = seen["DaemonSets"] || c.DaemonSets > 0
			seen["pending"] = seen["pending"] || c.Pending > 0
			seen["priorities"] = seen["priorities"] || c.Priorities
			seen["node do-not-disrupt"] = seen["node do-not-disrupt"] || c.NodeBlock
			seen["node types"] = seen["node types"] || len(c.Types) > 0
			for _, o := range c.Objects {
				if pdb, ok := o.(*policyv1.PodDisruptionBudget); ok {
					seen["PDB "+pdbForm(pdb)] = true
				}
			}
		}
		want := []string{"rules " + string(questions.RulesClusterAutoscaler), "rules " + string(questions.RulesKarpenter),
			"DaemonSets", "pending", "priorities", "node do-not-disrupt", "node types",
			"PDB maxUnavailable int", "PDB maxUnavailable %", "PDB minAvailable int", "PDB minAvailable %", "PDB selector {}",
			"mark safe-to-evict=false", "mark safe-to-evict=true", "mark do-not-disrupt", "mark emptyDir", "mark emptyDir listed safe"}
		for _, k := range kindOrder {
			want = append(want, "kind "+k)
		}
		for _, k := range []string{constraintZone, constraintAnti, constraintZoneSpread, constraintHostSpread} {
			want = append(want, "constraint "+k)
		}
		for _, w := range want {
			if !seen[w] {
				t.Errorf("no case of %d draws %s", seeds, w)
			}
		}
	})
}

func pdbForm(pdb *policyv1.PodDisruptionBudget) string {
	if pdb.Spec.Selector != nil && len(pdb.Spec.Selector.MatchLabels) == 0 {
		return "selector {}"
	}
	field, v := "minAvailable", pdb.Spec.MinAvailable
	if pdb.Spec.MaxUnavailable != nil {
		field, v = "maxUnavailable", pdb.Spec.MaxUnavailable
	}
	if v.Type == intstr.Int {
		return field + " int"
	}
	return field + " %"
}

// TestTheCasesLoadAsDrawn: the simulator's controllers create no pod
// beside the DaemonSets' and the pending replicas drawn (the bound pods
// count toward their workloads' replicas), and every bound pod stays on
// its node: the cases are the clusters the generator means.
func TestTheCasesLoadAsDrawn(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		c := Generate(seed)
		env, err := plannerfuzz.NewEnv(c.Objects)
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := env.Load()
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		drawn := map[string]string{}
		for _, o := range c.Objects {
			if p, ok := o.(*v1.Pod); ok {
				drawn[cluster.PodKey(p)] = p.Spec.NodeName
			}
		}
		created := 0
		for _, p := range loaded.Pods {
			node, ok := drawn[cluster.PodKey(p)]
			switch {
			case !ok && cluster.IsDaemonSetPod(p):
			case !ok:
				created++
			case node != p.Spec.NodeName:
				t.Errorf("seed %d: pod %s drawn on %q loads on %q", seed, cluster.PodKey(p), node, p.Spec.NodeName)
			}
		}
		unbound := 0
		for _, node := range drawn {
			if node == "" {
				unbound++
			}
		}
		if created+unbound != c.Pending {
			t.Errorf("seed %d: %d pods created and %d drawn pending, want %d pending (%s)", seed, created, unbound, c.Pending, c)
		}
	}
}
