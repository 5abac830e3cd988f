package helm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestManagerDeploymentIsHardened(t *testing.T) {
	cases := []struct {
		name     string
		render   func(*testing.T) []*unstructured.Unstructured
		image    string
		replicas int32
		args     []string // must all be present
		noArgs   []string // flag prefixes that must be absent
		metrics  int32    // the container port named metrics
	}{{
		name:     "helm defaults",
		render:   func(t *testing.T) []*unstructured.Unstructured { return helmTemplate(t) },
		image:    "ghcr.io/mysqlbench/mysqlbench-operator:" + chartAppVersion(t),
		replicas: 1,
		args: []string{"--leader-elect", "--leader-election-namespace=mysqlbench-system",
			"--sysbench-image=ghcr.io/mysqlbench/sysbench:1.0.20", "--metrics-bind-address=:8443", "--metrics-secure",
			"--health-probe-bind-address=:8081"},
		noArgs:  []string{"--watch-namespaces", "--server-ready-timeout", "--results-outbox-timeout"},
		metrics: 8443,
	}, {
		name: "helm with plain HTTP metrics",
		render: func(t *testing.T) []*unstructured.Unstructured {
			return helmTemplate(t, "--set", "metrics.secure=false", "--set", "metrics.port=8080")
		},
		image:    "ghcr.io/mysqlbench/mysqlbench-operator:" + chartAppVersion(t),
		replicas: 1,
		args:     []string{"--metrics-bind-address=:8080"},
		noArgs:   []string{"--metrics-secure"},
		metrics:  8080,
	}, {
		name: "helm with values",
		render: func(t *testing.T) []*unstructured.Unstructured {
			return helmTemplate(t, "--set", "watchNamespaces={team-a,team-b}", "--set", "replicas=2",
				"--set", "sysbenchImage=registry.example/sysbench:1.0.20-1", "--set", "image.repository=registry.example/op",
				"--set", "image.tag=v9", "--set", "serverReadyTimeout=20m", "--set", "logVerbosity=2",
				"--set", "resultsDatabase.outboxTimeout=48h")
		},
		image:    "registry.example/op:v9",
		replicas: 2,
		args: []string{"--leader-elect", "--watch-namespaces=team-a,team-b",
			"--sysbench-image=registry.example/sysbench:1.0.20-1", "--server-ready-timeout=20m", "-v=2",
			"--results-outbox-timeout=48h"},
		metrics: 8443,
	}, {
		name:     "kustomize",
		render:   kustomizeBuild,
		image:    testImg,
		replicas: 1,
		args: []string{"--leader-elect", "--sysbench-image=ghcr.io/mysqlbench/sysbench:1.0.20",
			"--metrics-bind-address=:8443", "--metrics-secure", "--health-probe-bind-address=:8081"},
		noArgs:  []string{"--watch-namespaces"},
		metrics: 8443,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := tc.render(t)
			d := only[appsv1.Deployment](t, objs, "Deployment")
			sa := only[corev1.ServiceAccount](t, objs, "ServiceAccount")
			if d.Spec.Replicas == nil || *d.Spec.Replicas != tc.replicas {
				t.Errorf("replicas %v, want %d", d.Spec.Replicas, tc.replicas)
			}
			pod := d.Spec.Template.Spec
			if pod.ServiceAccountName != sa.Name || d.Namespace != sa.Namespace {
				t.Errorf("runs as %s/%s, want the rendered ServiceAccount %s/%s", d.Namespace, pod.ServiceAccountName, sa.Namespace, sa.Name)
			}
			psc := pod.SecurityContext
			if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot ||
				psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod securityContext %+v: want runAsNonRoot and seccomp RuntimeDefault", psc)
			}
			if len(pod.Containers) != 1 {
				t.Fatalf("%d containers, want the manager alone", len(pod.Containers))
			}
			c := pod.Containers[0]
			if c.Image != tc.image {
				t.Errorf("image %q, want %q", c.Image, tc.image)
			}
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
				sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
				sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("container securityContext %+v: want no privilege escalation, read-only root, all capabilities dropped", sc)
			}
			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if _, ok := c.Resources.Requests[r]; !ok {
					t.Errorf("no %s request", r)
				}
				if _, ok := c.Resources.Limits[r]; !ok {
					t.Errorf("no %s limit", r)
				}
			}
			ports := map[string]int32{}
			for _, p := range c.Ports {
				ports[p.Name] = p.ContainerPort
			}
			if ports["metrics"] != tc.metrics {
				t.Errorf("container ports %v: want metrics on %d", ports, tc.metrics)
			}
			checkProbe(t, "liveness", c.LivenessProbe, "/healthz", ports)
			checkProbe(t, "readiness", c.ReadinessProbe, "/readyz", ports)
			for _, a := range tc.args {
				if !slices.Contains(c.Args, a) {
					t.Errorf("args %q lack %q", c.Args, a)
				}
			}
			for _, prefix := range tc.noArgs {
				for _, a := range c.Args {
					if strings.HasPrefix(a, prefix) {
						t.Errorf("args %q: unexpected %q", c.Args, a)
					}
				}
			}
		})
	}
}

