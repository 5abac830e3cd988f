package percona

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// The Percona engines' servers are custom resources of the Percona operators. The project does
// not import the operators' Go packages (they pin their own Kubernetes libraries): the small
// structs below carry the fields the operator sets and reads, and travel as unstructured objects.

// Kinds of the Percona operators' servers.
var (
	PerconaServerMySQLKind   = schema.GroupVersionKind{Group: "ps.percona.com", Version: "v1", Kind: "PerconaServerMySQL"}
	PerconaXtraDBClusterKind = schema.GroupVersionKind{Group: "pxc.percona.com", Version: "v1", Kind: "PerconaXtraDBCluster"}
)

// Defaults of the Percona operator releases this operator was tested against (their CRDs run in
// the envtest suites): Percona Operator for MySQL (PS) v1.2.0 and for PXC v1.18.0.
const (
	DefaultPSCRVersion    = "1.2.0"
	DefaultPSImage        = "percona/percona-server:8.4.10-10.1"
	DefaultPSHAProxyImage = "percona/haproxy:2.8.18-1"
	DefaultPSRouterImage  = "percona/percona-mysql-router:8.4.10"
	// The PS operator runs pt-heartbeat and other tools from this image; its CRD requires it
	// whenever toolkit is set and the operator needs it for async clusters.
	DefaultPSToolkitImage = "percona/percona-toolkit:3.7.1-4"

	DefaultPXCCRVersion     = "1.18.0"
	DefaultPXCImage         = "percona/percona-xtradb-cluster:8.0.42-33.1"
	DefaultPXCHAProxyImage  = "percona/haproxy:2.8.15"
	DefaultPXCProxySQLImage = "percona/proxysql2:2.7.3"

	// RouterPort is MySQL Router's read-write classic protocol port.
	RouterPort = 6446

	// Percona operators' states (status.state).
	StateReady = "ready"
	StateError = "error"

	// PasswordKey is the key of the benchmark user's password Secret.
	PasswordKey = "password"

	// maxName: the PXC operator refuses cluster names longer than 22 characters (they
	// prefix its StatefulSets, Services and Secrets); the PS operator is given the same bound.
	maxName = 22
)

// SystemUsers are the keys of the Secret named by spec.secretsName, one password per
// system account the Percona operator manages. The operators generate missing keys themselves;
// generating them all here keeps every password in a Secret the run owns and deletes.
var SystemUsers = map[v1.Engine][]string{
	v1.EnginePerconaServer:        {"root", "operator", "monitor", "replication", "orchestrator", "heartbeat", "xtrabackup", "proxyadmin"},
	v1.EnginePerconaXtraDBCluster: {"root", "operator", "monitor", "replication", "xtrabackup", "proxyadmin"},
}

// ResourceName names a Percona target's custom resource.
func ResourceName(run *v1.BenchmarkRun, target string) string {
	return specs.Shorten(maxName, run.Name, target)
}

// UsersSecretName names the Secret with the Percona operator's system users.
func UsersSecretName(run *v1.BenchmarkRun, target string) string {
	return specs.Shorten(253, run.Name, target, "percona-users")
}

// PasswordSecretName names the Secret with the benchmark user's password. It is its own
// Secret, not a key of the system users' one: the Percona operators treat the keys of that Secret
// as accounts they manage.
func PasswordSecretName(run *v1.BenchmarkRun, target string) string {
	return specs.Shorten(253, run.Name, target, "sbtest-password")
}

// UsersSecret holds the generated passwords of the Percona operator's system users.
func UsersSecret(run *v1.BenchmarkRun, t v1.Target, passwords map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(run, t.Name, UsersSecretName(run, t.Name)),
		Type:       corev1.SecretTypeOpaque,
		StringData: passwords,
	}
}

// PasswordSecret holds the benchmark user's generated password.
func PasswordSecret(run *v1.BenchmarkRun, t v1.Target, password string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: objectMeta(run, t.Name, PasswordSecretName(run, t.Name)),
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{PasswordKey: password},
	}
}

