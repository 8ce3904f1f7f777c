package nodeports

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestFilter(t *testing.T) {
	node := st.MakeNode().Name("n").Obj()
	on := func(p *st.PodWrapper) *v1.Pod { return p.Node("n").Obj() }
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing []*v1.Pod
		want     *framework.Status
	}{
		{name: "a pod without host ports is skipped", pod: st.MakePod().Name("p").Obj(), existing: []*v1.Pod{on(st.MakePod().Name("e").HostPort(80, v1.ProtocolTCP, ""))}},
		{name: "a free port passes", pod: st.MakePod().Name("p").HostPort(8080, v1.ProtocolTCP, "").Obj(), existing: []*v1.Pod{on(st.MakePod().Name("e").HostPort(80, v1.ProtocolTCP, ""))}},
		{name: "the same port and protocol conflicts with upstream's reason", pod: st.MakePod().Name("p").HostPort(80, v1.ProtocolTCP, "").Obj(),
			existing: []*v1.Pod{on(st.MakePod().Name("e").HostPort(80, v1.ProtocolTCP, ""))}, want: framework.NewStatus(framework.Unschedulable, ErrReason)},
		{name: "the same port on another protocol passes", pod: st.MakePod().Name("p").HostPort(80, v1.ProtocolUDP, "").Obj(), existing: []*v1.Pod{on(st.MakePod().Name("e").HostPort(80, v1.ProtocolTCP, ""))}},
		{name: "different host IPs do not conflict", pod: st.MakePod().Name("p").HostPort(80, v1.ProtocolTCP, "10.0.0.1").Obj(), existing: []*v1.Pod{on(st.MakePod().Name("e").HostPort(80, v1.ProtocolTCP, "10.0.0.2"))}},
		{name: "0.0.0.0 conflicts with any IP", pod: st.MakePod().Name("p").HostPort(80, v1.ProtocolTCP, "").Obj(),
			existing: []*v1.Pod{on(st.MakePod().Name("e").HostPort(80, v1.ProtocolTCP, "10.0.0.2"))}, want: framework.NewStatus(framework.Unschedulable, ErrReason)},
		{name: "a regular init container's host port is not the pod's: it has exited before the containers run", pod: st.MakePod().Name("p").InitHostPort(80, v1.ProtocolTCP, false).Obj(),
			existing: []*v1.Pod{on(st.MakePod().Name("e").HostPort(80, v1.ProtocolTCP, ""))}},
		{name: "a regular init container's host port of a pod on the node is free", pod: st.MakePod().Name("p").HostPort(80, v1.ProtocolTCP, "").Obj(),
			existing: []*v1.Pod{on(st.MakePod().Name("e").InitHostPort(80, v1.ProtocolTCP, false))}},
		{name: "a sidecar's host port conflicts: it runs as long as the pod", pod: st.MakePod().Name("p").InitHostPort(80, v1.ProtocolTCP, true).Obj(),
			existing: []*v1.Pod{on(st.MakePod().Name("e").HostPort(80, v1.ProtocolTCP, ""))}, want: framework.NewStatus(framework.Unschedulable, ErrReason)},
		{name: "a sidecar's host port of a pod on the node is taken", pod: st.MakePod().Name("p").HostPort(80, v1.ProtocolTCP, "").Obj(),
			existing: []*v1.Pod{on(st.MakePod().Name("e").InitHostPort(80, v1.ProtocolTCP, true))}, want: framework.NewStatus(framework.Unschedulable, ErrReason)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			if got := st.RunFilter(pl, tt.pod, st.NodeInfo(node, tt.existing...)); !got.Equal(tt.want) {
				t.Errorf("status = %v, want %v", got, tt.want)
			}
		})
	}
}
