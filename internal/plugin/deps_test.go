package plugin

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The plugin runs on a user's machine: it must not link the controllers (and with them the
// manager's caches, clients and every reconciler) for the few helpers it shares with the operator;
// those live in the API package. go list sees what the linker would.
func TestCommandsDoNotDependOnControllers(t *testing.T) {
	const module = "github.com/mysqlbench/mysqlbench-operator"
	for _, cmd := range []string{"cmd/kubectl-mysqlbench", "cmd/mysqlbench-compare"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/"+cmd).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("go list -deps %s: %v\n%s", cmd, err, ee.Stderr)
			}
			t.Fatalf("go list -deps %s: %v", cmd, err)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, module+"/api/v1alpha1") {
			t.Fatalf("go list -deps %s does not list the API package: the dependency list was not read (%d lines)", cmd, len(deps))
		}
		for _, d := range deps {
			if d == module+"/controllers" || strings.HasPrefix(d, module+"/controllers/") {
				t.Errorf("%s depends on %s: move what it needs into the API package or a small internal package", cmd, d)
			}
		}
	}
}

// Only the manager links the controllers: the controllers themselves, controllers/operator (the
// manager's wiring) and cmd (its main). Any other package that imported them would drag the
// reconcilers into whatever links it; tests may import them to run the real reconcilers.
func TestOnlyTheManagerImportsControllers(t *testing.T) {
	const module = "github.com/mysqlbench/mysqlbench-operator"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list %s/...: %v\n%s", module, err, ee.Stderr)
		}
		t.Fatalf("go list %s/...: %v", module, err)
	}
	allowed := map[string][]string{
		module + "/controllers/run":      {module + "/controllers/operator"},
		module + "/controllers/schedule": {module + "/controllers/operator"},
		module + "/controllers/operator": {module + "/cmd"},
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		seen++
		for dep, importers := range allowed {
			if slices.Contains(imports, dep) && !slices.Contains(importers, pkg) && !strings.HasPrefix(pkg, module+"/controllers") {
				t.Errorf("%s imports %s: only %s may; move what it needs into the API package or a small internal package",
					pkg, dep, strings.Join(importers, ", "))
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list listed %d packages: the module was not read", seen)
	}
}
