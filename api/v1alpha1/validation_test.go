package v1alpha1_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/mysqlslap"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
	"github.com/mysqlbench/mysqlbench-operator/internal/testenv"
)

var (
	env *envtest.Environment
	k8s client.Client
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, filepath.Join("..", ".."), func(e *envtest.Environment, c client.Client) {
		env, k8s = e, c
	}))
}

// validRun is a BenchmarkRun every test case starts from; each case breaks one thing.
func validRun(name string) *v1.BenchmarkRun {
	return &v1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.BenchmarkRunSpec{
			Targets: []v1.Target{
				{Name: "mysql80", Engine: v1.EngineBuiltin, Image: "mysql:8.0.40"},
				{Name: "mysql80-psoff", Image: "mysql:8.0.40", MyCnf: "performance_schema = OFF\n"},
			},
			Workload: v1.Workload{Script: "oltp_point_select", Tables: 4, TableSize: 10000},
			Ladder: v1.Ladder{
				Threads:      []int32{1, 2, 4, 8},
				StepDuration: &metav1.Duration{Duration: 30 * time.Second},
			},
		},
	}
}

func TestValidationRejectsBadSpecs(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(r *v1.BenchmarkRun)
		want   string // a fragment of the API server's message
	}{
		{"no targets", func(r *v1.BenchmarkRun) { r.Spec.Targets = nil }, "spec.targets: Required value"},
		{"networkPolicy neither Enabled nor Disabled", func(r *v1.BenchmarkRun) { r.Spec.NetworkPolicy = "Off" },
			`spec.networkPolicy: Unsupported value: "Off"`},
		{"empty targets", func(r *v1.BenchmarkRun) { r.Spec.Targets = []v1.Target{} }, "should have at least 1 items"},
		{"too many targets", func(r *v1.BenchmarkRun) {
			r.Spec.Targets = nil
			for i := range 17 {
				r.Spec.Targets = append(r.Spec.Targets, v1.Target{Name: "t" + string(rune('a'+i)), Image: "mysql:8.0"})
			}
		}, "must have at most 16 items"},
		{"duplicate target names", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].Name = "mysql80" },
			"target names must be unique"},
		// myCnf: only server option groups, no includes, none of the options the operator owns.
		{"myCnf with a [client] section", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[client]\npassword=x\n" },
			"myCnf may only hold server option groups"},
		{"myCnf switching to [mysqldump] later", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[1].MyCnf = "[mysqld]\nperformance_schema=OFF\n  [mysqldump]\nquick\n"
		}, "myCnf may only hold server option groups"},
		{"myCnf with [client-server]", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[client-server]\nuser=x" },
			"myCnf may only hold server option groups"},
		{"myCnf with !include", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "!include /etc/shadow\n" },
			"myCnf must not use !include"},
		{"myCnf with an indented !includedir", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mysqld]\n  !includedir /etc\n" },
			"myCnf must not use !include"},
		{"myCnf setting bind_address", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "bind_address=0.0.0.0" },
			"myCnf must not set port, socket, bind-address"},
		{"myCnf setting loose-port", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mysqld-8.4]\nloose-port = 3307\n" },
			"myCnf must not set port"},
		{"myCnf setting skip-grant-tables", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "skip-grant-tables" },
			"myCnf must not set port"},
		{"myCnf setting datadir", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mariadb]\ndatadir = /tmp\n" },
			"myCnf must not set port"},
		{"myCnf setting skip_networking", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "SKIP_NETWORKING = 1" },
			"myCnf must not set port"},
		{"myCnf with [mysql]", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mysqld]\na=1\n[mysql]\nuser=x" },
			"myCnf may only hold server option groups"},
		{"myCnf with [embedded]", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[embedded]\na=1" },
			"myCnf may only hold server option groups"},
		{"myCnf with a version group without a version", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mysqld-latest]\na=1" },
			"myCnf may only hold server option groups"},
		{"myCnf with options after a header", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mysqld] performance_schema=OFF" },
			"myCnf may only hold server option groups"},
		{"myCnf with an unclosed header", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mysqld\na=1" },
			"myCnf may only hold server option groups"},
		{"myCnf with a blank after the [", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[ mysqld]\na=1" },
			"myCnf may only hold server option groups"},
		{"myCnf with [client] after a CR", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "a=1\r\n\r[client]\r\npassword=x" },
			"myCnf may only hold server option groups"},
		{"myCnf with !includedir alone, indented", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "  !includedir /etc" },
			"myCnf must not use !include"},
		// The servers skip blanks after the "!" (mysys search_default_file).
		{"myCnf with ! include", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mysqld]\n! include /etc/shadow\n" },
			"myCnf must not use !include"},
		{"myCnf with !<tab>includedir", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "!\tincludedir /etc\n" },
			"myCnf must not use !include"},
		{"a target named results", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].Name = "results" },
			"target names results and sysbench-reporter are taken"},
		{"a target named sysbench-reporter", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].Name = "sysbench-reporter" },
			"target names results and sysbench-reporter are taken"},
		{"a secretRef that is no Secret name", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[1] = v1.Target{Name: "ext", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "../Other_Secret"}}
		}, "spec.targets[1].secretRef.name: Invalid value: \"../Other_Secret\": spec.targets[1].secretRef.name in body should match"},
		{"a customScript that is no ConfigMap name", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Script = ""
			r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "Scripts!", Key: "a.lua"}
		}, "spec.workload.customScript.name: Invalid value: \"Scripts!\": spec.workload.customScript.name in body should match"},
		{"a customScript key that is no ConfigMap key", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Script = ""
			r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "scripts", Key: "../a.lua"}
		}, "spec.workload.customScript.key: Invalid value: \"../a.lua\": spec.workload.customScript.key in body should match"},
		{"a sysbenchImage that is no image reference", func(r *v1.BenchmarkRun) { r.Spec.SysbenchImage = "Registry/Sysbench:1.0 --privileged" },
			"sysbenchImage must be an image reference"},
		{"data beyond the emptyDir ceiling without storage", func(r *v1.BenchmarkRun) {
			r.Spec.Storage = nil
			r.Spec.Workload.Tables, r.Spec.Workload.TableSize = 200, 1000000
		}, "without spec.storage each server keeps its data in an emptyDir of at most 64Gi"},
		{"myCnf setting skip-networking with a comment", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[1].MyCnf = "[mysqld]\nskip-networking # for a moment\n"
		}, "myCnf must not set port"},
		{"myCnf setting loose_socket", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "\tloose_socket=/tmp/x.sock" },
			"myCnf must not set port"},
		{"myCnf setting datadir with CRLF", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mysqld]\r\ndatadir\r\n" },
			"myCnf must not set port"},
		// Image references.
		{"image with upper case", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "MySQL:8.0" }, "image must be an image reference"},
		{"image with an empty tag", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "mysql:" }, "image must be an image reference"},
		{"image with a blank", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "mysql 8" }, "image must be an image reference"},
		{"image with a short digest", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "mysql@sha256:abc" }, "image must be an image reference"},
		{"image with a URL scheme", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "https://registry.example.com/mysql" },
			"image must be an image reference"},
		{"image with an upper-case path", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "registry.example.com/DB/mysql:8.4" },
			"image must be an image reference"},
		{"image with a 129-character tag", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "mysql:" + strings.Repeat("8", 129) },
			"image must be an image reference"},
		{"image with a tag starting with a dot", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "mysql:.8" },
			"image must be an image reference"},
		// Data size against storage.size: 200 bytes per row at least.
		{"data far beyond storage.size", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Tables, r.Spec.Workload.TableSize = 10000, 1000000000
			r.Spec.Storage = &v1.Storage{Size: resource.MustParse("20Gi")}
		}, "workload.tables × workload.tableSize needs at least 2000000000000000 bytes (200 bytes per row) but storage.size is 20Gi: " +
			"raise storage.size (to at least 1862646Gi) or lower tables/tableSize"},
		{"data one byte beyond storage.size", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Tables, r.Spec.Workload.TableSize = 4, 10000
			r.Spec.Storage = &v1.Storage{Size: *resource.NewQuantity(4*10000*200-1, resource.DecimalSI)}
		}, "needs at least 8000000 bytes (200 bytes per row) but storage.size is 7999999"},
		{"default data set beyond storage.size", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Tables, r.Spec.Workload.TableSize = 0, 0 // defaults: 1 table of 10000 rows
			r.Spec.Storage = &v1.Storage{Size: resource.MustParse("1M")}
		}, "needs at least 2000000 bytes (200 bytes per row) but storage.size is 1M"},
		{"target name not a DNS label", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Name = "MySQL_80" },
			`spec.targets[0].name: Invalid value: "MySQL_80": spec.targets[0].name in body should match`},
		{"target name too long", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Name = strings.Repeat("a", 41) },
			"may not be more than 40 bytes"},
		{"unknown engine", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Engine = "docker" },
			`Unsupported value: "docker"`},
		{"builtin without image", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "" },
			"engine builtin needs image"},
		{"external without secret", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0] = v1.Target{Name: "prod", Engine: v1.EngineExternal}
		}, "engine external needs secretRef"},
		{"external with image", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0] = v1.Target{Name: "prod", Engine: v1.EngineExternal, Image: "mysql:8.0",
				SecretRef: &v1.LocalObjectReference{Name: "prod-db"}}
		}, "engine external benchmarks a server the operator does not run: remove image"},
		{"external with myCnf", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0] = v1.Target{Name: "prod", Engine: v1.EngineExternal, MyCnf: "x = 1",
				SecretRef: &v1.LocalObjectReference{Name: "prod-db"}}
		}, "remove myCnf"},
		{"external with synchWaits", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0] = v1.Target{Name: "prod", Engine: v1.EngineExternal, SynchWaits: true,
				SecretRef: &v1.LocalObjectReference{Name: "prod-db"}}
		}, "remove synchWaits and enable the instruments on that server yourself"},
		{"topWaits above 50", func(r *v1.BenchmarkRun) { r.Spec.ServerStats = &v1.ServerStats{TopWaits: 51} },
			"spec.serverStats.topWaits"},
		{"secretRef on builtin", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0].SecretRef = &v1.LocalObjectReference{Name: "creds"}
		}, "secretRef is only read for engine external"},
		{"no script", func(r *v1.BenchmarkRun) { r.Spec.Workload.Script = "" },
			"set exactly one of workload.script"},
		{"script and custom script", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.CustomScript = &v1.ConfigMapKeySelector{Name: "lua", Key: "bench.lua"}
		}, "set exactly one of workload.script"},
		{"unknown stock script", func(r *v1.BenchmarkRun) { r.Spec.Workload.Script = "oltp_point_selekt" },
			`Unsupported value: "oltp_point_selekt"`},
		{"zero tables", func(r *v1.BenchmarkRun) { r.Spec.Workload.Tables = -1 }, "should be greater than or equal to 1"},
		{"extra arg sets threads", func(r *v1.BenchmarkRun) { r.Spec.Workload.ExtraArgs = []string{"--threads=64"} },
			"extraArgs must not set options the operator owns"},
		{"extra arg sets time", func(r *v1.BenchmarkRun) { r.Spec.Workload.ExtraArgs = []string{"--time=10"} },
			"extraArgs must not set options the operator owns"},
		{"extra arg sets a mysql option", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.ExtraArgs = []string{"--rand-type=uniform", "--mysql-host=elsewhere"}
		}, "extraArgs must not set options the operator owns"},
		{"extra arg sets the driver", func(r *v1.BenchmarkRun) { r.Spec.Workload.ExtraArgs = []string{"--db-driver=pgsql"} },
			"extraArgs must not set options the operator owns"},
		{"extra arg sets the report interval", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.ExtraArgs = []string{"--report-interval"}
		}, "extraArgs must not set options the operator owns"},
		{"extra arg not an option", func(r *v1.BenchmarkRun) { r.Spec.Workload.ExtraArgs = []string{"--rand-type", "uniform"} },
			`spec.workload.extraArgs[1]: Invalid value: "uniform"`},
		// mysqlslap: its own block, no sysbench script; its args validated like extraArgs.
		{"mysqlslap with a sysbench script", func(r *v1.BenchmarkRun) { r.Spec.Workload.Client = v1.ClientMysqlslap },
			"workload.client mysqlslap runs mysqlslap, not a sysbench script"},
		{"mysqlslap block with sysbench", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Mysqlslap = &v1.MysqlslapWorkload{Queries: 100}
		}, "workload.mysqlslap is only read with workload.client: mysqlslap"},
		{"unknown client", func(r *v1.BenchmarkRun) { r.Spec.Workload.Client = "hammerdb" }, `Unsupported value: "hammerdb"`},
		{"parallelism without order Parallel", func(r *v1.BenchmarkRun) { r.Spec.Parallelism = ptr.To[int32](2) },
			"spec.parallelism is only read with order: Parallel"},
		{"parallelism zero", func(r *v1.BenchmarkRun) {
			r.Spec.Order = v1.OrderParallel
			r.Spec.Parallelism = ptr.To[int32](0)
		}, "spec.parallelism: Invalid value: 0"},
		// go-tpc: its own block with the warehouses, no sysbench script.
		{"go-tpc without tpcc", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientGoTPC}
		}, "workload.client go-tpc runs TPC-C: set workload.tpcc"},
		{"go-tpc with a sysbench script", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Client = v1.ClientGoTPC
			r.Spec.Workload.TPCC = &v1.TPCCWorkload{Warehouses: 1}
		}, "remove script, customScript and extraArgs"},
		{"tpcc block with sysbench", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.TPCC = &v1.TPCCWorkload{Warehouses: 1}
		}, "workload.tpcc is only read with workload.client: go-tpc"},
		{"tpcc without warehouses", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{}}
		}, "spec.workload.tpcc.warehouses"},
		{"tpcc too many warehouses", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: 20000}}
		}, "spec.workload.tpcc.warehouses: Invalid value: 20000"},
		{"tpcc image not a reference", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: 1, Image: "Go TPC"}}
		}, "tpcc.image must be an image reference"},
		{"mysqlslap arg sets the concurrency", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"--engine=innodb", "--concurrency=64"}}}
		}, "workload.mysqlslap.args may only set mysqlslap options"},
		{"mysqlslap arg sets the schema", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"--create-schema=sbtest"}}}
		}, "workload.mysqlslap.args may only set mysqlslap options"},
		{"mysqlslap arg runs a command", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"--post-system=rm -rf /"}}}
		}, "workload.mysqlslap.args may only set mysqlslap options"},
		{"mysqlslap arg keeps the schema", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"--no-drop"}}}
		}, "workload.mysqlslap.args may only set mysqlslap options"},
		{"mysqlslap arg lists engines", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"--engine=innodb,myisam"}}}
		}, "workload.mysqlslap.args may only set mysqlslap options"},
		{"mysqlslap arg sets the schema the loose way", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"--loose-create-schema=appdb"}}}
		}, "workload.mysqlslap.args may only set mysqlslap options"},
		{"mysqlslap arg shortened", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"--create-s=appdb"}}}
		}, "workload.mysqlslap.args may only set mysqlslap options"},
		{"mysqlslap query is a file", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap,
				Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"--query=/etc/mysqlbench/credentials/password"}}}
		}, "workload.mysqlslap.args: write the SQL"},
		{"mysqlslap create without query", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap,
				Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"--create=CREATE TABLE t (a INT)"}}}
		}, "--create without --query"},
		{"mysqlslap arg not an option", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Args: []string{"-c", "8"}}}
		}, `spec.workload.mysqlslap.args[0]: Invalid value: "-c"`},
		{"mysqlslap load type with a query", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap,
				Mysqlslap: &v1.MysqlslapWorkload{LoadType: "key", Args: []string{"--query=SELECT 1"}}}
		}, "workload.mysqlslap.loadType generates the SQL"},
		{"mysqlslap zero queries", func(r *v1.BenchmarkRun) {
			r.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{Queries: -5}}
		}, "should be greater than or equal to 1"},
		{"no threads", func(r *v1.BenchmarkRun) { r.Spec.Ladder.Threads = nil }, "spec.ladder.threads: Required value"},
		{"threads not ascending", func(r *v1.BenchmarkRun) { r.Spec.Ladder.Threads = []int32{1, 4, 2} },
			"ladder.threads must be strictly ascending"},
		{"threads repeated", func(r *v1.BenchmarkRun) { r.Spec.Ladder.Threads = []int32{1, 2, 2, 4} },
			"ladder.threads must be strictly ascending"},
		{"zero threads", func(r *v1.BenchmarkRun) { r.Spec.Ladder.Threads = []int32{0, 1} },
			"should be greater than or equal to 1"},
		{"too many threads", func(r *v1.BenchmarkRun) { r.Spec.Ladder.Threads = []int32{1, 10001} },
			"should be less than or equal to 10000"},
		{"too many steps", func(r *v1.BenchmarkRun) {
			r.Spec.Ladder.Threads = nil
			for i := int32(1); i <= 65; i++ {
				r.Spec.Ladder.Threads = append(r.Spec.Ladder.Threads, i)
			}
		}, "must have at most 64 items"},
		{"step not whole seconds", func(r *v1.BenchmarkRun) { r.Spec.Ladder.StepDuration.Duration = 1500 * time.Millisecond },
			`spec.ladder.stepDuration: Invalid value: "1.5s"`},
		{"extra arg sets an old name of time", func(r *v1.BenchmarkRun) { r.Spec.Workload.ExtraArgs = []string{"--max-time=5"} },
			"extraArgs must not set options the operator owns"},
		{"step too short", func(r *v1.BenchmarkRun) { r.Spec.Ladder.StepDuration.Duration = 0 },
			"ladder.stepDuration must be between 1s and 24h"},
		{"step too long", func(r *v1.BenchmarkRun) { r.Spec.Ladder.StepDuration.Duration = 25 * time.Hour },
			"ladder.stepDuration must be between 1s and 24h"},
		{"warm-up too long", func(r *v1.BenchmarkRun) { r.Spec.Ladder.Warmup = &metav1.Duration{Duration: 48 * time.Hour} },
			"ladder.warmup must be between 0s (no warm-up) and 24h"},
		{"warm-up threads zero", func(r *v1.BenchmarkRun) { r.Spec.Ladder.WarmupThreads = ptr.To[int32](0) },
			"spec.ladder.warmupThreads: Invalid value: 0"},
		{"unknown cleanup policy", func(r *v1.BenchmarkRun) { r.Spec.Cleanup = "Sometimes" },
			`Unsupported value: "Sometimes"`},
		{"retry limit too high", func(r *v1.BenchmarkRun) { r.Spec.StepRetryLimit = ptr.To[int32](11) },
			"should be less than or equal to 10"},
		{"repetitions zero", func(r *v1.BenchmarkRun) { r.Spec.Repetitions = ptr.To[int32](0) },
			"spec.repetitions: Invalid value: 0"},
		{"repetitions too many", func(r *v1.BenchmarkRun) { r.Spec.Repetitions = ptr.To[int32](11) },
			"should be less than or equal to 10"},
		{"too many steps with repetitions", func(r *v1.BenchmarkRun) {
			r.Spec.Repetitions = ptr.To[int32](10)
			r.Spec.Ladder.Threads = nil
			for i := int32(1); i <= 26; i++ { // 2 targets × 26 rungs × 10 = 520 steps
				r.Spec.Ladder.Threads = append(r.Spec.Ladder.Threads, i)
			}
		}, "with repetitions, targets × ladder.threads × repetitions must be at most 512 steps"},
		{"a new server per repetition of an external server", func(r *v1.BenchmarkRun) {
			r.Spec.ServerInstance = v1.ServerInstancePerRepetition
			r.Spec.Targets[0] = v1.Target{Name: "ext", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "db"}}
		}, "serverInstance PerRepetition replaces each target's server pod between repetitions"},
		{"unknown server instance mode", func(r *v1.BenchmarkRun) { r.Spec.ServerInstance = "Fresh" },
			`Unsupported value: "Fresh"`},
		{"percona options on a builtin target", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0].Percona = &v1.PerconaOptions{Proxy: v1.PerconaProxyHAProxy}
		}, "percona is only read for engines percona-server and percona-xtradb-cluster"},
		{"proxysql with percona-server", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0] = v1.Target{Name: "ps", Engine: v1.EnginePerconaServer,
				Percona: &v1.PerconaOptions{Proxy: v1.PerconaProxySQL}}
		}, "percona.proxy proxysql is only offered by engine percona-xtradb-cluster"},
		{"router with percona-xtradb-cluster", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0] = v1.Target{Name: "pxc", Engine: v1.EnginePerconaXtraDBCluster,
				Percona: &v1.PerconaOptions{Proxy: v1.PerconaProxyRouter}}
		}, "percona.proxy router is only offered by engine percona-server"},
		{"proxy image without a proxy", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0] = v1.Target{Name: "pxc", Engine: v1.EnginePerconaXtraDBCluster,
				Percona: &v1.PerconaOptions{ProxyImage: "percona/haproxy:2.8.15"}}
		}, "percona.proxyImage needs percona.proxy set to haproxy, router or proxysql"},
		{"unknown percona proxy", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0] = v1.Target{Name: "pxc", Engine: v1.EnginePerconaXtraDBCluster,
				Percona: &v1.PerconaOptions{Proxy: "envoy"}}
		}, `Unsupported value: "envoy"`},
		{"malformed crVersion", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0] = v1.Target{Name: "ps", Engine: v1.EnginePerconaServer,
				Percona: &v1.PerconaOptions{CRVersion: "v1.2"}}
		}, "spec.targets[0].percona.crVersion in body should match"},
	}
	// Not a spec field, so outside the table: the run's name is a label value.
	t.Run("name too long", func(t *testing.T) {
		r := validRun(strings.Repeat("n", 64))
		err := k8s.Create(context.Background(), r)
		if err == nil || !strings.Contains(err.Error(), "metadata.name must be at most 63 characters") {
			t.Fatalf("want a long name refused, got %v", err)
		}
	})
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := validRun("bad-" + strings.ReplaceAll(strings.ToLower(strings.ReplaceAll(tc.name, " ", "-")), "_", "-"))
			if len(r.Name) > 60 {
				r.Name = r.Name[:60]
			}
			_ = i
			tc.mutate(r)
			err := k8s.Create(context.Background(), r)
			if err == nil {
				t.Fatalf("API server accepted the object; want a rejection containing %q", tc.want)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("want an Invalid error, got %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("message does not say %q:\n%s", tc.want, err.Error())
			}
			// The Go statement of the rules must agree with the API server's.
			if strings.HasPrefix(tc.want, "myCnf") && goMyCnfErrors(r) == nil {
				t.Errorf("the API server refuses this myCnf but specs.ValidateMyCnf accepts it")
			}
			if strings.Contains(tc.want, "(200 bytes per row)") && specs.CheckDataFits(r.Spec) == nil {
				t.Errorf("the API server refuses this data size but specs.CheckDataFits accepts it")
			}
			if strings.Contains(tc.want, "mysqlslap.args") && mysqlslap.ValidateArgs(r.Spec.Workload.Mysqlslap.Args) == nil {
				t.Errorf("the API server refuses these mysqlslap args but mysqlslap.ValidateArgs accepts them")
			}
		})
	}
}

