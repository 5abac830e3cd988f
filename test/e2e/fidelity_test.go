//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/stats"
)

// plainQPS reads the "queries: N (X per sec.)" line of plain sysbench's text summary.
var plainQPS = regexp.MustCompile(`(?m)^\s+queries:\s+\d+\s+\((\d+(?:\.\d+)?) per sec\.\)`)

// BenchmarkFidelity measures what the operator does to a benchmark's numbers: the QPS of one
// ladder step run through a BenchmarkRun, against the QPS of the same sysbench command run by
// hand (plain sysbench, no reporter, a bare Pod) on the client node, against the same server (one
// the benchmark starts on the database node and reaches as an external target, so both sides see
// the same data and buffer pool). The sides are interleaved A B B A ... so drift hits both.
//
//	make bench-fidelity   # E2E_FIDELITY_ROUNDS (6), E2E_FIDELITY_MAX_ROUNDS (60),
//	                      # E2E_FIDELITY_PRECISION (0.02), E2E_FIDELITY_THREADS (8), E2E_STEP (10s)
//
// It reports the ratio operator QPS / hand QPS as the geometric mean of the per-round ratios
// (each round measures the two sides back to back) with its 95 % t interval, and adds rounds after
// the first E2E_FIDELITY_ROUNDS until that interval is within ±E2E_FIDELITY_PRECISION of the
// ratio or E2E_FIDELITY_MAX_ROUNDS ran.
func BenchmarkFidelity(b *testing.B) {
	fs := fidelitySetup(b, "fidelity", env("E2E_FIDELITY_IMAGE", "mariadb:10.11"), "8")
	c, cs, ns, secret := fs.c, fs.cs, fs.ns, fs.secret
	rounds, maxRounds, precision, threads, step := fs.rounds, fs.maxRounds, fs.precision, fs.threads, fs.step
	sysbenchImage := env("E2E_SYSBENCH_IMAGE", "ghcr.io/mysqlbench/sysbench:1.0.20")

	workload := v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 100000}
	sysbenchArgs := func(command string, threads int, seconds int) []string {
		return handSysbench(workload.Script, workload.Tables, workload.TableSize, command, threads, seconds)
	}
	// Prepare once, then a discarded warm-up so the buffer pool is warm for every measured round.
	handRun(b, c, cs, ns, "fidelity-prepare", sysbenchImage, secret.Name, sysbenchArgs("prepare", 0, 0))
	handRun(b, c, cs, ns, "fidelity-warmup", sysbenchImage, secret.Name, sysbenchArgs("run", threads, int(step.Seconds())))

	f := fidelityRounds(b, rounds, maxRounds, precision, "QPS",
		func(i int) float64 {
			return operatorRun(b, c, ns, i, secret.Name, workload, int32(threads), step, sysbenchImage).QPS.Total
		},
		func(i int) float64 {
			out := handRun(b, c, cs, ns, fmt.Sprintf("fidelity-hand-%d", i), sysbenchImage, secret.Name,
				sysbenchArgs("run", threads, int(step.Seconds())))
			m := plainQPS.FindStringSubmatch(out)
			if m == nil {
				b.Fatalf("hand run %d printed no queries line:\n%s", i, out)
			}
			hand, _ := strconv.ParseFloat(m[1], 64)
			return hand
		})
	f.report(b, fmt.Sprintf("%d threads, %s steps, %s", threads, step, workload.Script), "QPS", "qps", "")
}

// handSysbench is plain sysbench's command line for a by-hand run of a stock script against the
// server the pod's HOST, PORT, USER, PASSWORD and DATABASE name (handRun sets them from the
// connection Secret): the options the operator's Jobs pass, without its reporter. prepare loads
// with one thread per table.
func handSysbench(script v1.OLTPScript, tables int32, tableSize int64, command string, threads, seconds int) []string {
	args := []string{"sysbench", string(script), "--db-driver=mysql",
		"--mysql-host=$(HOST)", "--mysql-port=$(PORT)", "--mysql-user=$(USER)", "--mysql-password=$(PASSWORD)",
		"--mysql-db=$(DATABASE)", fmt.Sprintf("--tables=%d", tables), fmt.Sprintf("--table-size=%d", tableSize)}
	if command == "run" {
		args = append(args, fmt.Sprintf("--threads=%d", threads), fmt.Sprintf("--time=%d", seconds),
			"--events=0", "--report-interval=1", "--percentile=95")
	} else {
		args = append(args, fmt.Sprintf("--threads=%d", tables))
	}
	return append(args, command)
}

