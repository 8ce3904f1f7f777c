package queuesort

import (
	"context"
	"testing"
	"time"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestLess(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	qpSeq := func(prio int32, at time.Time, seq uint64) *framework.QueuedPodInfo {
		return &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(st.MakePod().Name("p").Priority(prio).Obj()), Timestamp: at, Seq: seq}
	}
	qp := func(prio int32, at time.Time) *framework.QueuedPodInfo { return qpSeq(prio, at, 0) }
	tests := []struct {
		name string
		a, b *framework.QueuedPodInfo
		want bool
	}{
		{name: "higher priority goes first", a: qp(10, t0.Add(time.Second)), b: qp(5, t0), want: true},
		{name: "lower priority goes later", a: qp(5, t0), b: qp(10, t0), want: false},
		{name: "at equal priority the earlier pod goes first", a: qp(5, t0), b: qp(5, t0.Add(time.Second)), want: true},
		{name: "at equal priority the earlier pod goes first whatever the arrival numbers", a: qp(5, t0), b: qpSeq(5, t0.Add(time.Second), 0), want: true},
		{name: "at equal priority and time the pod that arrived first goes first", a: qpSeq(5, t0, 1), b: qpSeq(5, t0, 2), want: true},
		{name: "at equal priority and time the pod that arrived later goes later", a: qpSeq(5, t0, 2), b: qpSeq(5, t0, 1), want: false},
		{name: "the same pod does not go before itself", a: qpSeq(5, t0, 1), b: qpSeq(5, t0, 1), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			if got := pl.(framework.QueueSortPlugin).Less(tt.a, tt.b); got != tt.want {
				t.Errorf("Less = %v, want %v", got, tt.want)
			}
		})
	}
}