// goMyCnfErrors is what specs.ValidateMyCnf says about the run's targets: the first error.
func goMyCnfErrors(r *v1.BenchmarkRun) error {
	for _, tg := range r.Spec.Targets {
		if err := specs.ValidateMyCnf(tg.MyCnf); err != nil {
			return err
		}
	}
	return nil
}

// A duration the Go type cannot even express must be refused too, so this case goes around it.
func TestValidationRejectsMalformedDuration(t *testing.T) {
	u := &unstructured.Unstructured{}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(validRun("bad-duration"))
	if err != nil {
		t.Fatal(err)
	}
	u.SetUnstructuredContent(obj)
	u.SetGroupVersionKind(v1.GroupVersion.WithKind("BenchmarkRun"))
	if err := unstructured.SetNestedField(u.Object, "five minutes", "spec", "ladder", "stepDuration"); err != nil {
		t.Fatal(err)
	}
	err = k8s.Create(context.Background(), u)
	if err == nil || !strings.Contains(err.Error(), `spec.ladder.stepDuration: Invalid value: "five minutes"`) {
		t.Fatalf("want the malformed stepDuration refused, got %v", err)
	}
}

// storage.size may be a plain integer in YAML (x-kubernetes-int-or-string), which the Go type
// always writes as a string, so this goes around it.
func TestValidationStorageSizeAsInteger(t *testing.T) {
	for _, tc := range []struct {
		size int64
		want string // empty: accepted
	}{
		{200 * 10000, ""},
		{200*10000 - 1, "needs at least 2000000 bytes (200 bytes per row) but storage.size is 1999999"},
	} {
		r := validRun(fmt.Sprintf("int-size-%d", tc.size))
		r.Spec.Workload.Tables, r.Spec.Workload.TableSize = 1, 10000
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetGroupVersionKind(v1.GroupVersion.WithKind("BenchmarkRun"))
		if err := unstructured.SetNestedField(u.Object, tc.size, "spec", "storage", "size"); err != nil {
			t.Fatal(err)
		}
		err = k8s.Create(context.Background(), u)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("storage.size %d refused: %v", tc.size, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("storage.size %d: want a refusal containing %q, got %v", tc.size, tc.want, err)
		}
	}
}

