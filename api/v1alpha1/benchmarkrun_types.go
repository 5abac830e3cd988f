package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Engine says who runs a target's database server.
// +kubebuilder:validation:Enum=builtin;percona-server;percona-xtradb-cluster;external
type Engine string

const (
	// EngineBuiltin: the operator runs the server itself as a one-pod StatefulSet from the target's
	// image (official mysql, percona/percona-server or mariadb images).
	EngineBuiltin Engine = "builtin"
	// EnginePerconaServer: a PerconaServerMySQL object, run by the Percona Operator for MySQL.
	EnginePerconaServer Engine = "percona-server"
	// EnginePerconaXtraDBCluster: a PerconaXtraDBCluster object, run by the Percona Operator for
	// MySQL based on Percona XtraDB Cluster.
	EnginePerconaXtraDBCluster Engine = "percona-xtradb-cluster"
	// EngineExternal: a server the operator does not manage; connection details come from a Secret.
	EngineExternal Engine = "external"
)

// The opt-in on a user's Secret.
const (
	// LabelAllowBenchmark, with the value AllowBenchmark, on a Secret is its owner's consent that
	// BenchmarkRuns in its namespace connect with it: the operator mounts an external target's
	// Secret into a sysbench pod only while the Secret carries this label. A run is code of its
	// author's choice (an image, a Lua script, client arguments) running with the Secret's
	// password, and naming a Secret in a run takes only the right to create runs; a label on the
	// Secret takes the right to update the Secret, which its owner has.
	LabelAllowBenchmark = "mysqlbench.io/allow-benchmark"
	// AllowBenchmark is the value of LabelAllowBenchmark that opts a Secret in.
	AllowBenchmark = "true"
)

// CleanupPolicy says what happens to a target's server once its ladder has finished.
// +kubebuilder:validation:Enum=Always;OnSuccess;Never
type CleanupPolicy string

const (
	// CleanupAlways deletes the server and its data after the target finishes, whatever the outcome.
	CleanupAlways CleanupPolicy = "Always"
	// CleanupOnSuccess deletes the server when the target succeeded and keeps it for inspection
	// when the target failed.
	CleanupOnSuccess CleanupPolicy = "OnSuccess"
	// CleanupNever keeps every server until the BenchmarkRun itself is deleted.
	CleanupNever CleanupPolicy = "Never"
)

// NetworkPolicyMode says whether the operator fences its benchmark servers with NetworkPolicies.
// +kubebuilder:validation:Enum=Enabled;Disabled
type NetworkPolicyMode string

const (
	// NetworkPolicyEnabled: each builtin target's server gets a NetworkPolicy that admits only
	// the run's sysbench pods of that target, on TCP 3306.
	NetworkPolicyEnabled NetworkPolicyMode = "Enabled"
	// NetworkPolicyDisabled: the operator creates no NetworkPolicy; the namespace's own policies
	// (or none) apply to the servers.
	NetworkPolicyDisabled NetworkPolicyMode = "Disabled"
)

// OLTPScript names one of the stock sysbench 1.0 OLTP scripts.
// +kubebuilder:validation:Enum=oltp_point_select;oltp_read_only;oltp_read_write;oltp_write_only;oltp_update_index;oltp_update_non_index;oltp_insert;oltp_delete;select_random_points;select_random_ranges
type OLTPScript string

