package plugin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mysqlbench/mysqlbench-operator/internal/report"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

func resultsConfigMap(t *testing.T, name string) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: nsBench, Name: name + "-results"}, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

func TestExportJSONDecodesWithTheSeries(t *testing.T) {
	needCluster(t)
	out, _, err := kubectlMysqlbench(t, "export", "pk", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := results.Decode([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	run := getRun(t, nsBench, "pk")
	if doc.Run.Name != "pk" || len(doc.Targets) != len(run.Status.Targets) {
		t.Fatalf("results.json of %s with %d targets", doc.Run.Name, len(doc.Targets))
	}
	for i, tr := range doc.Targets {
		ts := run.Status.Targets[i]
		if tr.Name != ts.Name || len(tr.Steps) != len(ts.Steps) {
			t.Fatalf("target %s: %d steps, status %s: %d", tr.Name, len(tr.Steps), ts.Name, len(ts.Steps))
		}
		for j, s := range tr.Steps {
			if s.QPS.Total != ts.Steps[j].QPS.Total {
				t.Errorf("%s step %d: QPS %v, status %v", tr.Name, j, s.QPS.Total, ts.Steps[j].QPS.Total)
			}
			// The fake kubelet served each step's log; the operator stored its 3 seconds.
			series, ok, err := s.DecodedSeries()
			if err != nil || !ok || len(series.QPS) != 3 || series.Threads != s.Threads {
				t.Errorf("%s at %d threads: series %+v, %v, %v", tr.Name, s.Threads, series, ok, err)
			}
		}
	}
	if out != resultsConfigMap(t, "pk").Data[report.KeyResultsJSON] {
		t.Errorf("export -o json is not results.json as stored")
	}
}

func TestExportCSVAndMarkdownToStdoutOrAFile(t *testing.T) {
	needCluster(t)
	cm := resultsConfigMap(t, "pk")
	out, _, err := kubectlMysqlbench(t, "export", "pk", "-o", "csv")
	if err != nil {
		t.Fatal(err)
	}
	if out != cm.Data[report.KeyResultsCSV] || !strings.HasPrefix(out, "target,server_version,threads,") {
		t.Errorf("export -o csv is not results.csv as stored")
	}
	path := filepath.Join(t.TempDir(), "report.md")
	out, _, err = kubectlMysqlbench(t, "export", "pk", "-o", "markdown", "--file", path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if out != "" || string(data) != cm.Data[report.KeyReportMD] {
		t.Errorf("--file: stdout %q, file is report.md: %v", out, string(data) == cm.Data[report.KeyReportMD])
	}
	if _, _, err := kubectlMysqlbench(t, "export", "pk", "-o", "xml"); err == nil || !strings.Contains(err.Error(), "allowed formats are: csv, markdown, json, yaml") {
		t.Errorf("-o xml: %v", err)
	}
}
