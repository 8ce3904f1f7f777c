package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	st "github.com/kubesched/kubesched/internal/testing"
	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// draExtendedScenario: extended resources backed by DRA
// (DRAExtendedResource, GA in v1.37). A DeviceClass provides
// example.com/gpu; no node has it in its allocatable. A pod asking for one
// gets a claim the scheduler creates (<pod>-extended-resources-<random>),
// allocated on the node with the devices and reserved for the pod, and the
// pod's status.extendedResourceClaimStatus names it; a pod asking for more
// than is left stays pending. Compared: placement, the created claim
// (allocation, owner, annotations, finalizers), the pod's status, events,
// and the pending pod's condition.
func draExtendedScenario() scenario {
	return scenario{
		name:        "a pod asking for an extended resource a DeviceClass provides gets a claim created by the scheduler",
		controllers: "resourceclaim-controller",
		setup: func(t *testing.T, c kubernetes.Interface) {
			fw.CreateNode(t, c, "node-a", "8", "16Gi", 110, nil)
			fw.CreateNode(t, c, "node-b", "8", "16Gi", 110, nil)
			class := st.DeviceClass("gpu", draDriver)
			name := "example.com/gpu"
			class.Spec.ExtendedResourceName = &name
			createDRA(t, c, class)
			createDRA(t, c, st.MakeSlice("node-a", draDriver).Device("gpu-0").Device("gpu-1").Obj())
		},
		run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
			fw.CreatePod(t, c, extendedPod("trainer", "1", true))
			node, _ := waitBound(t, c, "trainer", 30*time.Second)
			o.exact["trainer node"] = node
			o.exact["trainer claim"] = extendedClaimSummary(t, c, "trainer")
			o.exact["trainer Scheduled events"] = eventSummary(t, c, "trainer", "Scheduled")
			fw.CreatePod(t, c, extendedPod("greedy", "2", false))
			o.exact["greedy condition"] = waitCondition(t, c, "greedy")
			o.exact["greedy FailedScheduling events"] = eventSummary(t, c, "greedy", "FailedScheduling")
			o.exact["claims"] = claimNames(t, c)
			o.exact["dynamic_resource_allocation_resourceclaim_creates_total"] = fmt.Sprint(fw.MetricSum(metrics(t, s), "dynamic_resource_allocation_resourceclaim_creates_total"))
		},
	}
}

// extendedPod asks for n example.com/gpu in its container (and one in an
// init container, to see the request mappings).
func extendedPod(name, n string, withInit bool) *v1.Pod {
	gpu := v1.ResourceName("example.com/gpu")
	p := st.MakePod().Name(name).Namespace("default").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m", gpu: n}).Obj()
	if withInit {
		p.Spec.InitContainers = []v1.Container{{Name: "setup", Image: "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{gpu: resource.MustParse("1")}}}}
	}
	for _, cs := range [][]v1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range cs {
			cs[i].Image = "registry.k8s.io/pause:3.10"
			if q, ok := cs[i].Resources.Requests[gpu]; ok {
				cs[i].Resources.Limits = v1.ResourceList{gpu: q}
			}
		}
	}
	return p
}

// extendedClaimSummary renders the claim the pod's status names, with the
// random suffix of its name left out.
func extendedClaimSummary(t *testing.T, c kubernetes.Interface, pod string) string {
	t.Helper()
	var out string
	fw.Eventually(t, 30*time.Second, pod+"'s extended resource claim", func() (bool, error) {
		p, err := getPod(c, "default", pod)
		if err != nil {
			return false, err
		}
		ers := p.Status.ExtendedResourceClaimStatus
		if ers == nil {
			return false, nil
		}
		claim, err := c.ResourceV1().ResourceClaims("default").Get(context.Background(), ers.ResourceClaimName, metav1.GetOptions{})
		if err != nil || claim.Status.Allocation == nil {
			return false, nil
		}
		var parts []string
		parts = append(parts, fmt.Sprintf("name %s+%d characters", claim.GenerateName, len(claim.Name)-len(claim.GenerateName)))
		for _, m := range ers.RequestMappings {
			parts = append(parts, fmt.Sprintf("mapping %s/%s=%s", m.ContainerName, m.ResourceName, m.RequestName))
		}
		for _, r := range claim.Spec.Devices.Requests {
			if r.Exactly != nil {
				parts = append(parts, fmt.Sprintf("request %s: %s x%d (%s)", r.Name, r.Exactly.DeviceClassName, r.Exactly.Count, r.Exactly.AllocationMode))
			}
		}
		for _, r := range claim.Status.Allocation.Devices.Results {
			parts = append(parts, fmt.Sprintf("%s=%s/%s/%s", r.Request, r.Driver, r.Pool, r.Device))
		}
		for _, ref := range claim.Status.ReservedFor {
			parts = append(parts, "reservedFor "+ref.Resource+"/"+ref.Name)
		}
		for _, or := range claim.OwnerReferences {
			parts = append(parts, fmt.Sprintf("owner %s/%s %s controller=%v", or.APIVersion, or.Kind, or.Name, or.Controller != nil && *or.Controller))
		}
		var ann []string
		for k, v := range claim.Annotations {
			ann = append(ann, k+"="+v)
		}
		sort.Strings(ann)
		parts = append(parts, "annotations "+strings.Join(ann, ","), "finalizers "+strings.Join(claim.Finalizers, ","),
			fmt.Sprintf("allocationTimestamp set=%v", claim.Status.Allocation.AllocationTimestamp != nil))
		out = strings.Join(parts, "; ")
		return true, nil
	})
	return out
}

// claimNames lists the claims, random suffixes cut.
func claimNames(t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	list, err := c.ResourceV1().ResourceClaims("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, cl := range list.Items {
		name := cl.Name
		if cl.GenerateName != "" {
			name = cl.GenerateName + "*"
		}
		out = append(out, fmt.Sprintf("%s allocated=%v", name, cl.Status.Allocation != nil))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
