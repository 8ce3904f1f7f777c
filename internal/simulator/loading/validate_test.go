package loading_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// manifest writes objects as the documents of one YAML file.
func manifest(t *testing.T, objs ...runtime.Object) string { return simtest.Manifest(t, objs...) }

func ptr[T any](v T) *T { return &v }

func TestLoadRefusesWorkloadsAndPodsAsTheAPIServerDoes(t *testing.T) {
	web := func() *st.PodWrapper { return st.MakePod().Label("app", "web").Image("x") }
	deployment := func(edit func(*appsv1.Deployment)) runtime.Object {
		d := st.MakeDeployment("web", 2, web())
		edit(d)
		return d
	}
	job := func(edit func(*batchv1.Job)) runtime.Object {
		j := st.MakeJob("train", 2, ptr(int32(4)), st.MakePod().Image("x")).Obj()
		edit(j)
		return j
	}
	tests := []struct {
		name string
		obj  runtime.Object
		want string // after "bad.yaml: document 2 "
	}{
		{name: "a Deployment with replicas -1",
			obj:  deployment(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr(int32(-1)) }),
			want: "(Deployment default/web): spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		{name: "a StatefulSet with replicas -5",
			obj:  st.MakeStatefulSet("db", -5, web()).Obj(),
			want: "(StatefulSet default/db): spec.replicas: Invalid value: -5: must be greater than or equal to 0"},
		{name: "a ReplicaSet with replicas -1",
			obj:  st.MakeReplicaSet("rs", -1, web()),
			want: "(ReplicaSet default/rs): spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		{name: "a ReplicationController with replicas -1",
			obj:  st.MakeReplicationController("rc", -1, web()),
			want: "(ReplicationController default/rc): spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		{name: "a Job with a negative parallelism",
			obj:  job(func(j *batchv1.Job) { j.Spec.Parallelism = ptr(int32(-1)) }),
			want: "(Job default/train): spec.parallelism: Invalid value: -1: must be greater than or equal to 0"},
		{name: "a Job with negative completions",
			obj:  job(func(j *batchv1.Job) { j.Spec.Completions = ptr(int32(-3)) }),
			want: "(Job default/train): spec.completions: Invalid value: -3: must be greater than or equal to 0"},
		{name: "a Job with a negative backoffLimit",
			obj:  job(func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr(int32(-1)) }),
			want: "(Job default/train): spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"},
		{name: "an Indexed Job without completions",
			obj:  job(func(j *batchv1.Job) { j.Spec.Completions, j.Spec.CompletionMode = nil, ptr(batchv1.IndexedCompletion) }),
			want: "(Job default/train): spec.completions: Required value: when completion mode is Indexed"},
		{name: "a Job whose pods would restart in place",
			obj:  job(func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = "" }),
			want: `(Job default/train): spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"`},
		{name: "a Job with a selector of its own and no manualSelector",
			obj: job(func(j *batchv1.Job) {
				j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}}
			}),
			want: "(Job default/train): spec.selector: Invalid value: ",
		},
		{name: "a Job with manualSelector and no selector",
			obj:  job(func(j *batchv1.Job) { j.Spec.ManualSelector = ptr(true) }),
			want: "(Job default/train): spec.selector: Required value"},
		{name: "a Deployment whose selector does not match its template's labels",
			obj: deployment(func(d *appsv1.Deployment) {
				d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
			}),
			want: "(Deployment default/web): spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"},
		{name: "a Deployment without a selector",
			obj:  deployment(func(d *appsv1.Deployment) { d.Spec.Selector = nil }),
			want: "(Deployment default/web): spec.selector: Required value"},
		{name: "a ReplicaSet with an empty selector",
			obj: func() runtime.Object {
				rs := st.MakeReplicaSet("rs", 1, web())
				rs.Spec.Selector = &metav1.LabelSelector{}
				return rs
			}(),
			want: "(ReplicaSet default/rs): spec.selector: Invalid value: {}: empty selector is invalid for deployment"},
		{name: "a DaemonSet whose selector does not match its template's labels",
			obj: func() runtime.Object {
				ds := st.MakeDaemonSet("agent", web())
				ds.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}
				return ds
			}(),
			want: "(DaemonSet default/agent): spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"},
		{name: "a StatefulSet with an empty selector",
			obj:  st.MakeStatefulSet("db", 1, st.MakePod().Image("x")).Obj(),
			want: "(StatefulSet default/db): spec.selector: Invalid value: {}: empty selector is invalid for statefulset"},
		{name: "a StatefulSet with an unknown pod management policy",
			obj: func() runtime.Object {
				s := st.MakeStatefulSet("db", 1, web()).Obj()
				s.Spec.PodManagementPolicy = "AllAtOnce"
				return s
			}(),
			want: `(StatefulSet default/db): spec.podManagementPolicy: Invalid value: "AllAtOnce": must be 'OrderedReady' or 'Parallel'`},
		{name: "a ReplicationController with neither selector nor template labels",
			obj:  st.MakeReplicationController("rc", 1, st.MakePod().Image("x")),
			want: "(ReplicationController default/rc): spec.selector: Required value"},
		{name: "a Deployment whose pods would not restart",
			obj:  deployment(func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = v1.RestartPolicyNever }),
			want: `(Deployment default/web): spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`},
		{name: "a Deployment whose template has no container",
			obj:  st.MakeDeployment("web", 1, st.MakePod().Label("app", "web")),
			want: "(Deployment default/web): spec.template.spec.containers: Required value"},
		{name: "a Pod without containers",
			obj:  st.MakePod().Name("p").Obj(),
			want: "(Pod default/p): spec.containers: Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := simtest.WriteFile(t, "bad.yaml", goodNode+manifest(t, tt.obj))
			_, err := loading.Load([]string{path})
			if want := path + ": document 2 " + tt.want; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %v, want one starting %q", err, want)
			}
		})
	}
}

func TestLoadTakesTheWorkloadsTheAPIServerTakes(t *testing.T) {
	web := st.MakePod().Label("app", "web").Image("x")
	objs := []runtime.Object{
		st.MakeDeployment("web", 0, web), st.MakeReplicaSet("rs", 1, web), st.MakeReplicationController("rc", 1, web),
		st.MakeStatefulSet("db", 2, web).Parallel().Obj(), st.MakeDaemonSet("agent", web),
		st.MakeJob("train", 2, ptr(int32(4)), st.MakePod().Image("x")).Indexed().Obj(),
	}
	c, err := loading.Load([]string{simtest.WriteFile(t, "ok.yaml", goodNode+manifest(t, objs...))})
	if err != nil {
		t.Fatalf("Load: %v, want the workloads taken as kube-apiserver takes them", err)
	}
	// rs 1 + rc 1 + db 2 + agent 1 + train 2; web has 0 replicas.
	if len(c.Pods) != 7 {
		t.Errorf("%d pods, want 7", len(c.Pods))
	}
}
