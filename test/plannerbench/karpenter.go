package main

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	karpscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/test"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
)

func init() {
	log.SetLogger(logging.NopLogger)
}

// instanceTypes are the node types as Karpenter's cloud provider offers
// them: the Node's capacity, the difference to its allocatable as
// kube-reserved overhead (so Karpenter's allocatable is the Node's), and
// an on-demand offering at the type's price in each of its zones.
func instanceTypes(in *input) []*cloudprovider.InstanceType {
	var out []*cloudprovider.InstanceType
	for _, t := range in.Types {
		capacity := corev1.ResourceList{}
		overhead := corev1.ResourceList{}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
			c, a := t.Node.Status.Capacity[r], t.Node.Status.Allocatable[r]
			capacity[r] = c.DeepCopy()
			o := c.DeepCopy()
			o.Sub(a)
			if r != corev1.ResourcePods {
				overhead[r] = o
			}
		}
		var offerings []cloudprovider.Offering
		for _, z := range t.Zones {
			offerings = append(offerings, cloudprovider.Offering{
				Available: true,
				Price:     t.Price,
				Requirements: karpscheduling.NewLabelRequirements(map[string]string{
					v1.CapacityTypeLabelKey:  v1.CapacityTypeOnDemand,
					corev1.LabelTopologyZone: z,
				}),
			})
		}
		it := fake.NewInstanceType(t.Name,
			fake.WithResources(capacity),
			fake.WithOfferings(offerings...),
			fake.WithArchitecture(t.Node.Labels[corev1.LabelArchStable]),
			fake.WithOperatingSystems(t.Node.Labels[corev1.LabelOSStable]),
		)
		it.Overhead = &cloudprovider.InstanceTypeOverhead{KubeReserved: overhead}
		out = append(out, it)
	}
	return out
}

// karpenterRun is one Solve.
type karpenterRun struct {
	Wall, CPU, Setup time.Duration
	Nodes            []planNode
	OpenZone         int
	Overfull         int
	Unscheduled      int
	FirstError       string
}

// solveKarpenter builds Karpenter's provisioning scheduler as its own
// benchmark does (scheduling_benchmark_test.go: a NodePool without
// limits, the fake cloud provider with the instance types, a fake
// controller-runtime client and an empty cluster state), with the
// DaemonSets' pods as the provisioner gives them, and times its Solve.
func solveKarpenter(in *input) (*karpenterRun, error) {
	ctx := options.ToContext(injection.WithControllerName(context.Background(), "provisioner"), test.Options())
	pods := in.pods()
	var dsPods []*corev1.Pod
	for _, ds := range in.DaemonSets {
		dsPods = append(dsPods, daemonset.PodForDaemonSet(ds))
	}
	nodePool := test.NodePool(v1.NodePool{Spec: v1.NodePoolSpec{Limits: v1.Limits{
		corev1.ResourceCPU:    resource.MustParse("10000000"),
		corev1.ResourceMemory: resource.MustParse("10000000Gi"),
	}}})
	its := instanceTypes(in)
	cloudProvider := fake.NewCloudProvider()
	cloudProvider.InstanceTypes = its
	client := fakecr.NewFakeClient()
	clk := &clock.RealClock{}
	cluster := state.NewCluster(clk, client, cloudProvider)
	opts := []scheduling.Options{scheduling.NumConcurrentReconciles(runtime.NumCPU())}

	runtime.GC()
	setupStart := time.Now()
	itMap := map[string][]*cloudprovider.InstanceType{nodePool.Name: its}
	topology, err := scheduling.NewTopology(ctx, client, cluster, nil, []*v1.NodePool{nodePool}, itMap, pods, opts...)
	if err != nil {
		return nil, fmt.Errorf("karpenter: topology: %w", err)
	}
	s := scheduling.NewScheduler(ctx, client, []*v1.NodePool{nodePool}, cluster, nil, topology, itMap, dsPods,
		events.NewRecorder(&record.FakeRecorder{}), clk, nil, nil, opts...)
	setup := time.Since(setupStart)

	runtime.GC()
	cpu0 := processCPU()
	start := time.Now()
	results, err := s.Solve(ctx, pods)
	wall := time.Since(start)
	cpu := processCPU() - cpu0
	if err != nil {
		return nil, fmt.Errorf("karpenter: solve: %w", err)
	}
	run := &karpenterRun{Wall: wall, CPU: cpu, Setup: setup, Unscheduled: len(results.PodErrors)}
	for p, err := range results.PodErrors {
		if run.FirstError == "" || p.Name < run.FirstError {
			run.FirstError = p.Namespace + "/" + p.Name + ": " + err.Error()
		}
	}
	run.Nodes, run.OpenZone = launch(results.NewNodeClaims)
	run.Overfull = overfull(in, results.NewNodeClaims, run.Nodes)
	return run, nil
}

