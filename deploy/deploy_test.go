package deploy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubesched/kubesched/internal/config"
	"github.com/kubesched/kubesched/internal/scheduler"
	"github.com/kubesched/kubesched/pkg/plugins"
)

func decodeAll(t *testing.T, file string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufioReader(data))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, obj)
	}
	return out
}

func TestManifestsDecodeStrictlyAndTheConfigIsValid(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	var cm *v1.ConfigMap
	var dep *appsv1.Deployment
	for _, f := range files {
		if f == "kustomization.yaml" {
			continue
		}
		for _, obj := range decodeAll(t, f) {
			switch o := obj.(type) {
			case *v1.ConfigMap:
				cm = o
			case *appsv1.Deployment:
				dep = o
			}
		}
	}
	if cm == nil || dep == nil {
		t.Fatal("the ConfigMap or the Deployment is missing")
	}
	cfg, err := config.Decode([]byte(cm.Data["config.yaml"]))
	if err != nil {
		t.Fatalf("the ConfigMap's KubeSchedulerConfiguration: %v", err)
	}
	known := scheduler.Known(plugins.NewInTreeRegistry())
	config.SetDefaults(cfg, known)
	if errs := config.Validate(cfg, known); len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	if *cfg.Profiles[0].SchedulerName != "kubesched" || cfg.LeaderElection.ResourceName != "kubesched" {
		t.Errorf("profile %q, lease %q; want kubesched for both", *cfg.Profiles[0].SchedulerName, cfg.LeaderElection.ResourceName)
	}
	if *dep.Spec.Replicas != 2 {
		t.Errorf("replicas = %d, want 2", *dep.Spec.Replicas)
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
		c.LivenessProbe.HTTPGet.Port.IntValue() != 10259 || c.LivenessProbe.HTTPGet.Scheme != v1.URISchemeHTTPS {
		t.Errorf("probes = %+v / %+v, want HTTPS /healthz and /readyz on 10259", c.LivenessProbe, c.ReadinessProbe)
	}
}
