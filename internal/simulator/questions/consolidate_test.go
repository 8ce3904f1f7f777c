package questions

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	st "github.com/kubesched/kubesched/internal/testing"
)

func owned(p *v1.Pod, kind string) *v1.Pod {
	yes := true
	apiVersion := "apps/v1"
	switch kind {
	case "Job":
		apiVersion = "batch/v1"
	case "Node", "ReplicationController":
		apiVersion = "v1"
	case "Rollout":
		apiVersion = "argoproj.io/v1alpha1"
	}
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "owner", UID: "owner", Controller: &yes}}
	return p
}

// budget is a PodDisruptionBudget of the default namespace selecting
// app=web, or what sel says.
func budget(name string, sel *metav1.LabelSelector, minAvailable, maxUnavailable *intstr.IntOrString) *policyv1.PodDisruptionBudget {
	if sel == nil {
		sel = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	}
	return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: minAvailable, MaxUnavailable: maxUnavailable, Selector: sel}}
}

func num(i int) *intstr.IntOrString      { v := intstr.FromInt32(int32(i)); return &v }
func share(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

func notReadyPod(p *v1.Pod) *v1.Pod {
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}
	return p
}

func TestTheRuleSetsDecideEachPodAsTheirProjectsDo(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	web := func(name string) *st.PodWrapper { return st.MakePod().Name(name).Label("app", "web").Node("n1") }
	volume := func(p *st.PodWrapper, v v1.Volume) *st.PodWrapper {
		p.Spec.Volumes = append(p.Spec.Volumes, v)
		return p
	}
	emptyDir := v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}
	inMemory := v1.Volume{Name: "shm", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}}
	hostPath := v1.Volume{Name: "logs", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/log"}}}
	deleted := func(p *v1.Pod, ago time.Duration) *v1.Pod {
		at := metav1.NewTime(now.Add(-ago))
		p.DeletionTimestamp = &at
		return p
	}
	started := func(p *v1.Pod, ago time.Duration) *v1.Pod {
		at := metav1.NewTime(now.Add(-ago))
		p.Status.StartTime = &at
		return p
	}
	created := func(p *v1.Pod, ago time.Duration) *v1.Pod {
		p.CreationTimestamp = metav1.NewTime(now.Add(-ago))
		return p
	}
	always := func(b *policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudget {
		pol := policyv1.AlwaysAllow
		b.Spec.UnhealthyPodEvictionPolicy = &pol
		return b
	}
	others := []*v1.Pod{owned(web("w2").Obj(), "ReplicaSet"), owned(web("w3").Obj(), "ReplicaSet")}
	tests := []struct {
		name          string
		pod           *v1.Pod
		pdbs          []*policyv1.PodDisruptionBudget
		owners        map[string]bool
		ca, karpenter fate
		// why are what each one's reason says when the pod keeps the node.
		caWhy, karpenterWhy string
	}{
		{name: "a ReplicaSet's pod moves under both",
			pod: owned(web("w1").Obj(), "ReplicaSet"), ca: moves, karpenter: moves},
		{name: "a pod whose ReplicaSet the cluster lacks keeps its node for cluster-autoscaler",
			pod: owned(web("w1").Obj(), "ReplicaSet"), owners: map[string]bool{"ReplicaSet": true, "ReplicaSet/default/other": true},
			ca: blocks, caWhy: `replication controller for default/w1 is not available, err: replicaset.apps "owner" not found`, karpenter: moves},
		{name: "a pod whose ReplicaSet the cluster holds moves",
			pod: owned(web("w1").Obj(), "ReplicaSet"), owners: map[string]bool{"ReplicaSet": true, "ReplicaSet/default/owner": true}, ca: moves, karpenter: moves},
		{name: "a pod whose Job the cluster lacks keeps its node for cluster-autoscaler",
			pod: owned(web("j1").Obj(), "Job"), owners: map[string]bool{"Job": true},
			ca: blocks, caWhy: `job for default/j1 is not available: err: job.batch "owner" not found`, karpenter: moves},
		{name: "a pod of a kind of controller the input holds none of is taken to have it",
			pod: owned(web("w1").Obj(), "StatefulSet"), owners: map[string]bool{"ReplicaSet": true}, ca: moves, karpenter: moves},
		{name: "a pod without a controller keeps its node for cluster-autoscaler and moves for Karpenter",
			pod: web("bare").Obj(), ca: blocks, caWhy: "default/bare is not replicated", karpenter: moves},
		{name: "a pod without a controller annotated safe-to-evict true moves under both",
			pod: web("bare").Annotation(SafeToEvictAnnotation, "true").Obj(), ca: moves, karpenter: moves},
		{name: "a pod annotated safe-to-evict false keeps its node for cluster-autoscaler only",
			pod: owned(web("ledger").Annotation(SafeToEvictAnnotation, "false").Obj(), "ReplicaSet"), ca: blocks, caWhy: "pod annotated as not safe to evict present: ledger", karpenter: moves},
		{name: "a pod annotated safe-to-evict on-completion keeps its node for cluster-autoscaler only",
			pod: owned(web("batch").Annotation(SafeToEvictAnnotation, "on-completion").Obj(), "Job"), ca: blocks, caWhy: "on-completion", karpenter: moves},
		{name: "a pod annotated do-not-disrupt true keeps its node for Karpenter only",
			pod: owned(web("job").Annotation(DoNotDisruptAnnotation, "true").Obj(), "Job"), ca: moves, karpenter: blocks, karpenterWhy: `pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/job)`},
		{name: "do-not-disrupt for a duration keeps the node while the pod has run less than it",
			pod: started(owned(web("job").Annotation(DoNotDisruptAnnotation, "5m").Obj(), "Job"), time.Minute), ca: moves, karpenter: blocks, karpenterWhy: "do-not-disrupt"},
		{name: "do-not-disrupt for a duration lets the node go once the pod has run longer",
			pod: started(owned(web("job").Annotation(DoNotDisruptAnnotation, "5m").Obj(), "Job"), 10*time.Minute), ca: moves, karpenter: moves},
		{name: "an emptyDir volume keeps the node for cluster-autoscaler only",
			pod: owned(volume(web("cache"), emptyDir).Obj(), "ReplicaSet"), ca: blocks, caWhy: `pod with local storage present: cache (emptyDir volume "scratch"`, karpenter: moves},
		{name: "a hostPath volume keeps the node for cluster-autoscaler",
			pod: owned(volume(web("logs"), hostPath).Obj(), "ReplicaSet"), ca: blocks, caWhy: `hostPath volume "logs"`, karpenter: moves},
		{name: "an emptyDir in memory is not local storage",
			pod: owned(volume(web("cache"), inMemory).Obj(), "ReplicaSet"), ca: moves, karpenter: moves},
		{name: "a local volume listed safe to evict does not keep the node",
			pod: owned(volume(web("cache"), emptyDir).Annotation(SafeToEvictLocalVolumesAnnotation, "scratch").Obj(), "ReplicaSet"), ca: moves, karpenter: moves},
		{name: "a local volume not listed keeps the node though another is listed",
			pod: owned(volume(volume(web("cache"), emptyDir), hostPath).Annotation(SafeToEvictLocalVolumesAnnotation, "scratch").Obj(), "ReplicaSet"), ca: blocks, caWhy: `hostPath volume "logs"`, karpenter: moves},
		{name: "a kube-system pod without a budget keeps its node for cluster-autoscaler only",
			pod: owned(st.MakePod().Name("coredns").Namespace("kube-system").Node("n1").Obj(), "ReplicaSet"), ca: blocks, caWhy: "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: coredns", karpenter: moves},
		{name: "a kube-system pod without a budget created over an hour ago moves for cluster-autoscaler too, its local storage unread",
			pod: created(owned(volume(st.MakePod().Name("coredns").Namespace("kube-system").Node("n1"), emptyDir).Obj(), "ReplicaSet"), 2*time.Hour), ca: moves, karpenter: moves},
		{name: "a kube-system pod without a budget created under an hour ago keeps its node for cluster-autoscaler",
			pod: created(owned(st.MakePod().Name("coredns").Namespace("kube-system").Node("n1").Obj(), "ReplicaSet"), 30*time.Minute), ca: blocks, caWhy: "non-pdb-assigned kube-system pod present: coredns", karpenter: moves},
		{name: "a finished pod annotated safe-to-evict true goes with its node: cluster-autoscaler lists no finished pod",
			pod: owned(web("done").Phase(v1.PodSucceeded).Annotation(SafeToEvictAnnotation, "true").Obj(), "ReplicaSet"), ca: stays, karpenter: stays},
		{name: "a finished pod without a controller does not keep its node",
			pod: web("done").Phase(v1.PodFailed).Obj(), ca: stays, karpenter: stays},
		{name: "a StatefulSet's pod finished and terminating moves for Karpenter",
			pod: deleted(owned(web("db-0").Phase(v1.PodSucceeded).Obj(), "StatefulSet"), time.Minute), ca: stays, karpenter: moves},
		{name: "a kube-system pod whose budget allows a disruption moves",
			pod: owned(st.MakePod().Name("coredns").Namespace("kube-system").Node("n1").Obj(), "ReplicaSet"),
			pdbs: []*policyv1.PodDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: "kube-system"},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: num(0), Selector: &metav1.LabelSelector{}}}},
			ca: moves, karpenter: moves},
		{name: "a mirror pod goes with its node under both",
			pod: owned(web("etcd").Annotation(MirrorPodAnnotation, "hash").Obj(), "Node"), ca: stays, karpenter: stays},
		{name: "a DaemonSet's pod goes with its node under both",
			pod: owned(volume(web("agent"), hostPath).Obj(), "DaemonSet"), ca: stays, karpenter: stays},
		{name: "a pod terminating for long goes with its node under both",
			pod: deleted(owned(web("old").Obj(), "ReplicaSet"), 10*time.Minute), ca: stays, karpenter: stays},
		{name: "a pod terminating for seconds moves for cluster-autoscaler and stays for Karpenter",
			pod: deleted(owned(web("old").Obj(), "ReplicaSet"), 5*time.Second), ca: moves, karpenter: stays},
		{name: "a StatefulSet's terminating pod moves for Karpenter",
			pod: deleted(owned(web("db-0").Obj(), "StatefulSet"), 10*time.Minute), ca: stays, karpenter: moves},
		{name: "a pod of a custom controller keeps its node for cluster-autoscaler only",
			pod: owned(web("canary").Obj(), "Rollout"), ca: blocks, caWhy: "its controller is a Rollout", karpenter: moves},
		{name: "a finished pod goes with its node under both",
			pod: owned(restartNever(web("done").Phase(v1.PodSucceeded).Obj()), "Job"), ca: stays, karpenter: stays},
		{name: "a budget that allows no disruption keeps the node under both",
			pod: owned(web("w1").Obj(), "ReplicaSet"), pdbs: []*policyv1.PodDisruptionBudget{budget("web", nil, nil, num(0))},
			ca: blocks, caWhy: "not enough pod disruption budget to move default/w1", karpenter: blocks, karpenterWhy: "pdb prevents pod evictions"},
		{name: "a budget with an empty selector guards every pod of its namespace",
			pod: owned(web("w1").Obj(), "ReplicaSet"), pdbs: []*policyv1.PodDisruptionBudget{budget("all", &metav1.LabelSelector{}, nil, num(0))},
			ca: blocks, caWhy: "PodDisruptionBudget default/all", karpenter: blocks, karpenterWhy: "pdb prevents pod evictions (PodDisruptionBudget=[default/all])"},
		{name: "a budget of another namespace guards nothing here",
			pod: owned(web("w1").Obj(), "ReplicaSet"), pdbs: []*policyv1.PodDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "other"},
				Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: num(0), Selector: &metav1.LabelSelector{}}}},
			ca: moves, karpenter: moves},
		{name: "a budget that allows one disruption lets the pod go",
			pod: owned(web("w1").Obj(), "ReplicaSet"), pdbs: []*policyv1.PodDisruptionBudget{budget("web", nil, num(2), nil)}, ca: moves, karpenter: moves},
		{name: "a pod two budgets select keeps its node under both",
			pod:  owned(web("w1").Obj(), "ReplicaSet"),
			pdbs: []*policyv1.PodDisruptionBudget{budget("web", nil, num(1), nil), budget("all", &metav1.LabelSelector{}, num(1), nil)},
			ca:   blocks, caWhy: "more than one PodDisruptionBudget", karpenter: blocks, karpenterWhy: "eviction does not support multiple PDBs (PodDisruptionBudget(s)=[default/web default/all])"},
		{name: "an unready pod of an AlwaysAllow budget moves for Karpenter",
			pod: notReadyPod(owned(web("w1").Obj(), "ReplicaSet")), pdbs: []*policyv1.PodDisruptionBudget{always(budget("web", nil, nil, num(0)))},
			ca: blocks, caWhy: "not enough pod disruption budget", karpenter: moves},
		{name: "a safe-to-evict pod is not held by its budget for cluster-autoscaler",
			pod: owned(web("w1").Annotation(SafeToEvictAnnotation, "true").Obj(), "ReplicaSet"), pdbs: []*policyv1.PodDisruptionBudget{budget("web", nil, nil, num(0))},
			ca: moves, karpenter: blocks, karpenterWhy: "pdb prevents pod evictions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cluster.New()
			for _, b := range tt.pdbs {
				c.Others = append(c.Others, b)
			}
			pods := append([]*v1.Pod{tt.pod}, others...)
			budgets := c.Budgets(pods)
			for _, r := range []struct {
				rules Rules
				want  fate
				why   string
			}{{RulesClusterAutoscaler, tt.ca, tt.caWhy}, {RulesKarpenter, tt.karpenter, tt.karpenterWhy}} {
				rc := &ruleContext{rules: r.rules, budgets: budgets, now: now, owners: tt.owners, count: func() []int32 { return cluster.HealthyPods(pods, budgets) }}
				got, why := r.rules.decide(tt.pod, rc)
				if got != r.want || !strings.Contains(why, r.why) {
					t.Errorf("%s: fate %d (%q), want %d (%q)", r.rules, got, why, r.want, r.why)
				}
			}
		})
	}
}

