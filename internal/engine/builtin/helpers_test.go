package builtin

import (
	"flag"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/testfixture"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// newRun is the representative run the golden files are built from.
func newRun() *v1.BenchmarkRun { return testfixture.Run() }

// golden compares obj, as YAML, with testdata/name; -update rewrites it.
func golden(t *testing.T, name string, obj any) {
	t.Helper()
	testfixture.Golden(t, "./internal/engine/builtin", *update, name, obj)
}

// jsonOf marshals obj for searches over the whole object.
func jsonOf(t *testing.T, obj any) string {
	t.Helper()
	return testfixture.JSON(t, obj)
}
