package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	st "github.com/kubesched/kubesched/internal/testing"
	fw "github.com/kubesched/kubesched/test/integration/framework"
)

// The DRA scenarios: resource.k8s.io/v1 objects on a real API server, with
// kube-controller-manager's resourceclaim controller generating the
// claims of templates and releasing the claims of deleted pods, as in a
// cluster. What is compared with kube-scheduler v1.37.2: each pod's node,
// the devices written in its claim's allocation, the claim's reservedFor,
// and the messages of the pods left pending.

const draDriver = "gpu.example.com"

func draScenarios() []scenario {
	return []scenario{bindingConditionsScenario(), draExtendedScenario(), {
		name:        "pods with claims and claim templates get their devices; the last device goes to one pod; a deleted pod's device goes to the next",
		controllers: "resourceclaim-controller",
		setup: func(t *testing.T, c kubernetes.Interface) {
			fw.CreateNode(t, c, "node-a", "8", "16Gi", 110, nil)
			fw.CreateNode(t, c, "node-b", "8", "16Gi", 110, nil)
			createDRA(t, c, st.DeviceClass("gpu", draDriver))
			createDRA(t, c, st.MakeSlice("node-a", draDriver).Device("gpu-0", "model", "a100").Device("gpu-1", "model", "a100").Obj())
			createDRA(t, c, st.MakeSlice("node-b", draDriver).Device("gpu-0", "model", "l4").Obj())
			createDRA(t, c, st.ClaimTemplate("one-gpu", "gpu", 1))
			createDRA(t, c, st.MakeClaim("l4").Request("gpu", "gpu", 1, `device.attributes["gpu.example.com"].model == "l4"`).Obj())
		},
		run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
			begin := time.Now()
			step := func(what string) { t.Logf("%v: %s", time.Since(begin).Round(time.Millisecond), what) }
			// A claim by name, with a CEL selector: the L4 node.
			fw.CreatePod(t, c, draPod("render", func(p *st.PodWrapper) { p.Claim("gpu", "l4") }))
			node, _ := waitBound(t, c, "render", 30*time.Second)
			step("render bound")
			o.exact["render node"] = node
			o.exact["render devices"] = claimDevices(t, c, "render")
			// Claims from a template, one after the other: node-a's two GPUs.
			for _, name := range []string{"train-1", "train-2"} {
				fw.CreatePod(t, c, draPod(name, func(p *st.PodWrapper) { p.ClaimFromTemplate("gpu", "one-gpu", "") }))
				node, _ := waitBound(t, c, name, 30*time.Second)
				step(name + " bound")
				o.exact[name+" node"] = node
				o.exact[name+" devices"] = claimDevices(t, c, name)
			}
			// One GPU freed, two pods racing for it: one gets it.
			forceDelete(t, c, "train-1")
			waitReleased(t, c, 2)
			fw.CreatePod(t, c, draPod("race-1", func(p *st.PodWrapper) { p.ClaimFromTemplate("gpu", "one-gpu", "") }))
			fw.CreatePod(t, c, draPod("race-2", func(p *st.PodWrapper) { p.ClaimFromTemplate("gpu", "one-gpu", "") }))
			step("train-1's claim released")
			winner, loser := raceOutcome(t, c, "race-1", "race-2")
			step("race decided")
			// Which pod wins depends on which claim the controller makes
			// first: roles are compared, not names.
			o.exact["race winner's devices"] = strings.ReplaceAll(claimDevices(t, c, winner), winner, "WINNER")
			o.exact["race loser's condition"] = strings.ReplaceAll(waitCondition(t, c, loser), loser, "LOSER")
			o.exact["devices allocated twice"] = strings.Join(doubleAllocations(t, c), ", ")
			// The winner deleted: its device goes to the one waiting.
			forceDelete(t, c, winner)
			deleted := time.Now()
			node, boundAt := waitBound(t, c, loser, 60*time.Second)
			step("the waiting pod bound")
			o.latency["the waiting pod's time to bind after the winner's deletion"] = boundAt.Sub(deleted)
			o.exact["waiting pod's node after the winner's deletion"] = node
			o.exact["waiting pod's devices"] = strings.ReplaceAll(claimDevices(t, c, loser), loser, "LOSER")
		},
	}, {
		name: "a DeviceTaintRule keeps claims off the tainted devices unless they tolerate it",
		setup: func(t *testing.T, c kubernetes.Interface) {
			fw.CreateNode(t, c, "node-a", "8", "16Gi", 110, nil)
			fw.CreateNode(t, c, "node-b", "8", "16Gi", 110, nil)
			createDRA(t, c, st.DeviceClass("gpu", draDriver))
			createDRA(t, c, st.MakeSlice("node-a", draDriver).Device("gpu-0").Obj())
			createDRA(t, c, st.MakeSlice("node-b", draDriver).Device("gpu-0").Obj())
			rule := &resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "maintenance"},
				Spec: resourceapi.DeviceTaintRuleSpec{
					DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: strPtr(draDriver), Pool: strPtr("node-b")},
					Taint:          resourceapi.DeviceTaint{Key: "maintenance", Value: "true", Effect: resourceapi.DeviceTaintEffectNoSchedule}}}
			if _, err := c.ResourceV1().DeviceTaintRules().Create(context.Background(), rule, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			createDRA(t, c, st.MakeClaim("first").Request("gpu", "gpu", 1).Obj())
			createDRA(t, c, st.MakeClaim("second").Request("gpu", "gpu", 1).Obj())
			tolerating := st.MakeClaim("tolerating").Request("gpu", "gpu", 1).Obj()
			tolerating.Spec.Devices.Requests[0].Exactly.Tolerations = []resourceapi.DeviceToleration{{Key: "maintenance", Operator: resourceapi.DeviceTolerationOpExists}}
			createDRA(t, c, tolerating)
		},
		run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
			fw.CreatePod(t, c, draPod("first", func(p *st.PodWrapper) { p.Claim("gpu", "first") }))
			node, _ := waitBound(t, c, "first", 30*time.Second)
			o.exact["first node"] = node
			o.exact["first devices"] = claimDevices(t, c, "first")
			fw.CreatePod(t, c, draPod("second", func(p *st.PodWrapper) { p.Claim("gpu", "second") }))
			o.exact["second (no toleration) condition"] = waitCondition(t, c, "second")
			fw.CreatePod(t, c, draPod("tolerating", func(p *st.PodWrapper) { p.Claim("gpu", "tolerating") }))
			node, _ = waitBound(t, c, "tolerating", 30*time.Second)
			o.exact["tolerating node"] = node
		},
	}}
}

