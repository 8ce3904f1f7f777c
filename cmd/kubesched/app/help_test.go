package app

import (
	"strings"
	"testing"
)

// TestRootHelpLeadsWithTheCommands: `kubesched --help` says what kubesched
// is and lists every command before the first of the scheduler's flags, and
// those flags come in kube-scheduler's named sections.
func TestRootHelpLeadsWithTheCommands(t *testing.T) {
	code, out, errOut := run(t, "--help")
	if code != 0 {
		t.Fatalf("exit code %d; stderr: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "kubesched is a Kubernetes pod scheduler") {
		t.Errorf("help opens with %q, want what kubesched is", truncate(out[:min(len(out), 80)]))
	}
	firstFlag := strings.Index(out, "\n      --")
	if firstFlag < 0 {
		t.Fatalf("help lists no flags:\n%s", truncate(out))
	}
	for _, c := range newCommand(streams{}).Commands() {
		if !c.IsAvailableCommand() {
			continue
		}
		if i := strings.Index(out, "\n  "+c.Name()+" "); i < 0 || i > firstFlag {
			t.Errorf("command %q is not listed before the flags:\n%s", c.Name(), truncate(out))
		}
	}
	for _, section := range []string{"Secure serving flags:", "Authentication flags:", "Authorization flags:", "Leader election flags:", "Global flags:"} {
		if !strings.Contains(out, "\n"+section+"\n") {
			t.Errorf("no %q section:\n%s", section, truncate(out))
		}
	}
}

// TestSubcommandHelpShowsOnlyItsOwnFlags: the root's serving flags stay out
// of a subcommand's help, through --help and through `kubesched help`.
func TestSubcommandHelpShowsOnlyItsOwnFlags(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantFlag string
	}{
		{name: "simulate --help lists -f and no TLS flag", args: []string{"simulate", "--help"}, wantFlag: "--filename"},
		{name: "help explain lists --pod and no TLS flag", args: []string{"help", "explain"}, wantFlag: "--pod"},
		{name: "capacity -h lists --add-nodes and no TLS flag", args: []string{"capacity", "-h"}, wantFlag: "--add-nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit code %d; stderr: %s", code, errOut)
			}
			if !strings.Contains(out, tt.wantFlag) {
				t.Errorf("no %s in:\n%s", tt.wantFlag, truncate(out))
			}
			for _, root := range []string{"--tls-cert-file", "--leader-elect", "Secure serving flags:"} {
				if strings.Contains(out, root) {
					t.Errorf("%q in a subcommand's help:\n%s", root, truncate(out))
				}
			}
		})
	}
}
