package loading

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/internal/testing/clustergen"
)

// agreesWithYAMLv2 checks the fast conversion of doc against
// sigs.k8s.io/yaml's: when the fast path takes a document, the library
// must read it too, as the same JSON value. It returns whether the fast
// path took it.
func agreesWithYAMLv2(t *testing.T, name string, doc []byte) bool {
	t.Helper()
	fast, ok := fastYAMLToJSON(doc)
	if !ok {
		return false
	}
	slow, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Errorf("%s: the fast path converted a document sigs.k8s.io/yaml refuses (%v):\n%s", name, err, doc)
		return true
	}
	var a, b interface{}
	if err := json.Unmarshal(fast, &a); err != nil {
		t.Errorf("%s: the fast path wrote invalid JSON (%v): %s", name, err, fast)
		return true
	}
	if err := json.Unmarshal(slow, &b); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s: converted differently\nfast: %s\nyaml: %s\ninput:\n%s", name, fast, slow, doc)
	}
	return true
}

func TestFastYAMLAgreesWithSigsYAMLOnTheRepositorysManifests(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../../examples/*.yaml", "../../../deploy/*.yaml", "testdata/*.yaml", "../../../test/*/testdata/*.yaml", "../../../internal/*/testdata/*.yaml"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d manifest files found", len(files))
	}
	taken, total := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, _ := splitDocuments(f, data)
		for _, doc := range docs {
			total++
			if agreesWithYAMLv2(t, f, doc) {
				taken++
			}
		}
	}
	// The examples are kubectl-style block YAML: nearly all of it takes
	// the fast path, or the comparison above says little.
	if taken*10 < total*8 {
		t.Errorf("the fast path took %d of %d documents", taken, total)
	}
	t.Logf("the fast path took %d of %d documents", taken, total)
}

func TestFastYAMLAgreesWithSigsYAMLOnGeneratedClusters(t *testing.T) {
	for _, wl := range append([]string{""}, clustergen.Workloads...) {
		objs := clustergen.Generate(clustergen.Options{Nodes: 30, Pods: 200, RunningFraction: 0.5, Seed: 5, Workload: wl, Owned: true})
		for _, obj := range objs {
			doc, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			if !agreesWithYAMLv2(t, "workload "+wl, doc) {
				t.Errorf("gencluster's YAML did not take the fast path:\n%s", doc)
				return
			}
		}
	}
}

func TestFastYAMLLeavesWhatItDoesNotReadToSigsYAML(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		wantFast bool
	}{
		{name: "nested mappings and a compact sequence of mappings are read",
			doc: "a:\n  b: c\nlist:\n- name: x\n  port: 80\n- name: y\n", wantFast: true},
		{name: "an indented sequence with scalars and comments is read",
			doc: "# head\na:\n  - x # one\n  - 'it''s'\n  - \"q\"\nb: {}\nc: []\n", wantFast: true},
		{name: "YAML 1.1 booleans, nulls and numbers resolve as yaml.v2 does",
			doc: "a: yes\nb: Off\nc: ~\nd: 0x1F\ne: 0123\nf: 1_000\ng: 1e3\nh: .5\ni: 100m\nj: 2Gi\nk: 08\nl:\n", wantFast: true},
		{name: "a key that yaml.v2 reads as a boolean is left to it", doc: "on: 1\n"},
		{name: "a numeric key is left to it", doc: "80: http\n"},
		{name: "a timestamp is left to it", doc: "t: 2024-01-02T03:04:05Z\n"},
		{name: "infinity is left to it", doc: "x: .inf\n"},
		{name: "an anchor and an alias are left to it", doc: "a: &x 1\nb: *x\n"},
		{name: "a tag is left to it", doc: "a: !!str 1\n"},
		{name: "a block scalar is left to it", doc: "a: |\n  line\n"},
		{name: "a multi-line plain scalar is left to it", doc: "a: one\n  two\n"},
		{name: "a flow mapping is left to it", doc: "a: {b: 1}\n"},
		{name: "a quoted key is left to it", doc: "\"a\": 1\n"},
		{name: "an escape in double quotes is left to it", doc: "a: \"x\\ty\"\n"},
		{name: "a duplicate key is left to it", doc: "a: 1\na: 2\n"},
		{name: "a tab is left to it", doc: "a:\tb\n"},
		{name: "a carriage return is left to it", doc: "a: b\r\n"},
		{name: "a next line separator is left to it", doc: "a: b\u0085c\n"},
		{name: "a mapping value on a key's line is left to it", doc: "a: b: c\n"},
		{name: "a top-level sequence is left to it", doc: "- a\n- b\n"},
		{name: "a badly indented key is left to it", doc: "a:\n    b: 1\n  c: 2\n"},
		{name: "a merge key is left to it", doc: "base: {}\n<<: 1\n"},
		{name: "a negative number is left to it", doc: "a: -5\n"},
		{name: "a sequence in a sequence on one line is left to it", doc: "a:\n- - x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agreesWithYAMLv2(t, tt.name, []byte(tt.doc)); got != tt.wantFast {
				t.Errorf("fast path taken: %v, want %v", got, tt.wantFast)
			}
		})
	}
}

func FuzzFastYAML(f *testing.F) {
	for _, seed := range []string{
		"a:\n  b: c\nlist:\n- name: x\n  port: 80\n",
		"a: yes\nb: 0x1F\nc: 1e3\nd: 'x'\ne: \"y\" # c\n",
		"kind: Pod\nmetadata:\n  name: p\n  labels:\n    app: web\nspec:\n  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: 100m\n",
		"a:\n  - x\n  -\n    b: 1\n  - []\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if strings.Count(string(doc), "\n") > 200 {
			return
		}
		agreesWithYAMLv2(t, "fuzz", doc)
	})
}
