package questions_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/questions"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

func TestAWorkloadNamedAsKubectlNamesItGivesThePodToExplain(t *testing.T) {
	deploy := func(ns, name string, replicas int32) *appsv1.Deployment {
		d := st.MakeDeployment(name, replicas, st.MakePod().Label("app", name).Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"}))
		d.Namespace = ns
		return d
	}
	c := simtest.LoadObjects(t, []runtime.Object{simtest.Node("n1"),
		deploy("shop", "web", 2), deploy("blue", "api", 1), deploy("green", "api", 1), deploy("shop", "idle", 0)})
	tests := []struct {
		name, ref, namespace string
		wantPod, wantErr     string
	}{
		{name: "a Deployment in one namespace is found without -n", ref: "deployment/web", wantPod: "shop/web-"},
		{name: "the short name and any case are kubectl's", ref: "Deploy/web", wantPod: "shop/web-"},
		{name: "-n picks among namespaces that share the name", ref: "deploy/api", namespace: "green", wantPod: "green/api-"},
		{name: "without -n a name in two namespaces is refused, naming both", ref: "deploy/api",
			wantErr: "Deployment api is in 2 namespaces (blue/api, green/api): -n names the one to explain"},
		{name: "a workload scaled to zero has no pod to explain", ref: "deploy/idle", wantErr: "Deployment shop/idle has no pods to explain (its replicas are 0, or all of its pods have finished)"},
		{name: "a workload -n does not hold names those the files hold", ref: "deploy/web", namespace: "blue",
			wantErr: "no Deployment blue/web in the cluster files (-n names the namespace; they hold shop/web, blue/api, green/api, shop/idle)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, name, ok := questions.WorkloadRef(tt.ref)
			if !ok {
				t.Fatalf("%s is not read as a workload", tt.ref)
			}
			p, err := questions.PodOfWorkload(c, kind, tt.namespace, name)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Namespace + "/" + p.Name; !strings.HasPrefix(got, tt.wantPod) {
				t.Errorf("pod %s, want one of %s*", got, tt.wantPod)
			}
		})
	}
	for _, ref := range []string{"shop/web", "web", "deployment/a/b"} {
		if _, _, ok := questions.WorkloadRef(ref); ok {
			t.Errorf("%q is read as a workload: it is a pod's NAMESPACE/NAME or nothing", ref)
		}
	}
}

// OfWorkload (capacity --node-types --workload's target) picks the
// workload's pods whatever the input's order: the report lists
// DaemonSets first, the input need not.
func TestOfWorkloadPicksTheWorkloadsPodsWhereverItIsInTheInput(t *testing.T) {
	pod := func(app string) *st.PodWrapper {
		return st.MakePod().Label("app", app).Req(map[v1.ResourceName]string{v1.ResourceCPU: "100m"})
	}
	web := st.MakeDeployment("web", 2, pod("web"))
	web.Namespace = "shop"
	c := simtest.LoadObjects(t, []runtime.Object{simtest.Node("n1"), web, st.MakeDaemonSet("agent", pod("agent"))})
	w := simtest.NewWorld(t, c, 1)
	isWeb := questions.OfWorkload("Deployment", "shop", "web")
	got := map[string]int{}
	for _, p := range c.Pods {
		if isWeb(w, p) {
			got[p.Labels["app"]]++
		}
	}
	if got["web"] != 2 || len(got) != 1 {
		t.Errorf("OfWorkload(Deployment shop/web) picked %v, want web's 2 pods only", got)
	}
}
