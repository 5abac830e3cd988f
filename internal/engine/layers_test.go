package engine

import (
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/mysqlbench/mysqlbench-operator/"

// imports are the project packages that the non-test files of dir (relative to the module root)
// import.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(path, module); ok && !slices.Contains(out, rest) {
				out = append(out, rest)
			}
		}
	}
	return out
}

// packagesUnder are the directories with Go files at or below roots (relative to the module root);
// a root that does not exist (moved since) is skipped, but not all of them.
func packagesUnder(t *testing.T, roots ...string) []string {
	t.Helper()
	var out []string
	for _, root := range roots {
		err := filepath.WalkDir(filepath.Join("..", "..", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if gofiles, _ := filepath.Glob(filepath.Join(path, "*.go")); len(gofiles) > 0 {
				rel, _ := filepath.Rel(filepath.Join("..", ".."), path)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no packages under %v", roots)
	}
	return out
}

// Imports only point down: the facts table is a leaf; the layers below the engines (the
// builders, the clients, the report) import nothing under internal/engine; the engines share
// package server and never import the registry or each other, so no import runs back up and
// none closes a circle.
func TestImportsPointDown(t *testing.T) {
	engines := []string{"internal/engine/builtin", "internal/engine/external", "internal/engine/percona"}
	for _, dir := range []string{"internal/enginefacts"} {
		for _, imp := range imports(t, dir) {
			if imp != "api/v1alpha1" {
				t.Errorf("%s imports %s: it must stay a leaf (the API and the standard and Kubernetes types only)", dir, imp)
			}
		}
	}
	for _, dir := range packagesUnder(t, "internal/specs", "internal/client", "internal/report", "internal/sysbench") {
		for _, imp := range imports(t, dir) {
			if strings.HasPrefix(imp, "internal/engine/") || imp == "internal/engine" {
				t.Errorf("%s imports %s: the layers below the engines read their facts from internal/enginefacts", dir, imp)
			}
		}
	}
	for _, imp := range imports(t, "internal/engine/server") {
		if strings.HasPrefix(imp, "internal/engine") || imp == "internal/specs" {
			t.Errorf("internal/engine/server imports %s: it is below every engine", imp)
		}
	}
	for _, dir := range engines {
		for _, imp := range imports(t, dir) {
			if imp == "internal/engine" || (slices.Contains(engines, imp) && imp != dir) {
				t.Errorf("%s imports %s: an engine imports neither the registry nor another engine", dir, imp)
			}
		}
	}
	// An engine's driver is its other half: it imports its own engine and what the drivers share
	// (server, provision), never another engine or either registry.
	for _, dir := range engines {
		for _, imp := range imports(t, dir+"/driver") {
			if (imp == "internal/engine" || strings.HasPrefix(imp, "internal/engine/")) &&
				imp != dir && imp != "internal/engine/server" && imp != "internal/engine/provision" {
				t.Errorf("%s/driver imports %s: a driver imports only its own engine, server and provision", dir, imp)
			}
		}
	}
	// The describers' registry links no driver: the kubectl plugin links it, and a driver would
	// bring controller-runtime's client with it (package object).
	for _, imp := range imports(t, "internal/engine/describe") {
		if imp == "internal/engine" || imp == "internal/engine/provision" || strings.HasSuffix(imp, "/driver") {
			t.Errorf("internal/engine/describe imports %s: it holds the describers only", imp)
		}
	}
}