// The myCnf rules' cost, estimated when the CRD is installed and counted when an object is
// validated, must fit the API server's budgets at the largest object: 16 targets with 16384
// characters of myCnf each, the worst case for the line pattern being many short lines.
func TestValidationMyCnfAtItsLimit(t *testing.T) {
	fill := func(last string) string {
		return strings.Repeat("a\n", (16384-len(last))/2) + last
	}
	for _, tc := range []struct {
		name, last, want string
	}{
		{"accepted", "[mysqld-8.4]", ""},
		{"refused at the end", "[client]", "myCnf may only hold server option groups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validRun("mycnf-limit-" + strings.ReplaceAll(tc.name, " ", "-"))
			r.Spec.Targets = nil
			cnf := fill(tc.last)
			if len(cnf) > 16384 || len(cnf) < 16380 {
				t.Fatalf("the test's myCnf has %d characters, want 16380 to 16384", len(cnf))
			}
			for i := range 16 {
				r.Spec.Targets = append(r.Spec.Targets, v1.Target{Name: fmt.Sprintf("t%d", i), Image: "mysql:8.4", MyCnf: cnf})
			}
			err := k8s.Create(context.Background(), r)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "cost") {
				t.Fatalf("want each target refused with %q (and no cost budget error), got %v", tc.want, err)
			}
			if n := strings.Count(err.Error(), tc.want); n != 16 {
				t.Errorf("%d of 16 targets refused: %v", n, err)
			}
		})
	}
	// One character more is the schema's MaxLength.
	r := validRun("mycnf-too-long")
	r.Spec.Targets[1].MyCnf = strings.Repeat("#", 16385)
	if err := k8s.Create(context.Background(), r); err == nil || !strings.Contains(err.Error(), "may not be more than 16384 bytes") {
		t.Fatalf("want a 16385-character myCnf refused, got %v", err)
	}
}

