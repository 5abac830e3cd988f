//go:build e2e

package e2e

// A real Prometheus scrapes the manager for the whole suite (E2E_PROMETHEUS names its binary:
// hack/e2e-local.sh takes Debian's prometheus package), the way a user's would: over HTTPS with
// a ServiceAccount token bound to the chart's metrics-reader ClusterRole. When the suite passed,
// every PromQL query of the chart's Grafana dashboard (panels and annotations, with the
// dashboard's variables filled from the label values Prometheus holds, as Grafana fills them)
// must return series over the time the suite ran: a query naming a metric or label the manager
// does not export, or one that no run fills, fails the suite.
//
// Prometheus runs on the host and reaches the manager through `kubectl port-forward`: the local
// cluster's pod network is routed between its nodes' network namespaces only, by design (the
// host's interfaces stay as they were), and no registry serves a Prometheus image here.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mysqlbench/mysqlbench-operator/test/clustertest"
)

const (
	dashboardFile  = "../../charts/mysqlbench-operator/files/grafana/mysqlbench-dashboard.json"
	scrapeInterval = 5 * time.Second
	promReader     = "mysqlbench-e2e-prometheus"
)

func TestMain(m *testing.M) {
	flag.Parse()
	var prom *prometheus
	if bin := os.Getenv("E2E_PROMETHEUS"); bin != "" {
		var err error
		if prom, err = startPrometheus(bin); err != nil {
			fmt.Fprintf(os.Stderr, "E2E_PROMETHEUS=%s: %v\n", bin, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	if prom != nil {
		// Only the whole suite runs every kind of run the dashboard shows (E2E_DASHBOARD_CHECK=1
		// checks after a selection of tests that does too; 0 never checks).
		run := flag.Lookup("test.run").Value.String()
		check := clustertest.Env("E2E_DASHBOARD_CHECK", map[bool]string{true: "1", false: "0"}[run == "" || run == "^Test"])
		if code == 0 && check == "1" {
			if err := prom.checkDashboard(); err != nil {
				fmt.Fprintf(os.Stderr, "--- FAIL: the Grafana dashboard against Prometheus\n%v\n", err)
				code = 1
			}
		}
		prom.stop()
	}
	os.Exit(code)
}

type prometheus struct {
	api      string // http://127.0.0.1:port
	dir      string
	started  time.Time
	procs    []*exec.Cmd
	cleanups []func()
}

// startPrometheus gives Prometheus a reader's token and a port-forward to every manager pod,
// starts it and waits until its first scrape of each succeeded.
func startPrometheus(bin string) (*prometheus, error) {
	ctx := context.Background()
	c, err := clustertest.Client("")
	if err != nil {
		return nil, err
	}
	p := &prometheus{started: time.Now()}
	ok := false
	defer func() {
		if !ok {
			p.stop()
		}
	}()
	if p.dir, err = os.MkdirTemp("", "e2e-prometheus-"); err != nil {
		return nil, err
	}
	opNS := clustertest.Env("E2E_OPERATOR_NAMESPACE", "mysqlbench-system")
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(opNS), client.MatchingLabels{
		"app.kubernetes.io/name": "mysqlbench-operator", "app.kubernetes.io/component": "manager"}); err != nil {
		return nil, err
	}
	var managers []corev1.Pod
	for _, pod := range pods.Items {
		if pod.Status.Phase == corev1.PodRunning && pod.DeletionTimestamp == nil {
			managers = append(managers, pod)
		}
	}
	if len(managers) == 0 {
		return nil, fmt.Errorf("no running manager pod in namespace %s (E2E_OPERATOR_NAMESPACE)", opNS)
	}
	port, secure := metricsPort(managers[0])
	if port == 0 {
		return nil, fmt.Errorf("manager pod %s has no container port named metrics", managers[0].Name)
	}

	scrape := map[string]any{"job_name": "mysqlbench-operator", "scheme": "http"}
	if secure {
		token, err := p.readerToken(ctx, c)
		if err != nil {
			return nil, err
		}
		tokenFile := filepath.Join(p.dir, "token")
		if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
			return nil, err
		}
		// The manager's certificate is self-signed; the token is still checked by the API server.
		scrape["scheme"] = "https"
		scrape["tls_config"] = map[string]any{"insecure_skip_verify": true}
		scrape["authorization"] = map[string]any{"credentials_file": tokenFile}
	}
	var targets []string
	for _, pod := range managers {
		local, err := p.portForward(opNS, pod.Name, port)
		if err != nil {
			return nil, err
		}
		targets = append(targets, local)
	}
	scrape["static_configs"] = []any{map[string]any{"targets": targets}}
	cfg, _ := json.Marshal(map[string]any{ // JSON is YAML
		"global":         map[string]any{"scrape_interval": scrapeInterval.String(), "scrape_timeout": "4s"},
		"scrape_configs": []any{scrape},
	})
	cfgFile := filepath.Join(p.dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		return nil, err
	}
	listen, err := freePort()
	if err != nil {
		return nil, err
	}
	p.api = "http://" + listen
	cmd := exec.Command(bin, "--config.file="+cfgFile, "--storage.tsdb.path="+filepath.Join(p.dir, "data"),
		"--web.listen-address="+listen, "--log.level=warn")
	logFile, err := os.Create(filepath.Join(p.dir, "prometheus.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.procs = append(p.procs, cmd)
	if err := p.waitScraped(time.Minute); err != nil {
		log, _ := os.ReadFile(logFile.Name())
		return nil, fmt.Errorf("%w\nprometheus log:\n%s", err, log)
	}
	fmt.Printf("prometheus %s scrapes the manager (%s) every %s through %v\n", p.api, map[bool]string{true: "HTTPS, a reader's token", false: "HTTP"}[secure], scrapeInterval, targets)
	ok = true
	return p, nil
}

// metricsPort is the manager container's metrics port and whether it serves HTTPS (the chart's
// metrics.secure passes --metrics-secure).
func metricsPort(pod corev1.Pod) (int32, bool) {
	for _, ctr := range pod.Spec.Containers {
		for _, p := range ctr.Ports {
			if p.Name == "metrics" || p.Name == "https" {
				secure := slices.ContainsFunc(ctr.Args, func(a string) bool {
					return a == "--metrics-secure" || a == "--metrics-secure=true"
				})
				return p.ContainerPort, secure
			}
		}
	}
	return 0, false
}

// readerToken creates a ServiceAccount bound to the chart's metrics-reader ClusterRole, as a
// user adds their Prometheus' to metrics.readers, and returns a token of it.
func (p *prometheus) readerToken(ctx context.Context, c client.Client) (string, error) {
	roles := &rbacv1.ClusterRoleList{}
	if err := c.List(ctx, roles, client.MatchingLabels{"app.kubernetes.io/name": "mysqlbench-operator"}); err != nil {
		return "", err
	}
	var reader string
	for _, r := range roles.Items {
		if strings.HasSuffix(r.Name, "-metrics-reader") {
			reader = r.Name
		}
	}
	if reader == "" {
		return "", errors.New("the manager serves metrics over HTTPS but the chart made no *-metrics-reader ClusterRole")
	}
	ns := clustertest.Env("E2E_NAMESPACE", "mysqlbench-e2e")
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: promReader, Namespace: ns}}
	if err := c.Create(ctx, sa); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: promReader},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: promReader, Namespace: ns}},
	}
	_ = c.Delete(ctx, binding)
	if err := c.Create(ctx, binding); err != nil {
		return "", err
	}
	p.cleanups = append(p.cleanups, func() {
		_ = c.Delete(context.Background(), binding)
		_ = c.Delete(context.Background(), sa)
	})
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](4 * 3600)}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", fmt.Errorf("token of ServiceAccount %s/%s: %w", ns, promReader, err)
	}
	return tr.Status.Token, nil
}