// ConnectionSecret holds what sysbench connects with, once the Percona operator has
// published the server's endpoint (status.host, "host" or "host:port").
func ConnectionSecret(run *v1.BenchmarkRun, t v1.Target, endpoint, rootPassword, password string) *corev1.Secret {
	host, port := endpoint, Port(t)
	if h, p, err := net.SplitHostPort(endpoint); err == nil {
		host = h
		if n, err := strconv.Atoi(p); err == nil {
			port = n
		}
	}
	return &corev1.Secret{
		ObjectMeta: objectMeta(run, t.Name, specs.ConnectionSecretName(run, t.Name)),
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{
			sysbench.SecretKeyHost:      host,
			sysbench.SecretKeyPort:      strconv.Itoa(port),
			sysbench.SecretKeyUser:      specs.BenchmarkUser,
			sysbench.SecretKeyPassword:  password,
			sysbench.SecretKeyDatabase:  specs.BenchmarkDatabase,
			specs.SecretKeyRootPassword: rootPassword,
		},
	}
}

// Port is the port sysbench connects to: Router's read-write port, else MySQL's (the
// server itself, HAProxy and ProxySQL all listen on 3306).
func Port(t v1.Target) int {
	if t.ProxyOrDefault() == v1.PerconaProxyRouter {
		return RouterPort
	}
	return specs.MySQLPort
}

func objectMeta(run *v1.BenchmarkRun, target, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: run.Namespace, Labels: specs.TargetLabels(run, target)}
}

// MyCnf is the server configuration of a Percona target: the operator's settings (as the
// builtin engine's OperatorMyCnf, without datadir and skip-name-resolve, which the Percona
// operator owns: its system accounts are defined by host name), then the target's myCnf, which
// wins where both set an option. It fails when the target's myCnf would break the run (specs.CheckMyCnf).
func MyCnf(run *v1.BenchmarkRun, t v1.Target) (string, error) {
	if err := specs.CheckMyCnf(run.Spec, t); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by mysqlbench-operator for BenchmarkRun %s/%s, target %s; the target's myCnf follows.\n",
		run.Namespace, run.Name, t.Name)
	b.WriteString("[mysqld]\n")
	fmt.Fprintf(&b, "max_connections = %d\n", specs.RequiredMaxConnections(run.Spec.Ladder))
	b.WriteString("loose-mysql-native-password = ON\n")
	b.WriteString("loose-default-authentication-plugin = mysql_native_password\n")
	b.WriteString("loose-authentication-policy = mysql_native_password,,\n")
	if t.SynchWaits {
		b.WriteString(specs.SynchWaitsCnf)
	}
	if user := specs.UserMyCnf(t); user != "" {
		b.WriteString(user)
	}
	return b.String(), nil
}

// Typed subsets of the Percona resources. Booleans the CRDs' CEL rules read carry no omitempty:
// a rule such as `self.unsafeFlags.proxy || self.proxy.haproxy.enabled` fails on a missing field.

type upgradeOptions struct {
	Apply string `json:"apply"`
}

type perconaAffinity struct {
	Advanced *corev1.Affinity `json:"advanced,omitempty"`
}

type perconaVolumeSpec struct {
	PersistentVolumeClaim *corev1.PersistentVolumeClaimSpec `json:"persistentVolumeClaim,omitempty"`
	EmptyDir              *corev1.EmptyDirVolumeSource      `json:"emptyDir,omitempty"`
}

// perconaPod is what both operators accept for each of their pod groups (mysql/pxc, proxies).
type perconaPod struct {
	Enabled       *bool                        `json:"enabled,omitempty"`
	Size          int32                        `json:"size"`
	Image         string                       `json:"image,omitempty"`
	Configuration string                       `json:"configuration,omitempty"`
	Resources     *corev1.ResourceRequirements `json:"resources,omitempty"`
	NodeSelector  map[string]string            `json:"nodeSelector,omitempty"`
	Tolerations   []corev1.Toleration          `json:"tolerations,omitempty"`
	Affinity      *perconaAffinity             `json:"affinity,omitempty"`
	Labels        map[string]string            `json:"labels,omitempty"`
	Env           []corev1.EnvVar              `json:"env,omitempty"`
	VolumeSpec    *perconaVolumeSpec           `json:"volumeSpec,omitempty"`
	ClusterType   string                       `json:"clusterType,omitempty"`
}