func TestValidationAppliesDefaults(t *testing.T) {
	ctx := context.Background()
	r := validRun("defaults")
	r.Spec.Ladder.StepDuration = nil
	if err := k8s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	got := &v1.BenchmarkRun{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(r), got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Targets[1].Engine != v1.EngineBuiltin {
		t.Errorf("engine default: got %q, want builtin", got.Spec.Targets[1].Engine)
	}
	if got.Spec.Ladder.StepDuration == nil || got.Spec.Ladder.StepDuration.Duration != time.Minute ||
		got.Spec.Ladder.Warmup == nil || got.Spec.Ladder.Warmup.Duration != 0 {
		t.Errorf("durations default: got step %v warm-up %v, want 1m0s and 0s",
			got.Spec.Ladder.StepDuration, got.Spec.Ladder.Warmup)
	}
	if got.Spec.Cleanup != v1.CleanupAlways || got.Spec.StepRetryLimit == nil || *got.Spec.StepRetryLimit != 2 {
		t.Errorf("cleanup/retry defaults: got %q/%v", got.Spec.Cleanup, got.Spec.StepRetryLimit)
	}
	if got.Spec.Repetitions == nil || *got.Spec.Repetitions != 1 {
		t.Errorf("repetitions default: got %v, want 1", got.Spec.Repetitions)
	}
	if got.Spec.Placement.Database.Exclusive == nil || !*got.Spec.Placement.Database.Exclusive {
		t.Errorf("placement.database.exclusive should default to true")
	}
	if got.Spec.NetworkPolicy != v1.NetworkPolicyEnabled || !got.Spec.NetworkPolicyEnabled() {
		t.Errorf("networkPolicy default: got %q, want Enabled", got.Spec.NetworkPolicy)
	}
	if got.Spec.Workload.Client != v1.ClientSysbench {
		t.Errorf("workload.client default: got %q, want sysbench", got.Spec.Workload.Client)
	}

	slap := validRun("defaults-mysqlslap")
	slap.Spec.Workload = v1.Workload{Client: v1.ClientMysqlslap, Mysqlslap: &v1.MysqlslapWorkload{}}
	if err := k8s.Create(ctx, slap); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(slap), got); err != nil {
		t.Fatal(err)
	}
	if m := got.Spec.Workload.Mysqlslap; m == nil || m.Queries != 10000 || m.Iterations != 1 || m.LoadType != "" ||
		got.Spec.Workload.MysqlslapOrDefault().Queries != m.Queries || m.LoadTypeOrDefault() != v1.DefaultMysqlslapLoadType {
		t.Errorf("workload.mysqlslap defaults: got %+v, want queries 10000, iterations 1, loadType unset (mixed)", m)
	}

	tpcc := validRun("defaults-go-tpc")
	tpcc.Spec.Workload = v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: 4}}
	if err := k8s.Create(ctx, tpcc); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(tpcc), got); err != nil {
		t.Fatal(err)
	}
	if c := got.Spec.Workload.TPCC; c == nil || c.Warehouses != 4 || c.Check == nil || !*c.Check ||
		c.IgnoreErrors == nil || !*c.IgnoreErrors || c.LoadThreads != 0 {
		t.Errorf("workload.tpcc defaults: got %+v, want warehouses 4, check and ignoreErrors true", c)
	}
	if d := got.Spec.Workload.TPCCOrDefault(); d.LoadThreads != 4 || d.Image != v1.DefaultGoTPCImage ||
		d.CheckTimeout.Duration != 30*time.Minute {
		t.Errorf("TPCCOrDefault: got %+v, want 4 load threads, %s, check timeout 30m", d, v1.DefaultGoTPCImage)
	}
}

