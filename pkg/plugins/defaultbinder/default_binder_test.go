package defaultbinder

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

type recordingBinder struct {
	got *v1.Binding
	err error
}

func (r *recordingBinder) Bind(_ context.Context, b *v1.Binding) error {
	r.got = b
	return r.err
}

type handle struct {
	framework.Handle
	b framework.Binder
}

func (h handle) Binder() framework.Binder { return h.b }

func TestBind(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode framework.Code
	}{
		{name: "a successful bind posts a Binding to the node", wantCode: framework.Success},
		{name: "an API error fails the bind with it", err: errors.New("conflict"), wantCode: framework.Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb := &recordingBinder{err: tt.err}
			pl, _ := New(context.Background(), nil, handle{b: rb})
			pod := st.MakePod().Name("p").Namespace("ns").Obj()
			status := pl.(framework.BindPlugin).Bind(context.Background(), framework.NewCycleState(), pod, "n1")
			if status.Code() != tt.wantCode {
				t.Fatalf("status = %v, want code %v", status, tt.wantCode)
			}
			b := rb.got
			if b == nil || b.Namespace != "ns" || b.Name != "p" || b.UID != pod.UID || b.Target.Kind != "Node" || b.Target.Name != "n1" {
				t.Errorf("binding = %+v, want ns/p (uid %s) -> Node n1", b, pod.UID)
			}
		})
	}
}
