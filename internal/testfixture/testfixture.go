// Package testfixture holds what the builders' tests of several packages share: the
// representative run their golden files are built from, and the golden-file comparison itself.
// Only tests import it.
package testfixture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// Run is a representative run: Percona's point-select study, shortened, with storage and client
// resources.
func Run() *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "pk-lookup", Namespace: "bench"},
		Spec: v1.BenchmarkRunSpec{
			Targets: []v1.Target{{
				Name:  "mysql57",
				Image: "mysql:5.7.44",
				MyCnf: "innodb_buffer_pool_size = 2G\nperformance_schema = OFF\n",
				Resources: &corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
				},
			}},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 100, TableSize: 1000000},
			Ladder: v1.Ladder{
				Threads:      []int32{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000},
				StepDuration: &metav1.Duration{Duration: 300 * time.Second},
				Warmup:       &metav1.Duration{Duration: 300 * time.Second},
			},
			ClientResources: &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
			},
			Storage: &v1.Storage{Size: resource.MustParse("20Gi"), StorageClassName: ptr.To("fast-ssd")},
		},
	}
}

// Golden compares obj, as YAML, with testdata/name of the package under test; update rewrites
// it. pkg names the package for the message (e.g. ./internal/specs).
func Golden(t *testing.T, pkg string, update bool, name string, obj any) {
	t.Helper()
	got, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the builder's output (go test %s -update, then review the diff):\n%s", path, pkg, got)
	}
}

// JSON marshals obj for searches over the whole object.
func JSON(t *testing.T, obj any) string {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
