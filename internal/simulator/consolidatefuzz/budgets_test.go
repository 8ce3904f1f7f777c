package consolidatefuzz

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	st "github.com/kubesched/kubesched/internal/testing"
)

// The judge counts each budget as the disruption controller does: the
// expected pods from the controllers' scales (a Deployment's for its
// ReplicaSet's pods), or the pods selected for an integer minAvailable;
// healthy pods the Ready ones; a controller without a scale subresource
// fails the count.
func TestTheJudgeCountsBudgetsAsTheDisruptionControllerDoes(t *testing.T) {
	yes := true
	ref := func(apiVersion, kind, name string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: &yes}}
	}
	replicas := func(n int32) *int32 { return &n }
	c := cluster.New()
	c.Deployments = []*appsv1.Deployment{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"}, Spec: appsv1.DeploymentSpec{Replicas: replicas(4)}}}
	c.ReplicaSets = []*appsv1.ReplicaSet{
		{ObjectMeta: metav1.ObjectMeta{Name: "web-rs", Namespace: "default", UID: "uid-web-rs", OwnerReferences: ref("apps/v1", "Deployment", "web")}, Spec: appsv1.ReplicaSetSpec{Replicas: replicas(9)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default", UID: "uid-api"}, Spec: appsv1.ReplicaSetSpec{Replicas: replicas(3)}},
		// Its Deployment is not in the input: its own scale counts.
		{ObjectMeta: metav1.ObjectMeta{Name: "old-rs", Namespace: "default", UID: "uid-old-rs", OwnerReferences: ref("apps/v1", "Deployment", "old")}, Spec: appsv1.ReplicaSetSpec{Replicas: replicas(2)}},
	}
	c.StatefulSets = []*appsv1.StatefulSet{{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default", UID: "uid-db"}, Spec: appsv1.StatefulSetSpec{Replicas: replicas(4)}}}
	pod := func(name, app, node string, owner []metav1.OwnerReference) *v1.Pod {
		p := st.MakePod().Name(name).Label("app", app).Node(node).Obj()
		p.OwnerReferences = owner
		if node != "" {
			running(p)
		}
		return p
	}
	unready := pod("web-4", "web", "n1", ref("apps/v1", "ReplicaSet", "web-rs"))
	unready.Status.Conditions[1].Status = v1.ConditionFalse
	simulated := pod("api-3", "api", "n1", ref("apps/v1", "ReplicaSet", "api"))
	simulated.Status = v1.PodStatus{} // bound by the simulation: no condition
	pods := []*v1.Pod{
		pod("web-1", "web", "n1", ref("apps/v1", "ReplicaSet", "web-rs")),
		pod("web-2", "web", "n2", ref("apps/v1", "ReplicaSet", "web-rs")),
		pod("web-3", "web", "", ref("apps/v1", "ReplicaSet", "web-rs")), // pending
		unready,
		pod("api-1", "api", "n1", ref("apps/v1", "ReplicaSet", "api")),
		pod("api-2", "api", "n2", ref("apps/v1", "ReplicaSet", "api")),
		simulated,
		pod("api-bare", "api", "n2", nil), // unmanaged: left out of the scale
		pod("db-0", "db", "n1", ref("apps/v1", "StatefulSet", "db")),
		pod("db-1", "db", "n1", ref("apps/v1", "StatefulSet", "db")),
		pod("db-2", "db", "n2", ref("apps/v1", "StatefulSet", "db")),
		pod("db-3", "db", "n2", ref("apps/v1", "StatefulSet", "db")),
		pod("agent-1", "agent", "n1", ref("apps/v1", "DaemonSet", "agent")),
		pod("agent-2", "agent", "n2", ref("apps/v1", "DaemonSet", "agent")),
		pod("job-1", "job", "n1", ref("batch/v1", "Job", "job")),
		pod("old-1", "old", "n1", ref("apps/v1", "ReplicaSet", "old-rs")),
		pod("gone-1", "gone", "n1", ref("apps/v1", "ReplicaSet", "gone")),
		pod("gone-2", "gone", "n2", ref("apps/v1", "ReplicaSet", "gone")),
	}
	app := func(a string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": a}}
	}
	num, pct := intstr.FromInt32, intstr.FromString
	tests := []struct {
		name                      string
		sel                       *metav1.LabelSelector
		maxUnavailable, minAvail  *intstr.IntOrString
		expected, desired, health int32
		allowed                   int32
		failed                    bool
	}{
		{name: "a Deployment's replicas are expected, the pending and the unready pods are not healthy",
			sel: app("web"), maxUnavailable: ptr(num(1)), expected: 4, desired: 3, health: 2, allowed: 0},
		{name: "a ReplicaSet's replicas; a pod the simulation bound is healthy; an unmanaged pod is left out of the scale",
			sel: app("api"), maxUnavailable: ptr(num(1)), expected: 3, desired: 2, health: 4, allowed: 2},
		{name: "a percentage maxUnavailable rounds up",
			sel: app("api"), maxUnavailable: ptr(pct("50%")), expected: 3, desired: 1, health: 4, allowed: 3},
		{name: "an integer minAvailable expects the pods selected",
			sel: app("api"), minAvail: ptr(num(3)), expected: 4, desired: 3, health: 4, allowed: 1},
		{name: "a percentage minAvailable rounds up over the StatefulSet's replicas",
			sel: app("db"), minAvail: ptr(pct("75%")), expected: 4, desired: 3, health: 4, allowed: 1},
		{name: "minAvailable 100% allows nothing",
			sel: app("db"), minAvail: ptr(pct("100%")), expected: 4, desired: 4, health: 4, allowed: 0},
		{name: "a DaemonSet's pods have no scale: maxUnavailable fails",
			sel: app("agent"), maxUnavailable: ptr(num(1)), health: 2, failed: true},
		{name: "a DaemonSet's pods with an integer minAvailable are counted",
			sel: app("agent"), minAvail: ptr(num(1)), expected: 2, desired: 1, health: 2, allowed: 1},
		{name: "a Job's pods have no scale",
			sel: app("job"), minAvail: ptr(pct("50%")), health: 1, failed: true},
		{name: "a ReplicaSet whose Deployment is not in the input has its own scale",
			sel: app("old"), maxUnavailable: ptr(num(1)), expected: 2, desired: 1, health: 1, allowed: 0},
		{name: "a controller the input does not hold counts its pods",
			sel: app("gone"), maxUnavailable: ptr(num(1)), expected: 2, desired: 1, health: 2, allowed: 1},
		{name: "no selector selects nothing", maxUnavailable: ptr(num(1)), expected: 0, allowed: 0},
		{name: "an empty selector selects the namespace's every pod, whose Job fails the count",
			sel: &metav1.LabelSelector{}, maxUnavailable: ptr(num(1)), health: 16, failed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"},
				Spec: policyv1.PodDisruptionBudgetSpec{Selector: tt.sel, MaxUnavailable: tt.maxUnavailable, MinAvailable: tt.minAvail}}
			c.Others = []interface{}{pdb}
			b := countBudgets(c, pods)[0]
			if (b.failed != "") != tt.failed || b.healthy != tt.health || b.allowed() != tt.allowed || (!tt.failed && (b.expected != tt.expected || b.desired != tt.desired)) {
				t.Errorf("got %s (failed %v), want %d healthy, %d desired of %d expected, %d allowed (failed %v)", b, b.failed != "", tt.health, tt.desired, tt.expected, tt.allowed, tt.failed)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