func strPtr(s string) *string { return &s }

// bindingConditionsScenario: a device its driver must attach first. The
// test plays the driver: once the claim is allocated it sets the binding
// condition true in the claim's device status, and the pod binds.
func bindingConditionsScenario() scenario {
	return scenario{
		name: "a device with binding conditions is bound once its driver reports it attached",
		setup: func(t *testing.T, c kubernetes.Interface) {
			fw.CreateNode(t, c, "node-a", "8", "16Gi", 110, nil)
			createDRA(t, c, st.DeviceClass("gpu", draDriver))
			slice := st.MakeSlice("node-a", draDriver).Device("gpu-0").Obj()
			slice.Spec.Devices[0].BindingConditions = []string{"Attached"}
			slice.Spec.Devices[0].BindingFailureConditions = []string{"AttachFailed"}
			createDRA(t, c, slice)
			createDRA(t, c, st.MakeClaim("c").Request("gpu", "gpu", 1).Obj())
		},
		run: func(t *testing.T, c kubernetes.Interface, s fw.Running, o *observation) {
			ctx := context.Background()
			fw.CreatePod(t, c, draPod("attach", func(p *st.PodWrapper) { p.Claim("gpu", "c") }))
			var claim *resourceapi.ResourceClaim
			fw.Eventually(t, 30*time.Second, "the claim allocated and reserved", func() (bool, error) {
				var err error
				claim, err = c.ResourceV1().ResourceClaims("default").Get(ctx, "c", metav1.GetOptions{})
				return err == nil && claim.Status.Allocation != nil && len(claim.Status.ReservedFor) == 1, err
			})
			if p, err := getPod(c, "default", "attach"); err != nil || p.Spec.NodeName != "" {
				t.Fatalf("bound before its device was attached (%v)", err)
			}
			o.exact["pending event"] = eventSummary(t, c, "attach", "BindingConditionsPending")
			r := claim.Status.Allocation.Devices.Results[0]
			claim.Status.Devices = []resourceapi.AllocatedDeviceStatus{{Driver: r.Driver, Pool: r.Pool, Device: r.Device,
				Conditions: []metav1.Condition{{Type: "Attached", Status: metav1.ConditionTrue, Reason: "Attached", Message: "by the test's driver", LastTransitionTime: metav1.Now()}}}}
			if _, err := c.ResourceV1().ResourceClaims("default").UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			attached := time.Now()
			node, boundAt := waitBound(t, c, "attach", 30*time.Second)
			o.exact["node"] = node
			o.latency["time to bind after the driver's condition"] = boundAt.Sub(attached)
			o.exact["scheduler_dra_bindingconditions_allocations_total"] = fmt.Sprint(fw.MetricSum(metrics(t, s), "scheduler_dra_bindingconditions_allocations_total"))
		},
	}
}

func draPod(name string, claims func(*st.PodWrapper)) *v1.Pod {
	p := st.MakePod().Name(name).Namespace("default").Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
	claims(p)
	pod := p.Obj()
	pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	pod.Spec.Containers[0].Image = "registry.k8s.io/pause:3.10"
	return pod
}