// What the admission rules must let through: server sections and version groups, options whose
// names merely contain an owned one, comments, any syntactically valid image (whether it exists
// is the registry's business).
func TestValidationAcceptsServerOptions(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(r *v1.BenchmarkRun)
	}{
		{"options before any header", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[1].MyCnf = "performance_schema = OFF\ninnodb_buffer_pool_size=2G"
		}},
		{"every server section", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[1].MyCnf = "[mysqld]\na=1\n[server]\n[mariadb]\n[MariaDBd]\n[galera]\n[mysqld-8.4]\n" +
				"[mariadb-11.8] # comment\n[mariadbd-10.11]\nloose_performance_schema=OFF\n"
		}},
		{"names that contain an owned option", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[1].MyCnf = "port_open_timeout = 10\nreport_port = 3306\ninnodb_data_home_dir = /var/lib/mysql/data\n" +
				"socket_timeout=1\n# port = 3307\n; datadir = /x\n"
		}},
		{"blank lines, tabs and CRLF", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "\n\t\n[mysqld]\r\n\tperformance_schema=OFF\r\n" }},
		{"names with owned ones inside", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[1].MyCnf = "innodb_port_whatever = 1\nloose_report_port=3306\nbind_address_v6 = 1\nskip_networking_x=1\n" +
				"datadir2=1\n  #skip-networking\n;[client]\n"
		}},
		{"a version group with loose_", func(r *v1.BenchmarkRun) { r.Spec.Targets[1].MyCnf = "[mysqld-8.4]\nloose_performance_schema=OFF" }},
		{"indented headers, blanks before the ] and comments", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[1].MyCnf = "  [mysqld ]\t; mine\n\t[MARIADB-11.8]#x\n[mysqld-5.7.44]\n"
		}},
		{"data that fits storage.size", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Tables, r.Spec.Workload.TableSize = 4, 10000
			r.Spec.Storage = &v1.Storage{Size: resource.MustParse("1Gi")}
		}},
		{"data that fills storage.size exactly", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Tables, r.Spec.Workload.TableSize = 4, 10000
			r.Spec.Storage = &v1.Storage{Size: *resource.NewQuantity(4*10000*200, resource.DecimalSI)}
		}},
		{"the largest data set on enough storage", func(r *v1.BenchmarkRun) {
			r.Spec.Workload.Tables, r.Spec.Workload.TableSize = 10000, 1000000000
			r.Spec.Storage = &v1.Storage{Size: resource.MustParse("2P")}
		}},
		{"a tag that may not exist", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "mariadb:does-not-exist-99" }},
		{"registry, port, path and digest", func(r *v1.BenchmarkRun) {
			r.Spec.Targets[0].Image = "registry.example.com:5000/db/mysql-server:8.4.3_1@sha256:" + strings.Repeat("ab", 32)
		}},
		{"localhost registry", func(r *v1.BenchmarkRun) { r.Spec.Targets[0].Image = "localhost:5000/mysql" }},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := validRun(fmt.Sprintf("accepts-%d", i))
			tc.mutate(r)
			if err := k8s.Create(context.Background(), r); err != nil {
				t.Fatalf("refused: %v", err)
			}
			_ = k8s.Delete(context.Background(), r)
			if err := goMyCnfErrors(r); err != nil {
				t.Errorf("the API server accepts this myCnf but specs.ValidateMyCnf refuses it: %v", err)
			}
			if err := specs.CheckDataFits(r.Spec); err != nil {
				t.Errorf("the API server accepts this data size but specs.CheckDataFits refuses it: %v", err)
			}
		})
	}
}

