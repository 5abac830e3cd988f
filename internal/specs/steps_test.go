package specs

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
)

func stepsRun() *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns"},
		Spec: v1.BenchmarkRunSpec{
			Workload: v1.Workload{Script: "oltp_read_only", Tables: 4},
			Ladder:   v1.Ladder{Threads: []int32{1, 4, 16}},
		},
	}
}

func TestNextPhase(t *testing.T) {
	plain := stepsRun()
	skip := stepsRun()
	skip.Spec.Workload.SkipPrepare = true
	warm := stepsRun()
	warm.Spec.Ladder.Warmup = &metav1.Duration{Duration: time.Minute}
	skipWarm := warm.DeepCopy()
	skipWarm.Spec.Workload.SkipPrepare = true
	cases := []struct {
		run  *v1.BenchmarkRun
		from v1.TargetPhase
		want v1.TargetPhase
	}{
		{plain, "", v1.TargetProvisioning},
		{plain, v1.TargetPending, v1.TargetProvisioning},
		{plain, v1.TargetProvisioning, v1.TargetPreparing},
		{skip, v1.TargetProvisioning, v1.TargetRunning},
		{skipWarm, v1.TargetProvisioning, v1.TargetWarmingUp},
		{plain, v1.TargetPreparing, v1.TargetRunning},
		{warm, v1.TargetPreparing, v1.TargetWarmingUp},
		{warm, v1.TargetWarmingUp, v1.TargetRunning},
		{plain, v1.TargetRunning, v1.TargetCleaningUp},
		{plain, v1.TargetCleaningUp, v1.TargetSucceeded},
		{plain, v1.TargetFailed, v1.TargetFailed},
	}
	for _, c := range cases {
		if got := NextPhase(c.run, c.from); got != c.want {
			t.Errorf("NextPhase(%q) with skipPrepare %v, warm-up %s = %q, want %q", c.from,
				c.run.Spec.Workload.SkipPrepare, c.run.Spec.Ladder.WarmupDuration(), got, c.want)
		}
	}
}

func TestTargetSteps(t *testing.T) {
	builtin := v1.Target{Name: "b"}
	external := v1.Target{Name: "e", Engine: v1.EngineExternal}
	cases := []struct {
		name   string
		target v1.Target
		mutate func(*v1.BenchmarkRun)
		want   []string
	}{
		{"builtin", builtin, nil, []string{"probe", "prepare", "s01", "s02", "s03"}},
		{"external drops its tables", external, nil, []string{"probe", "prepare", "s01", "s02", "s03", "cleanup"}},
		{"external skipPrepare", external, func(r *v1.BenchmarkRun) { r.Spec.Workload.SkipPrepare = true },
			[]string{"probe", "s01", "s02", "s03"}},
		{"warm-up", builtin, func(r *v1.BenchmarkRun) { r.Spec.Ladder.Warmup = &metav1.Duration{Duration: time.Second} },
			[]string{"probe", "prepare", "warmup", "s01", "s02", "s03"}},
		{"three repetitions", builtin, func(r *v1.BenchmarkRun) { r.Spec.Repetitions = ptr.To[int32](3) },
			[]string{"probe", "prepare", "s01", "s02", "s03", "r2s03", "r2s02", "r2s01", "r3s01", "r3s02", "r3s03"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := stepsRun()
			if c.mutate != nil {
				c.mutate(run)
			}
			var got []string
			for _, s := range TargetSteps(run, c.target) {
				got = append(got, s.Name)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("steps %q, want %q", got, c.want)
			}
		})
	}
}

func TestStepSysbench(t *testing.T) {
	run := stepsRun()
	run.Spec.Ladder.StepDuration = &metav1.Duration{Duration: 90 * time.Second}
	run.Spec.Ladder.Warmup = &metav1.Duration{Duration: 30 * time.Second}
	run.Spec.Repetitions = ptr.To[int32](2)
	if got, want := WarmupStep(run).Load, (load.Step{Phase: load.PhaseWarmup, Threads: 16, Duration: 30 * time.Second}); got != want {
		t.Errorf("warm-up %+v, want %+v", got, want)
	}
	// Step 3 is the second repetition's first, the ladder's top rung.
	if got, want := LadderStepAt(run, 3), (Step{Name: "r2s03", Load: load.Step{Phase: load.PhaseRun, Threads: 16, Duration: 90 * time.Second,
		ServerStats: true}}); got != want {
		t.Errorf("step 3 %+v, want %+v", got, want)
	}
	// spec.serverStats.enabled false: the ladder steps run sysbench only.
	run.Spec.ServerStats = &v1.ServerStats{Enabled: ptr.To(false)}
	if got := LadderStepAt(run, 3); got.Load.ServerStats {
		t.Errorf("step 3 with serverStats disabled %+v, want no server stats", got)
	}
	for _, s := range []Step{ProbeStep(), PrepareStep(), CleanupStep()} {
		if string(s.Load.Phase) != s.Name {
			t.Errorf("step %s runs %s", s.Name, s.Load.Phase)
		}
	}
}