// fidelityBench is a fidelity benchmark's settings (E2E_FIDELITY_ROUNDS, _MAX_ROUNDS,
// _PRECISION, _THREADS, E2E_STEP) and its server: one started on the database node in a
// namespace of its own, behind the connection Secret secret.
type fidelityBench struct {
	c                 client.Client
	cs                kubernetes.Interface
	ns                string
	secret            *corev1.Secret
	rounds, maxRounds int
	precision         float64
	threads           int
	step              time.Duration
}

func fidelitySetup(b *testing.B, name, serverImage, defaultThreads string) fidelityBench {
	ctx := context.Background()
	f := fidelityBench{c: newClient(b)}
	cfg, err := config.GetConfig()
	if err != nil {
		b.Fatal(err)
	}
	f.cs = kubernetes.NewForConfigOrDie(cfg)
	f.ns = env("E2E_NAMESPACE", "mysqlbench-e2e") + "-" + name
	f.rounds, err = strconv.Atoi(env("E2E_FIDELITY_ROUNDS", "6"))
	if err != nil || f.rounds < 1 {
		b.Fatalf("E2E_FIDELITY_ROUNDS=%q: want a positive integer", env("E2E_FIDELITY_ROUNDS", ""))
	}
	f.maxRounds, err = strconv.Atoi(env("E2E_FIDELITY_MAX_ROUNDS", "60"))
	if err != nil || f.maxRounds < f.rounds {
		b.Fatalf("E2E_FIDELITY_MAX_ROUNDS=%q: want an integer of at least E2E_FIDELITY_ROUNDS (%d)", env("E2E_FIDELITY_MAX_ROUNDS", ""), f.rounds)
	}
	f.precision, err = strconv.ParseFloat(env("E2E_FIDELITY_PRECISION", "0.02"), 64)
	if err != nil || f.precision <= 0 {
		b.Fatalf("E2E_FIDELITY_PRECISION=%q: want a positive fraction such as 0.02", env("E2E_FIDELITY_PRECISION", ""))
	}
	f.threads, err = strconv.Atoi(env("E2E_FIDELITY_THREADS", defaultThreads))
	if err != nil || f.threads < 1 {
		b.Fatalf("E2E_FIDELITY_THREADS=%q: want a positive integer", env("E2E_FIDELITY_THREADS", ""))
	}
	f.step, err = time.ParseDuration(env("E2E_STEP", "10s"))
	if err != nil {
		b.Fatal(err)
	}
	if err := f.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = f.c.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}})
	})
	const password = "fidelity-pass"
	f.secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "fidelity-server", Namespace: f.ns,
			Labels: map[string]string{v1.LabelAllowBenchmark: v1.AllowBenchmark}},
		StringData: map[string]string{"host": "fidelity-server." + f.ns + ".svc", "port": "3306",
			"user": "sbtest", "password": password, "database": "sbtest", "root-password": password},
	}
	create(b, f.c, f.secret)
	startServer(b, f.c, f.ns, serverImage, f.secret.Name)
	return f
}

// fidelity is what fidelityRounds measured.
type fidelity struct {
	operator, hand, ratios []float64
	ratio, low, high       float64
	precision              float64
}

