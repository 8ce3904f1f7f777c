package plugins_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// bindingCycleMethods run on a binding cycle's goroutine, while the
// scheduling goroutine rewrites the snapshot for the next pod.
var bindingCycleMethods = map[string]bool{"PreBind": true, "PreBindPreFlight": true, "Bind": true, "PostBind": true}

// TestNoBindingCycleCodeReadsTheSchedulingSnapshot: Handle's
// SnapshotSharedLister belongs to the scheduling cycle (its doc); a read
// from PreBind, Bind or PostBind, or from anything they call in their
// package, is a data race with the next cycle's UpdateSnapshot (found in
// VolumeBinding's PreBind: Go's fatal "concurrent map read and map write"
// with a node added while a volume was provisioned). The race detector
// sees it only when a test happens to run both at once; this finds it
// in the source. The call graph is approximated by name within each
// plugin's package (a method called anywhere counts as reachable).
func TestNoBindingCycleCodeReadsTheSchedulingSnapshot(t *testing.T) {
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		fset := token.NewFileSet()
		names, err := filepath.Glob(filepath.Join(d.Name(), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var files []*ast.File
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		if len(files) == 0 {
			continue
		}
		checked++
		for _, bad := range snapshotReadsFromBindingCycle(fset, d.Name(), files) {
			t.Errorf("%s reads SnapshotSharedLister on the binding cycle's goroutine (reached from %s): read nodes with Handle.GetNode there", bad.pos, bad.root)
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d plugin packages, want the in-tree plugins (run from pkg/plugins)", checked)
	}
}

type snapshotRead struct{ pos, root string }

// snapshotReadsFromBindingCycle walks, from each binding-cycle method, the
// functions and methods of pkg called by name, and reports each call of
// SnapshotSharedLister found.
func snapshotReadsFromBindingCycle(fset *token.FileSet, pkg string, files []*ast.File) []snapshotRead {
	funcs := map[string][]*ast.FuncDecl{}
	for _, f := range files {
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				funcs[fd.Name.Name] = append(funcs[fd.Name.Name], fd)
			}
		}
	}
	var out []snapshotRead
	for root := range bindingCycleMethods {
		for _, fd := range funcs[root] {
			if fd.Recv == nil {
				continue
			}
			seen := map[*ast.FuncDecl]bool{}
			queue := []*ast.FuncDecl{fd}
			for len(queue) > 0 {
				cur := queue[0]
				queue = queue[1:]
				if seen[cur] {
					continue
				}
				seen[cur] = true
				ast.Inspect(cur.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					var name string
					switch fn := call.Fun.(type) {
					case *ast.Ident:
						name = fn.Name
					case *ast.SelectorExpr:
						name = fn.Sel.Name
					}
					if name == "SnapshotSharedLister" {
						out = append(out, snapshotRead{pos: relPos(fset, call.Pos()), root: pkg + "." + root})
					}
					queue = append(queue, funcs[name]...)
					return true
				})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pos < out[j].pos })
	return out
}

func relPos(fset *token.FileSet, p token.Pos) string {
	pos := fset.Position(p)
	return filepath.ToSlash(pos.Filename) + ":" + strconv.Itoa(pos.Line)
}
