package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// layoutPaths reads the README's Layout block into the folders it names:
// a line's first word is a folder (ending in "/"), under the folder of
// the line above it indented less; "<name>/" stands for every folder
// next to it not named otherwise.
func layoutPaths(t *testing.T, readme string) (named map[string]bool, wildcards map[string]bool) {
	t.Helper()
	_, after, ok := strings.Cut(readme, "## Layout\n\n```\n")
	if !ok {
		t.Fatal("README.md has no ## Layout section with a code block")
	}
	block, _, _ := strings.Cut(after, "```")
	named, wildcards = map[string]bool{}, map[string]bool{}
	var parents []string // parents[d] is the folder at indent depth d
	for _, line := range strings.Split(block, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		word, _, _ := strings.Cut(trimmed, " ")
		if word == "" || !strings.HasSuffix(word, "/") {
			continue
		}
		depth := (len(line) - len(trimmed)) / 2
		if depth > len(parents) {
			t.Fatalf("Layout line %q is indented under no folder", line)
		}
		parents = parents[:depth]
		path := strings.Join(parents, "") + word
		if word == "<name>/" {
			wildcards[strings.Join(parents, "")] = true
		} else {
			named[strings.TrimSuffix(path, "/")] = true
		}
		parents = append(parents, word)
	}
	return named, wildcards
}

// TestTheREADMELayoutNamesEveryPackage walks the module for its Go
// packages (folders with non-test .go files, test/integration's own module
// aside) and wants each named in the README's Layout, itself or by a
// "<name>/" entry of its parent.
func TestTheREADMELayoutNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	named, wildcards := layoutPaths(t, string(readme))
	var missing []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "test") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "." || named[dir] || wildcards[filepath.ToSlash(filepath.Dir(dir))+"/"] {
			return nil
		}
		missing = append(missing, dir)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(missing)
	for i, m := range missing {
		if i == 0 || m != missing[i-1] {
			t.Errorf("package %s is not named in the README's Layout", m)
		}
	}
}
