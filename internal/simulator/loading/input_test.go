package loading_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/internal/simulator/cluster"
	"github.com/kubesched/kubesched/internal/simulator/loading"
	"github.com/kubesched/kubesched/internal/simulator/simtest"
	st "github.com/kubesched/kubesched/internal/testing"
)

func TestLoadRefusesInputWithNothingToSimulateSayingWhy(t *testing.T) {
	const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"
	const priorityClass = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\n"
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{name: "an empty file", files: []string{""}, want: "nothing was read from a.yaml: no documents (empty, or only comments)"},
		{name: "a file of comments and separators", files: []string{"# a cluster\n---\n# nothing yet\n---\n"}, want: "nothing was read from a.yaml: no documents (empty, or only comments)"},
		{name: "two empty files are both named", files: []string{"", "\n"}, want: "nothing was read from a.yaml, b.yaml: no documents (empty, or only comments)"},
		{name: "a file of kinds the simulator does not read", files: []string{configMap + "---\n" + configMap},
			want: "nothing to simulate: a.yaml holds no Node, Pod, workload or Scenario, only 2 ConfigMap of kinds the simulator does not read"},
		{name: "a file of PriorityClasses only", files: []string{priorityClass, configMap},
			want: "nothing to simulate: a.yaml, b.yaml hold no Node, Pod, workload or Scenario, only 1 PriorityClass; 1 ConfigMap of kinds the simulator does not read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for i, content := range tt.files {
				p := filepath.Join(dir, string(rune('a'+i))+".yaml")
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, p)
			}
			_, err := loading.Load(paths)
			if err == nil {
				t.Fatal("no error, want one")
			}
			if got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""); got != tt.want {
				t.Errorf("error %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLoadWarnsOfWhatTheAPIServerTakesButTheUserProbablyDidNotMean(t *testing.T) {
	web := st.MakePod().Label("app", "web").Image("x")
	bare := func(name string) *v1.Node {
		n := st.MakeNode().Name(name).Obj()
		n.Status = v1.NodeStatus{}
		return n
	}
	tests := []struct {
		name     string
		objs     []runtime.Object
		warnings []string // after "c.yaml: document "
		pods     []string // namespace/name -> node, as "name@node"
	}{
		{name: "a Node without status gets a warning and stays",
			objs:     []runtime.Object{bare("n1"), simtest.Node("n2")},
			warnings: []string{"1 (Node n1): status.capacity: not set (nor status.allocatable): the node has no room, no pod fits on it"}},
		{name: "each Node without status is named, though their statuses are shared",
			objs:     []runtime.Object{bare("n1"), bare("n2")},
			warnings: []string{"1 (Node n1): status.capacity: not set", "2 (Node n2): status.capacity: not set"}},
		{name: "a pod bound to a node not in the input is left out, as the pod garbage collector deletes it",
			objs:     []runtime.Object{simtest.Node("n1"), st.MakePod().Name("ghost").Image("x").Node("n9").Obj(), st.MakePod().Name("here").Image("x").Node("n1").Obj()},
			warnings: []string{`2 (Pod default/ghost): spec.nodeName: Not found: "n9": no such Node in the input; left out`},
			pods:     []string{"default/here@n1"}},
		{name: "a workload's pod bound to a node not in the input is replaced by its controller",
			objs: []runtime.Object{simtest.Node("n1"), st.MakeReplicaSet("web", 1, web),
				st.MakePod().Name("web-old").Label("app", "web").Image("x").Node("n9").Owned("apps/v1", "ReplicaSet", "web").Obj()},
			warnings: []string{`3 (Pod default/web-old): spec.nodeName: Not found: "n9"`},
			pods:     []string{"default/web-*@"}},
		{name: "the pod explain is to explain keeps its nodeName, a constraint",
			objs: []runtime.Object{simtest.Node("n1"), st.MakePod().Name("p").Image("x").Node("n9").Annotation("kubesched.io/pending", "true").Obj()},
			pods: []string{"default/p@n9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := simtest.WriteFile(t, "c.yaml", manifest(t, tt.objs...))
			c, err := loading.Load([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %d", c.Warnings, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				if want := path + ": document " + w; !strings.HasPrefix(c.Warnings[i], want) {
					t.Errorf("warning %q, want one starting %q", c.Warnings[i], want)
				}
			}
			if tt.pods == nil {
				return
			}
			var got []string
			for _, p := range c.Pods {
				got = append(got, cluster.PodKey(p)+"@"+p.Spec.NodeName)
			}
			if len(got) != len(tt.pods) {
				t.Fatalf("pods %v, want %v", got, tt.pods)
			}
			for i, want := range tt.pods {
				if !regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(want), `\*`, ".+") + "$").MatchString(got[i]) {
					t.Errorf("pod %q, want %q", got[i], want)
				}
			}
		})
	}
}

func TestLoadErrorsHaveOneFormatWhereverTheyAreFound(t *testing.T) {
	pod := func(name string) *st.PodWrapper { return st.MakePod().Name(name).Image("x") }
	gold := func(p *st.PodWrapper) *st.PodWrapper { p.Spec.PriorityClassName = "gold"; return p }
	tests := []struct {
		name string
		objs []runtime.Object
		want string // after the path
	}{
		{name: "a field refused while decoding",
			objs: []runtime.Object{simtest.Node("n1"), pod("p").Obj(), st.MakePod().Name("q").Obj()},
			want: ": document 3 (Pod default/q): spec.containers: Required value"},
		{name: "a PriorityClass not found, found while defaulting",
			objs: []runtime.Object{simtest.Node("n1"), pod("p").Obj(), gold(pod("q")).Obj()},
			want: ": document 3 (Pod default/q): spec.priorityClassName: Not found: no PriorityClass with name gold was found"},
		{name: "a workload's pod names its workload",
			objs: []runtime.Object{simtest.Node("n1"), st.MakeDeployment("web", 1, gold(st.MakePod().Label("app", "web").Image("x")))},
			want: ": document 2, Deployment default/web (Pod default/web-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := simtest.WriteFile(t, "c.yaml", manifest(t, tt.objs...))
			_, err := loading.Load([]string{path})
			if want := path + tt.want; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error %v, want one starting %q", err, want)
			}
		})
	}
}
