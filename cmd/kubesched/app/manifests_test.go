package app

import (
	"os"
	"strings"
	"testing"
)

// What the commands make of manifests as kubectl apply would take them:
// the namespace of -n, versions kube-apiserver does not serve, an object
// given twice.
func TestCommandsReadManifestsAsKubectlApplyDoes(t *testing.T) {
	const node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n"
	pod := func(ns, name string) string {
		meta := "name: " + name
		if ns != "" {
			meta += ", namespace: " + ns
		}
		return "apiVersion: v1\nkind: Pod\nmetadata: {" + meta + "}\nspec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}\n"
	}
	deployment := func(apiVersion string, replicas string) string {
		return "apiVersion: " + apiVersion + "\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: " + replicas +
			"\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: x}]}\n"
	}
	file := func(name, content string) string { return writeFile(t, name, content) }
	tests := []struct {
		name       string
		args       func() []string
		wantCode   int
		wantOut    []string
		wantStderr []string
	}{
		{name: "simulate -n puts the namespace-less pods in its namespace",
			args: func() []string {
				return []string{"simulate", "-f", file("c.yaml", node+"---\n"+pod("", "p")+"---\n"+pod("team", "q")), "-n", "team", "--show", "all"}
			},
			wantOut: []string{"team/p", "team/q", "2 scheduled"}},
		{name: "simulate -n refuses a pod naming another namespace, naming the file and document",
			args: func() []string {
				return []string{"simulate", "-f", file("c.yaml", node+"---\n"+pod("other", "p")), "-n", "team"}
			},
			wantCode:   1,
			wantStderr: []string{`c.yaml: document 2 (Pod other/p): metadata.namespace: the namespace from the provided object "other" does not match the namespace "team". You must pass '--namespace=other' to perform this operation.`}},
		{name: "explain -n puts the namespace-less --pod file's pod in its namespace",
			args: func() []string {
				return []string{"explain", "-f", file("c.yaml", node+"---\n"+pod("team", "q")), "--pod", file("p.yaml", pod("", "p")), "-n", "team"}
			},
			wantOut: []string{"Pod team/p: 1/1 node feasible"}},
		{name: "capacity --workload of a workload another -f file also holds answers as for the workload given once",
			args: func() []string {
				wl, err := os.ReadFile("../../../examples/capacity-workload.yaml")
				if err != nil {
					t.Fatal(err)
				}
				return []string{"capacity", "-f", "../../../examples/cluster.yaml", "-f", file("apps.yaml", string(wl)), "--workload", "../../../examples/capacity-workload.yaml"}
			},
			wantOut:    []string{"39 more copies of Deployment shop/api fit"},
			wantStderr: []string{"capacity-workload.yaml: document 1 (Deployment shop/api): replaces the one read at "}},
		{name: "simulate refuses a namespace the API server would not take",
			args: func() []string {
				return []string{"simulate", "-f", file("c.yaml", node+"---\n"+pod("", "p")), "-n", "Team_1"}
			},
			wantCode:   1,
			wantStderr: []string{`-n/--namespace: Invalid value: "Team_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`}},
		{name: "simulate refuses an extensions/v1beta1 Deployment as kubectl apply refuses it",
			args: func() []string {
				return []string{"simulate", "-f", file("c.yaml", node+"---\n"+deployment("extensions/v1beta1", "2"))}
			},
			wantCode:   1,
			wantStderr: []string{`c.yaml: document 2 (Deployment default/web): apiVersion: no matches for kind "Deployment" in version "extensions/v1beta1"`}},
		{name: "simulate takes the second of a Deployment given twice, with a warning naming both places",
			args: func() []string {
				return []string{"simulate", "-f", file("a.yaml", node+"---\n"+deployment("apps/v1", "1")), "-f", file("b.yaml", deployment("apps/v1", "3")), "--show", "summary"}
			},
			wantOut:    []string{"3 scheduled"},
			wantStderr: []string{"warning: ", "b.yaml: document 1 (Deployment default/web): replaces the one read at ", "a.yaml: document 2 (kubectl apply -f of the files in order leaves the last one)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args()...)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d (stderr: %s)", code, tt.wantCode, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout does not contain %q:\n%s", w, truncate(out))
				}
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, errOut)
				}
			}
		})
	}
}