func checkProbe(t *testing.T, which string, p *corev1.Probe, path string, ports map[string]int32) {
	t.Helper()
	if p == nil || p.HTTPGet == nil {
		t.Errorf("no HTTP %s probe", which)
		return
	}
	port := p.HTTPGet.Port.IntVal
	if p.HTTPGet.Port.StrVal != "" {
		port = ports[p.HTTPGet.Port.StrVal]
	}
	if p.HTTPGet.Path != path || port != 8081 {
		t.Errorf("%s probe on %s port %d, want %s on 8081", which, p.HTTPGet.Path, port, path)
	}
}

func chartAppVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil || chart.AppVersion == "" {
		t.Fatalf("Chart.yaml appVersion: %q, %v", chart.AppVersion, err)
	}
	return chart.AppVersion
}

func TestServiceMonitorScrapesManager(t *testing.T) {
	objs := helmTemplate(t, "--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.labels.release=prom")
	svc := only[corev1.Service](t, objs, "Service")
	d := only[appsv1.Deployment](t, objs, "Deployment")
	sms := ofKind[unstructured.Unstructured](t, objs, "ServiceMonitor")
	if len(sms) != 1 {
		t.Fatalf("rendered %d ServiceMonitors, want 1", len(sms))
	}
	sm := sms[0]
	if sm.GetAPIVersion() != "monitoring.coreos.com/v1" || sm.GetLabels()["release"] != "prom" {
		t.Errorf("ServiceMonitor %s with labels %v, want monitoring.coreos.com/v1 labelled release=prom", sm.GetAPIVersion(), sm.GetLabels())
	}
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if len(selector) == 0 || !subset(selector, svc.Labels) {
		t.Errorf("ServiceMonitor selects %v, which does not match the metrics Service's labels %v", selector, svc.Labels)
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(endpoints) != 1 || endpoints[0].(map[string]any)["port"] != "metrics" {
		t.Errorf("ServiceMonitor endpoints %v, want the port named metrics", endpoints)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort.StrVal != "metrics" {
		t.Errorf("metrics Service ports %+v, want one named metrics targeting the container port metrics", svc.Spec.Ports)
	}
	if len(svc.Spec.Selector) == 0 || !subset(svc.Spec.Selector, d.Spec.Template.Labels) {
		t.Errorf("metrics Service selects %v, not the manager pods labelled %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	// Secure metrics (the default): HTTPS with the scraper's ServiceAccount token; the manager's
	// certificate is self-signed. honorLabels: the metrics' own namespace label (the run's) stays
	// namespace, which the Grafana dashboard filters on.
	want := map[string]any{"port": "metrics", "path": "/metrics", "scheme": "https", "interval": "30s", "scrapeTimeout": "10s",
		"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token", "tlsConfig": map[string]any{"insecureSkipVerify": true},
		"honorLabels": true}
	if len(endpoints) == 1 && !reflect.DeepEqual(endpoints[0], want) {
		t.Errorf("ServiceMonitor endpoint %v, want %v", endpoints[0], want)
	}
	plain := ofKind[unstructured.Unstructured](t, helmTemplate(t, "--set", "serviceMonitor.enabled=true",
		"--set", "metrics.secure=false", "--set", "metrics.port=8080"), "ServiceMonitor")
	endpoints, _, _ = unstructured.NestedSlice(plain[0].Object, "spec", "endpoints")
	if e := endpoints[0].(map[string]any); e["scheme"] != "http" || e["bearerTokenFile"] != nil || e["tlsConfig"] != nil {
		t.Errorf("ServiceMonitor endpoint %v with metrics.secure=false, want plain http", e)
	}
}

const (
	dashboardKey        = "mysqlbench-dashboard.json"
	historyDashboardKey = "mysqlbench-history-dashboard.json"
)

// dashboards returns the rendered ConfigMaps that hold the Grafana dashboard or carry the
// sidecar's default label.
func dashboards(t *testing.T, objs []*unstructured.Unstructured) []*corev1.ConfigMap {
	t.Helper()
	var out []*corev1.ConfigMap
	for _, cm := range ofKind[corev1.ConfigMap](t, objs, "ConfigMap") {
		if _, ok := cm.Data[dashboardKey]; ok || cm.Labels["grafana_dashboard"] != "" {
			out = append(out, cm)
		}
	}
	return out
}

// The Grafana dashboard is opt-in: a ConfigMap for Grafana's dashboard sidecar holding the
// chart's files/grafana/mysqlbench-dashboard.json (internal/metrics checks its queries against
// the exported metrics).
func TestGrafanaDashboard(t *testing.T) {
	file, err := os.ReadFile(filepath.Join(repoRoot(t), chartDir, "files", "grafana", dashboardKey))
	if err != nil {
		t.Fatal(err)
	}
	var want any
	if err := json.Unmarshal(file, &want); err != nil {
		t.Fatalf("%s: %v", dashboardKey, err)
	}
	t.Run("disabled by default", func(t *testing.T) {
		if cms := dashboards(t, helmTemplate(t)); len(cms) != 0 {
			t.Errorf("rendered dashboard ConfigMap %s/%s although grafana.dashboard.enabled is false", cms[0].Namespace, cms[0].Name)
		}
	})
	t.Run("enabled", func(t *testing.T) {
		cms := dashboards(t, helmTemplate(t, "--set", "grafana.dashboard.enabled=true"))
		if len(cms) != 1 {
			t.Fatalf("rendered %d dashboard ConfigMaps, want 1", len(cms))
		}
		cm := cms[0]
		if cm.Namespace != "mysqlbench-system" || cm.Labels["grafana_dashboard"] != "1" || len(cm.Annotations) != 0 {
			t.Errorf("ConfigMap %s/%s labels %v annotations %v: want the release namespace, grafana_dashboard=1 and no annotations",
				cm.Namespace, cm.Name, cm.Labels, cm.Annotations)
		}
		var got any
		if err := json.Unmarshal([]byte(cm.Data[dashboardKey]), &got); err != nil {
			t.Fatalf("%s in the ConfigMap is not JSON: %v", dashboardKey, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s in the ConfigMap differs from the chart's file", dashboardKey)
		}
		if cm.Data[dashboardKey] != strings.TrimRight(string(file), "\n") {
			t.Errorf("%s in the ConfigMap is not the file verbatim", dashboardKey)
		}
		// The history dashboard (internal/resultsdb runs its SQL) is the second key, on by default.
		history, err := os.ReadFile(filepath.Join(repoRoot(t), chartDir, "files", "grafana", historyDashboardKey))
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data[historyDashboardKey] != strings.TrimRight(string(history), "\n") {
			t.Errorf("%s in the ConfigMap is not the file verbatim", historyDashboardKey)
		}
		cms = dashboards(t, helmTemplate(t, "--set", "grafana.dashboard.enabled=true", "--set", "grafana.dashboard.history=false"))
		if len(cms) != 1 || len(cms[0].Data) != 1 || cms[0].Data[dashboardKey] == "" {
			t.Errorf("grafana.dashboard.history=false: want the Prometheus dashboard alone")
		}
	})
	t.Run("labels, annotations and namespace", func(t *testing.T) {
		cms := dashboards(t, helmTemplate(t, "--set", "grafana.dashboard.enabled=true", "--set", "grafana.dashboard.namespace=monitoring",
			"--set", "grafana.dashboard.labels.grafana_dashboard=null", "--set-string", "grafana.dashboard.labels.dashboards=mysqlbench",
			"--set", "grafana.dashboard.annotations.grafana_folder=Benchmarks"))
		if len(cms) != 1 {
			t.Fatalf("rendered %d dashboard ConfigMaps, want 1", len(cms))
		}
		cm := cms[0]
		if _, ok := cm.Labels["grafana_dashboard"]; ok || cm.Labels["dashboards"] != "mysqlbench" {
			t.Errorf("labels %v: want dashboards=mysqlbench instead of grafana_dashboard", cm.Labels)
		}
		if cm.Namespace != "monitoring" || !reflect.DeepEqual(cm.Annotations, map[string]string{"grafana_folder": "Benchmarks"}) {
			t.Errorf("ConfigMap in %q annotated %v, want monitoring and grafana_folder=Benchmarks", cm.Namespace, cm.Annotations)
		}
	})
	t.Run("the schema rejects", func(t *testing.T) {
		for _, tc := range []struct{ set, want string }{
			{"grafana.dashboard.enabled=yes", "/grafana/dashboard/enabled"},
			{"grafana.dashboards.enabled=true", "dashboards"},
			{"grafana.dashboard.labels.grafana_dashboard=1", "/grafana/dashboard/labels/grafana_dashboard"},
			{"grafana.dashboard.namespace=Monitoring", "/grafana/dashboard/namespace"},
		} {
			if out := helmTemplateFails(t, "--set", tc.set); !strings.Contains(out, tc.want) {
				t.Errorf("--set %s: helm says %q, want it to name %s", tc.set, out, tc.want)
			}
		}
	})
}