func createDRA(t *testing.T, c kubernetes.Interface, obj interface{}) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch o := obj.(type) {
	case *resourceapi.DeviceClass:
		_, err = c.ResourceV1().DeviceClasses().Create(ctx, o, metav1.CreateOptions{})
	case *resourceapi.ResourceSlice:
		_, err = c.ResourceV1().ResourceSlices().Create(ctx, o, metav1.CreateOptions{})
	case *resourceapi.ResourceClaimTemplate:
		_, err = c.ResourceV1().ResourceClaimTemplates(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *resourceapi.ResourceClaim:
		o = o.DeepCopy()
		o.UID = ""
		_, err = c.ResourceV1().ResourceClaims(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unexpected %T", obj)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// claimDevices renders the pod's claims as the API stores them: each
// allocated device "request=driver/pool/device", and who it is reserved
// for (generated claim names, random, are left out).
func claimDevices(t *testing.T, c kubernetes.Interface, pod string) string {
	t.Helper()
	var out []string
	fw.Eventually(t, 30*time.Second, pod+"'s claims reserved for it", func() (bool, error) {
		p, err := getPod(c, "default", pod)
		if err != nil {
			return false, err
		}
		out = out[:0]
		for _, pc := range p.Spec.ResourceClaims {
			name := ""
			if pc.ResourceClaimName != nil {
				name = *pc.ResourceClaimName
			}
			for _, s := range p.Status.ResourceClaimStatuses {
				if s.Name == pc.Name && s.ResourceClaimName != nil {
					name = *s.ResourceClaimName
				}
			}
			claim, err := c.ResourceV1().ResourceClaims("default").Get(context.Background(), name, metav1.GetOptions{})
			if err != nil || claim.Status.Allocation == nil || len(claim.Status.ReservedFor) == 0 {
				return false, nil
			}
			for _, r := range claim.Status.Allocation.Devices.Results {
				out = append(out, fmt.Sprintf("%s=%s/%s/%s", r.Request, r.Driver, r.Pool, r.Device))
			}
			for _, ref := range claim.Status.ReservedFor {
				out = append(out, "reservedFor "+ref.Resource+"/"+ref.Name)
			}
			out = append(out, "finalizers "+strings.Join(claim.Finalizers, ","))
		}
		return true, nil
	})
	return strings.Join(out, "; ")
}

// waitReleased waits until only n claims of the cluster are allocated
// after a deletion (the resourceclaim controller deallocates and deletes
// a generated claim once its pod is gone).
func waitReleased(t *testing.T, c kubernetes.Interface, n int) {
	t.Helper()
	fw.Eventually(t, 60*time.Second, "the deleted pod's claim released", func() (bool, error) {
		list, err := c.ResourceV1().ResourceClaims("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		allocated := 0
		for _, cl := range list.Items {
			if cl.Status.Allocation != nil {
				allocated++
			}
		}
		return allocated == n, nil
	})
}

// raceOutcome waits until one of two pods is bound and the other has a
// PodScheduled=False condition; it returns the winner and the loser.
func raceOutcome(t *testing.T, c kubernetes.Interface, a, b string) (winner, loser string) {
	t.Helper()
	fw.Eventually(t, 60*time.Second, "one of "+a+" and "+b+" bound, the other pending", func() (bool, error) {
		pa, err := getPod(c, "default", a)
		if err != nil {
			return false, err
		}
		pb, err := getPod(c, "default", b)
		if err != nil {
			return false, err
		}
		pending := func(p *v1.Pod) bool {
			cond := podScheduledCondition(p)
			return p.Spec.NodeName == "" && cond != nil && cond.Status == v1.ConditionFalse
		}
		switch {
		case pa.Spec.NodeName != "" && pb.Spec.NodeName != "":
			t.Fatalf("both %s and %s were bound (to %s and %s) with one device free", a, b, pa.Spec.NodeName, pb.Spec.NodeName)
		case pa.Spec.NodeName != "" && pending(pb):
			winner, loser = a, b
			return true, nil
		case pb.Spec.NodeName != "" && pending(pa):
			winner, loser = b, a
			return true, nil
		}
		return false, nil
	})
	return winner, loser
}

// doubleAllocations lists the devices allocated to more than one claim.
func doubleAllocations(t *testing.T, c kubernetes.Interface) []string {
	t.Helper()
	list, err := c.ResourceV1().ResourceClaims("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, cl := range list.Items {
		if cl.Status.Allocation == nil {
			continue
		}
		for _, r := range cl.Status.Allocation.Devices.Results {
			seen[r.Driver+"/"+r.Pool+"/"+r.Device]++
		}
	}
	var out []string
	for d, n := range seen {
		if n > 1 {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}