func TestStepJob(t *testing.T) {
	run := stepsRun()
	job, err := StepJob(run, v1.Target{Name: "b"}, LadderStepAt(run, 2), Attempt{Failed: 1}, "r-b-credentials", "img:1")
	if err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if job.Name != "r-b-s03-a1" || c.Image != "img:1" || !slices.Contains(c.Args, "--threads=16") ||
		*job.Spec.ActiveDeadlineSeconds != int64((time.Minute+DeadlineMargin)/time.Second) {
		t.Errorf("job %s image %s args %q deadline %d", job.Name, c.Image, c.Args, *job.Spec.ActiveDeadlineSeconds)
	}
	run.Spec.Workload.ExtraArgs = []string{"--time=5"}
	_, err = StepJob(run, v1.Target{Name: "b"}, ProbeStep(), Attempt{}, "r-b-credentials", "img:1")
	if err == nil || !strings.HasPrefix(err.Error(), "cannot build the sysbench command for probe: workload.extraArgs[0]") {
		t.Errorf("error %v", err)
	}
}

func TestMysqlslapSteps(t *testing.T) {
	run := stepsRun()
	run.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Queries: 1000}}
	run.Spec.Ladder.Warmup = &metav1.Duration{Duration: time.Minute}
	builtin := v1.Target{Name: "b", Image: "mariadb:11.8"}
	external := v1.Target{Name: "x", Engine: v1.EngineExternal}

	// No prepare (mysqlslap makes its own table) and no cleanup, even on an external server.
	var names []string
	for _, s := range TargetSteps(run, external) {
		names = append(names, s.Name)
	}
	if want := []string{StepProbe, StepWarmup, "s01", "s02", "s03"}; !slices.Equal(names, want) {
		t.Errorf("steps %q, want %q", names, want)
	}

	// The probe stays sysbench's, in the sysbench image; the ladder runs the server's image.
	probe, err := StepJob(run, builtin, ProbeStep(), Attempt{}, "r-b-credentials", "sysbench:1")
	if err != nil {
		t.Fatal(err)
	}
	if c := probe.Spec.Template.Spec.Containers[0]; c.Image != "sysbench:1" || !slices.Contains(c.Args, "probe") {
		t.Errorf("probe runs %s %q", c.Image, c.Args)
	}
	for _, s := range []Step{WarmupStep(run), LadderStepAt(run, 2)} {
		job, err := StepJob(run, builtin, s, Attempt{}, "r-b-credentials", "sysbench:1")
		if err != nil {
			t.Fatal(err)
		}
		c := job.Spec.Template.Spec.Containers[0]
		if c.Image != "mariadb:11.8" || !slices.Contains(c.Args, fmt.Sprintf("--concurrency=%d", s.Load.Threads)) {
			t.Errorf("%s runs %s %q", s.Name, c.Image, c.Args)
		}
	}

	// An external server's image is unknown: the target fails before anything starts.
	_, err = StepJob(run, external, LadderStepAt(run, 0), Attempt{}, "x-credentials", "sysbench:1")
	if err == nil || !strings.Contains(err.Error(), "set workload.mysqlslap.image") {
		t.Errorf("external without image: %v", err)
	}
	if err := CheckTargetData(run.Spec, external); err == nil || !strings.Contains(err.Error(), "workload.mysqlslap.image") {
		t.Errorf("CheckTargetData external without image: %v", err)
	}
	run.Spec.Workload.Mysqlslap.Image = "mysql:8.4"
	job, err := StepJob(run, external, LadderStepAt(run, 0), Attempt{}, "x-credentials", "sysbench:1")
	if err != nil || job.Spec.Template.Spec.Containers[0].Image != "mysql:8.4" {
		t.Errorf("external with image: %v", err)
	}
	if err := CheckTargetData(run.Spec, external); err != nil {
		t.Errorf("CheckTargetData external with image: %v", err)
	}
	run.Spec.Workload.Mysqlslap.Args = []string{"--concurrency=4"}
	if err := CheckTargetData(run.Spec, builtin); err == nil || !strings.Contains(err.Error(), "workload.mysqlslap.args[0]") {
		t.Errorf("CheckTargetData with an owned option: %v", err)
	}
}

