package loading_test

import (
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// listOf is a v1 List of objs, as kubectl get -o yaml writes it.
func listOf(t *testing.T, objs ...runtime.Object) *v1.List {
	t.Helper()
	l := &v1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
	for _, o := range objs {
		gvks, _, err := scheme.Scheme.ObjectKinds(o)
		if err != nil {
			t.Fatal(err)
		}
		o = o.DeepCopyObject()
		o.GetObjectKind().SetGroupVersionKind(gvks[0])
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		l.Items = append(l.Items, runtime.RawExtension{Raw: b})
	}
	return l
}

// typedList is a JSON typed List of objs (kind: <Kind>List), its items
// without their kind and apiVersion, as the API server writes them, unless
// withKinds.
func typedList(t *testing.T, apiVersion, kind string, withKinds bool, objs ...runtime.Object) string {
	t.Helper()
	var items []json.RawMessage
	for _, o := range objs {
		if !withKinds {
			o = o.DeepCopyObject()
			*o.GetObjectKind().(*metav1.TypeMeta) = metav1.TypeMeta{}
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, b)
	}
	b, err := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"resourceVersion": "1"}, "items": items})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadExpandsTypedListsOfEveryGroup(t *testing.T) {
	web := func(name string, replicas int32) *appsv1.Deployment {
		return st.MakeDeployment(name, replicas, st.MakePod().Label("app", name).Image("x"))
	}
	db := func(name string) *appsv1.StatefulSet {
		return st.MakeStatefulSet(name, 1, st.MakePod().Label("app", name).Image("x")).Obj()
	}
	bad := web("b", 1)
	bad.Spec.Replicas = new(int32)
	*bad.Spec.Replicas = -1
	tests := []struct {
		name      string
		list      string
		workloads []string // in order
		pods      int
		wantErr   string // after the path
	}{
		{name: "a DeploymentList's items are read in order, their kind and apiVersion the List's",
			list: typedList(t, "apps/v1", "DeploymentList", false, web("a", 1), web("b", 2)), workloads: []string{"Deployment default/a", "Deployment default/b"}, pods: 3},
		{name: "an apps/v1 StatefulSetList whose items name their kind is read in order",
			list: typedList(t, "apps/v1", "StatefulSetList", true, db("x"), db("y"), db("z")), workloads: []string{"StatefulSet default/x", "StatefulSet default/y", "StatefulSet default/z"}, pods: 3},
		{name: "a v1 PodList's items without kind are pods",
			list: typedList(t, "v1", "PodList", false, st.MakePod().Name("p").Image("x").Obj(), st.MakePod().Name("q").Image("x").Obj()), pods: 2},
		{name: "a bad item of a typed List is named by its index",
			list:    typedList(t, "apps/v1", "DeploymentList", false, web("a", 1), bad),
			wantErr: ": document 1, item 2 (Deployment default/b): spec.replicas: Invalid value: -1"},
		{name: "a typed List of a version kube-apiserver does not serve is refused item by item",
			list:    typedList(t, "apps/v1beta1", "DeploymentList", false, web("a", 1)),
			wantErr: `: document 1, item 1 (Deployment default/a): apiVersion: no matches for kind "Deployment" in version "apps/v1beta1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := simtest.WriteFile(t, "nodes.yaml", manifest(t, simtest.Node("n1")))
			path := simtest.WriteFile(t, "list.json", tt.list)
			c, err := loading.Load([]string{nodes, path})
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), path+tt.wantErr) {
					t.Fatalf("error %v, want one starting %q", err, path+tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range c.Workloads {
				got = append(got, w.String())
			}
			if strings.Join(got, ", ") != strings.Join(tt.workloads, ", ") || len(c.Pods) != tt.pods {
				t.Errorf("workloads %q and %d pods, want %q and %d", got, len(c.Pods), tt.workloads, tt.pods)
			}
			if len(c.Skipped) > 0 {
				t.Errorf("skipped %v, want nothing skipped", c.Skipped)
			}
		})
	}
}