type enabledImage struct {
	Enabled bool   `json:"enabled"`
	Image   string `json:"image,omitempty"`
}

type psUnsafeFlags struct {
	MySQLSize    bool `json:"mysqlSize"`
	Orchestrator bool `json:"orchestrator"`
	Proxy        bool `json:"proxy"`
	ProxySize    bool `json:"proxySize"`
}

type psProxy struct {
	HAProxy perconaPod `json:"haproxy"`
	Router  perconaPod `json:"router"`
}

type psSpec struct {
	CRVersion      string         `json:"crVersion"`
	SecretsName    string         `json:"secretsName"`
	UpdateStrategy string         `json:"updateStrategy"`
	UpgradeOptions upgradeOptions `json:"upgradeOptions"`
	UnsafeFlags    psUnsafeFlags  `json:"unsafeFlags"`
	MySQL          perconaPod     `json:"mysql"`
	Proxy          psProxy        `json:"proxy"`
	Orchestrator   enabledImage   `json:"orchestrator"`
	Backup         enabledImage   `json:"backup"`
	Toolkit        struct {
		Image string `json:"image"`
	} `json:"toolkit"`
}

type pxcUnsafeFlags struct {
	PXCSize   bool `json:"pxcSize"`
	ProxySize bool `json:"proxySize"`
	TLS       bool `json:"tls"`
}

type pxcUser struct {
	Name              string            `json:"name"`
	Hosts             []string          `json:"hosts"`
	DBs               []string          `json:"dbs"`
	Grants            []string          `json:"grants"`
	PasswordSecretRef map[string]string `json:"passwordSecretRef"`
}

type pxcSpec struct {
	CRVersion      string         `json:"crVersion"`
	SecretsName    string         `json:"secretsName"`
	UpdateStrategy string         `json:"updateStrategy"`
	UpgradeOptions upgradeOptions `json:"upgradeOptions"`
	UnsafeFlags    pxcUnsafeFlags `json:"unsafeFlags"`
	TLS            struct {
		Enabled bool `json:"enabled"`
	} `json:"tls"`
	PXC          perconaPod   `json:"pxc"`
	HAProxy      perconaPod   `json:"haproxy"`
	ProxySQL     perconaPod   `json:"proxysql"`
	LogCollector enabledImage `json:"logcollector"`
	Users        []pxcUser    `json:"users"`
}

// PerconaServerMySQL is a percona-server target's server: one MySQL pod from the target's image,
// async replication with neither orchestrator nor a proxy (both would sit idle or in the data
// path of a one-server benchmark) unless the target asks for a proxy. Router needs group
// replication in the Percona operator, so a Router target is a one-member group. The benchmark
// user and database are created by the server's first start: the PS operator's entrypoint
// creates MYSQL_DATABASE and MYSQL_USER (all privileges on that database), as the Docker images
// do; v1.2.0 has no declarative users.
func PerconaServerMySQL(run *v1.BenchmarkRun, t v1.Target, peers ...specs.Peer) (*unstructured.Unstructured, error) {
	cnf, err := MyCnf(run, t)
	if err != nil {
		return nil, err
	}
	proxy := t.ProxyOrDefault()
	spec := psSpec{
		CRVersion:   crVersion(t, DefaultPSCRVersion),
		SecretsName: UsersSecretName(run, t.Name),
		// SmartUpdate needs orchestrator with async replication; the spec never changes anyway.
		UpdateStrategy: "RollingUpdate",
		UpgradeOptions: upgradeOptions{Apply: "disabled"},
		UnsafeFlags: psUnsafeFlags{
			MySQLSize: true, Orchestrator: true, Proxy: proxy == v1.PerconaProxyNone, ProxySize: true,
		},
		MySQL:        serverPod(run, t, orDefault(t.Image, DefaultPSImage), cnf, peers),
		Orchestrator: enabledImage{Enabled: false},
		Backup:       enabledImage{Enabled: false},
	}
	spec.MySQL.ClusterType = "async"
	if proxy == v1.PerconaProxyRouter {
		spec.MySQL.ClusterType = "group-replication"
	}
	spec.MySQL.Env = []corev1.EnvVar{
		{Name: "MYSQL_DATABASE", Value: specs.BenchmarkDatabase},
		{Name: "MYSQL_USER", Value: specs.BenchmarkUser},
		{Name: "MYSQL_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: PasswordSecretName(run, t.Name)},
			Key:                  PasswordKey,
		}}},
	}
	spec.Proxy.HAProxy = proxyPod(run, proxy == v1.PerconaProxyHAProxy, proxyImage(t, DefaultPSHAProxyImage), peers)
	spec.Proxy.Router = proxyPod(run, proxy == v1.PerconaProxyRouter, proxyImage(t, DefaultPSRouterImage), peers)
	spec.Toolkit.Image = DefaultPSToolkitImage
	return perconaObject(run, t, PerconaServerMySQLKind, &spec, "percona.com/delete-mysql-pvc")
}

