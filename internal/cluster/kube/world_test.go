package kube

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/framework"
)

func TestEvictMarksTheVictimThenDeletesIt(t *testing.T) {
	preemptor := st.MakePod().Name("preemptor").SchedulerName("default-scheduler").Obj()
	tests := []struct {
		name string
		// exists: the victim is still in the API.
		exists bool
		// wantActions are the verbs sent, in order.
		wantActions []string
	}{
		{name: "a victim gets a DisruptionTarget condition, then is deleted", exists: true, wantActions: []string{"patch", "delete"}},
		{name: "a victim already gone is NotFound at the patch, and not deleted", exists: false, wantActions: []string{"patch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			victim := st.MakePod().Name("victim").Namespace("default").Node("n1").Obj()
			victim.Generation = 3
			var objs []runtime.Object
			if tt.exists {
				objs = append(objs, victim.DeepCopy())
			}
			client := fake.NewSimpleClientset(objs...)
			w := &World{client: client}
			if err := w.Evict(context.Background(), victim, framework.PodPreemptor(preemptor)); tt.exists && err != nil || !tt.exists && !apierrors.IsNotFound(err) {
				t.Fatalf("Evict: %v, want nil when the victim exists, NotFound when it is gone", err)
			}
			var got []string
			for _, a := range client.Actions() {
				got = append(got, a.GetVerb())
			}
			if len(got) != len(tt.wantActions) {
				t.Fatalf("actions = %v, want %v", got, tt.wantActions)
			}
			for i := range got {
				if got[i] != tt.wantActions[i] {
					t.Fatalf("actions = %v, want %v", got, tt.wantActions)
				}
			}
			patch := client.Actions()[0].(k8stesting.PatchAction)
			if patch.GetSubresource() != "status" {
				t.Errorf("patched subresource %q, want status", patch.GetSubresource())
			}
			if !tt.exists {
				return
			}
			for _, s := range []string{`"type":"DisruptionTarget"`, `"reason":"PreemptionByScheduler"`, `"message":"default-scheduler: preempting to accommodate a higher priority pod"`, `"observedGeneration":3`} {
				if !strings.Contains(string(patch.GetPatch()), s) {
					t.Errorf("patch %s lacks %s", patch.GetPatch(), s)
				}
			}
		})
	}
}

func TestThePodInformerKeepsNoManagedFields(t *testing.T) {
	pod := st.MakePod().Name("p").Namespace("default").Obj()
	pod.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	node := st.MakeNode().Name("n").Obj()
	node.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
	inf := NewInformers(fake.NewSimpleClientset(pod, node))
	lister := inf.pods.Core().V1().Pods().Lister()
	nodes := inf.nodes.Core().V1().Nodes().Lister()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inf.pods.Start(ctx.Done())
	inf.nodes.Start(ctx.Done())
	inf.pods.WaitForCacheSync(ctx.Done())
	inf.nodes.WaitForCacheSync(ctx.Done())
	got, err := lister.Pods("default").Get("p")
	if err != nil {
		t.Fatal(err)
	}
	if got.ManagedFields != nil {
		t.Errorf("the pod informer kept managedFields %v; kube-scheduler's drops them", got.ManagedFields)
	}
	// Nodes keep theirs, as kube-scheduler's node informer does.
	if n, err := nodes.Get("n"); err != nil || len(n.ManagedFields) != 1 {
		t.Errorf("node managedFields = %v (%v), want the one entry kept", n, err)
	}
}
