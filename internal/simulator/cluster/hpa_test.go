package cluster_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	st "github.com/kubesched/kubesched/internal/testing"
)

// hpa is an autoscaling/v2 HPA of the Deployment target in namespace shop.
func hpa(target string, min *int32, max int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: target, Namespace: "shop"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: target},
			MinReplicas:    min, MaxReplicas: max,
		},
	}
}

func deployment(name string, replicas *int32) *appsv1.Deployment {
	d := st.MakeDeployment(name, 1, st.MakePod().Label("app", name))
	d.Namespace, d.Spec.Replicas = "shop", replicas
	return d
}

func TestHPAsSetTheirTargetsReplicasAsTheHPAControllerDoesBeforeMetrics(t *testing.T) {
	tests := []struct {
		name     string
		replicas *int32
		min      *int32
		max      int32
		mode     cluster.HPAReplicas
		want     int32
	}{
		{name: "replicas between the bounds stand: the metrics would decide", replicas: ptr.To[int32](3), min: ptr.To[int32](2), max: 10, want: 3},
		{name: "replicas below minReplicas are raised to it", replicas: ptr.To[int32](1), min: ptr.To[int32](4), max: 10, want: 4},
		{name: "replicas unset are 1, raised to minReplicas", replicas: nil, min: ptr.To[int32](2), max: 10, want: 2},
		{name: "replicas above maxReplicas are lowered to it", replicas: ptr.To[int32](12), min: nil, max: 5, want: 5},
		{name: "a target at zero replicas stays there: autoscaling is disabled", replicas: ptr.To[int32](0), min: ptr.To[int32](2), max: 5, want: 0},
		{name: "the what-if at maxReplicas scales every target to it", replicas: ptr.To[int32](3), min: ptr.To[int32](2), max: 10, mode: cluster.HPAMax, want: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cluster.New()
			d := deployment("web", tt.replicas)
			c.Add("f: document 1", d)
			c.Add("f: document 2", hpa("web", tt.min, tt.max))
			got := c.ApplyHPAs(tt.mode)
			if d.Spec.Replicas == nil || *d.Spec.Replicas != tt.want {
				t.Fatalf("replicas %v, want %d", d.Spec.Replicas, tt.want)
			}
			if len(got) != 1 || got[0].Replicas != tt.want || got[0].Target != "Deployment shop/web" || got[0].Max != tt.max {
				t.Errorf("targets %+v, want Deployment shop/web at %d", got, tt.want)
			}
		})
	}
}

func TestAnAutoscalingV1HPAScalesItsTargetAndOneWithoutTargetIsAWarning(t *testing.T) {
	c := cluster.New()
	d := deployment("web", ptr.To[int32](1))
	c.Add("f: document 1", d)
	v1hpa := &autoscalingv1.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"},
			MinReplicas: ptr.To[int32](3), MaxReplicas: 6, TargetCPUUtilizationPercentage: ptr.To[int32](80)},
	}
	for _, o := range []runtime.Object{v1hpa, hpa("rollout", nil, 4)} {
		c.Add("f: document 2", o)
	}
	c.HPAs[1].Spec.ScaleTargetRef.Kind = "Rollout"
	c.ApplyHPAs(cluster.HPABounds)
	if *d.Spec.Replicas != 3 {
		t.Errorf("replicas %d, want the v1 HPA's minReplicas 3", *d.Spec.Replicas)
	}
	if m := c.HPAs[0].Spec.Metrics; len(m) != 1 || *m[0].Resource.Target.AverageUtilization != 80 {
		t.Errorf("the v1 HPA's metrics %+v, want its cpu target as a v2 Resource metric", m)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "HorizontalPodAutoscaler shop/rollout: spec.scaleTargetRef: Rollout shop/rollout is not in the input") {
		t.Errorf("warnings %q, want the HPA whose target is missing named", c.Warnings)
	}
}