// PerconaXtraDBCluster is a percona-xtradb-cluster target's server: a one-node cluster from the
// target's image (5.7, 8.0 or 8.4), without TLS (sysbench connects in plain text, as it does to
// every other engine) and without the log collector, with HAProxy or ProxySQL only when asked.
// The benchmark user and database come from the operator's declarative users (operator 1.16.0
// and later), which creates the listed databases.
func PerconaXtraDBCluster(run *v1.BenchmarkRun, t v1.Target, peers ...specs.Peer) (*unstructured.Unstructured, error) {
	cnf, err := MyCnf(run, t)
	if err != nil {
		return nil, err
	}
	proxy := t.ProxyOrDefault()
	spec := pxcSpec{
		CRVersion:      crVersion(t, DefaultPXCCRVersion),
		SecretsName:    UsersSecretName(run, t.Name),
		UpdateStrategy: "RollingUpdate",
		UpgradeOptions: upgradeOptions{Apply: "disabled"},
		UnsafeFlags:    pxcUnsafeFlags{PXCSize: true, ProxySize: true, TLS: true},
		PXC:            serverPod(run, t, orDefault(t.Image, DefaultPXCImage), cnf, peers),
		HAProxy:        proxyPod(run, proxy == v1.PerconaProxyHAProxy, proxyImage(t, DefaultPXCHAProxyImage), peers),
		ProxySQL:       proxyPod(run, proxy == v1.PerconaProxySQL, proxyImage(t, DefaultPXCProxySQLImage), peers),
		LogCollector:   enabledImage{Enabled: false},
		Users: []pxcUser{{
			Name:   specs.BenchmarkUser,
			Hosts:  []string{"%"},
			DBs:    []string{specs.BenchmarkDatabase},
			Grants: []string{"ALL"},
			PasswordSecretRef: map[string]string{
				"name": PasswordSecretName(run, t.Name), "key": PasswordKey,
			},
		}},
	}
	if proxy == v1.PerconaProxySQL {
		// ProxySQL keeps its configuration on a volume; the operator requires one.
		spec.ProxySQL.VolumeSpec = &perconaVolumeSpec{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
	return perconaObject(run, t, PerconaXtraDBClusterKind, &spec, "percona.com/delete-pxc-pvc")
}

// serverPod is the one database pod: the target's image, configuration and resources, on the
// database pool, with the data volume from spec.storage.
func serverPod(run *v1.BenchmarkRun, t v1.Target, image, cnf string, peers []specs.Peer) perconaPod {
	p := placedPod(run, peers)
	p.Size = 1
	p.Image = image
	p.Configuration = cnf
	p.Resources = t.Resources
	// The Percona operators keep their own app.kubernetes.io labels on their pods (their
	// selectors), so only the mysqlbench.io labels identify the run's server pods.
	p.Labels = map[string]string{specs.LabelRun: specs.LabelValue(run.Name), specs.LabelTarget: t.Name}
	p.VolumeSpec = &perconaVolumeSpec{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	if st := run.Spec.Storage; st != nil {
		p.VolumeSpec = &perconaVolumeSpec{PersistentVolumeClaim: &corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: st.StorageClassName,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: st.Size},
			},
		}}
	}
	return p
}