func TestValidationAcceptsEveryEngine(t *testing.T) {
	r := validRun("every-engine")
	r.Spec.Targets = []v1.Target{
		{Name: "builtin", Image: "mariadb:10.11", Resources: &corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}},
		{Name: "ps", Engine: v1.EnginePerconaServer, Image: "percona/percona-server:8.0.46-37.1"},
		{Name: "pxc", Engine: v1.EnginePerconaXtraDBCluster},
		{Name: "ps-router", Engine: v1.EnginePerconaServer, Percona: &v1.PerconaOptions{
			CRVersion: "1.2.0", Proxy: v1.PerconaProxyRouter, ProxyImage: "percona/percona-mysql-router:8.0.43"}},
		{Name: "pxc57-proxysql", Engine: v1.EnginePerconaXtraDBCluster, Image: "percona/percona-xtradb-cluster:5.7.44-31.65",
			Percona: &v1.PerconaOptions{CRVersion: "1.18.0", Proxy: v1.PerconaProxySQL}},
		{Name: "pxc-haproxy", Engine: v1.EnginePerconaXtraDBCluster, Percona: &v1.PerconaOptions{Proxy: v1.PerconaProxyHAProxy}},
		{Name: "prod", Engine: v1.EngineExternal, SecretRef: &v1.LocalObjectReference{Name: "prod-db"}},
	}
	r.Spec.Workload = v1.Workload{CustomScript: &v1.ConfigMapKeySelector{Name: "lua", Key: "bench.lua"},
		ExtraArgs: []string{"--rand-type=uniform", "--range-size=100", "--skip-trx=on"}}
	r.Spec.Storage = &v1.Storage{Size: resource.MustParse("20Gi"), StorageClassName: ptr.To("standard")}
	if err := k8s.Create(context.Background(), r); err != nil {
		t.Fatalf("a valid run was refused: %v", err)
	}
}