var forwarding = regexp.MustCompile(`Forwarding from (127\.0\.0\.1:\d+)`)

// portForward runs kubectl port-forward to the pod's port and returns the local address.
func (p *prometheus) portForward(ns, pod string, port int32) (string, error) {
	cmd := exec.Command(clustertest.Env("KUBECTL", "kubectl"), "port-forward", "--address", "127.0.0.1",
		"-n", ns, "pod/"+pod, fmt.Sprintf(":%d", port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", err
	}
	p.procs = append(p.procs, cmd)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := forwarding.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case addr := <-found:
		return addr, nil
	case <-time.After(30 * time.Second):
		return "", fmt.Errorf("kubectl port-forward to %s/%s:%d said nothing in 30s", ns, pod, port)
	}
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

func (p *prometheus) stop() {
	for _, cmd := range slices.Backward(p.procs) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	for _, f := range p.cleanups {
		f()
	}
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
}

// get calls Prometheus' HTTP API and decodes its data.
func (p *prometheus) get(path string, params url.Values, data any) error {
	resp, err := http.Get(p.api + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status, Error string
		Data          json.RawMessage
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("%s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	if r.Status != "success" {
		return fmt.Errorf("%s: %s", path, r.Error)
	}
	return json.Unmarshal(r.Data, data)
}

// waitScraped waits until every target's last scrape succeeded.
func (p *prometheus) waitScraped(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		var t struct {
			ActiveTargets []struct {
				ScrapeURL, Health, LastError string
			}
		}
		if err := p.get("/api/v1/targets", nil, &t); err != nil {
			last = err.Error()
		} else {
			up := len(t.ActiveTargets) > 0
			for _, tg := range t.ActiveTargets {
				if tg.Health != "up" {
					up = false
					last = fmt.Sprintf("%s: %s %s", tg.ScrapeURL, tg.Health, tg.LastError)
				}
			}
			if up {
				return nil
			}
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("the manager was not scraped within %s: %s", timeout, last)
}

// The dashboard as Grafana reads it: its variables and every PromQL expression in it.
type dashboardVariable struct {
	Name       string
	Type       string
	Multi      bool
	IncludeAll bool
	AllValue   string
	Query      json.RawMessage
}

type dashboardQuery struct {
	where, expr string
}

func loadDashboard() ([]dashboardVariable, []dashboardQuery, error) {
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		return nil, nil, err
	}
	var d struct {
		Templating struct{ List []dashboardVariable }
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, nil, err
	}
	var raw any
	_ = json.Unmarshal(data, &raw)
	var queries []dashboardQuery
	var walk func(v any, where string)
	walk = func(v any, where string) {
		switch v := v.(type) {
		case map[string]any:
			if t, ok := v["title"].(string); ok {
				where = t
			} else if n, ok := v["name"].(string); ok {
				where = n
			}
			if expr, ok := v["expr"].(string); ok && expr != "" {
				ref, _ := v["refId"].(string)
				queries = append(queries, dashboardQuery{where: strings.TrimSpace(where + " " + ref), expr: expr})
			}
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if k != "templating" {
					walk(v[k], where)
				}
			}
		case []any:
			for _, e := range v {
				walk(e, where)
			}
		}
	}
	walk(raw, "")
	return d.Templating.List, queries, nil
}

var (
	labelValuesQuery = regexp.MustCompile(`^\s*label_values\((?:(.+),\s*)?(\w+)\s*\)\s*$`)
	grafanaVariable  = regexp.MustCompile(`\$\{(\w+)(?::(\w+))?\}|\$(\w+)|\[\[(\w+)\]\]`)
)

// interpolate fills a query's variables as Grafana does for Prometheus: a multi-value one as a
// regex alternation of its values, the built-in intervals from the range asked for.
func interpolate(expr string, values map[string][]string, rng, step time.Duration) string {
	return grafanaVariable.ReplaceAllStringFunc(expr, func(m string) string {
		s := grafanaVariable.FindStringSubmatch(m)
		name := s[1] + s[3] + s[4]
		switch name {
		case "__range":
			return fmt.Sprintf("%ds", int(rng.Seconds()))
		case "__interval":
			return fmt.Sprintf("%ds", int(step.Seconds()))
		case "__rate_interval":
			return fmt.Sprintf("%ds", int(max(4*scrapeInterval, step+scrapeInterval).Seconds()))
		}
		v, ok := values[name]
		if !ok {
			return m
		}
		if len(v) == 1 {
			return v[0]
		}
		quoted := make([]string, len(v))
		for i, x := range v {
			quoted[i] = regexp.QuoteMeta(x)
		}
		return "(" + strings.Join(quoted, "|") + ")"
	})
}

// checkDashboard fills the dashboard's variables from Prometheus and runs every query over the
// suite's time range, once per value of each single-value variable (as a user picks one) and
// with All picked for the others (the variable's all value, or every value): each query must
// return series for at least one pick, and every variable must list values.
func (p *prometheus) checkDashboard() error {
	time.Sleep(2 * scrapeInterval) // the newest values scraped
	variables, queries, err := loadDashboard()
	if err != nil {
		return err
	}
	start, end := p.started, time.Now()
	rng := end.Sub(start).Round(time.Second)
	step := 15 * time.Second
	window := url.Values{"start": {strconv.FormatInt(start.Unix(), 10)}, "end": {strconv.FormatInt(end.Unix(), 10)}}

	// picks are the variables' assignments, built variable by variable as Grafana resolves them
	// (a later variable's query may name an earlier one).
	picks := []map[string][]string{{}}
	var errs []error
	for _, v := range variables {
		if v.Type != "query" {
			continue
		}
		var q string
		if json.Unmarshal(v.Query, &q) != nil {
			var obj struct{ Query string }
			_ = json.Unmarshal(v.Query, &obj)
			q = obj.Query
		}
		m := labelValuesQuery.FindStringSubmatch(q)
		if m == nil {
			errs = append(errs, fmt.Errorf("variable %s: query %q is not label_values(...)", v.Name, q))
			continue
		}
		var next []map[string][]string
		var seen int
		for _, pick := range picks {
			params := maps.Clone(window)
			if m[1] != "" {
				params.Set("match[]", interpolate(m[1], pick, rng, step))
			}
			var vals []string
			if err := p.get("/api/v1/label/"+m[2]+"/values", params, &vals); err != nil {
				errs = append(errs, fmt.Errorf("variable %s: %w", v.Name, err))
				continue
			}
			seen += len(vals)
			switch {
			case v.IncludeAll && v.AllValue != "":
				// What Grafana sends with All picked (its default), values or none.
				next = append(next, with(pick, v.Name, []string{v.AllValue}))
			case len(vals) == 0:
			case v.Multi || v.IncludeAll:
				next = append(next, with(pick, v.Name, vals))
			default:
				for _, val := range vals {
					next = append(next, with(pick, v.Name, []string{val}))
				}
			}
		}
		if seen == 0 {
			errs = append(errs, fmt.Errorf("variable %s (%s) has no values: its picker would be empty", v.Name, q))
		}
		if len(next) > 0 {
			picks = next
		}
	}
	fmt.Printf("dashboard: %d queries, %d picks of the variables, over %s of the suite\n", len(queries), len(picks), rng)
	for _, q := range queries {
		var series, hits int
		var qerr error
		for _, pick := range picks {
			params := maps.Clone(window)
			params.Set("query", interpolate(q.expr, pick, rng, step))
			params.Set("step", strconv.Itoa(int(step.Seconds())))
			var res struct{ Result []json.RawMessage }
			if err := p.get("/api/v1/query_range", params, &res); err != nil {
				qerr = err
				break
			}
			if len(res.Result) > 0 {
				hits++
				series += len(res.Result)
			}
		}
		switch {
		case qerr != nil:
			errs = append(errs, fmt.Errorf("%s: %w\n  %s", q.where, qerr, q.expr))
		case hits == 0:
			errs = append(errs, fmt.Errorf("%s: no series for any pick of the variables\n  %s", q.where, q.expr))
		default:
			fmt.Printf("  %-60s %4d series (%d of %d picks)\n", q.where, series, hits, len(picks))
		}
	}
	return errors.Join(errs...)
}

func with(pick map[string][]string, name string, vals []string) map[string][]string {
	out := maps.Clone(pick)
	out[name] = vals
	return out
}