func TestSysbenchImage(t *testing.T) {
	run := stepsRun()
	if got := SysbenchImage(run, "op:1"); got != "op:1" {
		t.Errorf("image %s, want the operator's", got)
	}
	run.Spec.SysbenchImage = "mine:2"
	if got := SysbenchImage(run, "op:1"); got != "mine:2" {
		t.Errorf("image %s, want the spec's", got)
	}
}

func TestCheckTargetData(t *testing.T) {
	run := stepsRun()
	run.Spec.Workload.TableSize = 10_000_000
	run.Spec.Storage = &v1.Storage{Size: resource.MustParse("1Gi")}
	if err := CheckTargetData(run.Spec, v1.Target{Name: "b"}); err == nil || !strings.Contains(err.Error(), "storage.size") {
		t.Errorf("builtin: %v", err)
	}
	if err := CheckTargetData(run.Spec, v1.Target{Name: "p", Engine: v1.EnginePerconaServer}); err == nil {
		t.Error("percona: no error")
	}
	if err := CheckTargetData(run.Spec, v1.Target{Name: "e", Engine: v1.EngineExternal}); err != nil {
		t.Errorf("external: %v", err)
	}
}

func TestReplacementDue(t *testing.T) {
	run := func(mode v1.ServerInstanceMode, reps int32, order v1.RunOrder) *v1.BenchmarkRun {
		r := &v1.BenchmarkRun{}
		r.Spec.Targets = []v1.Target{{Name: "a"}}
		r.Spec.Ladder.Threads = []int32{1, 2, 4}
		r.Spec.Repetitions = &reps
		r.Spec.ServerInstance = mode
		r.Spec.Order = order
		return r
	}
	per := run(v1.ServerInstancePerRepetition, 3, "")
	rep := func(n int32) *v1.ServerReplacement { return &v1.ServerReplacement{Repetition: n} }
	for _, c := range []struct {
		name    string
		run     *v1.BenchmarkRun
		i       int
		last    *v1.ServerReplacement
		wantRep int32
		want    bool
	}{
		{"first step: the first instance", per, 0, nil, 0, false},
		{"inside repetition 1", per, 2, nil, 0, false},
		{"first step of repetition 2", per, 3, nil, 2, true},
		{"repetition 2 made already", per, 3, rep(2), 2, false},
		{"later in repetition 2", per, 5, rep(2), 2, false},
		{"first step of repetition 3", per, 6, rep(2), 3, true},
		{"past the last step", per, 9, rep(3), 0, false},
		{"shared instance", run(v1.ServerInstanceShared, 3, ""), 3, nil, 0, false},
		{"unset is shared", run("", 3, ""), 3, nil, 0, false},
		{"one repetition", run(v1.ServerInstancePerRepetition, 1, ""), 3, nil, 0, false},
		// Interleaved steps are numbered round by round, as a sequential target's repetitions.
		{"interleaved: first step of round 2", run(v1.ServerInstancePerRepetition, 3, v1.OrderInterleaved), 3, nil, 2, true},
		{"interleaved: round 2 made already", run(v1.ServerInstancePerRepetition, 3, v1.OrderInterleaved), 4, rep(2), 2, false},
		{"interleaved, shared", run(v1.ServerInstanceShared, 3, v1.OrderInterleaved), 3, nil, 0, false},
	} {
		gotRep, got := ReplacementDue(c.run, c.i, c.last)
		if got != c.want || (got && gotRep != c.wantRep) {
			t.Errorf("%s: (%d, %v), want (%d, %v)", c.name, gotRep, got, c.wantRep, c.want)
		}
	}
}