// A new server instance per round of an interleaved run (what confirmation runs use) is accepted.
func TestValidationAcceptsInterleavedRoundsOnNewInstances(t *testing.T) {
	r := validRun("interleaved-fresh")
	r.Spec.Repetitions = ptr.To[int32](3)
	r.Spec.ServerInstance = v1.ServerInstancePerRepetition
	r.Spec.Order = v1.OrderInterleaved
	if err := k8s.Create(context.Background(), r); err != nil {
		t.Fatalf("an interleaved run with serverInstance PerRepetition was refused: %v", err)
	}
}

func TestSpecImmutableOnceStarted(t *testing.T) {
	ctx := context.Background()
	r := validRun("immutable")
	if err := k8s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	// Before the operator starts the run, the user may still fix the spec.
	r.Spec.Ladder.Threads = []int32{1, 2, 4, 8, 16}
	if err := k8s.Update(ctx, r); err != nil {
		t.Fatalf("editing a run that has not started was refused: %v", err)
	}
	r.Status.Phase = v1.RunRunning
	if err := k8s.Status().Update(ctx, r); err != nil {
		t.Fatalf("status update: %v", err)
	}
	r.Spec.Ladder.Threads = []int32{1, 2}
	err := k8s.Update(ctx, r)
	if err == nil || !strings.Contains(err.Error(), "spec cannot change once the run has started") {
		t.Fatalf("want the spec edit of a started run refused, got %v", err)
	}
	// Labels and annotations stay editable (GitOps tools and users add them).
	fresh := &v1.BenchmarkRun{}
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(r), fresh); err != nil {
		t.Fatal(err)
	}
	fresh.Labels = map[string]string{"team": "dba"}
	if err := k8s.Update(ctx, fresh); err != nil {
		t.Fatalf("a metadata edit of a started run was refused: %v", err)
	}
}

func TestSamplesAreAccepted(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			if u.GetKind() != "BenchmarkRun" && u.GetKind() != "BenchmarkSchedule" {
				continue
			}
			u.SetNamespace("default")
			if err := k8s.Create(context.Background(), u); err != nil {
				t.Errorf("%s: sample %s refused: %v", f, u.GetName(), err)
			}
			n++
		}
	}
	if n < 3 {
		t.Fatalf("found %d BenchmarkRun/BenchmarkSchedule samples in config/samples, want at least 3", n)
	}
}

// kubectl explain reads the field docs from the API server's OpenAPI: the Go doc comments.
func TestKubectlExplainShowsFieldDocs(t *testing.T) {
	user, err := env.AddUser(envtest.User{Name: "explainer", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := user.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kubectl.Path); err != nil {
		t.Fatalf("kubectl not found in the envtest assets (%s): %v", kubectl.Path, err)
	}
	stdout, stderr, err := kubectl.Run("explain", "benchmarkrun.spec.ladder")
	out := readAll(t, stdout)
	if err != nil {
		t.Fatalf("kubectl explain: %v\n%s", err, readAll(t, stderr))
	}
	for _, want := range []string{
		"Ladder is the thread counts each target is measured at",
		"threads",
		"strictly ascending",
		"stepDuration",
		"warmupThreads",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl explain benchmarkrun.spec.ladder does not show %q:\n%s", want, out)
		}
	}
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func validSchedule(name string) *v1.BenchmarkSchedule {
	return &v1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: v1.BenchmarkScheduleSpec{
			Schedule: "0 2 * * *",
			Template: v1.BenchmarkRunTemplate{Spec: validRun("unused").Spec},
		},
	}
}