// Target is one server to benchmark: one column of the results table.
//
// +kubebuilder:validation:XValidation:rule="self.engine != 'external' || has(self.secretRef)",message="engine external needs secretRef: the name of a Secret with the keys host, port, user and password of the server to benchmark"
// +kubebuilder:validation:XValidation:rule="self.engine != 'external' || !has(self.image)",message="engine external benchmarks a server the operator does not run: remove image (or use engine builtin to let the operator run that image)"
// +kubebuilder:validation:XValidation:rule="self.engine == 'external' || !has(self.secretRef)",message="secretRef is only read for engine external; the operator generates the credentials of the servers it runs: remove secretRef"
// +kubebuilder:validation:XValidation:rule="self.engine != 'builtin' || has(self.image)",message="engine builtin needs image: the server image to run, e.g. mysql:8.0.36, percona/percona-server:8.0 or mariadb:10.11"
// +kubebuilder:validation:XValidation:rule="self.engine != 'external' || !has(self.synchWaits) || !self.synchWaits",message="synchWaits configures the server's performance_schema, which the operator does not do for engine external: remove synchWaits and enable the instruments on that server yourself (performance-schema-instrument='wait/synch/%=ON')"
// +kubebuilder:validation:XValidation:rule="self.engine != 'external' || !has(self.myCnf)",message="engine external benchmarks a server the operator does not configure: remove myCnf and configure that server yourself"
// +kubebuilder:validation:XValidation:rule="!has(self.percona) || self.engine == 'percona-server' || self.engine == 'percona-xtradb-cluster'",message="percona is only read for engines percona-server and percona-xtradb-cluster: remove it, or set engine to one of them"
// +kubebuilder:validation:XValidation:rule="!has(self.percona) || !has(self.percona.proxy) || self.percona.proxy != 'proxysql' || self.engine == 'percona-xtradb-cluster'",message="percona.proxy proxysql is only offered by engine percona-xtradb-cluster: use haproxy or router with percona-server"
// +kubebuilder:validation:XValidation:rule="!has(self.percona) || !has(self.percona.proxy) || self.percona.proxy != 'router' || self.engine == 'percona-server'",message="percona.proxy router is only offered by engine percona-server: use haproxy or proxysql with percona-xtradb-cluster"
// +kubebuilder:validation:XValidation:rule="!(self.name in ['results', 'sysbench-reporter'])",message="target names results and sysbench-reporter are taken: the run's own ConfigMaps are <run>-results and <run>-sysbench-reporter, and a target's server ConfigMap is <run>-<target>; rename the target"
type Target struct {
	// Name of the target: a DNS label of at most 40 characters, unique within the run, and not
	// results or sysbench-reporter (the names of the run's own ConfigMaps). It names the target's
	// column in the results and the objects created for it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Engine says who runs the server: builtin (the operator, as a one-pod StatefulSet),
	// percona-server or percona-xtradb-cluster (the Percona operators), or external (an existing
	// server reached through secretRef).
	// +kubebuilder:default=builtin
	// +optional
	Engine Engine `json:"engine,omitempty"`

	// Image is the server's container image, e.g. mysql:5.7.44, mysql:8.4,
	// percona/percona-server:8.0 or mariadb:10.11. Required for builtin; for the Percona engines
	// it replaces the image the Percona operator would pick; not allowed for external.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:[.][a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*(?::[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$')",message="image must be an image reference such as mysql:8.4, percona/percona-server:8.0 or registry.example.com:5000/db/mysql@sha256:<64 hex digits> (lower-case repository, a tag of letters, digits, '_', '.' and '-')"
	// +optional
	Image string `json:"image,omitempty"`

	// The myCnf rules read the text line by line as the servers' option file parser does (mysys
	// search_default_file): leading blanks (space, tab, CR, FF, VT) are skipped, # and ; start
	// comment lines, a # ends an option's name, group names are case-insensitive. RE2 has no
	// lookahead, so the group rule is one pattern that every line of the text must match. The
	// same rules in Go are specs.ValidateMyCnf (for objects stored before these rules). Their
	// estimated and actual cost fit the CRD's CEL budgets with 16 targets of 16384 characters
	// (TestValidationMyCnfAtItsLimit).

	// MyCnf holds server options in my.cnf syntax, one `name = value` per line (a [mysqld]
	// header is added when missing), e.g. `performance_schema = OFF`. They override the
	// operator's own settings, except that a max_connections too low for the ladder is
	// rejected rather than silently raised.
	// Only server option groups are accepted ([mysqld], [server], [mariadb], [mariadbd],
	// [galera] and version groups such as [mysqld-8.4]); no !include or !includedir; and none
	// of the options the operator owns (port, socket, bind-address, skip-networking,
	// skip-grant-tables, datadir, with dashes or underscores, loose- or not). At most 16384
	// characters.
	// +kubebuilder:validation:MaxLength=16384
	// +kubebuilder:validation:XValidation:rule="self.matches('^(?:[ \\t\\r\\f\\v]*(?:[^[\\n \\t\\r\\f\\v].*|[[](?i:mysqld|server|mariadb|mariadbd|galera|(?:mysqld|mariadb|mariadbd)-[0-9]+(?:[.][0-9]+)*)[ \\t\\r\\f\\v]*][ \\t\\r\\f\\v]*(?:[#;].*)?)?\\n)*[ \\t\\r\\f\\v]*(?:[^[\\n \\t\\r\\f\\v].*|[[](?i:mysqld|server|mariadb|mariadbd|galera|(?:mysqld|mariadb|mariadbd)-[0-9]+(?:[.][0-9]+)*)[ \\t\\r\\f\\v]*][ \\t\\r\\f\\v]*(?:[#;].*)?)?$')",message="myCnf may only hold server option groups: [mysqld], [server], [mariadb], [mariadbd], [galera] or a version group such as [mysqld-8.4] or [mariadb-11.8], each header alone on its line (a # or ; comment may follow); client options such as [client] password belong to the client, not the server's my.cnf: remove those sections"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(?m)^[ \\t\\r\\f\\v]*![ \\t\\r\\f\\v]*include')",message="myCnf must not use !include or !includedir (also with blanks after the !, as the servers read it): the server would read files the run does not describe; put the options themselves in myCnf"
	// +kubebuilder:validation:XValidation:rule="!self.matches('(?mi)^[ \\t\\r\\f\\v]*(?:loose[-_])?(?:port|socket|bind[-_]address|skip[-_]networking|skip[-_]grant[-_]tables|datadir)[ \\t\\r\\f\\v]*(?:[=#]|$)')",message="myCnf must not set port, socket, bind-address, skip-networking, skip-grant-tables or datadir (in any spelling, loose- or not): the operator connects and health-checks the server through them and keeps its data on the run's volume; remove them"
	// +optional
	MyCnf string `json:"myCnf,omitempty"`

	// SynchWaits turns on performance_schema's synchronization wait instruments (mutexes,
	// rw-locks, conditions: performance-schema-instrument='wait/synch/%=ON'), so that each step's
	// top waits show where the server's threads wait on each other. It needs performance_schema
	// on and costs throughput of its own: compare runs with the same setting. Only for the
	// servers the operator configures (not engine external).
	// +optional
	SynchWaits bool `json:"synchWaits,omitempty"`

	// Resources are the server container's CPU and memory requests and limits. Equal requests
	// and limits (Guaranteed QoS) give the most repeatable numbers.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// SecretRef names a Secret in the run's namespace with the keys host, port, user and password
	// (and optionally database, default sbtest) of an existing server. Only for engine external.
	// The Secret is used only while it carries the label mysqlbench.io/allow-benchmark=true, its
	// owner's consent (kubectl label secret NAME mysqlbench.io/allow-benchmark=true).
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`

	// Percona holds settings of the Percona operators' custom resource. Only for engines
	// percona-server and percona-xtradb-cluster.
	// +optional
	Percona *PerconaOptions `json:"percona,omitempty"`
}

// PerconaProxy is the proxy a Percona operator puts between sysbench and the server.
// +kubebuilder:validation:Enum=none;haproxy;router;proxysql
type PerconaProxy string

const (
	// PerconaProxyNone connects sysbench straight to the server: no proxy in the data path.
	PerconaProxyNone PerconaProxy = "none"
	// PerconaProxyHAProxy routes through HAProxy (both engines).
	PerconaProxyHAProxy PerconaProxy = "haproxy"
	// PerconaProxyRouter routes through MySQL Router (percona-server only; the Percona operator
	// runs Router only with group replication, so the server becomes a one-member group).
	PerconaProxyRouter PerconaProxy = "router"
	// PerconaProxySQL routes through ProxySQL (percona-xtradb-cluster only).
	PerconaProxySQL PerconaProxy = "proxysql"
)

// PerconaOptions are settings for targets run by the Percona operators.
//
// +kubebuilder:validation:XValidation:rule="!has(self.proxyImage) || (has(self.proxy) && self.proxy != 'none')",message="percona.proxyImage needs percona.proxy set to haproxy, router or proxysql: without a proxy there is no proxy image to run"
type PerconaOptions struct {
	// CRVersion is the spec.crVersion of the Percona resource: the Percona operator release
	// whose behaviour the server gets, e.g. 1.2.0 (percona-server) or 1.18.0
	// (percona-xtradb-cluster). When unset, the release this operator was tested with.
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+\.[0-9]+$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	CRVersion string `json:"crVersion,omitempty"`

	// Proxy puts a proxy in the data path: none (the default: sysbench connects to the server
	// itself), haproxy, router (percona-server) or proxysql (percona-xtradb-cluster). A proxy
	// costs throughput and latency; benchmark it on purpose, as its own target.
	// +kubebuilder:default=none
	// +optional
	Proxy PerconaProxy `json:"proxy,omitempty"`

	// ProxyImage replaces the proxy image the operator picks for the proxy, e.g.
	// percona/haproxy:2.8.18-1.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:[.][a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*(?::[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$')",message="percona.proxyImage must be an image reference such as mysql:8.4 or registry.example.com:5000/sysbench@sha256:<64 hex digits> (lower-case repository, a tag of letters, digits, '_', '.' and '-')"
	// +optional
	ProxyImage string `json:"proxyImage,omitempty"`
}

// WorkloadClient is the load generator of a run's steps.
// +kubebuilder:validation:Enum=sysbench;mysqlslap;go-tpc
type WorkloadClient string

const (
	// ClientSysbench runs sysbench 1.0 (workload.script or customScript): per-second series,
	// latency percentiles, transactions.
	ClientSysbench WorkloadClient = "sysbench"
	// ClientMysqlslap runs mysqlslap (workload.mysqlslap): a number of queries per client,
	// timed as a whole; QPS is all clients' queries over the average time to run them.
	ClientMysqlslap WorkloadClient = "mysqlslap"
	// ClientGoTPC runs TPC-C with go-tpc (workload.tpcc): tpmC per step, with the count, errors
	// and latency percentiles of each transaction type.
	ClientGoTPC WorkloadClient = "go-tpc"
)

// Workload is what the client (sysbench, or mysqlslap) runs at every step of the ladder.
//
// +kubebuilder:validation:XValidation:rule="(has(self.client) && self.client in ['mysqlslap', 'go-tpc']) || has(self.script) != has(self.customScript)",message="set exactly one of workload.script (a stock sysbench OLTP script such as oltp_point_select) and workload.customScript (a ConfigMap key holding a Lua script)"
// +kubebuilder:validation:XValidation:rule="!(has(self.client) && self.client == 'mysqlslap') || (!has(self.script) && !has(self.customScript) && !has(self.extraArgs))",message="workload.client mysqlslap runs mysqlslap, not a sysbench script: remove script, customScript and extraArgs and configure workload.mysqlslap"
// +kubebuilder:validation:XValidation:rule="!has(self.mysqlslap) || (has(self.client) && self.client == 'mysqlslap')",message="workload.mysqlslap is only read with workload.client: mysqlslap: set the client, or remove mysqlslap"
// +kubebuilder:validation:XValidation:rule="!(has(self.client) && self.client == 'go-tpc') || (has(self.tpcc) && !has(self.script) && !has(self.customScript) && !has(self.extraArgs))",message="workload.client go-tpc runs TPC-C: set workload.tpcc (at least its warehouses) and remove script, customScript and extraArgs"
// +kubebuilder:validation:XValidation:rule="!has(self.tpcc) || (has(self.client) && self.client == 'go-tpc')",message="workload.tpcc is only read with workload.client: go-tpc: set the client, or remove tpcc"
type Workload struct {
	// Client is the load generator of every step: sysbench (the default; script or
	// customScript, with per-second series and latency percentiles) or mysqlslap
	// (workload.mysqlslap; one QPS figure per step, no latency percentiles or series).
	// +kubebuilder:default=sysbench
	// +optional
	Client WorkloadClient `json:"client,omitempty"`

	// Mysqlslap configures mysqlslap when client is mysqlslap. Its concurrency is each ladder
	// step's thread count; a step runs until its queries are done, and ladder.stepDuration is
	// then the step's time limit.
	// +optional
	Mysqlslap *MysqlslapWorkload `json:"mysqlslap,omitempty"`

	// TPCC configures go-tpc's TPC-C when client is go-tpc. Each ladder step runs the five
	// TPC-C transactions with the step's thread count as clients for ladder.stepDuration,
	// without keying and thinking time; the warm-up is a shorter run whose result is discarded.
	// +optional
	TPCC *TPCCWorkload `json:"tpcc,omitempty"`

	// Script is the stock sysbench OLTP script to run, e.g. oltp_point_select (primary-key
	// lookups) or oltp_read_write.
	// +optional
	Script OLTPScript `json:"script,omitempty"`

	// CustomScript selects a key of a ConfigMap in the run's namespace that holds a sysbench Lua
	// script (with prepare, cleanup and event functions, like the stock OLTP scripts).
	// +optional
	CustomScript *ConfigMapKeySelector `json:"customScript,omitempty"`

	// Tables is the number of sbtest tables (sysbench --tables). Prepare fills them in parallel.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:default=1
	// +optional
	Tables int32 `json:"tables,omitempty"`

	// TableSize is the number of rows per table (sysbench --table-size).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:default=10000
	// +optional
	TableSize int64 `json:"tableSize,omitempty"`

	// SkipPrepare skips the prepare step (and the dropping of tables afterwards) because the
	// tables already exist on the server, e.g. an external server loaded beforehand.
	// +optional
	SkipPrepare bool `json:"skipPrepare,omitempty"`

	// ExtraArgs are further sysbench options, one `--name=value` per item, e.g.
	// --rand-type=uniform or --range-size=100. Options the operator sets itself are refused:
	// --threads, --time, --events (and their 0.5 names --num-threads, --max-time, --max-requests),
	// --tables, --table-size, --percentile, --report-interval, --report-checkpoints, --db-driver,
	// --config-file, --help, --version, --mysql-* and --pgsql-*.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^--[a-z][a-z0-9-]*(=.*)?$`
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--(threads|num-threads|time|max-time|events|max-requests|tables|table-size|percentile|report-interval|report-checkpoints|db-driver|config-file|help|version|mysql-[a-z0-9-]*|pgsql-[a-z0-9-]*)(=|$)'))",message="extraArgs must not set options the operator owns (--threads, --time, --events and their old names, --tables, --table-size, --percentile, --report-interval, --report-checkpoints, --db-driver, --config-file, --mysql-*, --pgsql-*): use spec.ladder and spec.workload, and the target's engine for connections"
	// +listType=atomic
	// +optional
	ExtraArgs []string `json:"extraArgs,omitempty"`
}