// TestTargetLadderStepServerLock: which ladder steps hold the server lock that lets the next
// step's Job start while they measure, what their Jobs carry for it, and that the others are the
// plain ladder steps.
func TestTargetLadderStepServerLock(t *testing.T) {
	builtin := v1.Target{Name: "b", Image: "mariadb:11.8"}
	for _, tc := range []struct {
		name   string
		edit   func(*v1.BenchmarkRun)
		target v1.Target
		locked bool
	}{
		{"sequential, builtin, sysbench", nil, builtin, true},
		{"parallel: each target its own server", func(r *v1.BenchmarkRun) { r.Spec.Order = v1.OrderParallel }, builtin, true},
		{"a suite's sysbench workload", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{}
			r.Spec.Workloads = []v1.NamedWorkload{{Name: "ps", Script: "oltp_point_select", Tables: 4}, {Name: "ro", Script: "oltp_read_only", Tables: 4}}
		}, builtin, true},
		{"interleaved: the next step is another target's", func(r *v1.BenchmarkRun) { r.Spec.Order = v1.OrderInterleaved }, builtin, false},
		{"steps shorter than MinServerLockStep", func(r *v1.BenchmarkRun) {
			r.Spec.Ladder.StepDuration = &metav1.Duration{Duration: MinServerLockStep - time.Second}
		}, builtin, false},
		{"an external server: maybe behind a proxy, maybe Galera", nil, v1.Target{Name: "x", Engine: v1.EngineExternal}, false},
		{"Percona XtraDB Cluster: Galera refuses GET_LOCK", nil, v1.Target{Name: "p", Engine: v1.EnginePerconaXtraDBCluster}, false},
		{"Percona Server: behind its router", nil, v1.Target{Name: "p", Engine: v1.EnginePerconaServer}, false},
		{"mysqlslap takes no lock", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Queries: 1000}}
		}, builtin, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := stepsRun()
			run.UID = "5c1a0f3e-0000-4000-8000-000000000001"
			run.Spec.Ladder.StepDuration = &metav1.Duration{Duration: 20 * time.Second}
			if tc.edit != nil {
				tc.edit(run)
			}
			s := TargetLadderStep(run, tc.target, 1)
			plain := LadderStepAt(run, 1)
			if !tc.locked {
				if s != plain {
					t.Errorf("step %+v, want the plain ladder step %+v", s, plain)
				}
				return
			}
			if s.Load.ServerLock != ServerLockName(run, tc.target.Name) || len(s.Load.ServerLock) > 64 ||
				s.Load.ServerLockWait != s.Load.Duration+ServerLockSlack {
				t.Errorf("lock %q wait %s, want %q and %s", s.Load.ServerLock, s.Load.ServerLockWait,
					ServerLockName(run, tc.target.Name), s.Load.Duration+ServerLockSlack)
			}
			s.Load.ServerLock, s.Load.ServerLockWait = "", 0
			if s != plain {
				t.Errorf("beside the lock, step %+v differs from the plain ladder step %+v", s, plain)
			}
			job, err := StepJob(run, tc.target, TargetLadderStep(run, tc.target, 1), Attempt{}, "r-b-credentials", "img:1")
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			for _, e := range job.Spec.Template.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
			wait := int64((20*time.Second + ServerLockSlack) / time.Second)
			if env["MYSQLBENCH_SERVER_LOCK"] != ServerLockName(run, tc.target.Name) || env["MYSQLBENCH_SERVER_LOCK_WAIT"] != fmt.Sprint(wait) {
				t.Errorf("env lock %q wait %q", env["MYSQLBENCH_SERVER_LOCK"], env["MYSQLBENCH_SERVER_LOCK_WAIT"])
			}
			// The Job may wait for the step before it as long as its client does.
			if got, want := *job.Spec.ActiveDeadlineSeconds, int64((20*time.Second+DeadlineMargin)/time.Second)+wait; got != want {
				t.Errorf("deadline %d s, want %d (the step, the margin and the lock's wait)", got, want)
			}
		})
	}

	// One lock per run and target: another target's, another run's (a schedule's next night of
	// the same name) are not the same.
	a, b := stepsRun(), stepsRun()
	a.UID, b.UID = "uid-a", "uid-b"
	if ServerLockName(a, "x") == ServerLockName(a, "y") || ServerLockName(a, "x") == ServerLockName(b, "x") {
		t.Errorf("lock names collide: %s %s %s", ServerLockName(a, "x"), ServerLockName(a, "y"), ServerLockName(b, "x"))
	}
}
