package plannerfuzz

import (
	"bytes"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
)

// templates are the pod specs of a case's pending pods: the plain pods'
// and the workloads' templates.
func templates(objs []runtime.Object) []v1.PodSpec {
	var out []v1.PodSpec
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.Pod:
			if o.Spec.NodeName == "" {
				out = append(out, o.Spec)
			}
		case *appsv1.Deployment:
			out = append(out, o.Spec.Template.Spec)
		case *appsv1.ReplicaSet:
			out = append(out, o.Spec.Template.Spec)
		}
	}
	return out
}

func tolerates(spec v1.PodSpec) bool {
	for _, t := range spec.Tolerations {
		if t.Key == TaintKey && t.Effect == v1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

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
		{"a case has 0 to 5 nodes in 1 to 3 zones and 5 to 40 pending pods", func(c *Case) string {
			if c.Nodes < 0 || c.Nodes > 5 || c.Zones < 1 || c.Zones > 3 || c.Pending < 5 || c.Pending > 40 {
				return c.String()
			}
			return ""
		}},
		{"a case has 2 to 4 priced types, each offered in its zones with a limit of 1 to 12", func(c *Case) string {
			types := map[string]bool{}
			for i, nt := range c.Types {
				types[nt.Type] = true
				if c.Cents[i] <= 0 || nt.Limit < 1 || nt.Limit > 12 || nt.Node.Labels[v1.LabelTopologyZone] != nt.Zone || !slices.Contains(Zones[:c.Zones], nt.Zone) {
					return nt.Type + "@" + nt.Zone
				}
			}
			if len(types) < 2 || len(types) > 4 {
				return c.String()
			}
			return ""
		}},
		{"a tainted pool's types carry its taint and its pods tolerate it", func(c *Case) string {
			for _, nt := range c.Types {
				if (nt.Node.Labels[PoolLabel] == batchPool) != (len(nt.Node.Spec.Taints) == 1) {
					return nt.Type
				}
			}
			for _, spec := range templates(c.Objects) {
				if spec.NodeSelector[PoolLabel] == batchPool && !tolerates(spec) {
					return "a batch pod without the toleration"
				}
			}
			return ""
		}},
		{"a case loads, its workloads expanded into its pending pods", func(c *Case) string {
			env, err := NewEnv(c.Objects)
			if err != nil {
				return err.Error()
			}
			cl, err := env.Load()
			if err != nil {
				return err.Error()
			}
			pending, running := 0, 0
			for _, p := range cl.Pods {
				switch {
				case cluster.IsDaemonSetPod(p):
				case p.Spec.NodeName == "":
					pending++
				default:
					running++
				}
			}
			if pending != c.Pending || running != c.Running || len(cl.Nodes) != c.Nodes {
				return c.String()
			}
			return ""
		}},
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			for _, c := range cases {
				if c.Seed > 60 && ch.name == checks[len(checks)-1].name {
					break // loading is the slow check: 60 cases
				}
				if bad := ch.ok(c); bad != "" {
					t.Errorf("seed %d: %s", c.Seed, bad)
				}
			}
		})
	}
	t.Run("about a fifth of the cases are greenfield and 40% have DaemonSets", func(t *testing.T) {
		green, daemons, spread, anti, batch, pdbs, prio := 0, 0, 0, 0, 0, 0, 0
		for _, c := range cases {
			if c.Greenfield() {
				green++
			}
			if c.DaemonSets > 0 {
				daemons++
			}
			if c.PDBs > 0 {
				pdbs++
			}
			if c.Priorities {
				prio++
			}
			spread += min(c.Kinds[kindSpread], 1)
			anti += min(c.Kinds[kindAnti], 1)
			batch += min(c.Kinds[kindBatch], 1)
		}
		within := func(n int, lo, hi float64) bool { return float64(n) >= lo*seeds && float64(n) <= hi*seeds }
		if !within(green, 0.12, 0.28) || !within(daemons, 0.32, 0.48) || !within(pdbs, 0.12, 0.28) || !within(prio, 0.17, 0.33) ||
			!within(spread, 0.2, 0.8) || !within(anti, 0.2, 0.8) || !within(batch, 0.05, 0.5) {
			t.Errorf("of %d cases: %d greenfield, %d with DaemonSets, %d PDBs, %d priorities, %d spread, %d anti-affine, %d batch",
				seeds, green, daemons, pdbs, prio, spread, anti, batch)
		}
	})
	t.Run("the same seed draws the same case", func(t *testing.T) {
		for _, seed := range []uint64{1, 17, 1 << 40} {
			a, err := Manifest(Generate(seed).Objects)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Manifest(Generate(seed).Objects)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) || Generate(seed).String() != Generate(seed).String() {
				t.Errorf("seed %d drew two cases", seed)
			}
		}
	})
}
