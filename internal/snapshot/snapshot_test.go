package snapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	st "github.com/kubesched/kubesched/internal/testing"
)

// leaky dresses a pod with everything a snapshot must drop.
func leaky(p *v1.Pod) *v1.Pod {
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	p.Annotations = map[string]string{
		"kubectl.kubernetes.io/last-applied-configuration": `{"secret":"x"}`,
		"simulation.kubesched.io/duration":                 "5m",
		"cluster-autoscaler.kubernetes.io/safe-to-evict":   "false",
		"karpenter.sh/do-not-disrupt":                      "true",
	}
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		c.Env = []v1.EnvVar{{Name: "PASSWORD", Value: "hunter2"}}
		c.EnvFrom = []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "db"}}}}
		c.Args = []string{"--token=abc"}
	}
	p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", Image: "private.registry/x@sha256:1", ImageID: "id", Ready: true}}
	p.Status.PodIP = "10.0.0.1"
	return p
}

func TestStripDropsWhatASimulationMustNotLeak(t *testing.T) {
	tests := []struct {
		name  string
		obj   runtime.Object
		check func(t *testing.T, obj runtime.Object)
	}{
		{
			name: "a pod loses env, args, managed fields and foreign annotations, and keeps its requests and the simulator's and consolidate's annotations",
			obj:  leaky(st.MakePod().Name("p").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()),
			check: func(t *testing.T, obj runtime.Object) {
				p := obj.(*v1.Pod)
				c := p.Spec.Containers[0]
				if c.Env != nil || c.EnvFrom != nil || c.Args != nil || p.ManagedFields != nil {
					t.Errorf("container = %+v, managedFields = %v: want env, envFrom, args and managedFields gone", c, p.ManagedFields)
				}
				if diff := cmp.Diff(map[string]string{"simulation.kubesched.io/duration": "5m",
					"cluster-autoscaler.kubernetes.io/safe-to-evict": "false", "karpenter.sh/do-not-disrupt": "true"}, p.Annotations); diff != "" {
					t.Errorf("annotations (-want,+got):\n%s", diff)
				}
				if got := c.Resources.Requests.Cpu().String(); got != "1" {
					t.Errorf("cpu request %s, want 1", got)
				}
				if p.Status.PodIP != "" || p.Status.ContainerStatuses[0].Image != "" {
					t.Errorf("status = %+v, want only phase, conditions and resources", p.Status)
				}
			},
		},
		{
			name: "a Deployment's pod template loses env too",
			obj: func() runtime.Object {
				d := st.MakeDeployment("web", 2, st.MakePod().Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}))
				d.Spec.Template.Spec.Containers[0].Env = []v1.EnvVar{{Name: "K", Value: "v"}}
				return d
			}(),
			check: func(t *testing.T, obj runtime.Object) {
				if env := obj.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Env; env != nil {
					t.Errorf("template env = %v, want none", env)
				}
			},
		},
		{
			name: "a claim keeps the selected-node annotation VolumeBinding reads",
			obj: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{
				"volume.kubernetes.io/selected-node": "n1", "note": "x"}}},
			check: func(t *testing.T, obj runtime.Object) {
				if diff := cmp.Diff(map[string]string{"volume.kubernetes.io/selected-node": "n1"}, obj.(*v1.PersistentVolumeClaim).Annotations); diff != "" {
					t.Errorf("annotations (-want,+got):\n%s", diff)
				}
			},
		},
		{
			name: "a node keeps its images for ImageLocality",
			obj:  st.MakeNode().Name("n").Image(100, "nginx").Obj(),
			check: func(t *testing.T, obj runtime.Object) {
				if len(obj.(*v1.Node).Status.Images) != 1 {
					t.Errorf("images = %v, want kept", obj.(*v1.Node).Status.Images)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Strip(tt.obj)
			tt.check(t, tt.obj)
		})
	}
}