// NamedWorkload is one workload of spec.workloads: a name for its rows of the results and the
// fields of a workload (see Workload). Its mysqlslap args are checked when its Jobs are built
// rather than at admission: the CRD's CEL budget cannot hold mysqlslap's argument rules once
// per workload.
//
// +kubebuilder:validation:XValidation:rule="(has(self.client) && self.client in ['mysqlslap', 'go-tpc']) || has(self.script) != has(self.customScript)",message="set exactly one of workload.script (a stock sysbench OLTP script such as oltp_point_select) and workload.customScript (a ConfigMap key holding a Lua script)"
// +kubebuilder:validation:XValidation:rule="!(has(self.client) && self.client == 'mysqlslap') || (!has(self.script) && !has(self.customScript) && !has(self.extraArgs))",message="workload.client mysqlslap runs mysqlslap, not a sysbench script: remove script, customScript and extraArgs and configure workload.mysqlslap"
// +kubebuilder:validation:XValidation:rule="!has(self.mysqlslap) || (has(self.client) && self.client == 'mysqlslap')",message="workload.mysqlslap is only read with workload.client: mysqlslap: set the client, or remove mysqlslap"
// +kubebuilder:validation:XValidation:rule="!(has(self.client) && self.client == 'go-tpc') || (has(self.tpcc) && !has(self.script) && !has(self.customScript) && !has(self.extraArgs))",message="workload.client go-tpc runs TPC-C: set workload.tpcc (at least its warehouses) and remove script, customScript and extraArgs"
// +kubebuilder:validation:XValidation:rule="!has(self.tpcc) || (has(self.client) && self.client == 'go-tpc')",message="workload.tpcc is only read with workload.client: go-tpc: set the client, or remove tpcc"
type NamedWorkload struct {
	// Name of the workload: a DNS label of at most 32 characters, unique within the run. It
	// names the workload's rows of the results and its steps' Jobs.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Client is the load generator of every step: sysbench (the default; script or
	// customScript, with per-second series and latency percentiles) or mysqlslap
	// (workload.mysqlslap; one QPS figure per step, no latency percentiles or series).
	// +kubebuilder:default=sysbench
	// +optional
	Client WorkloadClient `json:"client,omitempty"`

	// Mysqlslap configures mysqlslap when client is mysqlslap. Its concurrency is each ladder
	// step's thread count; a step runs until its queries are done, and ladder.stepDuration is
	// then the step's time limit.
	// +optional
	Mysqlslap *MysqlslapOptions `json:"mysqlslap,omitempty"`

	// TPCC configures go-tpc's TPC-C when client is go-tpc. Each ladder step runs the five
	// TPC-C transactions with the step's thread count as clients for ladder.stepDuration,
	// without keying and thinking time; the warm-up is a shorter run whose result is discarded.
	// +optional
	TPCC *TPCCWorkload `json:"tpcc,omitempty"`

	// Script is the stock sysbench OLTP script to run, e.g. oltp_point_select (primary-key
	// lookups) or oltp_read_write.
	// +optional
	Script OLTPScript `json:"script,omitempty"`

	// CustomScript selects a key of a ConfigMap in the run's namespace that holds a sysbench Lua
	// script (with prepare, cleanup and event functions, like the stock OLTP scripts).
	// +optional
	CustomScript *ConfigMapKeySelector `json:"customScript,omitempty"`

	// Tables is the number of sbtest tables (sysbench --tables). Prepare fills them in parallel.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:default=1
	// +optional
	Tables int32 `json:"tables,omitempty"`

	// TableSize is the number of rows per table (sysbench --table-size).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:default=10000
	// +optional
	TableSize int64 `json:"tableSize,omitempty"`

	// SkipPrepare skips the prepare step (and the dropping of tables afterwards) because the
	// tables already exist on the server, e.g. an external server loaded beforehand.
	// +optional
	SkipPrepare bool `json:"skipPrepare,omitempty"`

	// ExtraArgs are further sysbench options, one `--name=value` per item, e.g.
	// --rand-type=uniform or --range-size=100. Options the operator sets itself are refused:
	// --threads, --time, --events (and their 0.5 names --num-threads, --max-time, --max-requests),
	// --tables, --table-size, --percentile, --report-interval, --report-checkpoints, --db-driver,
	// --config-file, --help, --version, --mysql-* and --pgsql-*.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^--[a-z][a-z0-9-]*(=.*)?$`
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--(threads|num-threads|time|max-time|events|max-requests|tables|table-size|percentile|report-interval|report-checkpoints|db-driver|config-file|help|version|mysql-[a-z0-9-]*|pgsql-[a-z0-9-]*)(=|$)'))",message="extraArgs must not set options the operator owns (--threads, --time, --events and their old names, --tables, --table-size, --percentile, --report-interval, --report-checkpoints, --db-driver, --config-file, --mysql-*, --pgsql-*): use spec.ladder and spec.workload, and the target's engine for connections"
	// +listType=atomic
	// +optional
	ExtraArgs []string `json:"extraArgs,omitempty"`
}

// MysqlslapOptions is MysqlslapWorkload in spec.workloads, without the admission rules of its
// args (the operator checks them, mysqlslap.ValidateArgs, when it builds the workload's Jobs).
type MysqlslapOptions struct {
	// LoadType is the SQL mysqlslap generates (--auto-generate-sql-load-type).
	// +optional
	LoadType MysqlslapLoadType `json:"loadType,omitempty"`
	// Queries is how many queries all clients run together in one iteration.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:default=10000
	// +optional
	Queries int64 `json:"queries,omitempty"`
	// Iterations is how many times mysqlslap runs the queries at each step.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	// +optional
	Iterations int32 `json:"iterations,omitempty"`
	// Image is an image with mysqlslap or mariadb-slap, as workload.mysqlslap.image.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`
	// Args are further mysqlslap options, as workload.mysqlslap.args.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=4096
	// +kubebuilder:validation:items:Pattern=`^--[a-z][a-z0-9-]*(=.*)?$`
	// +listType=atomic
	// +optional
	Args []string `json:"args,omitempty"`
}

// Spec is the workload as spec.workload would give it.
func (n NamedWorkload) Spec() Workload {
	w := Workload{Client: n.Client, TPCC: n.TPCC, Script: n.Script, CustomScript: n.CustomScript, Tables: n.Tables,
		TableSize: n.TableSize, SkipPrepare: n.SkipPrepare, ExtraArgs: n.ExtraArgs}
	if m := n.Mysqlslap; m != nil {
		w.Mysqlslap = &MysqlslapWorkload{LoadType: m.LoadType, Queries: m.Queries, Iterations: m.Iterations, Image: m.Image, Args: m.Args}
	}
	return w
}

// RunWorkload is one workload a run measures, named (spec.workloads, spec.preset) or not (the
// one spec.workload).
type RunWorkload struct {
	Name string
	Workload
}

// PresetName names a suite of workloads spec.preset expands to.
// +kubebuilder:validation:Enum=sysbench-oltp-micro
type PresetName string

// PresetSysbenchOLTPMicro is the stock sysbench 1.0.20 OLTP microbenchmarks.
const PresetSysbenchOLTPMicro PresetName = "sysbench-oltp-micro"

