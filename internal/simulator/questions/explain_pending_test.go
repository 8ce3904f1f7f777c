package questions_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// explain -f judges the pod against the running pods only: a pending pod
// of the files that a simulation would place first, and that takes the
// room, is not placed. The report says so.
func TestExplainInFilesSaysTheOtherPendingPodsAreNotPlaced(t *testing.T) {
	threeCores := map[v1.ResourceName]string{v1.ResourceCPU: "3"}
	node := st.MakeNode().Name("n1").Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "8Gi", v1.ResourcePods: "110"}).Obj()
	tests := []struct {
		name        string
		objs        []runtime.Object
		wantPending int
		wantNote    string
	}{
		{name: "with one other pending pod, that one is named in the singular",
			objs:        []runtime.Object{node, st.MakePod().Name("first").Req(threeCores).Obj(), st.MakePod().Name("asked").Req(threeCores).Obj()},
			wantPending: 1, wantNote: "Judged against the running pods only: the other pending pod of the cluster files is not placed first."},
		{name: "a workload's pods and a StatefulSet's pods waiting their turn count",
			objs: []runtime.Object{node, st.MakePod().Name("asked").Req(threeCores).Obj(),
				st.MakeDeployment("web", 2, st.MakePod().Label("app", "web").Req(threeCores)), st.MakeStatefulSet("db", 3, st.MakePod().Label("app", "db").Req(threeCores)).Obj()},
			wantPending: 5, wantNote: "the 5 other pending pods of the cluster files are not placed first."},
		{name: "with only running pods there is no note",
			objs:        []runtime.Object{node, st.MakePod().Name("running").Node("n1").Req(threeCores).Obj(), st.MakePod().Name("asked").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()},
			wantPending: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := simtest.LoadObjects(t, tt.objs)
			pod, err := questions.PodByName(c, "default/asked")
			if err != nil {
				t.Fatal(err)
			}
			pending := questions.OtherPending(c, pod)
			kept := c.Pods[:0]
			for _, p := range c.Pods {
				if p != pod {
					kept = append(kept, p)
				}
			}
			c.Pods = kept
			w := simtest.NewWorld(t, c, 1, scheduler.WithPercentageOfNodesToScore(100))
			r, err := questions.Explain(context.Background(), w, pod)
			if err != nil {
				t.Fatal(err)
			}
			questions.NoteOtherPending(r, pending)
			if r.PendingNotPlaced != tt.wantPending {
				t.Errorf("pendingNotPlaced = %d, want %d", r.PendingNotPlaced, tt.wantPending)
			}
			var out bytes.Buffer
			if err := r.Write(&out, "table"); err != nil {
				t.Fatal(err)
			}
			if tt.wantNote == "" {
				if strings.Contains(out.String(), "Judged against") {
					t.Errorf("a note with nothing pending:\n%s", out.String())
				}
				return
			}
			if !strings.Contains(out.String(), tt.wantNote) {
				t.Errorf("the table does not say %q:\n%s", tt.wantNote, out.String())
			}
			if r.FeasibleCount != 1 {
				t.Errorf("%d nodes feasible, want n1: the pending pods take no room", r.FeasibleCount)
			}
		})
	}
}
