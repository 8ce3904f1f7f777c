package timeline_test

import (
	"context"
	"github.com/kubesched/kubesched/internal/simulator"
	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	"github.com/kubesched/kubesched/internal/simulator/timeline"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	st "github.com/kubesched/kubesched/internal/testing"
	"github.com/kubesched/kubesched/pkg/plugins"
)

const scenarioHead = "apiVersion: simulation.kubesched.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  steps:\n"

func TestTheExampleScenarioLoadsWithItsSteps(t *testing.T) {
	c, err := loading.Load([]string{"../../../examples/cluster.yaml", "../../../examples/workloads.yaml", "../../../examples/scenario.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Scenario == nil {
		t.Fatal("no Scenario read")
	}
	var got []string
	for _, s := range c.Scenario.Steps {
		got = append(got, s.At.String()+" "+s.Name)
	}
	want := []string{"5m0s nightly report", "15m0s scale web for the sale", "30m0s maintenance on compute-b-hp28q",
		"40m0s add a compute node", "1h0m0s maintenance done, spot node reclaimed", "2h0m0s sale over"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want,+got):\n%s", diff)
	}
	if len(c.Skipped) != 0 {
		t.Errorf("skipped %v, want nothing (the Scenario is read, not skipped)", c.Skipped)
	}
}

func TestABadScenarioIsRefusedNamingTheField(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []string
	}{
		{name: "a step without a time names at", content: scenarioHead + "  - name: x\n",
			want: []string{"document 1", "Scenario s", "spec.steps[0].at: Required value"}},
		{name: "a time that is not a duration names at", content: scenarioHead + "  - at: soon\n",
			want: []string{"spec.steps[0].at", `"soon"`}},
		{name: "steps out of time order are refused", content: scenarioHead + "  - at: 10m\n  - at: 5m\n",
			want: []string{"spec.steps[1].at", "in time order"}},
		{name: "an unknown field in a step is refused", content: scenarioHead + "  - at: 1m\n    drian: [a]\n",
			want: []string{"Scenario s", `unknown field "spec.steps[0].drian"`}},
		{name: "a kind a step cannot delete names its field", content: scenarioHead + "  - at: 1m\n    delete: [{kind: Service, name: web}]\n",
			want: []string{"spec.steps[0].delete[0].kind", `"Service"`}},
		{name: "a kind a step cannot create is refused, not skipped", content: scenarioHead + "  - at: 1m\n    create:\n    - {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n",
			want: []string{"spec.steps[0].create[0]", "ConfigMap cannot be created by a step"}},
		{name: "a bad object in create names its own field under the step", content: scenarioHead + "  - at: 1m\n    create:\n    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, resources: {requests: {cpu: lots}}}]}}\n",
			want: []string{"Pod default/p", "spec.steps[0].create[0].spec.containers[0].resources.requests.cpu"}},
		{name: "a taint without an effect names it", content: scenarioHead + "  - at: 1m\n    taint: [{node: a, key: k}]\n",
			want: []string{"spec.steps[0].taint[0].effect", "Unsupported value"}},
		{name: "another API version is refused", content: strings.Replace(scenarioHead, "v1alpha1", "v9", 1) + "  - at: 1m\n",
			want: []string{"apiVersion", `"simulation.kubesched.io/v9"`}},
		{name: "a second Scenario is refused", content: scenarioHead + "  - at: 1m\n---\n" + scenarioHead + "  - at: 2m\n",
			want: []string{"document 2", "a second Scenario"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loading.Load([]string{simtest.WriteFile(t, "scenario.yaml", tt.content)})
			if err == nil {
				t.Fatal("no error, want one")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestAStepOnSomethingMissingFailsNamingTheStep(t *testing.T) {
	tests := []struct {
		name string
		step cluster.Step
		want string
	}{
		{name: "cordoning a node that does not exist", step: cluster.Step{Name: "c", Cordon: []string{"nope"}}, want: "spec.steps[0] (c): cordon: Node nope not found"},
		{name: "scaling a Deployment that does not exist", step: cluster.Step{Name: "s", Scale: []cluster.ScaleRef{{Kind: "Deployment", Name: "web", Replicas: 2}}}, want: "spec.steps[0] (s): scale: Deployment default/web not found"},
		{name: "deleting a pod that does not exist", step: cluster.Step{Name: "d", Delete: []cluster.ObjectRef{{Kind: "Pod", Name: "p"}}}, want: "spec.steps[0] (d): delete: Pod default/p not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := simtest.LoadObjects(t, []runtime.Object{simtest.Node("a")})
			c.Scenario = &cluster.Scenario{Name: "s", Source: "scenario.yaml: document 1", Steps: []cluster.Step{tt.step}}
			w, err := simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
			if err != nil {
				t.Fatal(err)
			}
			err = timeline.Run(context.Background(), w)
			if err == nil || !strings.Contains(err.Error(), "scenario.yaml: document 1 (Scenario s): "+tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestABadDurationAnnotationIsRefusedNamingThePod(t *testing.T) {
	c := simtest.LoadObjects(t, []runtime.Object{simtest.Node("a"), st.MakePod().Name("p").Annotation(cluster.DurationAnnotation, "forever").Req(map[v1.ResourceName]string{v1.ResourceCPU: "1"}).Obj()})
	_, err := simulator.NewWorld(context.Background(), c, simtest.DefaultConfig(t), plugins.NewInTreeRegistry(), 1)
	if err == nil || !strings.Contains(err.Error(), "cluster.yaml: document 2 (Pod default/p): metadata.annotations[simulation.kubesched.io/duration]: Invalid value: \"forever\"") {
		t.Errorf("error = %v, want it to name the pod and the annotation", err)
	}
}
