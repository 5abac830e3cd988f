package run_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	runctrl "github.com/mysqlbench/mysqlbench-operator/controllers/run"
	"github.com/mysqlbench/mysqlbench-operator/internal/admission"
	"github.com/mysqlbench/mysqlbench-operator/internal/engine"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

// TestNewBenchmarkRunReconcilerRefusesMissingDependencies: every dependency is required, and
// the error names each missing one (a nil log reader used to drop every series silently).
func TestNewBenchmarkRunReconcilerRefusesMissingDependencies(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme).Build()
	full := func() runctrl.Dependencies {
		return runctrl.Dependencies{
			Client: c, APIReader: c, Scheme: testenv.Scheme, Recorder: record.NewFakeRecorder(1),
			Engines: engine.All(c, c, testenv.Scheme), Logs: &fakeLogs{}, Clock: clock.RealClock{},
			AdmissionPolicy: &admission.Check{Reader: c},
		}
	}
	cases := []struct {
		name    string
		mutate  func(*runctrl.Dependencies)
		options runctrl.Options
		want    string // substring of the error; "" for success
	}{
		{"all there", func(*runctrl.Dependencies) {}, runctrl.Options{}, ""},
		{"no log reader", func(d *runctrl.Dependencies) { d.Logs = nil }, runctrl.Options{}, "missing dependencies: Logs"},
		{"no clock and no API reader", func(d *runctrl.Dependencies) { d.Clock, d.APIReader = nil, nil },
			runctrl.Options{}, "missing dependencies: APIReader, Clock"},
		{"no engines", func(d *runctrl.Dependencies) { d.Engines = nil }, runctrl.Options{}, "missing dependencies: Engines"},
		{"a nil engine", func(d *runctrl.Dependencies) { d.Engines = map[v1.Engine]engine.Engine{v1.EngineBuiltin: nil} },
			runctrl.Options{}, "Engines[builtin]"},
		{"nothing", func(d *runctrl.Dependencies) { *d = runctrl.Dependencies{} }, runctrl.Options{},
			"missing dependencies: APIReader, AdmissionPolicy, Client, Clock, Engines, Logs, Recorder, Scheme"},
		{"negative grace", func(*runctrl.Dependencies) {}, runctrl.Options{SchedulingGrace: -time.Second}, "negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := full()
			tc.mutate(&d)
			r, err := runctrl.New(d, tc.options)
			switch {
			case tc.want == "" && (err != nil || r == nil):
				t.Fatalf("got %v, want a reconciler", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
