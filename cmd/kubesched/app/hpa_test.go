package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// hpaCluster is two nodes of 4 cpu and two Deployments of 1-cpu pods
// with HPAs: web (1 replica, HPA 2 to 12) and api (1 replica, HPA 1 to 3).
func hpaCluster(t *testing.T) string {
	t.Helper()
	objs := []runtime.Object{}
	for i := 0; i < 2; i++ {
		objs = append(objs, st.MakeNode().Name(fmt.Sprintf("n%d", i)).
			Capacity(map[v1.ResourceName]string{v1.ResourceCPU: "4", v1.ResourceMemory: "16Gi", v1.ResourcePods: "110"}).Obj())
	}
	for _, d := range []struct {
		name     string
		min, max int32
	}{{"web", 2, 12}, {"api", 1, 3}} {
		dep := st.MakeDeployment(d.name, 1, st.MakePod().Label("app", d.name).Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}))
		dep.Namespace = "shop"
		objs = append(objs, dep, &autoscalingv2.HorizontalPodAutoscaler{
			TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
			ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: "shop"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To(d.min), MaxReplicas: d.max,
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.name}},
		})
	}
	return writeFile(t, "hpa.yaml", simtest.Manifest(t, objs...))
}

func TestHPAsBoundSimulateAndHeadroomAndHPAMaxIsTheirWhatIf(t *testing.T) {
	file := hpaCluster(t)
	tests := []struct {
		name string
		args []string
		// pods are the workloads' pods; scheduled, how many of them run.
		pods      []string
		scheduled int
	}{
		{name: "simulate runs each target at its HPA's minReplicas when its spec asks fewer", args: []string{"simulate", "-f", file},
			pods: []string{"web 2", "api 1"}, scheduled: 3},
		{name: "simulate --hpa-max runs each target at its maxReplicas, what does not fit pending", args: []string{"simulate", "-f", file, "--hpa-max"},
			pods: []string{"web 12", "api 3"}, scheduled: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, append(tt.args, "-o", "json")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var r struct {
				Workloads []struct {
					Name            string
					Pods, Scheduled int
				}
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			var got []string
			scheduled := 0
			for _, w := range r.Workloads {
				got = append(got, fmt.Sprintf("%s %d", w.Name, w.Pods))
				scheduled += w.Scheduled
			}
			if strings.Join(got, ", ") != strings.Join(tt.pods, ", ") || scheduled != tt.scheduled {
				t.Errorf("workloads %v with %d scheduled, want %v with %d (8 cpu for pods of 1)", got, scheduled, tt.pods, tt.scheduled)
			}
		})
	}
	t.Run("headroom counts each HPA's workload up to its maxReplicas and says how many of them do not fit", func(t *testing.T) {
		code, out, errOut := run(t, "capacity", "-f", file, "--headroom", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var r struct {
			Workloads []struct {
				Name string
				More int
				HPA  *struct {
					Replicas, MaxReplicas int32
					Short                 int
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		// 8 cpu, 3 pods of 1 cpu running: 5 more replicas of either fit.
		want := map[string]string{"web": "more 5, 2 of max 12, 5 short", "api": "more 5, 1 of max 3, 0 short"}
		for _, w := range r.Workloads {
			if w.HPA == nil {
				t.Errorf("%s: no HPA in the answer", w.Name)
				continue
			}
			got := fmt.Sprintf("more %d, %d of max %d, %d short", w.More, w.HPA.Replicas, w.HPA.MaxReplicas, w.HPA.Short)
			if got != want[w.Name] {
				t.Errorf("%s: %s, want %s", w.Name, got, want[w.Name])
			}
		}
		_, table, _ := run(t, "capacity", "-f", file, "--headroom")
		for _, cell := range []string{"HPA MAX", "12: 5 short", "3 fit"} {
			if !strings.Contains(table, cell) {
				t.Errorf("the table lacks %q:\n%s", cell, table)
			}
		}
	})
}
