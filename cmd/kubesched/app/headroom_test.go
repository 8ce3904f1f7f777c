package app

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/internal/simulator/questions"
)

// splitWorkload returns the documents of a manifest without the workload
// kind/name, and that workload's document alone.
func splitWorkload(t *testing.T, manifest, kind, name string) (rest, workload string) {
	t.Helper()
	docs := regexp.MustCompile(`(?m)^---\s*$`).Split(manifest, -1)
	var keep []string
	for _, d := range docs {
		if regexp.MustCompile(`(?m)^kind: `+kind+`\s*$`).MatchString(d) && regexp.MustCompile(`(?m)^metadata: \{name: `+name+`,`).MatchString(d) {
			workload = d
			continue
		}
		keep = append(keep, d)
	}
	if workload == "" {
		t.Fatalf("no %s %s in the manifest", kind, name)
	}
	return strings.Join(keep, "\n---\n"), workload
}

// Every workload's headroom is what capacity --workload answers for that
// workload added alone to the cluster and the other workloads.
func TestHeadroomOfEveryExampleWorkloadIsItsCapacity(t *testing.T) {
	const cluster, workloads = "../../../examples/cluster.yaml", "../../../examples/workloads.yaml"
	code, out, errOut := run(t, "capacity", "-f", cluster, "-f", workloads, "--headroom", "-o", "json")
	if code != 0 {
		t.Fatalf("capacity --headroom: exit %d: %s", code, errOut)
	}
	var headroom struct {
		Workloads []struct {
			Kind, Namespace, Name string
			More                  int
			Reason                string
		}
	}
	if err := json.Unmarshal([]byte(out), &headroom); err != nil {
		t.Fatal(err)
	}
	if len(headroom.Workloads) != 3 {
		t.Fatalf("headroom of %d workloads, want the example's Deployment, StatefulSet and Job: %s", len(headroom.Workloads), out)
	}
	manifest, err := os.ReadFile(workloads)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range headroom.Workloads {
		t.Run("the "+h.Kind+" "+h.Namespace+"/"+h.Name+" has the headroom capacity --workload gives it", func(t *testing.T) {
			rest, wl := splitWorkload(t, string(manifest), h.Kind, h.Name)
			others, one := writeFile(t, "others.yaml", rest), writeFile(t, "one.yaml", wl)
			code, out, errOut := run(t, "capacity", "-f", cluster, "-f", others, "--workload", one, "-o", "json")
			if code != 0 {
				t.Fatalf("capacity --workload: exit %d: %s", code, errOut)
			}
			var c struct {
				Fits int
				Next struct{ Message string }
			}
			if err := json.Unmarshal([]byte(out), &c); err != nil {
				t.Fatal(err)
			}
			if c.Fits != h.More || c.Next.Message != h.Reason {
				t.Errorf("--headroom: %d more (%s)\n--workload: %d more (%s)", h.More, h.Reason, c.Fits, c.Next.Message)
			}
		})
	}
}

func TestHeadroomRefusesWhatItCannotAnswer(t *testing.T) {
	nodeOnly := writeFile(t, "nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\nstatus:\n  allocatable:\n    cpu: \"1\"\n    memory: 1Gi\n    pods: \"10\"\n")
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{name: "an input without workloads is refused, saying so", args: []string{"capacity", "-f", nodeOnly, "--headroom"},
			wantStderr: "no workload to add replicas to"},
		{name: "the standard input is refused: it cannot be read once per workload", args: []string{"capacity", "-f", "-", "--headroom"},
			wantStderr: "give it as files, not -f -"},
		{name: "--headroom with --pod is refused", args: []string{"capacity", "-f", nodeOnly, "--headroom", "--pod", nodeOnly},
			wantStderr: "want exactly one of --pod, --workload, --headroom, --add-nodes and --node-types"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := run(t, tt.args...)
			if code == 0 || !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("exit %d, stderr %q; want non-zero and %q", code, errOut, tt.wantStderr)
			}
		})
	}
}

// The table's rows are -o json's, in the input's order (each written as
// it is known), every cell under its column's header.
func TestHeadroomTableRowsAreTheJSONRowsUnderTheirHeaders(t *testing.T) {
	tests := []struct {
		name  string
		files func(t *testing.T) []string
	}{
		{name: "Deployments with HPAs, one short of its maxReplicas", files: func(t *testing.T) []string { return []string{hpaCluster(t)} }},
		{name: "the example's Deployment, StatefulSet and Job", files: func(*testing.T) []string {
			return []string{"../../../examples/cluster.yaml", "../../../examples/workloads.yaml"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			for _, f := range tt.files(t) {
				args = append(args, "-f", f)
			}
			code, out, errOut := run(t, append([]string{"capacity", "--headroom", "-o", "json"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var res questions.HeadroomResult
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			code, table, errOut := run(t, append([]string{"capacity", "--headroom"}, args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
			if len(lines) != len(res.Workloads)+1 {
				t.Fatalf("%d lines, want a header and %d rows:\n%s", len(lines), len(res.Workloads), table)
			}
			headers := []string{"KIND", "NAMESPACE", "NAME", "MORE", "HPA MAX", "REASON"}
			starts := make([]int, len(headers))
			from := 0
			for i, h := range headers {
				at := strings.Index(lines[0][from:], h)
				if at < 0 {
					t.Fatalf("header %q: no %s after column %d", lines[0], h, i)
				}
				starts[i], from = from+at, from+at+len(h)
			}
			for i, h := range res.Workloads {
				want := []string{h.Kind, h.Namespace, h.Name, strconv.Itoa(h.More), hpaMax(h.HPA), h.Reason}
				line := lines[i+1]
				for c := range headers {
					end := len(line)
					if c+1 < len(starts) {
						end = starts[c+1]
					}
					if got := strings.TrimSpace(line[starts[c]:end]); got != want[c] {
						t.Errorf("row %d, column %s: %q, want %q (-o json's)\n%s", i+1, headers[c], got, want[c], table)
					}
				}
			}
		})
	}
}
