package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// worstCaseRun must assume the longest run name the API server accepts: the CRD's own rule.
func TestWorstRunNameLenIsTheCRDLimit(t *testing.T) {
	crd, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "mysqlbench.io_benchmarkruns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rule := fmt.Sprintf("rule: size(self.metadata.name) <= %d\n", worstRunNameLen)
	if !strings.Contains(string(crd), rule) {
		t.Errorf("the BenchmarkRun CRD has no %q: worstRunNameLen (%d) is not its name limit", strings.TrimSpace(rule), worstRunNameLen)
	}
}