// proxyPod is a proxy: one pod on the database pool when enabled (the proxy's cost is part of
// what such a target measures, so it runs where the servers run, never next to sysbench).
func proxyPod(run *v1.BenchmarkRun, enabled bool, image string, peers []specs.Peer) perconaPod {
	if !enabled {
		return perconaPod{Enabled: new(bool)}
	}
	p := placedPod(run, peers)
	p.Enabled = &enabled
	p.Size = 1
	p.Image = image
	return p
}

func placedPod(run *v1.BenchmarkRun, peers []specs.Peer) perconaPod {
	pl := specs.DatabasePlacement(run, peers...)
	p := perconaPod{NodeSelector: pl.NodeSelector, Tolerations: pl.Tolerations}
	if pl.Affinity != nil {
		p.Affinity = &perconaAffinity{Advanced: pl.Affinity}
	}
	return p
}

// perconaObject wraps a spec into the resource. With a data volume claim it carries the
// operator's delete-PVC finalizer, so that deleting the resource deletes the data, as the
// builtin engine's teardown does (the Percona operators keep PVCs by default).
func perconaObject(run *v1.BenchmarkRun, t v1.Target, gvk schema.GroupVersionKind, spec any, deletePVC string) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(spec)
	if err != nil {
		return nil, fmt.Errorf("convert %s spec: %w", gvk.Kind, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": content}}
	u.SetGroupVersionKind(gvk)
	u.SetName(ResourceName(run, t.Name))
	u.SetNamespace(run.Namespace)
	u.SetLabels(specs.TargetLabels(run, t.Name))
	if run.Spec.Storage != nil {
		u.SetFinalizers([]string{deletePVC})
	}
	return u, nil
}

func crVersion(t v1.Target, def string) string {
	if t.Percona != nil && t.Percona.CRVersion != "" {
		return t.Percona.CRVersion
	}
	return def
}

func proxyImage(t v1.Target, def string) string {
	if t.Percona != nil && t.Percona.ProxyImage != "" {
		return t.Percona.ProxyImage
	}
	return def
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

// Status is what the operator engines read of a Percona resource's status.
type Status struct {
	// State: initializing, ready, error, stopping or paused ("" before the operator saw it).
	State string
	// Host is the endpoint to connect to, "host" or "host:port".
	Host string
	// Messages are the operator's own words about what is wrong or pending.
	Messages []string
	// Stale: the PXC operator has not yet observed the current generation (the PS status has no
	// observedGeneration and is never stale).
	Stale bool
}

// ReadStatus reads status.state, status.host and the messages both operators publish:
// PXC's status.message list and per-component messages, and the conditions (PS and PXC) that
// are not True.
func ReadStatus(u *unstructured.Unstructured) Status {
	var s Status
	s.State, _, _ = unstructured.NestedString(u.Object, "status", "state")
	s.Host, _, _ = unstructured.NestedString(u.Object, "status", "host")
	if gen, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); found && gen < u.GetGeneration() {
		s.Stale = true
	}
	seen := map[string]bool{}
	add := func(m string) {
		m = strings.TrimSpace(m)
		if m != "" && !seen[m] {
			seen[m] = true
			s.Messages = append(s.Messages, m)
		}
	}
	msgs, _, _ := unstructured.NestedStringSlice(u.Object, "status", "message")
	for _, m := range msgs {
		add(m)
	}
	for _, c := range []string{"mysql", "pxc", "haproxy", "proxysql", "router", "orchestrator"} {
		m, _, _ := unstructured.NestedString(u.Object, "status", c, "message")
		if m != "" {
			add(c + ": " + m)
		}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		status, _ := cm["status"].(string)
		msg, _ := cm["message"].(string)
		typ, _ := cm["type"].(string)
		// Conditions that hold are the operator's progress log ("ready", "initializing"); the
		// ones that do not say what is wrong.
		if status == "True" && !strings.EqualFold(typ, StateError) {
			continue
		}
		if msg != "" {
			add(msg)
		}
	}
	return s
}