// overfull counts the NodeClaims whose pods (and the DaemonSets' pods)
// request more than the allocatable of the type launched for them: a
// check of this harness's translation, which should find none.
func overfull(in *input, claims []*scheduling.NodeClaim, nodes []planNode) int {
	var dsCPU, dsMem int64
	for _, ds := range in.DaemonSets {
		c, m := podRequests(&ds.Spec.Template.Spec)
		dsCPU, dsMem = dsCPU+c, dsMem+m
	}
	alloc := map[string]corev1.ResourceList{}
	for _, t := range in.Types {
		alloc[t.Name] = t.Node.Status.Allocatable
	}
	n := 0
	for i, nc := range claims {
		cpu, mem := dsCPU, dsMem
		for _, p := range nc.Pods {
			c, m := podRequests(&p.Spec)
			cpu, mem = cpu+c, mem+m
		}
		a, ok := alloc[nodes[i].Type]
		if !ok || cpu > a.Cpu().MilliValue() || mem > a.Memory().Value() || int64(len(nc.Pods)+len(in.DaemonSets)) > a.Pods().Value() {
			n++
		}
	}
	return n
}

// launch is what the cloud provider would launch for each NodeClaim: the
// cheapest available offering, over all its instance type options, that
// its requirements allow (the AWS provider's CreateFleet with the
// lowest-price strategy). Offerings of the same price (one type in
// several zones a NodeClaim leaves open) go to the zone with the fewest
// nodes so far, then the first by name: the fleet's choice among equal
// prices is AWS's, and a balanced one is the kindest to kube-scheduler's
// zone spreading.
func launch(claims []*scheduling.NodeClaim) (out []planNode, openZone int) {
	perZone := map[string]int{}
	for _, nc := range claims {
		type cand struct {
			it    string
			zone  string
			price float64
		}
		var cands []cand
		best := math.Inf(1)
		for _, it := range nc.InstanceTypeOptions {
			for _, of := range it.Offerings.Available().Compatible(nc.Requirements) {
				switch {
				case of.Price < best-1e-9:
					best = of.Price
					cands = []cand{{it.Name, of.Zone(), of.Price}}
				case of.Price <= best+1e-9:
					cands = append(cands, cand{it.Name, of.Zone(), of.Price})
				}
			}
		}
		if len(cands) == 0 {
			out = append(out, planNode{Type: "(no offering)", Pods: len(nc.Pods)})
			continue
		}
		sort.SliceStable(cands, func(i, j int) bool {
			if perZone[cands[i].zone] != perZone[cands[j].zone] {
				return perZone[cands[i].zone] < perZone[cands[j].zone]
			}
			if cands[i].zone != cands[j].zone {
				return cands[i].zone < cands[j].zone
			}
			return cands[i].it < cands[j].it
		})
		c := cands[0]
		if cands[len(cands)-1].zone != c.zone {
			openZone++
		}
		perZone[c.zone]++
		out = append(out, planNode{Type: c.it, Zone: c.zone, Price: c.price, Pods: len(nc.Pods)})
	}
	return out, openZone
}

// runKarpenter solves n times and keeps the median's plan and times.
func runKarpenter(in *input, n int) (*plan, error) {
	var runs []*karpenterRun
	for range max(n, 1) {
		r, err := solveKarpenter(in)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Wall < runs[j].Wall })
	med := runs[len(runs)/2]
	cpus := make([]time.Duration, len(runs))
	for i, r := range runs {
		cpus[i] = r.CPU
	}
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	p := &plan{Tool: "Karpenter v1.15.0", Nodes: med.Nodes, Wall: med.Wall, CPU: cpus[len(cpus)/2], Runs: len(runs),
		WallMin: runs[0].Wall, WallMax: runs[len(runs)-1].Wall}
	p.Notes = append(p.Notes, fmt.Sprintf("scheduler setup (topology, daemon overhead) %s, not counted", round(med.Setup)))
	if med.Overfull > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("HARNESS CHECK FAILED: %d NodeClaims hold more than their launched type's allocatable", med.Overfull))
	}
	if med.OpenZone > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d NodeClaims left the zone open at the cheapest price: given to the zone with the fewest nodes", med.OpenZone))
	}
	if med.Unscheduled > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("Solve left %d pods without a NodeClaim (first: %s)", med.Unscheduled, med.FirstError))
	}
	if med.Wall > time.Minute {
		p.Notes = append(p.Notes, "Solve took over 1m: the provisioner stops Solve at 1m and launches what it has")
	}
	for _, r := range runs {
		p.Variants = append(p.Variants, r.Nodes)
	}
	for _, r := range runs {
		if cost(r.Nodes) != cost(med.Nodes) || len(r.Nodes) != len(med.Nodes) {
			p.Notes = append(p.Notes, fmt.Sprintf("the %d runs' plans differ (e.g. $%.3f/h, %d nodes)", len(runs), cost(r.Nodes), len(r.Nodes)))
			break
		}
	}
	return p, nil
}