func TestScheduleValidation(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(s *v1.BenchmarkSchedule)
		want   string
	}{
		{"name too long for its run names", func(s *v1.BenchmarkSchedule) { s.Name = strings.Repeat("n", 51) },
			"metadata.name must be at most 50 characters"},
		{"time zone inside the schedule", func(s *v1.BenchmarkSchedule) { s.Spec.Schedule = "CRON_TZ=Europe/Berlin 0 2 * * *" },
			"set spec.timeZone instead"},
		{"empty schedule", func(s *v1.BenchmarkSchedule) { s.Spec.Schedule = "" }, "spec.schedule"},
		{"unknown concurrency policy", func(s *v1.BenchmarkSchedule) { s.Spec.ConcurrencyPolicy = "Queue" }, `Unsupported value: "Queue"`},
		{"no successful history", func(s *v1.BenchmarkSchedule) { s.Spec.SuccessfulRunsHistoryLimit = ptr.To[int32](0) },
			"spec.successfulRunsHistoryLimit"},
		{"negative QPS threshold", func(s *v1.BenchmarkSchedule) { s.Spec.Regression.QPSDropPercent = ptr.To(-1.0) },
			"spec.regression.qpsDropPercent"},
		{"zero starting deadline", func(s *v1.BenchmarkSchedule) { s.Spec.StartingDeadlineSeconds = ptr.To[int64](0) },
			"spec.startingDeadlineSeconds"},
		// The template is a BenchmarkRun spec: its own rules apply at admission.
		{"template with duplicate targets", func(s *v1.BenchmarkSchedule) {
			s.Spec.Template.Spec.Targets[1].Name = s.Spec.Template.Spec.Targets[0].Name
		},
			"target names must be unique"},
		{"template whose data does not fit its storage", func(s *v1.BenchmarkSchedule) {
			s.Spec.Template.Spec.Workload.TableSize = 1000000000
			s.Spec.Template.Spec.Storage = &v1.Storage{Size: resource.MustParse("20Gi")}
		}, "spec.template.spec: Invalid value: \"object\": workload.tables × workload.tableSize needs at least 800000000000 bytes"},
		{"template with descending threads", func(s *v1.BenchmarkSchedule) { s.Spec.Template.Spec.Ladder.Threads = []int32{8, 4} },
			"spec.template.spec.ladder: Invalid value: \"object\": ladder.threads must be strictly ascending"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := validSchedule(fmt.Sprintf("sched-%d", i))
			tc.mutate(s)
			err := k8s.Create(context.Background(), s)
			if err == nil || !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an Invalid error containing %q, got %v", tc.want, err)
			}
		})
	}

	ok := validSchedule("sched-defaults")
	if err := k8s.Create(context.Background(), ok); err != nil {
		t.Fatalf("a valid schedule was refused: %v", err)
	}
	got := &v1.BenchmarkSchedule{}
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(ok), got); err != nil {
		t.Fatal(err)
	}
	sp := got.Spec
	if sp.ConcurrencyPolicy != v1.ConcurrencyForbid || sp.SuccessfulRunsHistoryLimit == nil || *sp.SuccessfulRunsHistoryLimit != 14 ||
		sp.FailedRunsHistoryLimit == nil || *sp.FailedRunsHistoryLimit != 1 || sp.Regression.QPSDropPercent == nil ||
		*sp.Regression.QPSDropPercent != 5 || *sp.Regression.P95RisePercent != 10 || sp.Template.Spec.Cleanup != v1.CleanupAlways {
		t.Errorf("defaults not applied: %+v", sp)
	}
	if c := sp.Regression.Confirm; c.MaxRuns == nil || *c.MaxRuns != 3 || c.Repetitions == nil || *c.Repetitions != 5 {
		t.Errorf("confirm defaults not applied: %+v", c)
	}
}

// kubectl get bms shows the newest run and its verdict (the printer columns).
func TestKubectlGetSchedulesShowsTheVerdict(t *testing.T) {
	ctx := context.Background()
	s := validSchedule("verdict-columns")
	if err := k8s.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	next := metav1.NewTime(time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC))
	s.Status = v1.BenchmarkScheduleStatus{LastRun: "verdict-columns-202611220100", LastRunPhase: v1.RunSucceeded,
		Verdict: "Regressed 2/10", NextScheduleTime: &next}
	if err := k8s.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	user, err := env.AddUser(envtest.User{Name: "getter", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubectl, err := user.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := kubectl.Run("get", "bms", "verdict-columns", "-n", "default")
	out := readAll(t, stdout)
	if err != nil {
		t.Fatalf("kubectl get bms: %v\n%s", err, readAll(t, stderr))
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get bms printed:\n%s", out)
	}
	for _, want := range []string{"SCHEDULE", "SUSPEND", "LAST RUN", "PHASE", "VERDICT", "NEXT"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("header lacks %s: %q", want, lines[0])
		}
	}
	for _, want := range []string{"0 2 * * *", "verdict-columns-202611220100", "Succeeded", "Regressed 2/10", "2026-11-23T01:00:00Z"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row lacks %q: %q", want, lines[1])
		}
	}
}