// Preset is a named suite of sysbench workloads on one data set.
type Preset struct {
	// Name of the suite: sysbench-oltp-micro.
	Name PresetName `json:"name"`

	// Tables is the number of sbtest tables (sysbench --tables) every workload of the suite uses.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +kubebuilder:default=1
	// +optional
	Tables int32 `json:"tables,omitempty"`

	// TableSize is the number of rows per table (sysbench --table-size).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:default=10000
	// +optional
	TableSize int64 `json:"tableSize,omitempty"`

	// ExtraArgs are further sysbench options every workload of the suite gets, as
	// workload.extraArgs (the same options are refused).
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^--[a-z][a-z0-9-]*(=.*)?$`
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--(threads|num-threads|time|max-time|events|max-requests|tables|table-size|percentile|report-interval|report-checkpoints|db-driver|config-file|help|version|mysql-[a-z0-9-]*|pgsql-[a-z0-9-]*)(=|$)'))",message="preset.extraArgs must not set options the operator owns (--threads, --time, --events and their old names, --tables, --table-size, --percentile, --report-interval, --report-checkpoints, --db-driver, --config-file, --mysql-*, --pgsql-*): use spec.ladder and spec.preset, and the target's engine for connections"
	// +listType=atomic
	// +optional
	ExtraArgs []string `json:"extraArgs,omitempty"`
}

// DefaultGoTPCImage is the go-tpc image of workload.tpcc.image when unset: go-tpc with the
// operator's launcher (images/go-tpc).
const DefaultGoTPCImage = "ghcr.io/mysqlbench/go-tpc:v1.0.7"

// TPCCWorkload is go-tpc's TPC-C: the data of Warehouses warehouses is loaded once per target
// (go-tpc tpcc prepare) into the connection's database, every ladder step runs go-tpc tpcc run,
// and after the ladder go-tpc tpcc check verifies TPC-C's consistency conditions (Check).
type TPCCWorkload struct {
	// Warehouses is TPC-C's scale: each warehouse is about 110 MB of data (the operator
	// reserves 128 MiB each plus 64 MiB, and refuses a builtin target whose storage is smaller).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Warehouses int32 `json:"warehouses"`

	// LoadThreads is how many threads load the data (go-tpc tpcc prepare --threads); default
	// the warehouses, at most 16.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	// +optional
	LoadThreads int32 `json:"loadThreads,omitempty"`

	// Check runs go-tpc tpcc check after the ladder: a target whose data breaks a consistency
	// condition fails, saying which. It reads every warehouse with correlated subqueries, which
	// takes minutes per warehouse on some servers (checkTimeout). Default true.
	// +kubebuilder:default=true
	// +optional
	Check *bool `json:"check,omitempty"`

	// CheckTimeout bounds the check (its Job's active deadline); default 10 minutes plus 5
	// per warehouse.
	// +optional
	CheckTimeout *metav1.Duration `json:"checkTimeout,omitempty"`

	// IgnoreErrors keeps a step's clients going after a failed transaction (deadlocks and lock
	// wait timeouts happen under contention); the failures are counted per transaction type.
	// Default true; false ends a step at its first failed transaction.
	// +kubebuilder:default=true
	// +optional
	IgnoreErrors *bool `json:"ignoreErrors,omitempty"`

	// Image is the go-tpc image (go-tpc v1.0.7 and the operator's launcher, see images/go-tpc);
	// default ghcr.io/mysqlbench/go-tpc:v1.0.7.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:[.][a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*(?::[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$')",message="tpcc.image must be an image reference such as ghcr.io/mysqlbench/go-tpc:v1.0.7 or registry.example.com:5000/go-tpc@sha256:<64 hex digits>"
	// +optional
	Image string `json:"image,omitempty"`
}

// MysqlslapLoadType is the SQL mysqlslap generates (--auto-generate-sql-load-type).
// +kubebuilder:validation:Enum=mixed;read;write;key;update
type MysqlslapLoadType string

// MysqlslapWorkload is what mysqlslap runs at each step: generated SQL (loadType), or the queries
// of args (--query, with --create for the tables they need). It runs in its own schema,
// mysqlslap, never the connection's database: at every iteration mysqlslap drops that schema,
// creates it with its table, runs the queries and drops it again.
//
// +kubebuilder:validation:XValidation:rule="!has(self.loadType) || !has(self.args) || !self.args.exists(a, a.matches('^--(query|create)(=|$)'))",message="workload.mysqlslap.loadType generates the SQL: remove it when args give --query or --create"
type MysqlslapWorkload struct {
	// LoadType is the SQL mysqlslap generates (--auto-generate-sql-load-type): mixed (half
	// inserts, half selects), read (full-table selects), write (inserts), key (primary-key
	// reads) or update (primary-key updates). Default mixed, unless args give --query.
	// +optional
	LoadType MysqlslapLoadType `json:"loadType,omitempty"`

	// Queries is how many queries all clients run together in one iteration
	// (--number-of-queries): each client runs Queries / threads of them, rounded down, at
	// least 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000000
	// +kubebuilder:default=10000
	// +optional
	Queries int64 `json:"queries,omitempty"`

	// Iterations is how many times mysqlslap runs the queries at each step (--iterations); the
	// step's QPS is over their average time.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +kubebuilder:default=1
	// +optional
	Iterations int32 `json:"iterations,omitempty"`

	// Image is an image with mysqlslap or mariadb-slap on its PATH and /bin/sh (and the mysql or
	// mariadb client for spec.serverStats), e.g. mysql:8.4 or mariadb:11.8. When unset, a builtin target's own server image (its client matches the
	// server); targets of other engines need it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:[.][a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*(?::[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$')",message="mysqlslap.image must be an image reference such as mysql:8.4 or registry.example.com:5000/db/mariadb@sha256:<64 hex digits> (lower-case repository, a tag of letters, digits, '_', '.' and '-')"
	// +optional
	Image string `json:"image,omitempty"`

	// Args are further mysqlslap options, one `--name=value` per item, e.g. --engine=innodb,
	// --commit=10, --auto-generate-sql-secondary-indexes=2 or --query=SELECT 1. Only these, by
	// their full names: --auto-generate-sql-add-autoincrement, -execute-number, -guid-primary,
	// -secondary-indexes, -unique-query-number, -unique-write-number and -write-number (each
	// --auto-generate-sql-...), --commit, --compress, --create, --delimiter, --engine (one),
	// --number-char-cols, --number-int-cols, --post-query, --pre-query, --query and the
	// --ssl*/--tls-version options. The operator sets the concurrency, iterations, query count,
	// generated SQL and its load type, the schema and the connection; --loose-, --skip- and
	// --enable- forms and shortened names are refused like every other option. The SQL of
	// --query, --create, --pre-query and --post-query is written out (with a blank), never a
	// file's path, and --create needs --query.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=4096
	// +kubebuilder:validation:items:Pattern=`^--[a-z][a-z0-9-]*(=.*)?$`
	// +kubebuilder:validation:XValidation:rule="self.all(a, a.matches('^--(auto-generate-sql-add-autoincrement|auto-generate-sql-execute-number|auto-generate-sql-guid-primary|auto-generate-sql-secondary-indexes|auto-generate-sql-unique-query-number|auto-generate-sql-unique-write-number|auto-generate-sql-write-number|commit|compress|create|delimiter|engine|number-char-cols|number-int-cols|post-query|pre-query|query|ssl|ssl-ca|ssl-capath|ssl-cert|ssl-cipher|ssl-crl|ssl-crlpath|ssl-key|ssl-mode|ssl-verify-server-cert|tls-version)(=|$)') && !a.matches('^--engine=.*,'))",message="workload.mysqlslap.args may only set mysqlslap options the operator does not own, by their full names (--engine, --commit, --create, --query, --pre-query, --post-query, --delimiter, --compress, --number-char-cols, --number-int-cols, the --auto-generate-sql-* options other than the load type, --ssl*, --tls-version), one engine: concurrency, iterations, query count and load type come from spec.ladder and workload.mysqlslap"
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('^--(create|query|pre-query|post-query)=') || a.matches('^--[a-z-]+=[^/.~ ].* '))",message="workload.mysqlslap.args: write the SQL of --query, --create, --pre-query and --post-query itself (with a blank, e.g. --query=SELECT 1), not a file's path: mysqlslap runs a file of that name if one exists"
	// +kubebuilder:validation:XValidation:rule="!self.exists(a, a.matches('^--create(=|$)')) || self.exists(a, a.matches('^--query(=|$)'))",message="workload.mysqlslap.args give --create without --query: add the --query to run, or remove --create to let mysqlslap generate the SQL"
	// +listType=atomic
	// +optional
	Args []string `json:"args,omitempty"`
}

// Ladder is the sequence of concurrency levels each target is measured at.
//
// +kubebuilder:validation:XValidation:rule="self.threads.isSorted() && self.threads.all(t, self.threads.exists_one(u, u == t))",message="ladder.threads must be strictly ascending with no repeats, e.g. [1, 2, 4, 8]"
type Ladder struct {
	// Threads are the sysbench thread counts to measure, strictly ascending, 1 to 10000, at most
	// 64 steps, e.g. [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000]. Each is one step: one
	// sysbench Job running for stepDuration.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=10000
	// +listType=atomic
	Threads []int32 `json:"threads"`

	// StepDuration is how long each step runs (sysbench --time), from 1s to 24h, in whole
	// seconds written with h, m and s, e.g. 300s, 5m or 1h30m.
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(h|m|s))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s') && duration(self) <= duration('24h')",message="ladder.stepDuration must be between 1s and 24h"
	// +optional
	StepDuration *metav1.Duration `json:"stepDuration,omitempty"`

	// Warmup is how long sysbench runs once per target before the first step, with its result
	// discarded, so caches and the buffer pool are warm. 0s skips it; at most 24h, in whole
	// seconds written with h, m and s.
	// +kubebuilder:default="0s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^([0-9]+(h|m|s))+$`
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('0s') && duration(self) <= duration('24h')",message="ladder.warmup must be between 0s (no warm-up) and 24h"
	// +optional
	Warmup *metav1.Duration `json:"warmup,omitempty"`

	// WarmupThreads is the thread count of the warm-up. When unset, the ladder's largest thread
	// count capped at 100 (the warm-up of Percona's published studies).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	WarmupThreads *int32 `json:"warmupThreads,omitempty"`
}

// PoolPlacement selects the nodes of a node pool.
type PoolPlacement struct {
	// NodeSelector the pool's pods must match. When unset: mysqlbench.io/pool=database for
	// servers, mysqlbench.io/pool=client for sysbench. An empty map means any node.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the pool's pods. When unset: the pool's taint
	// mysqlbench.io/dedicated=database:NoSchedule (or =client) is tolerated. An empty list
	// tolerates nothing.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity is added to the pool's pods, next to the anti-affinity the operator sets.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
}

// DatabasePlacement selects the nodes of the database pool.
type DatabasePlacement struct {
	PoolPlacement `json:",inline"`

	// Exclusive keeps a benchmark server alone on its node: no other benchmark server and no
	// sysbench client may share it (required pod anti-affinity), and the run's sysbench clients
	// avoid the nodes of its servers. Set false to allow the client on the server's node (the
	// "client on the same host" variant of a study).
	// +kubebuilder:default=true
	// +optional
	Exclusive *bool `json:"exclusive,omitempty"`
}

// Placement says where servers and sysbench clients run.
type Placement struct {
	// Database is the pool the benchmark servers run in (builtin and Percona engines).
	// +optional
	Database DatabasePlacement `json:"database,omitempty"`

	// Client is the pool the sysbench Jobs run in.
	// +optional
	Client PoolPlacement `json:"client,omitempty"`
}

