package cluster

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	st "github.com/kubesched/kubesched/internal/testing"
)

func controlled(p *v1.Pod, apiVersion, kind, name string) *v1.Pod {
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(kind + "-" + name), Controller: &yes}}
	return p
}

func webPod(name, node string) *v1.Pod {
	return controlled(st.MakePod().Name(name).Label("app", "web").Node(node).Obj(), "apps/v1", "ReplicaSet", "web-abc")
}

func unready(p *v1.Pod) *v1.Pod {
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
	return p
}

func pdbOf(sel *metav1.LabelSelector, minAvailable, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	if sel == nil {
		sel = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	}
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable, Selector: sel}}
}

func intOf(i int) *intstr.IntOrString    { v := intstr.FromInt32(int32(i)); return &v }
func pctOf(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

// deployment is a Deployment web of replicas and its ReplicaSet web-abc.
func deployment(replicas int32) (*appsv1.Deployment, *appsv1.ReplicaSet) {
	d := st.MakeDeployment("web", replicas, st.MakePod().Label("app", "web"))
	d.UID = "Deployment-web"
	rs := st.MakeReplicaSet("web-abc", replicas, st.MakePod().Label("app", "web"))
	rs.UID = "ReplicaSet-web-abc"
	yes := true
	rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: d.UID, Controller: &yes}}
	return d, rs
}

func TestBudgetsAreCountedAsTheDisruptionControllerCountsThem(t *testing.T) {
	running := func(n int) []*v1.Pod {
		var out []*v1.Pod
		for i := range n {
			out = append(out, webPod("w"+string(rune('a'+i)), "n1"))
		}
		return out
	}
	pending := func(n int) []*v1.Pod {
		var out []*v1.Pod
		for i := range n {
			out = append(out, webPod("p"+string(rune('a'+i)), ""))
		}
		return out
	}
	tests := []struct {
		name string
		pdb  *policyv1.PodDisruptionBudget
		// replicas is the Deployment's scale; 0 leaves the controllers
		// out of the input.
		replicas                  int32
		pods                      []*v1.Pod
		expected, desired, allows int32
		failed                    string
	}{
		{name: "minAvailable 80% counts the pending pods of the Deployment's scale and allows none",
			pdb: pdbOf(nil, pctOf("80%"), nil), replicas: 10, pods: append(running(8), pending(2)...), expected: 10, desired: 8, allows: 0},
		{name: "maxUnavailable 1 over 3 with one pending allows none",
			pdb: pdbOf(nil, nil, intOf(1)), replicas: 3, pods: append(running(2), pending(1)...), expected: 3, desired: 2, allows: 0},
		{name: "maxUnavailable 1 over 3 all running allows one",
			pdb: pdbOf(nil, nil, intOf(1)), replicas: 3, pods: running(3), expected: 3, desired: 2, allows: 1},
		{name: "the scale counts replicas not yet created",
			pdb: pdbOf(nil, nil, intOf(1)), replicas: 5, pods: running(4), expected: 5, desired: 4, allows: 0},
		{name: "an integer minAvailable counts the pods selected, pending ones included",
			pdb: pdbOf(nil, intOf(2), nil), replicas: 3, pods: append(running(2), pending(1)...), expected: 3, desired: 2, allows: 0},
		{name: "maxUnavailable 30% of 4 rounds up to 2",
			pdb: pdbOf(nil, nil, pctOf("30%")), replicas: 4, pods: running(4), expected: 4, desired: 2, allows: 2},
		{name: "an unready pod is not healthy",
			pdb: pdbOf(nil, nil, intOf(1)), replicas: 4, pods: append(running(3), unready(webPod("u", "n1"))), expected: 4, desired: 3, allows: 0},
		{name: "an empty selector selects every pod of the namespace",
			pdb: pdbOf(&metav1.LabelSelector{}, nil, intOf(1)), replicas: 3, pods: append(running(3), controlled(st.MakePod().Name("other").Node("n1").Obj(), "apps/v1", "ReplicaSet", "web-abc")), expected: 3, desired: 2, allows: 2},
		{name: "a budget without a selector selects no pod and allows nothing",
			pdb:      &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}, Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: intOf(1)}},
			replicas: 3, pods: running(3), expected: 0, desired: 0, allows: 0},
		{name: "a ReplicaSet the input does not hold counts its pods",
			pdb: pdbOf(nil, nil, intOf(1)), pods: append(running(3), pending(1)...), expected: 4, desired: 3, allows: 0},
		{name: "a Job's pods fail the count: a Job has no scale",
			pdb:    pdbOf(nil, nil, intOf(1)),
			pods:   []*v1.Pod{controlled(st.MakePod().Name("j1").Label("app", "web").Node("n1").Obj(), "batch/v1", "Job", "etl"), controlled(st.MakePod().Name("j2").Label("app", "web").Node("n1").Obj(), "batch/v1", "Job", "etl")},
			allows: 0, failed: "jobs.batch does not implement the scale subresource"},
		{name: "an integer minAvailable counts a Job's pods without a scale",
			pdb:      pdbOf(nil, intOf(1), nil),
			pods:     []*v1.Pod{controlled(st.MakePod().Name("j1").Label("app", "web").Node("n1").Obj(), "batch/v1", "Job", "etl"), controlled(st.MakePod().Name("j2").Label("app", "web").Node("n1").Obj(), "batch/v1", "Job", "etl")},
			expected: 2, desired: 1, allows: 1},
		{name: "pods without a controller are left out of the scale",
			pdb: pdbOf(nil, nil, intOf(0)), replicas: 2, pods: append(running(2), st.MakePod().Name("bare").Label("app", "web").Node("n1").Obj()), expected: 2, desired: 2, allows: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			c.Others = []interface{}{tt.pdb}
			if tt.replicas > 0 {
				d, rs := deployment(tt.replicas)
				c.Deployments, c.ReplicaSets = []*appsv1.Deployment{d}, []*appsv1.ReplicaSet{rs}
			}
			b := c.Budgets(tt.pods)[0]
			healthy := HealthyPods(tt.pods, []*Budget{b})[0]
			if b.Expected != tt.expected || b.Desired != tt.desired || b.Allowed(healthy) != tt.allows || !strings.Contains(b.Failed, tt.failed) || (tt.failed == "") != (b.Failed == "") {
				t.Errorf("expected %d, desired %d, allows %d (healthy %d), failed %q; want %d, %d, %d, %q",
					b.Expected, b.Desired, b.Allowed(healthy), healthy, b.Failed, tt.expected, tt.desired, tt.allows, tt.failed)
			}
		})
	}
}

