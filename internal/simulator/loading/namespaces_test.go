package loading_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

// in sets obj's metadata.namespace ("": none) and returns obj.
func in[T metav1.Object](ns string, obj T) T {
	obj.SetNamespace(ns)
	return obj
}

func pdb(name, app string) *policyv1.PodDisruptionBudget {
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
	}
}

// loadFiles writes each file's objects as a manifest, a.yaml, b.yaml...,
// and loads them with opts.
func loadFiles(t *testing.T, opts loading.Options, files ...[]runtime.Object) (*cluster.Cluster, string, error) {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, objs := range files {
		p := filepath.Join(dir, string(rune('a'+i))+".yaml")
		if err := os.WriteFile(p, []byte(manifest(t, objs...)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	c, err := loading.LoadWith(paths, nil, opts)
	return c, dir + string(filepath.Separator), err
}

// namespaces are the loaded objects' namespaces by "Kind name".
func namespaces(c *cluster.Cluster) map[string]string {
	out := map[string]string{}
	add := func(o any) {
		m := o.(metav1.Object)
		out[o.(runtime.Object).GetObjectKind().GroupVersionKind().Kind+" "+m.GetName()] = m.GetNamespace()
	}
	for _, o := range c.Nodes {
		add(o)
	}
	for _, o := range c.Pods {
		add(o)
	}
	for _, o := range c.Deployments {
		add(o)
	}
	for _, o := range c.Others {
		add(o)
	}
	return out
}

func TestLoadGivesNamespacedObjectsTheirNamespaceAsKubectlApplyDoes(t *testing.T) {
	claimant := func() *v1.Pod {
		return in("", st.MakePod().Name("p").Label("app", "db").Image("x").Volume("data").Obj())
	}
	objs := func() []runtime.Object {
		return []runtime.Object{simtest.Node("n1"), claimant(), in("", st.MakePVC("data", "1Gi").Obj()), pdb("guard", "db"),
			in("", st.MakeDeployment("web", 2, st.MakePod().Label("app", "web").Image("x"))),
			in("elsewhere", st.MakePV("pv", "1Gi", "").Obj())}
	}
	tests := []struct {
		name      string
		namespace string // -n
		objs      []runtime.Object
		want      map[string]string // "Kind name" -> namespace
		// allPods: every pod's namespace, a Deployment's too.
		allPods string
	}{
		{name: "a namespace-less PDB, PVC, pod and Deployment land in default, a PV in none",
			objs: objs(), allPods: "default",
			want: map[string]string{"Pod p": "default", "PersistentVolumeClaim data": "default", "PodDisruptionBudget guard": "default",
				"Deployment web": "default", "PersistentVolume pv": "", "Node n1": ""}},
		{name: "-n puts them all in its namespace, a Deployment's pods too",
			namespace: "team", objs: objs(), allPods: "team",
			want: map[string]string{"Pod p": "team", "PersistentVolumeClaim data": "team", "PodDisruptionBudget guard": "team",
				"Deployment web": "team", "PersistentVolume pv": "", "Node n1": ""}},
		{name: "without -n an object keeps the namespace it names",
			objs: []runtime.Object{simtest.Node("n1"), in("shop", claimant()), in("shop", st.MakePVC("data", "1Gi").Obj()), in("ops", pdb("guard", "db"))},
			want: map[string]string{"Pod p": "shop", "PersistentVolumeClaim data": "shop", "PodDisruptionBudget guard": "ops"}},
		{name: "an object naming the namespace -n names is taken",
			namespace: "shop", objs: []runtime.Object{simtest.Node("n1"), in("shop", claimant()), in("", st.MakePVC("data", "1Gi").Obj())},
			want: map[string]string{"Pod p": "shop", "PersistentVolumeClaim data": "shop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := loadFiles(t, loading.Options{Namespace: tt.namespace}, tt.objs)
			if err != nil {
				t.Fatal(err)
			}
			got := namespaces(c)
			for k, want := range tt.want {
				if ns, ok := got[k]; !ok || ns != want {
					t.Errorf("%s in namespace %q (found: %v), want %q", k, ns, ok, want)
				}
			}
			for _, p := range c.Pods {
				if tt.allPods != "" && p.Namespace != tt.allPods {
					t.Errorf("pod %s/%s, want it in %s", p.Namespace, p.Name, tt.allPods)
				}
				if _, ok := c.Sources[p.Namespace+"/"+p.Name]; !ok {
					t.Errorf("pod %s/%s has no source (sources %v)", p.Namespace, p.Name, c.Sources)
				}
			}
		})
	}
}

func TestLoadRefusesAnObjectNamingAnotherNamespaceThanDashN(t *testing.T) {
	tests := []struct {
		name string
		objs []runtime.Object
		want string // after the path
	}{
		{name: "a pod naming another namespace than -n is refused as kubectl apply -n refuses it",
			objs: []runtime.Object{simtest.Node("n1"), in("other", st.MakePod().Name("p").Image("x").Obj())},
			want: `a.yaml: document 2 (Pod other/p): metadata.namespace: the namespace from the provided object "other" does not match the namespace "team". You must pass '--namespace=other' to perform this operation.`},
		{name: "a PVC in a List naming another namespace is refused naming its item",
			objs: []runtime.Object{simtest.Node("n1"), listOf(t, in("team", st.MakePVC("ok", "1Gi").Obj()), in("default", st.MakePVC("data", "1Gi").Obj()))},
			want: `a.yaml: document 2, item 2 (PersistentVolumeClaim default/data): metadata.namespace: the namespace from the provided object "default" does not match the namespace "team"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, dir, err := loadFiles(t, loading.Options{Namespace: "team"}, tt.objs)
			if err == nil || !strings.HasPrefix(strings.TrimPrefix(err.Error(), dir), tt.want) {
				t.Fatalf("error %v, want one starting %q", err, dir+tt.want)
			}
		})
	}
}

func TestLoadPutsWhatAScenarioNamesInTheNamespaceOfDashN(t *testing.T) {
	const scenario = `apiVersion: simulation.kubesched.io/v1alpha1
kind: Scenario
metadata: {name: day}
spec:
  steps:
  - at: 1m
    create:
    - {apiVersion: v1, kind: Pod, metadata: {name: late}, spec: {containers: [{name: c, image: x}]}}
    delete:
    - {kind: Pod, name: p}
    - {kind: Node, name: n1}
    scale:
    - {kind: Deployment, name: web, replicas: 2}
`
	tests := []struct {
		name, namespace, want string
	}{
		{name: "with -n, a step's namespace-less objects and references are in its namespace", namespace: "team", want: "team"},
		{name: "without -n, a created object is in default and the references are left to the timeline's default", want: "default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := []string{simtest.WriteFile(t, "c.yaml", manifest(t, simtest.Node("n1"))), simtest.WriteFile(t, "s.yaml", scenario)}
			c, err := loading.LoadWith(files, nil, loading.Options{Namespace: tt.namespace})
			if err != nil {
				t.Fatal(err)
			}
			step := c.Scenario.Steps[0]
			refs := tt.namespace // "" without -n
			if got := step.Create[0].(*v1.Pod).Namespace; got != tt.want {
				t.Errorf("created pod in %q, want %q", got, tt.want)
			}
			if step.Delete[0].Namespace != refs || step.Delete[1].Namespace != "" || step.Scale[0].Namespace != refs {
				t.Errorf("delete %+v, scale %+v: want the Pod and Deployment in %q, the Node in none", step.Delete, step.Scale, refs)
			}
		})
	}
}
