package loading_test

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

func TestLoadLeavesOutHelmTestHooks(t *testing.T) {
	hook := func(name, hooks string) *v1.Pod {
		return st.MakePod().Name(name).Image("x").Annotation("helm.sh/hook", hooks).Obj()
	}
	migrate := st.MakeJob("migrate", 1, nil, st.MakePod().Image("x")).Obj()
	migrate.Annotations = map[string]string{"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "-5"}
	tests := []struct {
		name     string
		objs     []runtime.Object
		pods     []string // the pods loaded, by name prefix
		jobs     int
		warnings []string // after "a.yaml: document "
		wantErr  string
	}{
		{name: "a pod annotated helm.sh/hook: test is left out with a note",
			objs:     []runtime.Object{simtest.Node("n1"), hook("web-test", "test"), st.MakePod().Name("p").Image("x").Obj()},
			pods:     []string{"p"},
			warnings: []string{`2 (Pod default/web-test): metadata.annotations[helm.sh/hook]: "test": left out: a Helm test hook is created by helm test, not by helm install`}},
		{name: "the older test-success and test-failure values, listed together, are test hooks too",
			objs:     []runtime.Object{simtest.Node("n1"), hook("t1", "test-success"), hook("t2", " Test-Success, test-failure ")},
			warnings: []string{`2 (Pod default/t1): metadata.annotations[helm.sh/hook]: "test-success": left out`, `3 (Pod default/t2): metadata.annotations[helm.sh/hook]: " Test-Success, test-failure ": left out`}},
		{name: "a pre-install hook Job is kept: helm install runs it",
			objs: []runtime.Object{simtest.Node("n1"), migrate}, pods: []string{"migrate-"}, jobs: 1},
		{name: "a hook for install and test is kept",
			objs: []runtime.Object{simtest.Node("n1"), hook("both", "post-install,test")}, pods: []string{"both"}},
		{name: "test hooks alone leave nothing to simulate, saying so",
			objs:    []runtime.Object{hook("web-test", "test")},
			wantErr: "holds no Node, Pod, workload or Scenario, only 1 Helm test hook(s), left out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, dir, err := loadFiles(t, loading.Options{}, tt.objs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Pods) != len(tt.pods) || len(c.Jobs) != tt.jobs {
				t.Fatalf("%d pods, %d Jobs; want %v and %d Jobs", len(c.Pods), len(c.Jobs), tt.pods, tt.jobs)
			}
			for i, p := range c.Pods {
				if !strings.HasPrefix(p.Name, tt.pods[i]) {
					t.Errorf("pod %s, want %s", p.Name, tt.pods[i])
				}
			}
			if len(c.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %d", c.Warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if want := dir + "a.yaml: document " + w; !strings.HasPrefix(c.Warnings[i], want) {
					t.Errorf("warning %q, want one starting %q", c.Warnings[i], want)
				}
			}
		})
	}
}
