package loading_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// as sets obj's apiVersion (its kind set) and returns obj.
func as[T runtime.Object](apiVersion string, obj T) T {
	obj.GetObjectKind().(*metav1.TypeMeta).APIVersion = apiVersion
	return obj
}

func TestLoadRefusesKindsItReadsInVersionsKubeAPIServerDoesNotServe(t *testing.T) {
	web := func() *appsv1.Deployment {
		return st.MakeDeployment("web", 1, st.MakePod().Label("app", "web").Image("x"))
	}
	claim := &resourceapi.ResourceClaim{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpu"}}
	tests := []struct {
		name string
		obj  runtime.Object
		want string // after "a.yaml: document 2 ", "" when loaded
	}{
		{name: "an extensions/v1beta1 Deployment is refused as kubectl apply refuses it",
			obj:  as("extensions/v1beta1", web()),
			want: `(Deployment default/web): apiVersion: no matches for kind "Deployment" in version "extensions/v1beta1" (kube-apiserver v1.37 serves Deployment in apps/v1)`},
		{name: "a policy/v1beta1 PodDisruptionBudget is refused, not skipped",
			obj:  as("policy/v1beta1", pdb("guard", "web")),
			want: `(PodDisruptionBudget default/guard): apiVersion: no matches for kind "PodDisruptionBudget" in version "policy/v1beta1" (kube-apiserver v1.37 serves PodDisruptionBudget in policy/v1)`},
		{name: "an apps/v1beta2 StatefulSet is refused",
			obj:  as("apps/v1beta2", st.MakeStatefulSet("db", 1, st.MakePod().Label("app", "db").Image("x")).Obj()),
			want: `(StatefulSet default/db): apiVersion: no matches for kind "StatefulSet" in version "apps/v1beta2"`},
		{name: "an autoscaling/v2beta2 HorizontalPodAutoscaler is refused, naming both versions served",
			obj:  as("autoscaling/v2beta2", hpa()),
			want: `(HorizontalPodAutoscaler default/web): apiVersion: no matches for kind "HorizontalPodAutoscaler" in version "autoscaling/v2beta2" (kube-apiserver v1.37 serves HorizontalPodAutoscaler in autoscaling/v2 and autoscaling/v1)`},
		{name: "a resource.k8s.io/v1beta1 ResourceClaim, served only on demand, is refused naming the version read",
			obj:  as("resource.k8s.io/v1beta1", claim),
			want: `(ResourceClaim default/gpu): apiVersion: Unsupported value: "resource.k8s.io/v1beta1": supported values: "resource.k8s.io/v1"`},
		{name: "an autoscaling/v1 HorizontalPodAutoscaler is read", obj: hpa()},
		{name: "a kind of the same name in another group, a custom resource, is skipped",
			obj: as("batch.volcano.sh/v1alpha1", st.MakeJob("train", 1, nil, st.MakePod().Image("x")).Obj())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, dir, err := loadFiles(t, loading.Options{}, []runtime.Object{simtest.Node("n1"), tt.obj})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Load: %v, want it loaded", err)
				}
				if len(c.HPAs)+c.Skipped["Job"] != 1 {
					t.Errorf("HPAs %d, skipped %v: want the object read or skipped", len(c.HPAs), c.Skipped)
				}
				return
			}
			want := dir + "a.yaml: document 2 " + tt.want
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %v, want one starting %q", err, want)
			}
		})
	}
}

func hpa() *autoscalingv1.HorizontalPodAutoscaler {
	return &autoscalingv1.HorizontalPodAutoscaler{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{MaxReplicas: 3,
			ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}
}