// fidelityRounds measures the two sides in rounds, interleaved A B B A ... so drift hits both,
// and adds rounds after the first rounds until the 95 % interval of the geometric-mean ratio
// operator / hand is within ±precision or maxRounds ran. Stopping on the interval's width, never
// on the ratio itself, keeps the interval honest.
func fidelityRounds(b *testing.B, rounds, maxRounds int, precision float64, unit string,
	operator, hand func(round int) float64) fidelity {
	f := fidelity{precision: precision}
	for i := 0; i < maxRounds; i++ {
		var op, h float64
		if i%2 == 0 {
			op = operator(i)
			h = hand(i)
		} else {
			h = hand(i)
			op = operator(i)
		}
		f.operator, f.hand, f.ratios = append(f.operator, op), append(f.hand, h), append(f.ratios, op/h)
		f.ratio, f.low, f.high = ratioInterval(f.ratios)
		b.Logf("round %d: operator %.0f %s, by hand %.0f %s, ratio %.3f; so far %.4f [%.4f, %.4f]",
			i+1, op, unit, h, unit, op/h, f.ratio, f.low, f.high)
		if i+1 >= rounds && f.high-f.ratio <= precision*f.ratio && f.ratio-f.low <= precision*f.ratio {
			break
		}
	}
	return f
}

// report logs and reports the ratio with its interval; what says what was measured, and of
// names the measured thing in the metrics' names where a benchmark reports several ("" for one).
func (f fidelity) report(b *testing.B, what, unit, metric, of string) {
	mo, mh := mean(f.operator), mean(f.hand)
	rsd := stddev(f.ratios)
	b.Logf("%d rounds, %s: operator %.0f %s, by hand %.0f %s; ratio %.4f, 95 %% interval "+
		"[%.4f, %.4f] (±%.2f %%); per-round ratio sd %.3f (min %.3f, max %.3f)", len(f.ratios), what,
		mo, unit, mh, unit, f.ratio, f.low, f.high, 100*max(f.high-f.ratio, f.ratio-f.low)/f.ratio, rsd, minOf(f.ratios), maxOf(f.ratios))
	if f.high-f.ratio > f.precision*f.ratio || f.ratio-f.low > f.precision*f.ratio {
		b.Logf("the interval is wider than ±%.1f %% after %d rounds (the maximum): the cluster is too noisy for that precision",
			100*f.precision, len(f.ratios))
	}
	b.ReportMetric(f.ratio, "ratio"+of)
	b.ReportMetric(f.low, "ratio-low95"+of)
	b.ReportMetric(f.high, "ratio-high95"+of)
	b.ReportMetric(float64(len(f.ratios)), "rounds"+of)
	b.ReportMetric(rsd, "ratio-sd"+of)
	b.ReportMetric(mo, "operator-"+metric)
	b.ReportMetric(mh, "hand-"+metric)
}

func create(t testing.TB, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// startServer runs one MariaDB/MySQL server on the database node behind the Service the
// connection Secret names, and waits until it answers over TCP (the images' init server does not
// listen on TCP, so a TCP ping passes only for the real server).
func startServer(t testing.TB, c client.Client, ns, image, secret string) {
	t.Helper()
	labels := map[string]string{"app": "fidelity-server"}
	fromSecret := func(name, key string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key}}}
	}
	create(t, c, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "fidelity-server", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: labels, ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{Name: "mysql", Port: 3306}}},
	})
	create(t, c, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "fidelity-server", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{specs.PoolLabel: specs.PoolDatabase},
					Tolerations: []corev1.Toleration{{Key: specs.DedicatedTaint, Operator: corev1.TolerationOpEqual,
						Value: specs.PoolDatabase, Effect: corev1.TaintEffectNoSchedule}},
					Containers: []corev1.Container{{
						Name: "mysql", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
						Env: []corev1.EnvVar{fromSecret("MYSQL_ROOT_PASSWORD", "root-password"), fromSecret("MYSQL_DATABASE", "database"),
							fromSecret("MYSQL_USER", "user"), fromSecret("MYSQL_PASSWORD", "password")},
						Ports: []corev1.ContainerPort{{ContainerPort: 3306}},
						ReadinessProbe: &corev1.Probe{
							ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c",
								`admin=$(command -v mariadb-admin || command -v mysqladmin); MYSQL_PWD="$MYSQL_ROOT_PASSWORD" exec "$admin" -uroot -h127.0.0.1 ping`}}},
							PeriodSeconds: 2, TimeoutSeconds: 5,
						},
					}},
				},
			},
		},
	})
	deadline := time.Now().Add(5 * time.Minute)
	for {
		d := &appsv1.Deployment{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "fidelity-server"}, d); err != nil {
			t.Fatal(err)
		}
		if d.Status.ReadyReplicas == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("fidelity server not ready after 5m: %+v", d.Status)
		}
		time.Sleep(2 * time.Second)
	}
}

