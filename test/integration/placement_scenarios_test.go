package integration

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/client-go/kubernetes"

	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// placementScenarios: pod groups with a topology constraint (the
// TopologyAwareWorkloadScheduling gate, alpha, on the API server and both
// schedulers). Upstream tries the placements in map order and draws among
// equal scores, so each scenario has one placement where the group fits,
// or placements that fail alike.
func placementScenarios() []scenario {
	const rackKey = "topology.kubernetes.io/rack"
	racks := func(sizes ...int) func(t *testing.T, c kubernetes.Interface) {
		return func(t *testing.T, c kubernetes.Interface) {
			for r, n := range sizes {
				for i := 0; i < n; i++ {
					name := fmt.Sprintf("rack-%d-node-%d", r+1, i)
					fw.CreateNode(t, c, name, "2", "8Gi", 110, map[string]string{rackKey: fmt.Sprintf("rack-%d", r+1)})
				}
			}
		}
	}
	inRack := func(g *schedulingv1beta1.PodGroup) *schedulingv1beta1.PodGroup {
		g.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{
			Topology: []schedulingv1beta1.TopologyConstraint{{Key: rackKey}},
		}
		return g
	}
	return []scenario{
		{
			name:       "a rack-constrained gang lands whole in the one rack where it fits",
			placements: true,
			setup:      racks(2, 3),
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				createPodGroup(t, c, inRack(gangGroup("train", 3, nil)))
				names := []string{"w1", "w2", "w3"}
				for _, n := range names {
					fw.CreatePod(t, c, member(pod(n, "1500m"), "train"))
				}
				var nodes []string
				for _, n := range names {
					node, _ := waitBound(t, c, n, 60*time.Second)
					nodes = append(nodes, node)
				}
				sort.Strings(nodes)
				o.exact["nodes"] = strings.Join(nodes, ",")
				o.exact["group condition"] = waitPodGroupCondition(t, c, "train")
				m := metrics(t, s)
				o.exact["generated placements"] = fmt.Sprint(fw.MetricSum(m, "scheduler_generated_placements_total"))
				o.exact["feasible placements"] = fmt.Sprint(fw.MetricSum(m, "scheduler_placement_evaluations_total", `result="feasible"`))
				o.exact["infeasible placements"] = fmt.Sprint(fw.MetricSum(m, "scheduler_placement_evaluations_total", `result="infeasible"`))
			},
		},
		{
			name:       "a gang that fits across racks but in no single one stays whole-pending",
			placements: true,
			setup:      racks(2, 2),
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				createPodGroup(t, c, inRack(gangGroup("train", 3, nil)))
				names := []string{"w1", "w2", "w3"}
				for _, n := range names {
					fw.CreatePod(t, c, member(pod(n, "1500m"), "train"))
				}
				for _, n := range names {
					o.exact[n+" condition"] = waitCondition(t, c, n)
				}
				o.exact["group condition"] = waitPodGroupCondition(t, c, "train")
				// The group's cycle has ended unschedulable (its attempt
				// counted) before the binding state is read: a cycle that
				// ends so binds no member.
				fw.Eventually(t, 30*time.Second, "an unschedulable group attempt counted", func() (bool, error) {
					return fw.MetricSum(metrics(t, s), "scheduler_podgroup_schedule_attempts_total", `result="unschedulable"`) >= 1, nil
				})
				o.exact["bound"] = boundPods(t, c, names)
				for _, n := range names {
					o.exact[n+" FailedScheduling"] = firstEventNote(t, c, n, "FailedScheduling")
				}
			},
		},
		{
			name:       "a late member of a placed group is held to its group's rack",
			placements: true,
			setup:      racks(2, 1),
			run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
				createPodGroup(t, c, inRack(gangGroup("train", 2, nil)))
				for _, n := range []string{"w1", "w2"} {
					fw.CreatePod(t, c, member(pod(n, "1500m"), "train"))
				}
				var nodes []string
				for _, n := range []string{"w1", "w2"} {
					node, _ := waitBound(t, c, n, 60*time.Second)
					nodes = append(nodes, node)
				}
				sort.Strings(nodes)
				o.exact["first members' nodes"] = strings.Join(nodes, ",")
				o.exact["group condition"] = waitPodGroupCondition(t, c, "train")
				// rack-2 has room, but the group is in rack-1, which is full.
				fw.CreatePod(t, c, member(pod("w3", "1500m"), "train"))
				o.exact["w3 condition"] = waitCondition(t, c, "w3")
				o.exact["w3 FailedScheduling"] = firstEventNote(t, c, "w3", "FailedScheduling")
				o.exact["w3 bound"] = boundPods(t, c, []string{"w3"})
				o.exact["group condition after w3"] = waitPodGroupCondition(t, c, "train")
			},
		},
	}
}
