package questions

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	st "github.com/kubesched/kubesched/internal/testing"
)

func owned(p *v1.Pod, kind string) *v1.Pod {
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "owner", UID: "owner", Controller: &yes}}
	return p
}

func TestEvictionRulesDecideWhichPodsKeepANode(t *testing.T) {
	emptyDir := func(p *v1.Pod) *v1.Pod {
		p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		return p
	}
	hostPath := func(p *v1.Pod) *v1.Pod {
		p.Spec.Volumes = []v1.Volume{{Name: "logs", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/log"}}}}
		return p
	}
	tests := []struct {
		name    string
		pods    []*v1.Pod
		wantPod string
		want    string
	}{
		{name: "pods with a controller do not keep the node",
			pods: []*v1.Pod{owned(st.MakePod().Name("a").Obj(), "ReplicaSet"), owned(st.MakePod().Name("b").Obj(), "StatefulSet")}},
		{name: "a DaemonSet's pod goes with the node, even without being evictable",
			pods: []*v1.Pod{owned(emptyDir(st.MakePod().Name("agent").Obj()), "DaemonSet")}},
		{name: "a pod without a controller keeps the node",
			pods: []*v1.Pod{owned(st.MakePod().Name("a").Obj(), "ReplicaSet"), st.MakePod().Name("bare").Obj()}, wantPod: "default/bare", want: "has no controller"},
		{name: "a pod without a controller annotated safe-to-evict true does not",
			pods: []*v1.Pod{st.MakePod().Name("bare").Annotation(SafeToEvictAnnotation, "true").Obj()}},
		{name: "a pod annotated safe-to-evict false keeps the node",
			pods: []*v1.Pod{owned(st.MakePod().Name("ledger").Annotation(SafeToEvictAnnotation, "false").Obj(), "ReplicaSet")}, wantPod: "default/ledger", want: `safe-to-evict: "false"`},
		{name: "a pod annotated do-not-disrupt true keeps the node, safe-to-evict true or not",
			pods: []*v1.Pod{owned(st.MakePod().Name("job").Annotation(DoNotDisruptAnnotation, "true").Annotation(SafeToEvictAnnotation, "true").Obj(), "Job")}, wantPod: "default/job", want: `karpenter.sh/do-not-disrupt: "true"`},
		{name: "a pod with an emptyDir volume keeps the node",
			pods: []*v1.Pod{owned(emptyDir(st.MakePod().Name("cache").Obj()), "ReplicaSet")}, wantPod: "default/cache", want: `emptyDir volume "scratch"`},
		{name: "a pod with a hostPath volume keeps the node",
			pods: []*v1.Pod{owned(hostPath(st.MakePod().Name("logs").Obj()), "ReplicaSet")}, wantPod: "default/logs", want: `hostPath volume "logs"`},
		{name: "a pod with local storage annotated safe-to-evict true does not",
			pods: []*v1.Pod{owned(emptyDir(st.MakePod().Name("cache").Annotation(SafeToEvictAnnotation, "true").Obj()), "ReplicaSet")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, reason := blockedByRules(tt.pods)
			got := ""
			if pod != nil {
				got = pod.Namespace + "/" + pod.Name
			}
			if got != tt.wantPod || !strings.Contains(reason, tt.want) {
				t.Errorf("kept by %q (%s), want %q (%s)", got, reason, tt.wantPod, tt.want)
			}
		})
	}
}

func TestADrainNeverEvictsMoreThanABudgetAllows(t *testing.T) {
	web := func(name, node string) *v1.Pod {
		return owned(st.MakePod().Name(name).Label("app", "web").Node(node).Obj(), "ReplicaSet")
	}
	pdb := func(minAvailable, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
			Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	}
	n := func(i int) *intstr.IntOrString { v := intstr.FromInt32(int32(i)); return &v }
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	running := []*v1.Pod{web("w1", "a"), web("w2", "a"), web("w3", "b"), web("w4", "c")}
	tests := []struct {
		name    string
		evicted []*v1.Pod
		pdb     *policyv1.PodDisruptionBudget
		blocked bool
	}{
		{name: "minAvailable 3 of 4 allows evicting one", evicted: running[2:3], pdb: pdb(n(3), nil)},
		{name: "minAvailable 3 of 4 does not allow evicting two", evicted: running[0:2], pdb: pdb(n(3), nil), blocked: true},
		{name: "maxUnavailable 2 allows evicting two", evicted: running[0:2], pdb: pdb(nil, n(2))},
		{name: "minAvailable 75% of 4 (3) does not allow evicting two", evicted: running[0:2], pdb: pdb(pct("75%"), nil), blocked: true},
		{name: "maxUnavailable 30% of 4 rounds up to 2 and allows evicting two", evicted: running[0:2], pdb: pdb(nil, pct("30%"))},
		{name: "minAvailable of every pod allows evicting none",
			evicted: running[2:3], pdb: pdb(n(4), nil), blocked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, reason := cluster.EvictionRefused(tt.evicted, running, []*policyv1.PodDisruptionBudget{tt.pdb})
			if (pod != nil) != tt.blocked {
				t.Errorf("blocked %v (%s), want %v", pod != nil, reason, tt.blocked)
			}
			if pod != nil && !strings.Contains(reason, "PodDisruptionBudget default/web") {
				t.Errorf("reason %q does not name the budget", reason)
			}
		})
	}
}

func TestTheDefaultDrainBoundTriesEveryNodeOfAMidSizeCluster(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes int
		want  int
	}{
		{"an empty cluster still gets the floor", 0, 1000},
		{"a 12-node cluster has every node tried", 12, 1_250_000},
		{"a 2,000-node cluster has every node tried", 2000, 7500},
		{"the largest cluster whose every node is tried is 3,872 nodes", 3872, 3873},
		{"one more node leaves one untried", 3873, 3872},
		{"a 5,000-node cluster gets 3,000 drains", 5000, 3000},
		{"a 15,000-node cluster gets 1,000 drains", 15000, 1000},
		{"past 15,000 nodes the floor holds", 100000, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DefaultMaxDrains(tc.nodes); got != tc.want {
				t.Errorf("DefaultMaxDrains(%d) = %d, want %d", tc.nodes, got, tc.want)
			}
		})
	}
}
