package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeCommand is a `go run ./cmd/kubesched ...` line of the README,
// with the file piped into it, if any.
type readmeCommand struct {
	line  string
	args  []string
	stdin string
}

// readmeCommands extracts the kubesched commands of the README's sh
// blocks that run on manifests alone (not the cluster ones).
func readmeCommands(t *testing.T, readme string) []readmeCommand {
	t.Helper()
	var out []readmeCommand
	inBlock := false
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = strings.HasPrefix(line, "```sh") && !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		cmd, _, _ := strings.Cut(line, "#")
		var stdin string
		if before, after, ok := strings.Cut(cmd, "|"); ok {
			f := strings.Fields(before)
			if len(f) != 2 || f[0] != "cat" {
				continue
			}
			stdin, cmd = f[1], after
		}
		// "> FILE" redirects stdout; the test keeps stdout in memory.
		cmd, _, _ = strings.Cut(cmd, ">")
		f := strings.Fields(cmd)
		if len(f) < 4 || f[0] != "go" || f[1] != "run" || f[2] != "./cmd/kubesched" {
			continue
		}
		switch f[3] {
		case "simulate", "explain", "capacity", "version":
		default:
			continue
		}
		if strings.Contains(cmd, "--kubeconfig") {
			continue
		}
		out = append(out, readmeCommand{line: strings.Join(f[3:], " "), args: f[3:], stdin: stdin})
	}
	return out
}

func TestEveryREADMECommandRunsAsWritten(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, string(readme))
	if len(cmds) < 15 {
		t.Fatalf("found %d commands in the README, want the quick start's and the recipes' (at least 15)", len(cmds))
	}
	t.Chdir(root)
	for _, c := range cmds {
		t.Run(c.line, func(t *testing.T) {
			var out, errOut bytes.Buffer
			s := streams{out: &out, errOut: &errOut}
			if c.stdin != "" {
				data, err := os.ReadFile(c.stdin)
				if err != nil {
					t.Fatal(err)
				}
				s.in = bytes.NewReader(data)
			}
			args := c.args
			for i, a := range args {
				if strings.HasPrefix(a, "/tmp/") {
					args[i] = filepath.Join(t.TempDir(), filepath.Base(a))
				}
			}
			cmd := newCommand(s)
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			if code := Run(t.Context(), cmd, args); code != 0 {
				t.Errorf("exit code %d; stderr:\n%s", code, errOut.String())
			}
			if out.Len() == 0 {
				t.Errorf("printed nothing")
			}
		})
	}
}