func TestTheEvictionAPIRefusesWhatTheBudgetsDoNotAllow(t *testing.T) {
	running := []*v1.Pod{webPod("w1", "a"), webPod("w2", "a"), webPod("w3", "b"), webPod("w4", "c")}
	always := func(b *policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
		p := policyv1.AlwaysAllow
		b.Spec.UnhealthyPodEvictionPolicy = &p
		return b
	}
	withUnready := append(running[1:], unready(webPod("u", "a")))
	tests := []struct {
		name    string
		evicted []*v1.Pod
		pods    []*v1.Pod
		pdbs    []*policyv1.PodDisruptionBudget
		refused string
	}{
		{name: "minAvailable 3 of 4 allows evicting one", evicted: running[2:3], pdbs: []*policyv1.PodDisruptionBudget{pdbOf(nil, intOf(3), nil)}},
		{name: "minAvailable 3 of 4 does not allow evicting two", evicted: running[0:2], pdbs: []*policyv1.PodDisruptionBudget{pdbOf(nil, intOf(3), nil)}, refused: "default/w2"},
		{name: "maxUnavailable 2 allows evicting two", evicted: running[0:2], pdbs: []*policyv1.PodDisruptionBudget{pdbOf(nil, nil, intOf(2))}},
		{name: "minAvailable 75% of 4 (3) does not allow evicting two", evicted: running[0:2], pdbs: []*policyv1.PodDisruptionBudget{pdbOf(nil, pctOf("75%"), nil)}, refused: "default/w2"},
		{name: "a pod two budgets select is refused", evicted: running[0:1],
			pdbs: []*policyv1.PodDisruptionBudget{pdbOf(nil, intOf(0), nil), pdbOf(&metav1.LabelSelector{}, intOf(0), nil)}, refused: "default/w1"},
		{name: "an unready pod goes when its budget has its desired healthy pods",
			evicted: withUnready[3:], pods: withUnready, pdbs: []*policyv1.PodDisruptionBudget{pdbOf(nil, intOf(3), nil)}},
		{name: "an unready pod is refused when its budget lacks healthy pods",
			evicted: withUnready[3:], pods: withUnready, pdbs: []*policyv1.PodDisruptionBudget{pdbOf(nil, intOf(4), nil)}, refused: "default/u"},
		{name: "an unready pod of an AlwaysAllow budget always goes",
			evicted: withUnready[3:], pods: withUnready, pdbs: []*policyv1.PodDisruptionBudget{always(pdbOf(nil, intOf(4), nil))}},
		{name: "a pending pod goes without a look at its budget",
			evicted: []*v1.Pod{webPod("p", "")}, pdbs: []*policyv1.PodDisruptionBudget{pdbOf(nil, intOf(4), nil)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pods := tt.pods
			if pods == nil {
				pods = running
			}
			c := New()
			for _, p := range tt.pdbs {
				c.Others = append(c.Others, p)
			}
			pod, reason := EvictionRefused(tt.evicted, pods, c.Budgets(pods))
			got := ""
			if pod != nil {
				got = PodKey(pod)
			}
			if got != tt.refused {
				t.Errorf("refused %q (%s), want %q", got, reason, tt.refused)
			}
			if pod != nil && !strings.Contains(reason, "PodDisruptionBudget") {
				t.Errorf("reason %q does not name the budget", reason)
			}
		})
	}
}
