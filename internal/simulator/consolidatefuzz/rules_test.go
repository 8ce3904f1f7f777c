package consolidatefuzz

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/internal/simulator/questions"
	st "github.com/kubesched/kubesched/internal/testing"
)

// The judge's table, row by row, for both rule sets: what a drain does
// with the pod, and whether the rule set then reads its budgets.
func TestTheJudgesTableOfRules(t *testing.T) {
	pod := func() *st.PodWrapper { return st.MakePod().Name("p").Label("app", "web") }
	rs := func() *st.PodWrapper { return pod().OwnedBy("apps/v1", "ReplicaSet", "web") }
	held := owners{"ReplicaSet": true, "ReplicaSet/default/web": true, "ReplicaSet/kube-system/dns": true, "DaemonSet": true, "DaemonSet/default/agent": true}
	dns := func() *st.PodWrapper {
		return st.MakePod().Name("dns").Namespace("kube-system").OwnedBy("apps/v1", "ReplicaSet", "dns")
	}
	type want struct {
		fate  fate
		reads bool
	}
	tests := []struct {
		name       string
		pod        *v1.Pod
		selected   bool
		autoscaler want
		karpenter  want
	}{
		{"a ReplicaSet's pod", rs().Obj(), false, want{moves, true}, want{moves, true}},
		{"a DaemonSet's pod", pod().OwnedBy("apps/v1", "DaemonSet", "agent").Obj(), false, want{stays, false}, want{stays, true}},
		{"a DaemonSet's pod tolerating every taint", pod().OwnedBy("apps/v1", "DaemonSet", "agent").Toleration("", v1.TolerationOpExists, "", "").Obj(), false,
			want{stays, false}, want{stays, false}},
		{"a mirror pod", pod().Namespace("kube-system").OwnedBy("v1", "Node", "n1").Annotation(questions.MirrorPodAnnotation, "x").Obj(), false,
			want{stays, false}, want{stays, false}},
		{"a pod without controller", pod().Obj(), false, want{blocks, false}, want{moves, true}},
		{"a pod without controller annotated safe-to-evict true", pod().Annotation(questions.SafeToEvictAnnotation, "true").Obj(), false,
			want{moves, false}, want{moves, true}},
		{"a pod of a custom controller", pod().OwnedBy("example.com/v1", "Widget", "w").Obj(), false, want{blocks, false}, want{moves, true}},
		{"a pod whose ReplicaSet the input lacks", pod().OwnedBy("apps/v1", "ReplicaSet", "gone").Obj(), false, want{blocks, false}, want{moves, true}},
		{"a pod whose StatefulSet the input lacks, of a kind it holds none of", pod().OwnedBy("apps/v1", "StatefulSet", "db").Obj(), false,
			want{moves, true}, want{moves, true}},
		{"a kube-system pod without budget", dns().Obj(), false, want{blocks, false}, want{moves, true}},
		{"a kube-system pod with a budget", dns().Obj(), true, want{moves, true}, want{moves, true}},
		{"safe-to-evict false", rs().Annotation(questions.SafeToEvictAnnotation, "false").Obj(), false, want{blocks, false}, want{moves, true}},
		{"safe-to-evict true skips the budgets", rs().Annotation(questions.SafeToEvictAnnotation, "true").Obj(), true, want{moves, false}, want{moves, true}},
		{"do-not-disrupt", rs().Annotation(questions.DoNotDisruptAnnotation, "true").Obj(), false, want{moves, true}, want{blocks, false}},
		{"an emptyDir", withVolume(rs().Obj(), v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}), false, want{blocks, false}, want{moves, true}},
		{"an emptyDir in memory", withVolume(rs().Obj(), v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}), false,
			want{moves, true}, want{moves, true}},
		{"an emptyDir listed safe", withVolume(rs().Annotation(questions.SafeToEvictLocalVolumesAnnotation, "other,scratch").Obj(), v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}), false,
			want{moves, true}, want{moves, true}},
		{"a hostPath", withVolume(rs().Obj(), v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var"}}), false, want{blocks, false}, want{moves, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for rules, w := range map[questions.Rules]want{questions.RulesClusterAutoscaler: tt.autoscaler, questions.RulesKarpenter: tt.karpenter} {
				v := podVerdict(rules, tt.pod, held, tt.selected)
				if v.fate != w.fate || (v.fate != blocks && v.readsBudgets != w.reads) {
					t.Errorf("%s: %s, reads budgets %v; want %s, %v", rules, v.fate, v.readsBudgets, w.fate, w.reads)
				}
				if (v.fate == blocks) != (v.why != "") {
					t.Errorf("%s: %s with reason %q", rules, v.fate, v.why)
				}
			}
		})
	}
}

func withVolume(p *v1.Pod, src v1.VolumeSource) *v1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: src})
	return p
}