// Storage is the volume each server keeps its data on.
type Storage struct {
	// Size of each server's data volume, e.g. 20Gi. A run whose sbtest data cannot fit
	// (workload.tables × workload.tableSize rows at 200 bytes or more each) is refused.
	Size resource.Quantity `json:"size"`

	// StorageClassName of the data volume's PersistentVolumeClaim; the cluster's default class
	// when unset.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// The data-size rule spans workload and storage, so it sits on the spec. 200 bytes per row is
// specs.BytesPerRow (CheckDataFits applies it to objects stored before the rule). The
// comparison is in floating point, and the message uses format(), because the cost estimator
// gives string(an int) no size bound: quantity() of it or + on it makes the API server refuse
// the CRD. storage.size (int or string) is bounded by the request size, and the products, at most
// 2e15, are exact as doubles.

// BenchmarkRunSpec is what to benchmark and how. It cannot change once the run has started.
//
// +kubebuilder:validation:XValidation:rule="!has(self.repetitions) || self.repetitions <= 1 || size(self.targets) * size(self.ladder.threads) * self.repetitions <= 512",message="with repetitions, targets × ladder.threads × repetitions must be at most 512 steps, so the steps and their statistics fit the run's status and its results ConfigMap: lower repetitions, the ladder or the targets"
// +kubebuilder:validation:XValidation:rule="!has(self.workload) || !has(self.storage) || !isQuantity(string(self.storage.size)) || quantity(string(self.storage.size)).asApproximateFloat() >= 200.0 * double(has(self.workload.tables) ? self.workload.tables : 1) * double(has(self.workload.tableSize) ? self.workload.tableSize : 10000)",message="workload.tables × workload.tableSize rows need at least 200 bytes each, more than storage.size holds: raise storage.size or lower tables/tableSize",messageExpression="'workload.tables × workload.tableSize needs at least %d bytes (200 bytes per row) but storage.size is %s: raise storage.size (to at least %dGi) or lower tables/tableSize'.format([200 * (has(self.workload.tables) ? self.workload.tables : 1) * (has(self.workload.tableSize) ? self.workload.tableSize : 10000), string(self.storage.size), (200 * (has(self.workload.tables) ? self.workload.tables : 1) * (has(self.workload.tableSize) ? self.workload.tableSize : 10000) + 1073741823) / 1073741824])"
// +kubebuilder:validation:XValidation:rule="!has(self.workload) || has(self.storage) || (has(self.workload.tables) ? self.workload.tables : 1) * (has(self.workload.tableSize) ? self.workload.tableSize : 10000) <= 110953321",message="without spec.storage each server keeps its data in an emptyDir of at most 64Gi (600 bytes per row and 2Gi for the server's files), which workload.tables × workload.tableSize exceeds: set spec.storage (a PersistentVolumeClaim of the size the data needs) or lower tables/tableSize"
// +kubebuilder:validation:XValidation:rule="!has(self.order) || self.order != 'Interleaved' || self.targets.all(t, !has(t.engine) || t.engine == 'builtin')",message="order Interleaved keeps every target's server up together on one database node, which only the builtin engine's servers are: use order Sequential with engines percona-server, percona-xtradb-cluster or external"
// +kubebuilder:validation:XValidation:rule="!has(self.serverInstance) || self.serverInstance != 'PerRepetition' || self.targets.all(t, !has(t.engine) || t.engine == 'builtin')",message="serverInstance PerRepetition replaces each target's server pod between repetitions, which only the builtin engine's servers are: use serverInstance Shared with engines percona-server, percona-xtradb-cluster or external"
// +kubebuilder:validation:XValidation:rule="(has(self.workload) ? 1 : 0) + (has(self.workloads) ? 1 : 0) + (has(self.preset) ? 1 : 0) == 1",message="set exactly one of spec.workload (one workload), spec.workloads (a list of named workloads) and spec.preset (a named suite such as sysbench-oltp-micro)"
// +kubebuilder:validation:XValidation:rule="!has(self.workloads) || size(self.targets) * size(self.workloads) * size(self.ladder.threads) * (has(self.repetitions) ? self.repetitions : 1) <= 512",message="targets × workloads × ladder.threads × repetitions must be at most 512 steps, so the steps fit the run's status and its results ConfigMap: lower the workloads, repetitions, the ladder or the targets",messageExpression="'targets × workloads × ladder.threads × repetitions is %d × %d × %d × %d = %d steps, more than the 512 a run holds (its status and its results ConfigMap): lower the workloads, repetitions, the ladder or the targets'.format([size(self.targets), size(self.workloads), size(self.ladder.threads), has(self.repetitions) ? self.repetitions : 1, size(self.targets) * size(self.workloads) * size(self.ladder.threads) * (has(self.repetitions) ? self.repetitions : 1)])"
// +kubebuilder:validation:XValidation:rule="!has(self.preset) || size(self.targets) * 10 * size(self.ladder.threads) * (has(self.repetitions) ? self.repetitions : 1) <= 512",message="targets × the preset's 10 workloads × ladder.threads × repetitions must be at most 512 steps: lower repetitions, the ladder or the targets",messageExpression="'targets × preset workloads × ladder.threads × repetitions is %d × 10 × %d × %d = %d steps, more than the 512 a run holds (its status and its results ConfigMap): lower repetitions, the ladder or the targets'.format([size(self.targets), size(self.ladder.threads), has(self.repetitions) ? self.repetitions : 1, size(self.targets) * 10 * size(self.ladder.threads) * (has(self.repetitions) ? self.repetitions : 1)])"
// +kubebuilder:validation:XValidation:rule="!has(self.parallelism) || (has(self.order) && self.order == 'Parallel')",message="spec.parallelism is only read with order: Parallel: set the order, or remove parallelism"
// +kubebuilder:validation:XValidation:rule="!has(self.baseTarget) || self.targets.exists(t, t.name == self.baseTarget)",message="spec.baseTarget must name one of spec.targets"
type BenchmarkRunSpec struct {
	// Targets are the servers to compare, benchmarked one after another in this order; each is
	// one column of the results table. 1 to 16 targets with unique names.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(t, self.exists_one(u, u.name == t.name))",message="target names must be unique: each target is one column of the results table"
	// +listType=atomic
	Targets []Target `json:"targets"`

	// BaseTarget names the target the others are set against in the relative table of
	// report.md and kubectl mysqlbench describe (a row per workload and thread count, a column
	// per target: the ratio of the medians with its interval) and in the heat map of kubectl
	// mysqlbench plot --heatmap. Unset: the first target.
	// +kubebuilder:validation:MaxLength=40
	// +optional
	BaseTarget string `json:"baseTarget,omitempty"`

	// Workload is the sysbench script and data set every step runs. Set exactly one of
	// workload, workloads and preset.
	// +optional
	Workload Workload `json:"workload,omitzero"`

	// Workloads are several named workloads measured on every target, each a stock sysbench
	// script with its own extraArgs, a custom script, mysqlslap or go-tpc (one client for the
	// whole run: the report, the cells and the comparison read one primary metric). Each
	// target's server is provisioned once and every workload's ladder is measured on it: read
	// workloads first, then the workloads that write, each group in the order given here (the
	// status and the results record the order). Data is prepared once per data shape (client,
	// script for custom scripts, tables, tableSize, and the extraArgs that change what prepare
	// creates) and again only where a workload follows one that wrote to that data or needs
	// another shape. With repetitions each round measures every workload once. 1 to 16
	// workloads with unique names; targets × workloads × ladder.threads × repetitions at most
	// 512 steps.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(w, self.exists_one(u, u.name == w.name))",message="workload names must be unique: each names its rows of the results"
	// +kubebuilder:validation:XValidation:rule="self.all(w, !has(w.customScript) || self.all(u, !has(u.customScript) || (u.customScript.name == w.customScript.name && u.customScript.key == w.customScript.key)))",message="the workloads of a run may use one custom script (one ConfigMap key) between them: the run pins that script's content once, before its first Job"
	// +kubebuilder:validation:XValidation:rule="self.all(w, (has(w.client) ? w.client : 'sysbench') == (has(self[0].client) ? self[0].client : 'sysbench'))",message="every workload of a run uses the same client (sysbench, mysqlslap or go-tpc): the report, the cells and a comparison read one primary metric per run; run the other client's workloads in a run of their own"
	// +listType=atomic
	// +optional
	Workloads []NamedWorkload `json:"workloads,omitempty"`

	// Preset is a named suite of workloads that expands to spec.workloads' list, with one data
	// set for all of them: sysbench-oltp-micro is the stock sysbench 1.0.20 microbenchmarks
	// (point select, random points, random ranges, read-only, read-write, write-only, update
	// index, update non-index, insert, delete), in that order.
	// +optional
	Preset *Preset `json:"preset,omitempty"`

	// Ladder is the thread counts each target is measured at, and for how long.
	Ladder Ladder `json:"ladder"`

	// Placement says which nodes run the servers and which run sysbench. By default servers run
	// on nodes labelled mysqlbench.io/pool=database and sysbench on nodes labelled
	// mysqlbench.io/pool=client, each tolerating its pool's mysqlbench.io/dedicated taint.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// ClientResources are the sysbench container's CPU and memory requests and limits. Give the
	// client enough CPU for the ladder's top thread count, or it becomes the bottleneck.
	// +optional
	ClientResources *corev1.ResourceRequirements `json:"clientResources,omitempty"`

	// Storage is each server's data volume. When unset, data lives in an emptyDir on the node.
	// +optional
	Storage *Storage `json:"storage,omitempty"`

	// SysbenchImage is the sysbench 1.0.x image the Jobs run, with /bin/sh, cp, mkdir and
	// sha256sum (coreutils or busybox: each step checks the Lua it runs against the digests the
	// operator put in its Job). When unset, the operator's default (its --sysbench-image flag: the
	// project's Debian bookworm sysbench 1.0.20 image).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:[.][a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*)*(?::[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$')",message="sysbenchImage must be an image reference such as mysql:8.4 or registry.example.com:5000/sysbench@sha256:<64 hex digits> (lower-case repository, a tag of letters, digits, '_', '.' and '-')"
	// +optional
	SysbenchImage string `json:"sysbenchImage,omitempty"`

	// Cleanup says what happens to each server once its ladder has finished: Always delete it,
	// delete it OnSuccess (keep failed ones for inspection), or Never (keep until the run is
	// deleted). Deleting the run always deletes everything it created.
	// +kubebuilder:default=Always
	// +optional
	Cleanup CleanupPolicy `json:"cleanup,omitempty"`

	// NetworkPolicy fences the servers the operator runs (engine builtin). Enabled (the default):
	// each builtin target's server pod gets a NetworkPolicy, owned by the run, that allows
	// ingress only on TCP 3306 and only from the run's own sysbench pods for that target (same
	// namespace); all other ingress to the server is denied, its egress is not restricted. The
	// operator itself never connects to the servers (probe, prepare and the ladder all run in
	// sysbench pods), so it needs no exception. A NetworkPolicy is enforced only where the
	// cluster's network plugin (CNI) implements NetworkPolicy; elsewhere it is stored and has no
	// effect. Whether traffic from the node itself (the kubelet's readiness probe) is allowed
	// depends on the plugin; the common ones allow it. Targets of engines percona-server and
	// percona-xtradb-cluster are not covered (their pods belong to the Percona Operator), nor are
	// external ones. Disabled: no NetworkPolicy is created, e.g. where the namespace's own
	// policies already govern the servers.
	// +kubebuilder:default=Enabled
	// +optional
	NetworkPolicy NetworkPolicyMode `json:"networkPolicy,omitempty"`

	// Repetitions is how many times each target measures its whole ladder, 1 to 10. Each cell of
	// the report (one target at one thread count) then has that many independent measurements,
	// from which the report gives the median, its 95 % confidence interval and the coefficient of
	// variation, and a comparison tests whether two runs differ (with 1 repetition it cannot:
	// the verdict is Inconclusive). The ladder is run as rounds, ascending in odd rounds and
	// descending in even ones, so the repetitions of a cell are spread over the target's time and
	// a slow drift weighs the same on every rung. With repetitions a run measures at most 512
	// steps (targets × threads × repetitions).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=1
	// +optional
	Repetitions *int32 `json:"repetitions,omitempty"`

	// Order is how the targets share the database node. Sequential (the default) runs each
	// target's whole ladder, then the next target's, each server alone on the node. Interleaved
	// starts every target's server together on one database node (their resources must fit it:
	// checked before anything starts), prepares and warms each up, then measures in rounds (one
	// per repetition): at each rung of the round every target measures that thread count, one
	// after another, in an order drawn at random per rung (seeded by the run's UID), so the
	// targets' repetitions of a cell are paired by round and measured minutes apart under the
	// same conditions (randomized multiple interleaved trials) instead of hours apart. Only for
	// targets the operator runs (engine builtin). Parallel runs up to spec.parallelism targets
	// at once, each server alone on its own node of the database pool (a pool of identical
	// nodes: N nodes do the study about N times faster): a target starts as soon as the pool
	// has a node for it and no earlier run waits for one, so a run may start with fewer
	// targets than it could run at once and takes more as nodes free up. Each target records
	// the node it ran on; targets compared across nodes differ by their nodes too.
	// +kubebuilder:validation:Enum=Sequential;Interleaved;Parallel
	// +kubebuilder:default=Sequential
	// +optional
	Order RunOrder `json:"order,omitempty"`

	// Parallelism is how many targets order Parallel runs at once at most, each holding a node
	// of the database pool (default: every target). The pool's free nodes bound it too.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	Parallelism *int32 `json:"parallelism,omitempty"`

	// ServerInstance is what the repetitions of a target measure on (engine builtin).
	// Unset means Shared for a run created on its own, and PerRepetition for a BenchmarkSchedule's
	// runs with repetitions, builtin targets and order Sequential (they are compared with other
	// nights' runs, each on its own instance). Shared: every repetition measures the same server instance, so the
	// spread of a cell's repetitions is only the noise within one instance: one process, one
	// buffer pool, one set of data files, one node. PerRepetition: before each repetition after
	// the first, the operator deletes the target's server pod and its StatefulSet starts a new
	// one (a new server process with a cold buffer pool, possibly on another node of the
	// database pool); its data is prepared again (the default emptyDir goes with the pod, and
	// the data files' layout is part of what differs between two nights) or kept where
	// spec.storage puts it on a persistent volume, then warmed up before the repetition
	// measures. A cell's spread then includes what differs between server instances, which is
	// what a comparison of two runs on two nights must count on. Each step records the instance
	// it measured (steps[].instance). This deliberate replacement is not a server restart: it
	// discards nothing and counts against no limit. With order Interleaved every target gets its
	// new instance at its first step of each round, so the targets of a round are compared on
	// fresh instances on every side (a schedule's confirmation runs measure this way).
	// +kubebuilder:validation:Enum=Shared;PerRepetition
	// +optional
	ServerInstance ServerInstanceMode `json:"serverInstance,omitempty"`

	// ServerStats is what each ladder step records from the server besides what sysbench
	// measures: a bounded set of its global status counters (and InnoDB metrics where the
	// account may read them) and, when performance_schema is on, its top wait events, each as
	// the difference between a snapshot taken just before the step's load starts and one just
	// after it ended (outside the measured window). On by default.
	// +optional
	ServerStats *ServerStats `json:"serverStats,omitempty"`

	// StepRetryLimit is how many times a failed step (sysbench exited non-zero or gave no final
	// report) is retried before its target fails, 0 to 10.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=2
	// +optional
	StepRetryLimit *int32 `json:"stepRetryLimit,omitempty"`
}

// RunPhase is where a BenchmarkRun is in its lifecycle.
// +kubebuilder:validation:Enum=Pending;Provisioning;Preparing;Running;Succeeded;Failed
type RunPhase string

const (
	RunPending      RunPhase = "Pending"
	RunProvisioning RunPhase = "Provisioning"
	RunPreparing    RunPhase = "Preparing"
	RunRunning      RunPhase = "Running"
	RunSucceeded    RunPhase = "Succeeded"
	RunFailed       RunPhase = "Failed"
)

// TargetPhase is where one target is in its lifecycle.
// +kubebuilder:validation:Enum=Pending;Provisioning;Preparing;WarmingUp;Running;CleaningUp;Succeeded;Failed
type TargetPhase string

const (
	TargetPending      TargetPhase = "Pending"
	TargetProvisioning TargetPhase = "Provisioning"
	TargetPreparing    TargetPhase = "Preparing"
	TargetWarmingUp    TargetPhase = "WarmingUp"
	TargetRunning      TargetPhase = "Running"
	TargetCleaningUp   TargetPhase = "CleaningUp"
	TargetSucceeded    TargetPhase = "Succeeded"
	TargetFailed       TargetPhase = "Failed"
)

// QPS is queries per second, split by kind as sysbench counts them.
type QPS struct {
	// Total queries per second.
	Total float64 `json:"total"`
	// Read queries (SELECT) per second.
	Read float64 `json:"read"`
	// Write queries (INSERT, UPDATE, DELETE) per second.
	Write float64 `json:"write"`
	// Other queries (BEGIN, COMMIT, ...) per second.
	Other float64 `json:"other"`
}

// Latency of sysbench events, in milliseconds.
type Latency struct {
	// MinMs is the fastest event.
	MinMs float64 `json:"minMs"`
	// AvgMs is the mean.
	AvgMs float64 `json:"avgMs"`
	// P95Ms is the 95th percentile.
	P95Ms float64 `json:"p95Ms"`
	// MaxMs is the slowest event.
	MaxMs float64 `json:"maxMs"`
}

// ServerStats configures what each ladder step records from the server.
type ServerStats struct {
	// Enabled records the server's counters and waits around each ladder step (default true).
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// TopWaits is how many wait events, by wait time over the step, each step keeps (1 to 50,
	// default 10).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	// +kubebuilder:default=10
	// +optional
	TopWaits int32 `json:"topWaits,omitempty"`
}

// StepResult is the measured outcome of one step of the ladder.
type StepResult struct {
	// Workload is the name of the workload the step measured (spec.workloads or spec.preset);
	// unset for a run of one spec.workload.
	// +optional
	Workload string `json:"workload,omitempty"`
	// Threads is the step's sysbench thread count.
	Threads int32 `json:"threads"`
	// Repetition is which repetition of the ladder (spec.repetitions) the step belongs to,
	// from 1; unset means 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	Repetition int32 `json:"repetition,omitempty"`
	// TPS is transactions (sysbench events) per second.
	TPS float64 `json:"tps"`
	// QPS is queries per second, in total and split read/write/other.
	QPS QPS `json:"qps"`
	// Latency of events in milliseconds: min, avg, p95 and max.
	Latency Latency `json:"latency"`
	// Errors is the number of ignored errors during the step (sysbench --mysql-ignore-errors).
	Errors int64 `json:"errors"`
	// Reconnects is the number of reconnects during the step.
	Reconnects int64 `json:"reconnects"`
	// DurationSeconds is how long sysbench measured, as it reported it.
	DurationSeconds float64 `json:"durationSeconds"`
	// OverDuration is true when sysbench measured the step for longer than ladder.stepDuration
	// plus a tolerance (the larger of 1 s and 1 % of the step; sysbench always ends a step a
	// little late, after the events in flight, by a fraction of a second on normal steps): an event
	// outlasted the step, so its rates are counts over a longer time than the other steps',
	// ending with that event running alone. Its numbers stay here and in the results, marked;
	// it is left out of the cells, the report's statistics and chart, and the comparison with a
	// baseline. Only sysbench steps have a duration to outlast (mysqlslap runs its queries).
	// +optional
	OverDuration bool `json:"overDuration,omitempty"`
	// Instance numbers the server instance the step measured, from 1 (the target's first
	// server): a new number after each restart or replacement of the server (with
	// spec.serverInstance PerRepetition, one per repetition). Steps with one number shared a
	// server process, its buffer pool and its data files. Unset where the operator cannot tell
	// instances apart (engines other than builtin).
	// +optional
	Instance int32 `json:"instance,omitempty"`
	// TPCC is a go-tpc step's TPC-C result (workload.client go-tpc). Such a step's TPS is all
	// successful transactions per second, its latency the new-order transaction's, its errors
	// the failed transactions of all types; it has no QPS (go-tpc counts no queries).
	// +optional
	TPCC *TPCCResult `json:"tpcc,omitempty"`
	// ClientCPU is the client container's CPU over the step, from its kubelet (when the
	// operator samples the kubelets' CPU stats): whether the client, rather than the server, may
	// have been what limited the step.
	// +optional
	ClientCPU *ClientCPU `json:"clientCPU,omitempty"`
	// Attempts is how many times the step ran until it succeeded (1 when it never failed).
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// StartTime is when the step's Job started. A step whose Job started while the step before
	// it still measured (the server lock) waited in it for that step's end.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// FinishTime is when the step's Job finished.
	// +optional
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
}

// TPCCResult is what one go-tpc tpcc run measured.
type TPCCResult struct {
	// TpmC is new-order transactions per minute over the step: TPC-C's throughput metric.
	TpmC float64 `json:"tpmC"`
	// TpmTotal is successful transactions of all five types per minute.
	TpmTotal float64 `json:"tpmTotal"`
	// Efficiency is go-tpc's tpmC / (12.86 x warehouses) in percent: far above 100 here, as
	// the steps run without keying and thinking time.
	Efficiency float64 `json:"efficiency"`
	// Transactions are the five transaction types, new-order first.
	// +listType=atomic
	// +optional
	Transactions []TPCCTransaction `json:"transactions,omitempty"`
}

// TPCCTransaction is one TPC-C transaction type's count and latency over a step.
type TPCCTransaction struct {
	// Name is go-tpc's name: NEW_ORDER, PAYMENT, ORDER_STATUS, DELIVERY or STOCK_LEVEL.
	Name string `json:"name"`
	// Count is how many succeeded.
	Count int64 `json:"count"`
	// Errors is how many failed (go-tpc's <name>_ERR).
	// +optional
	Errors int64 `json:"errors,omitempty"`
	// Latency of the successful ones in milliseconds.
	AvgMs float64 `json:"avgMs"`
	P50Ms float64 `json:"p50Ms"`
	P95Ms float64 `json:"p95Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
}

// ClientCPU is how busy a step's client container was.
type ClientCPU struct {
	// Cores is the CPU the client container used, on average over its run.
	Cores float64 `json:"cores"`
	// Available is the CPU it could use: its CPU limit (spec.clientResources), else its node's
	// allocatable CPU.
	Available float64 `json:"available"`
	// Saturated says that it used ClientSaturation (90 %) or more of Available: the step
	// measured the client's limit as much as the server's. Give the client more CPU
	// (spec.clientResources, a larger client node) or compare fewer threads.
	// +optional
	Saturated bool `json:"saturated,omitempty"`
}

// ClientSaturation is the share of its available CPU from which a step's client counts as
// saturated (ClientCPU.Saturated).
const ClientSaturation = 0.9

// MetricStats summarizes one metric of a cell over its repetitions.
type MetricStats struct {
	// Median of the repetitions.
	Median float64 `json:"median"`
	// CILow and CIHigh bound the confidence interval of the median: two order statistics, no
	// normality assumed. With fewer than 6 repetitions no interval reaches 95 %: they are then
	// the minimum and maximum, and CIConfidence says how much less they cover.
	CILow  float64 `json:"ciLow"`
	CIHigh float64 `json:"ciHigh"`
	// CIConfidence is the interval's confidence level, e.g. 0.9688 for 6 repetitions, 0.75 for 3.
	CIConfidence float64 `json:"ciConfidence"`
	// CV is the coefficient of variation (sample standard deviation / mean), 0 with one repetition.
	CV float64 `json:"cv"`
	// Min and Max of the repetitions.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// CellStats summarizes the repetitions of one cell: the target at one thread count.
type CellStats struct {
	// Workload is the name of the cell's workload; unset for a run of one spec.workload.
	// +optional
	Workload string `json:"workload,omitempty"`
	// Threads is the cell's thread count.
	Threads int32 `json:"threads"`
	// N is the number of repetitions measured.
	N int32 `json:"n"`
	// QPS is total queries per second (zero for go-tpc, which counts no queries).
	QPS MetricStats `json:"qps"`
	// TpmC is new-order transactions per minute, for go-tpc steps.
	// +optional
	TpmC *MetricStats `json:"tpmC,omitempty"`
	// TPS is transactions per second.
	TPS MetricStats `json:"tps"`
	// P95Ms is the p95 latency in milliseconds.
	P95Ms MetricStats `json:"p95Ms"`
}

// ServerRestart is a restart of a target's server during its run.
type ServerRestart struct {
	// Time is when the operator noticed it.
	Time metav1.Time `json:"time"`
	// During is the step the server restarted in (e.g. "2/4 (2 threads)"), whose measurement
	// was discarded.
	During string `json:"during"`
	// Message says what the operator saw (the server's exit, or that its pod is gone).
	// +optional
	Message string `json:"message,omitempty"`
}

// ServerReplacement is a deliberate replacement of a target's server by a new instance.
type ServerReplacement struct {
	// Time is when the operator deleted the previous instance's pod.
	Time metav1.Time `json:"time"`
	// Repetition is the repetition (from 1) the new instance measures.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Repetition int32 `json:"repetition"`
	// Replaced identifies the instance that was deleted, until the new one has been probed:
	// a repeated reconcile then never deletes the new one.
	// +optional
	Replaced string `json:"replaced,omitempty"`
}

// ServerNode is the node a target's server ran on, as its Node object described it when the
// operator probed the server. Free-text fields are cut to MaxNodeFactLen, so a node cannot swell
// the status or the results.
type ServerNode struct {
	// Name of the node.
	Name string `json:"name"`
	// CPUCapacity is the node's CPUs (status.capacity).
	// +optional
	CPUCapacity *resource.Quantity `json:"cpuCapacity,omitempty"`
	// CPUAllocatable is the CPUs the node leaves to pods (status.allocatable).
	// +optional
	CPUAllocatable *resource.Quantity `json:"cpuAllocatable,omitempty"`
	// MemoryCapacity is the node's memory (status.capacity).
	// +optional
	MemoryCapacity *resource.Quantity `json:"memoryCapacity,omitempty"`
	// KernelVersion is the node's kernel (status.nodeInfo, as its kubelet reported it, as are
	// the next four).
	// +optional
	KernelVersion string `json:"kernelVersion,omitempty"`
	// OSImage is the node's operating system, e.g. "Debian GNU/Linux 12 (bookworm)".
	// +optional
	OSImage string `json:"osImage,omitempty"`
	// Architecture is the node's CPU architecture, e.g. amd64 or arm64.
	// +optional
	Architecture string `json:"architecture,omitempty"`
	// ContainerRuntime is the node's container runtime and its version, e.g. containerd://1.7.22.
	// +optional
	ContainerRuntime string `json:"containerRuntime,omitempty"`
	// KubeletVersion is the node's kubelet version.
	// +optional
	KubeletVersion string `json:"kubeletVersion,omitempty"`
	// InstanceType is the node's node.kubernetes.io/instance-type label (else the older
	// beta.kubernetes.io/instance-type), set by cloud providers.
	// +optional
	InstanceType string `json:"instanceType,omitempty"`
	// Zone is the node's topology.kubernetes.io/zone label.
	// +optional
	Zone string `json:"zone,omitempty"`
}

// MaxNodeFactLen bounds each free-text field of a ServerNode (a node name may be 253 long).
const MaxNodeFactLen = 253

// MaxInstanceNodes bounds TargetStatus.InstanceNodes.
const MaxInstanceNodes = 16

// TargetStatus is the observed state of one target.
type TargetStatus struct {
	// Name of the target, as in spec.targets.
	Name string `json:"name"`
	// Phase of the target: Pending, Provisioning, Preparing, WarmingUp, Running, CleaningUp,
	// Succeeded or Failed.
	// +optional
	Phase TargetPhase `json:"phase,omitempty"`
	// ServerVersion is what the server answered to SELECT VERSION(), not the image tag.
	// +optional
	ServerVersion string `json:"serverVersion,omitempty"`
	// Endpoint is the host:port sysbench connects to.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// Message says why the target failed, naming the step and the cause
	// (e.g. "step 3 (8 threads): error 1040: too many connections").
	// +optional
	Message string `json:"message,omitempty"`
	// FirstServerExit is the earliest exit of the server container the operator saw before the
	// server was first ready: which exit it was, its exit code and the server's error lines. A
	// failure message quotes it, because a restart often fails on what the first attempt left
	// behind (e.g. "Table 'mysql.user' doesn't exist" after a failed initialization).
	// +optional
	FirstServerExit string `json:"firstServerExit,omitempty"`
	// FailedAttempts counts the failed attempts of the step in progress.
	// +optional
	FailedAttempts int32 `json:"failedAttempts,omitempty"`
	// ServerInstance identifies the server instance the target's data was prepared on and its
	// steps measured against (for servers the operator runs: the pod's UID and the container's
	// restart count). A different instance means the server restarted.
	// +optional
	ServerInstance string `json:"serverInstance,omitempty"`
	// ServerImageDigest is the digest of the image the server ran ("sha256:..."), as the kubelet
	// reported it when the server was probed; unset where the operator does not run the server.
	// A confirmation run pins the image to it, so a moving tag cannot swap the server.
	// +kubebuilder:validation:Pattern=`^sha256:[a-f0-9]{64}$`
	// +optional
	ServerImageDigest string `json:"serverImageDigest,omitempty"`
	// Node is the node the server's latest instance ran on, with its CPUs, memory, kernel and
	// instance type, recorded when the instance was probed; unset where the operator does not run
	// the server (external and Percona targets: their pods are another operator's) or could not
	// tell. The latest, because the steps that follow measure it.
	// +optional
	Node *ServerNode `json:"node,omitempty"`
	// InstanceNodes names, in order of first use, every node an instance of the server ran on,
	// when that was more than one (spec.serverInstance PerRepetition replaces the server between
	// repetitions, and a replaced or rescheduled pod may land on another node of the pool): the
	// target's steps then include the differences between those nodes. Names only, at most
	// MaxInstanceNodes: the facts of each would multiply the status, and Node has the latest.
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	// +optional
	InstanceNodes []string `json:"instanceNodes,omitempty"`
	// Instances counts the server instances the target has been probed on: 1 for its first
	// server, one more after each restart or replacement. Steps record the number of theirs.
	// +optional
	Instances int32 `json:"instances,omitempty"`
	// LastReplacement is the operator's latest replacement of the server by a new instance
	// (spec.serverInstance PerRepetition): when the next step belongs to a later repetition than
	// its repetition, the server is replaced first.
	// +optional
	LastReplacement *ServerReplacement `json:"lastReplacement,omitempty"`
	// ServerRestarts counts the server's restarts after it was first probed. Each one discards
	// the step in progress: the operator waits for the server, checks that the sbtest tables
	// survived (prepares them again if not), warms up and measures that step again.
	// +optional
	ServerRestarts int32 `json:"serverRestarts,omitempty"`
	// LastServerRestart is when the operator noticed the latest restart, and what it said about it.
	// +optional
	LastServerRestart *ServerRestart `json:"lastServerRestart,omitempty"`
	// Steps are the results of the finished steps, in the order they were measured: the ladder
	// ascending, then (with spec.repetitions) descending, ascending, and so on; with several
	// workloads, each round measures every workload's ladder in the workloads' order.
	// +kubebuilder:validation:MaxItems=512
	// +listType=atomic
	// +optional
	Steps []StepResult `json:"steps,omitempty"`
	// Cells summarize the steps per thread count (median, confidence interval, coefficient of
	// variation, min and max of QPS, TPS and p95 latency over the repetitions), thread counts
	// ascending (per workload, in measuring order, with several workloads); updated with every
	// step. Only when spec.repetitions is above 1: with one repetition each cell is its step.
	// +kubebuilder:validation:MaxItems=512
	// +listType=atomic
	// +optional
	Cells []CellStats `json:"cells,omitempty"`
	// PreparedFor is the step (from 1, in measuring order) the target's data was last prepared
	// again for in the middle of its ladder: with several workloads, a workload that follows
	// one that wrote to the data (or needs data of another shape) gets freshly prepared data,
	// and this records that it has. Unset before any such prepare.
	// +optional
	PreparedFor int32 `json:"preparedFor,omitempty"`
	// StartTime is when the operator started on the target.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the target succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Released is true once what the finished target leaves behind is dealt with: the
	// per-second series of its steps stored in the results ConfigMap, its finished sysbench Jobs
	// deleted (failed ones are kept for their logs), and its server deleted or kept as
	// spec.cleanup says. It is recorded after the target's end, so a restarted operator finishes
	// the job.
	// +optional
	Released bool `json:"released,omitempty"`
}

// BenchmarkRunStatus is the observed state of a BenchmarkRun.
type BenchmarkRunStatus struct {
	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase of the run: Pending, Provisioning, Preparing, Running, Succeeded or Failed.
	// +optional
	Phase RunPhase `json:"phase,omitempty"`
	// Conditions: Ready, Progressing, Failed, Reconciling (kstatus: True while the run is not
	// finished), Stalled (kstatus: True when it failed) and, for scheduled runs, Regressed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// CurrentTarget is the target being benchmarked.
	// +optional
	CurrentTarget string `json:"currentTarget,omitempty"`
	// CurrentStep describes the step in progress, e.g. "prepare", "warmup" or "3/11 (8 threads)".
	// +optional
	CurrentStep string `json:"currentStep,omitempty"`
	// Targets are the per-target phases, server versions and step results, in spec order.
	// +listType=map
	// +listMapKey=name
	// +optional
	Targets []TargetStatus `json:"targets,omitempty"`
	// ResultsConfigMap names the ConfigMap holding results.json, results.csv and report.md.
	// +optional
	ResultsConfigMap string `json:"resultsConfigMap,omitempty"`
	// CustomScriptSHA256 is the sha256 (hex) of workload.customScript's content when the run
	// first read it, before its first Job: every step runs exactly that content (its pod checks
	// the mounted script against it), and a ConfigMap changed during the run fails the run's
	// remaining steps instead of running other code.
	// +kubebuilder:validation:Pattern=`^[0-9a-f]{64}$`
	// +optional
	CustomScriptSHA256 string `json:"customScriptSHA256,omitempty"`
	// StartTime is when the run started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime is when the run succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Comparison is this run against its baseline, written by the BenchmarkSchedule that
	// created the run once it succeeded (with the Regressed condition).
	// +optional
	Comparison *Comparison `json:"comparison,omitempty"`
}

// BenchmarkRun benchmarks MySQL-family servers with a sysbench thread ladder and records QPS and
// latency by thread count, one column per server.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bmr,categories=mysqlbench
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.currentTarget`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.currentStep`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.comparison.verdict`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name must be at most 63 characters: it is the mysqlbench.io/run label value of everything the run creates"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.phase) || oldSelf.status.phase == 'Pending' || self.spec == oldSelf.spec",message="spec cannot change once the run has started: a run measures one fixed configuration; create a new BenchmarkRun (or delete and re-create this one) to benchmark another"
type BenchmarkRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to benchmark and how.
	Spec BenchmarkRunSpec `json:"spec"`
	// Status is what the operator observed and measured.
	// +optional
	Status BenchmarkRunStatus `json:"status,omitempty"`
}

// BenchmarkRunList is a list of BenchmarkRuns.
//
// +kubebuilder:object:root=true
type BenchmarkRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkRun `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkRun{}, &BenchmarkRunList{})
}

// LocalObjectReference names an object in the run's namespace. It is core/v1's, with the name's
// syntax checked at admission (core/v1's leaves it free, so a typo surfaced only as a pod that
// could not mount its volume).
type LocalObjectReference struct {
	// Name of the object: lower-case letters, digits, '-' and '.', starting and ending with a
	// letter or digit, at most 253 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// ConfigMapKeySelector selects a key of a ConfigMap in the run's namespace: core/v1's, with the
// name's and key's syntax checked at admission.
type ConfigMapKeySelector struct {
	// Name of the ConfigMap: lower-case letters, digits, '-' and '.', starting and ending with a
	// letter or digit, at most 253 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key in the ConfigMap: letters, digits, '-', '_' and '.', at most 253 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Key string `json:"key"`
}

// ServerInstanceMode is what the repetitions of a target measure on.
type ServerInstanceMode string

const (
	// ServerInstanceShared measures every repetition of a target on one server instance.
	ServerInstanceShared ServerInstanceMode = "Shared"
	// ServerInstancePerRepetition gives every repetition of a target a new server instance.
	ServerInstancePerRepetition ServerInstanceMode = "PerRepetition"
)

// RunOrder is how a run's targets share the database node.
type RunOrder string

const (
	// OrderSequential runs one target's whole ladder after another's.
	OrderSequential RunOrder = "Sequential"
	// OrderInterleaved keeps every target's server up together and measures their cells in
	// randomized interleaved rounds.
	OrderInterleaved RunOrder = "Interleaved"
	// OrderParallel runs several targets' ladders at once, each on its own database node.
	OrderParallel RunOrder = "Parallel"
)
