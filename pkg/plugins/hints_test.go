package plugins_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/kubesched/kubesched/internal/cache"
	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
	"github.com/kubesched/kubesched/pkg/plugins"
)

type rl = map[v1.ResourceName]string

// hintCase is one event offered to one plugin's hints for one pod.
type hintCase struct {
	name     string
	plugin   string
	pod      *v1.Pod
	event    framework.ClusterEvent
	old, cur interface{}
	want     framework.QueueingHint
}

// TestQueueingHints holds each plugin's hint to what can and cannot help a
// pod it rejected: the event is matched against the plugin's registered
// events, and the hint decides.
func TestQueueingHints(t *testing.T) {
	const zone = v1.LabelTopologyZone
	small := st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "1"}).Obj()
	big := st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "8"}).Obj()
	bigger := st.MakeNode().Name("n").Capacity(rl{v1.ResourceCPU: "16"}).Obj()
	needs4 := st.MakePod().Name("p").Req(rl{v1.ResourceCPU: "4"}).Obj()
	tainted := st.MakeNode().Name("n").Taint("dedicated", "x", v1.TaintEffectNoSchedule).Obj()
	clean := st.MakeNode().Name("n").Obj()
	inZone := st.MakeNode().Name("n").Label(zone, "a").Obj()
	web := st.MakePod().Name("w").Label("app", "web").Node("n").Obj()
	other := st.MakePod().Name("o").Label("app", "other").Node("n").Obj()
	pendingWeb := st.MakePod().Name("w").Label("app", "web").Obj()
	nodeAdd := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}
	nodeAlloc := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeAllocatable}
	nodeTaint := framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint}
	claimAdd := framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add}
	withClaim := st.MakePod().Name("p").Volume("data").Obj()
	podAdd := framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add}
	podDelete := framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete}
	tests := []hintCase{
		{name: "NodeResourcesFit queues for an added node the pod fits on", plugin: "NodeResourcesFit", pod: needs4, event: nodeAdd, cur: big, want: framework.Queue},
		{name: "NodeResourcesFit skips an added node too small for the pod", plugin: "NodeResourcesFit", pod: needs4, event: nodeAdd, cur: small, want: framework.QueueSkip},
		{name: "NodeResourcesFit queues when allocatable grows enough", plugin: "NodeResourcesFit", pod: needs4, event: nodeAlloc, old: small, cur: big, want: framework.Queue},
		{name: "NodeResourcesFit queues when allocatable grows further on a node it fitted when empty", plugin: "NodeResourcesFit", pod: needs4, event: nodeAlloc, old: big, cur: bigger, want: framework.Queue},
		{name: "NodeResourcesFit skips an allocatable change that shrinks what the pod needs", plugin: "NodeResourcesFit", pod: needs4, event: nodeAlloc, old: bigger, cur: big, want: framework.QueueSkip},
		{name: "NodeResourcesFit queues for a deleted placed pod", plugin: "NodeResourcesFit", pod: needs4, event: podDelete, old: web, want: framework.Queue},
		{name: "NodeResourcesFit queues when the pod's own requests scale down", plugin: "NodeResourcesFit", pod: needs4,
			event: framework.ClusterEvent{Resource: framework.TargetPod, ActionType: framework.UpdatePodScaleDown}, old: needs4, cur: pendingWeb, want: framework.Queue},
		{name: "TaintToleration queues when the untolerated taint goes", plugin: "TaintToleration", pod: needs4, event: nodeTaint, old: tainted, cur: clean, want: framework.Queue},
		{name: "TaintToleration skips a node that adds an untolerated taint", plugin: "TaintToleration", pod: needs4, event: nodeTaint, old: clean, cur: tainted, want: framework.QueueSkip},
		{name: "NodeAffinity skips an added node that does not match", plugin: "NodeAffinity", pod: st.MakePod().Name("p").NodeSelector(zone, "b").Obj(), event: nodeAdd, cur: inZone, want: framework.QueueSkip},
		{name: "NodeAffinity queues for an added node that matches", plugin: "NodeAffinity", pod: st.MakePod().Name("p").NodeSelector(zone, "a").Obj(), event: nodeAdd, cur: inZone, want: framework.Queue},
		{name: "NodeUnschedulable queues when the node is uncordoned", plugin: "NodeUnschedulable", pod: needs4, event: nodeTaint,
			old: st.MakeNode().Name("n").Unschedulable().Obj(), cur: clean, want: framework.Queue},
		{name: "NodePorts skips a deleted pod that held other ports", plugin: "NodePorts", pod: st.MakePod().Name("p").HostPort(80, v1.ProtocolTCP, "").Obj(),
			event: podDelete, old: st.MakePod().Name("o").Node("n").HostPort(81, v1.ProtocolTCP, "").Obj(), want: framework.QueueSkip},
		{name: "NodePorts queues for a deleted pod that held the port", plugin: "NodePorts", pod: st.MakePod().Name("p").HostPort(80, v1.ProtocolTCP, "").Obj(),
			event: podDelete, old: st.MakePod().Name("o").Node("n").HostPort(80, v1.ProtocolTCP, "").Obj(), want: framework.Queue},
		{name: "InterPodAffinity queues when a pod its affinity selects is placed", plugin: "InterPodAffinity",
			pod: st.MakePod().Name("p").PodAffinity(st.AffinityTerm(zone, "web")).Obj(), event: podAdd, cur: web, want: framework.Queue},
		{name: "InterPodAffinity skips a placed pod its affinity does not select", plugin: "InterPodAffinity",
			pod: st.MakePod().Name("p").PodAffinity(st.AffinityTerm(zone, "web")).Obj(), event: podAdd, cur: other, want: framework.QueueSkip},
		{name: "InterPodAffinity queues when a pod its anti-affinity selects goes", plugin: "InterPodAffinity",
			pod: st.MakePod().Name("p").PodAntiAffinity(st.AffinityTerm(zone, "web")).Obj(), event: podDelete, old: web, want: framework.Queue},
		{name: "InterPodAffinity queues when a pod whose anti-affinity repelled it goes", plugin: "InterPodAffinity",
			pod: st.MakePod().Name("p").Label("app", "web").Obj(), event: podDelete,
			old: st.MakePod().Name("e").Node("n").PodAntiAffinity(st.AffinityTerm(zone, "web")).Obj(), want: framework.Queue},
		{name: "InterPodAffinity skips a pod that was never placed", plugin: "InterPodAffinity",
			pod: st.MakePod().Name("p").PodAffinity(st.AffinityTerm(zone, "web")).Obj(), event: podAdd, cur: pendingWeb, want: framework.QueueSkip},
		{name: "PodTopologySpread queues when a pod its constraint selects goes", plugin: "PodTopologySpread",
			pod: st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(), event: podDelete, old: web, want: framework.Queue},
		{name: "PodTopologySpread skips a pod its constraints do not select", plugin: "PodTopologySpread",
			pod: st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(), event: podDelete, old: other, want: framework.QueueSkip},
		{name: "PodTopologySpread skips an added node without the topology key", plugin: "PodTopologySpread",
			pod: st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(), event: nodeAdd, cur: clean, want: framework.QueueSkip},
		{name: "PodTopologySpread queues for an added node with the topology key", plugin: "PodTopologySpread",
			pod: st.MakePod().Name("p").Label("app", "web").SpreadConstraint(1, zone, v1.DoNotSchedule, "web").Obj(), event: nodeAdd, cur: inZone, want: framework.Queue},
	}
	for _, pl := range []string{"VolumeBinding", "VolumeRestrictions", "VolumeZone", "NodeVolumeLimits"} {
		tests = append(tests,
			hintCase{name: pl + " queues when a claim the pod uses appears", plugin: pl, pod: withClaim, event: claimAdd, cur: st.MakePVC("data", "1Gi").Obj(), want: framework.Queue},
			hintCase{name: pl + " skips another claim", plugin: pl, pod: withClaim, event: claimAdd, cur: st.MakePVC("other", "1Gi").Obj(), want: framework.QueueSkip})
	}
	registry := plugins.NewInTreeRegistry()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := registry[tt.plugin](context.Background(), nil, st.FakeHandle{Lister: cache.NewEmptySnapshot()})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := pl.(framework.EnqueueExtensions).EventsToRegister(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got, matched := framework.QueueSkip, false
			for _, e := range evs {
				if !e.Event.Match(tt.event) {
					continue
				}
				matched = true
				if e.QueueingHintFn == nil {
					got = framework.Queue
					break
				}
				h, err := e.QueueingHintFn(klog.Background(), tt.pod, tt.old, tt.cur)
				if err != nil {
					t.Fatal(err)
				}
				if h == framework.Queue {
					got = framework.Queue
					break
				}
			}
			if !matched {
				t.Fatalf("%s did not register %v", tt.plugin, tt.event)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