// TestKarpenterReadsDoNotDisruptOnEveryPodBeforeAnyBudget: a node whose
// first pod (by name) a budget holds and whose second is annotated
// do-not-disrupt is kept for the annotation, as ValidatePodsDisruptable
// reads it on every pod first.
func TestKarpenterReadsDoNotDisruptOnEveryPodBeforeAnyBudget(t *testing.T) {
	a := owned(st.MakePod().Name("a").Label("app", "web").Node("n1").Obj(), "ReplicaSet")
	b := owned(st.MakePod().Name("b").Node("n1").Annotation(DoNotDisruptAnnotation, "true").Obj(), "ReplicaSet")
	c := cluster.New()
	c.Others = []interface{}{budget("web", nil, nil, num(0))}
	pods := []*v1.Pod{a, b}
	budgets := c.Budgets(pods)
	rc := &ruleContext{rules: RulesKarpenter, budgets: budgets, now: time.Now(), count: func() []int32 { return cluster.HealthyPods(pods, budgets) }}
	_, keeps, why := rc.node(pods)
	if keeps != b || !strings.Contains(why, `pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/b)`) {
		t.Errorf("kept by %v for %q, want b's annotation", keeps, why)
	}
}

func TestRulesAreReadFromTheFlag(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "cluster-autoscaler", want: "cluster-autoscaler"},
		{in: "karpenter", want: "karpenter"},
		{in: "Karpenter", err: `--rules: "Karpenter" is not a rule set`},
		{in: "", err: "is not a rule set"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRules(tc.in)
			if string(got) != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("ParseRules(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
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

func restartNever(p *v1.Pod) *v1.Pod {
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	return p
}