// handRun runs a command the way an engineer would: a bare Pod on the client node with the
// connection in its env; it returns the Pod's log and fails unless the Pod succeeded.
func handRun(t testing.TB, c client.Client, cs kubernetes.Interface, ns, name, image, secret string, args []string) string {
	t.Helper()
	var env []corev1.EnvVar
	for _, kv := range [][2]string{{"HOST", "host"}, {"PORT", "port"}, {"USER", "user"}, {"PASSWORD", "password"}, {"DATABASE", "database"}} {
		env = append(env, corev1.EnvVar{Name: kv[0], ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: kv[1]}}})
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			NodeSelector:  map[string]string{specs.PoolLabel: specs.PoolClient},
			Tolerations: []corev1.Toleration{{Key: specs.DedicatedTaint, Operator: corev1.TolerationOpEqual,
				Value: specs.PoolClient, Effect: corev1.TaintEffectNoSchedule}},
			Containers: []corev1.Container{{Name: "sysbench", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: args[:1], Args: args[1:], Env: env}},
		},
	}
	create(t, c, pod)
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), pod); err != nil {
			t.Fatal(err)
		}
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s not finished after 10m: %+v", name, pod.Status)
		}
		time.Sleep(time.Second)
	}
	raw, err := cs.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("logs of %s: %v", name, err)
	}
	if pod.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("pod %s failed:\n%s", name, raw)
	}
	if err := c.Delete(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// operatorRun runs the same step as a one-rung BenchmarkRun against the server as an external
// target and returns the step's result in its status.
func operatorRun(t testing.TB, c client.Client, ns string, round int, secret string, w v1.Workload,
	threads int32, step time.Duration, sysbenchImage string) v1.StepResult {
	t.Helper()
	w.SkipPrepare = true
	run := &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fidelity-%d", round), Namespace: ns},
		Spec: v1.BenchmarkRunSpec{
			Targets: []v1.Target{{Name: "server", Engine: v1.EngineExternal,
				SecretRef: &v1.LocalObjectReference{Name: secret}}},
			Workload:       w,
			Ladder:         v1.Ladder{Threads: []int32{threads}, StepDuration: &metav1.Duration{Duration: step}},
			SysbenchImage:  sysbenchImage,
			StepRetryLimit: ptr.To[int32](0),
		},
	}
	create(t, c, run)
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(run), run); err != nil {
			t.Fatal(err)
		}
		if run.Status.Phase == v1.RunSucceeded {
			break
		}
		if run.Status.Phase == v1.RunFailed || time.Now().After(deadline) {
			t.Fatalf("run %s: %s: %+v", run.Name, run.Status.Phase, run.Status)
		}
		time.Sleep(time.Second)
	}
	result := run.Status.Targets[0].Steps[0]
	if err := c.Delete(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	return result
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func stddev(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m, s := mean(xs), 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return math.Sqrt(s / float64(len(xs)-1))
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}

// ratioInterval is the geometric mean of per-round ratios and its 95 % t interval (on the logs:
// a ratio's noise is multiplicative).
func ratioInterval(ratios []float64) (ratio, low, high float64) {
	logs := make([]float64, len(ratios))
	for i, r := range ratios {
		logs[i] = math.Log(r)
	}
	m := mean(logs)
	if len(logs) < 2 {
		return math.Exp(m), 0, math.Inf(1)
	}
	h := stats.TQuantile(float64(len(logs)-1), 0.975) * stddev(logs) / math.Sqrt(float64(len(logs)))
	return math.Exp(m), math.Exp(m - h), math.Exp(m + h)
}
