package specs

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func TestRequiredMaxConnections(t *testing.T) {
	warm := &metav1.Duration{Duration: time.Minute}
	tests := []struct {
		name   string
		ladder v1.Ladder
		want   int
	}{
		{"small ladder keeps the server default", v1.Ladder{Threads: []int32{1, 2, 4}}, 151},
		{"peak + 10 just under the default", v1.Ladder{Threads: []int32{141}}, 151},
		{"peak + 10 just over the default", v1.Ladder{Threads: []int32{142}}, 152},
		{"Percona ladder", v1.Ladder{Threads: []int32{1, 100, 1000}}, 1010},
		{"warm-up above the ladder counts", v1.Ladder{Threads: []int32{1, 8}, Warmup: warm, WarmupThreads: ptr.To[int32](300)}, 310},
		{"warm-up threads ignored without a warm-up", v1.Ladder{Threads: []int32{1, 8}, WarmupThreads: ptr.To[int32](300)}, 151},
		{"default warm-up threads capped at 100", v1.Ladder{Threads: []int32{1, 200}, Warmup: warm}, 210},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := RequiredMaxConnections(tc.ladder); got != tc.want {
				t.Errorf("RequiredMaxConnections = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestUserMyCnf(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"blank", "  \n\n", ""},
		{"options only get [mysqld]", "performance_schema = OFF", "[mysqld]\nperformance_schema = OFF\n"},
		{"comments before options", "# study\n; note\nperformance_schema = OFF\n", "[mysqld]\n# study\n; note\nperformance_schema = OFF\n"},
		{"own section kept", "[mysqld]\nperformance_schema = OFF\n", "[mysqld]\nperformance_schema = OFF\n"},
		{"other sections kept", "[mariadb]\ninnodb_buffer_pool_size = 2G\n[client]\nport = 3306",
			"[mariadb]\ninnodb_buffer_pool_size = 2G\n[client]\nport = 3306\n"},
		{"comment before a section", "# mine\n[server]\nskip-log-bin", "# mine\n[server]\nskip-log-bin\n"},
		{"surrounding blank lines trimmed", "\n\n  performance_schema = OFF  \n\n", "[mysqld]\nperformance_schema = OFF\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UserMyCnf(v1.Target{MyCnf: tc.in}); got != tc.want {
				t.Errorf("UserMyCnf(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCheckMyCnf(t *testing.T) {
	// Peak 1000: the ladder's top; the warm-up (100 threads) is below it.
	spec := newRun().Spec
	tests := []struct {
		name  string
		myCnf string
		// wantErr lists substrings of the error; none means no error.
		wantErr []string
	}{
		{"no myCnf", "", nil},
		{"unrelated options", "performance_schema = OFF\ninnodb_buffer_pool_size = 2G", nil},
		{"below the peak", "max_connections = 500",
			[]string{"target t1", "max_connections = 500", "up to 1000 connections", "and 2 more besides", "error 1040", "at least 1002", "operator sets 1010"}},
		{"equal to the peak", "max_connections = 1000", []string{"target t1", "at least 1002"}},
		{"one above the peak: no room for the server lock's connections", "max_connections = 1001", []string{"at least 1002"}},
		{"two above the peak", "max_connections = 1002", nil},
		{"well above the peak", "max_connections = 5000", nil},
		{"dashes", "max-connections = 200", []string{"max_connections = 200", "at least 1002"}},
		{"loose_ prefix", "loose-max_connections = 200", []string{"at least 1002"}},
		{"loose- with dashes", "loose-max-connections=200", []string{"at least 1002"}},
		{"upper case", "MAX_CONNECTIONS = 200", []string{"at least 1002"}},
		{"no spaces", "max_connections=2000", nil},
		{"in [mysqld]", "[mysqld]\nmax_connections = 200", []string{"at least 1002"}},
		{"in [server]", "[server]\nmax_connections = 200", []string{"at least 1002"}},
		{"in [mariadb]", "[mariadb]\nmax_connections = 200", []string{"at least 1002"}},
		{"in [mariadbd]", "[mariadbd]\nmax_connections = 200", []string{"at least 1002"}},
		{"in [mysqld-8.0]", "[mysqld-8.0]\nmax_connections = 200", []string{"at least 1002"}},
		{"in [mariadb-10.11]", "[mariadb-10.11]\nmax_connections = 200", []string{"at least 1002"}},
		{"in [mariadbd-11.4]", "[mariadbd-11.4]\nmax_connections = 200", []string{"at least 1002"}},
		{"[client-server] is refused: clients read it too", "[client-server]\nmax_connections = 2000", []string{"[client-server] is not a server option group"}},
		{"in [galera], read by mariadbd", "[galera]\nmax_connections = 200", []string{"at least 1002"}},
		{"section names are case-insensitive", "[MYSQLD]\nmax_connections = 200", []string{"at least 1002"}},
		{"section header with a comment", "[mysqld] # server\nmax_connections = 200", []string{"at least 1002"}},
		{"[client] is refused", "[client]\npassword = x", []string{"line 1", "[client] is not a server option group", "[mysqld-8.4]"}},
		{"[mysqldump] is refused", "[mysqld]\na=1\n[mysqldump]\nquick", []string{"line 3", "[mysqldump]"}},
		{"[mysqld_safe] is refused", "[mysqld_safe]\nmax_connections = 200", []string{"[mysqld_safe] is not a server option group"}},
		{"a version group needs a version", "[mysqld-latest]\na=1", []string{"[mysqld-latest] is not a server option group"}},
		{"!include", "!include /etc/shadow", []string{"line 1", "!include and !includedir are not allowed"}},
		{"!includedir indented", "[mysqld]\n  !includedir /etc/mysql", []string{"line 2", "!include"}},
		// The servers skip blanks between the ! and the directive.
		{"! include with a space", "! include /etc/shadow", []string{"line 1", "!include and !includedir are not allowed"}},
		{"!\tincludedir with a tab", "[mysqld]\n!\tincludedir /etc/mysql", []string{"line 2", "!include"}},
		{"port", "port = 3307", []string{"sets port, which the operator owns"}},
		{"bind-address with dashes", "[mysqld-8.4]\nbind-address=0.0.0.0", []string{"line 2", "sets bind_address"}},
		{"loose-skip-networking", "loose-skip-networking", []string{"sets skip_networking"}},
		{"SKIP_GRANT_TABLES", "SKIP_GRANT_TABLES", []string{"sets skip_grant_tables"}},
		{"datadir", "[mariadb]\ndatadir=/tmp", []string{"sets datadir"}},
		{"socket", "socket=/tmp/x.sock", []string{"sets socket"}},
		{"names that contain an owned one", "port_open_timeout=10\nreport_port=3306\ninnodb_data_home_dir=/x\n# port = 1", nil},
		{"double quotes", `max_connections = "200"`, []string{"max_connections = 200"}},
		{"single quotes", `max_connections = '200'`, []string{"max_connections = 200"}},
		{"quoted and high", `max_connections = "2000"`, nil},
		{"K suffix", "max_connections = 2K", nil},
		{"k suffix is 1024, above the peak", "max_connections = 1k", nil},
		{"suffix, too low", "max_connections = 0K", []string{"max_connections = 0"}},
		{"non-numeric", "max_connections = lots", []string{"target t1", "line 1", `"lots"`, "not a number"}},
		{"empty value", "max_connections =", []string{"not a number"}},
		{"line numbers are the user's", "\n# first\nperformance_schema = OFF\nmax_connections = many", []string{"line 4", `"many"`}},
		{"commented out with #", "# max_connections = 200", nil},
		{"commented out with ;", "; max_connections = 200", nil},
		{"indented comment", "   # max_connections = 200", nil},
		{"end-of-line comment", "max_connections = 2000  # for the ladder", nil},
		{"end-of-line comment, too low", "max_connections = 200 # too few", []string{"max_connections = 200"}},
		{"last setting wins, high", "max_connections = 200\nmax_connections = 2000", nil},
		{"last setting wins, low", "max_connections = 2000\nmax_connections = 200", []string{"max_connections = 200"}},
		{"negative", "max_connections = -1", []string{"max_connections = -1"}},
		{"similar name is not it", "max_connections_per_hour = 10\nmax_user_connections = 10", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckMyCnf(spec, v1.Target{Name: "t1", MyCnf: tc.myCnf})
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Errorf("CheckMyCnf(%q) = %v, want nil", tc.myCnf, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckMyCnf(%q) = nil, want an error containing %q", tc.myCnf, tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("CheckMyCnf(%q) = %q, want it to contain %q", tc.myCnf, err, w)
				}
			}
		})
	}
}

// synchWaits needs performance_schema: a myCnf that turns it off is refused. (What synchWaits
// adds to the servers' files is the engines' to test.)
func TestSynchWaits(t *testing.T) {
	run := newRun()
	for _, tc := range []struct {
		myCnf   string
		wantErr string
	}{
		{"", ""},
		{"performance_schema = ON", ""},
		{"performance_schema = OFF", "myCnf line 1 turns off"},
		{"innodb_buffer_pool_size = 1G\nperformance-schema=0", "myCnf line 2 turns off"},
		{"skip-performance-schema", "myCnf line 1 turns off"},
		{"performance_schema = OFF\nperformance_schema = ON", ""},
		{"skip_performance_schema = OFF", ""},
	} {
		target := v1.Target{Name: "t", MyCnf: tc.myCnf, SynchWaits: true}
		err := CheckMyCnf(run.Spec, target)
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("CheckMyCnf(synchWaits, %q) = %v, want %q", tc.myCnf, err, tc.wantErr)
		}
		target.SynchWaits = false
		if err := CheckMyCnf(run.Spec, target); err != nil {
			t.Errorf("CheckMyCnf(%q) without synchWaits = %v", tc.myCnf, err)
		}
	}
}

func TestCheckMyCnfPeakIncludesWarmup(t *testing.T) {
	spec := v1.BenchmarkRunSpec{Ladder: v1.Ladder{
		Threads:       []int32{1, 8},
		Warmup:        &metav1.Duration{Duration: time.Minute},
		WarmupThreads: ptr.To[int32](400),
	}}
	err := CheckMyCnf(spec, v1.Target{Name: "t", MyCnf: "max_connections = 300"})
	if err == nil || !strings.Contains(err.Error(), "up to 400 connections") || !strings.Contains(err.Error(), "at least 402") {
		t.Errorf("CheckMyCnf with a 400-thread warm-up = %v, want the warm-up's 400 as the peak", err)
	}
	// Below the server default but above the peak: allowed (the user asked for it).
	spec.Ladder.Warmup = nil
	if err := CheckMyCnf(spec, v1.Target{Name: "t", MyCnf: "max_connections = 20"}); err != nil {
		t.Errorf("max_connections 20 for an 8-thread ladder: %v", err)
	}
}

// TestValidateMyCnf is the admission rules' table: api/v1alpha1's envtest cases check that the
// API server's CEL rules give the same verdicts.
func TestValidateMyCnf(t *testing.T) {
	tests := []struct {
		name  string
		myCnf string
		// wantErr lists substrings of the error; none means no error.
		wantErr []string
	}{
		{"empty", "", nil},
		{"options before any header", "performance_schema = OFF\ninnodb_buffer_pool_size=2G", nil},
		{"every server group", "[mysqld]\na=1\n[server]\n[mariadb]\n[mariadbd]\n[galera]\n[mysqld-8.4]\n[mariadb-11.8]\n[mariadbd-10.11]\n[mysqld-5.7.44]", nil},
		{"group names are case-insensitive", "[MySQLd]\n[MARIADB-11.8]", nil},
		{"header with a comment", "[mysqld] # server\n[server];x\n[mariadb]\t#", nil},
		{"blanks before the ] are trimmed", "[mysqld ]\n[galera\t]", nil},
		{"indented header", "  \t[mysqld]", nil},
		{"CRLF", "[mysqld]\r\nperformance_schema=OFF\r\n", nil},
		{"loose_ option", "[mysqld-8.4]\nloose_performance_schema=OFF", nil},
		{"names that contain an owned one", "port_open_timeout=10\nreport_port=3306\ninnodb_port_whatever=1\nsocket_timeout=1\n" +
			"innodb_data_home_dir=/x\ndatadir_extra=1\nbind_address_v6=1\nloose_report_port=1\nmy_port=1", nil},
		{"commented out", "# port = 3307\n; datadir = /x\n  #bind-address=0.0.0.0\n#[client]\n;!include /x", nil},
		{"other directives are the server's business", "!foo", nil},

		{"[client]", "[client]\npassword=x", []string{"line 1", "[client] is not a server option group", "[mysqld-8.4]", "[client] password belong to the client"}},
		{"[mysql]", "[mysqld]\na=1\n[mysql]", []string{"line 3", "[mysql] is not a server option group"}},
		{"[client-server]", "[client-server]\nuser=x", []string{"[client-server] is not a server option group"}},
		{"[mysqldump], indented", "[mysqld]\n  [mysqldump]\nquick", []string{"line 2", "[mysqldump]"}},
		{"[embedded]", "[embedded]", []string{"[embedded] is not a server option group"}},
		{"[mysqld_safe]", "[mysqld_safe]", []string{"[mysqld_safe] is not a server option group"}},
		{"a version group needs digits", "[mysqld-latest]", []string{"[mysqld-latest] is not a server option group"}},
		{"a version group needs a number after each dot", "[mysqld-8.]", []string{"[mysqld-8.] is not a server option group"}},
		{"[mysql-8.4] is a client group", "[mysql-8.4]", []string{"[mysql-8.4] is not a server option group"}},
		{"unclosed header", "[mysqld", []string{`"[mysqld": a group header needs its closing ]`}},
		{"text after a header", "[mysqld] performance_schema=OFF", []string{"line 1", "only blanks and a # or ; comment may follow"}},
		{"blank after the [", "[ mysqld]", []string{`remove the blanks after the [`, `" mysqld"`}},
		{"header after a CR", "\r[client]", []string{"[client] is not a server option group"}},

		{"!include", "!include /etc/shadow", []string{"line 1", "!include and !includedir are not allowed"}},
		{"indented !includedir", "  !includedir /etc", []string{"line 1", `"!includedir /etc"`, "!include"}},
		{"!includedir after options", "[mysqld]\na=1\n\t!includedir /etc/mysql/conf.d/", []string{"line 3"}},

		{"port", "port = 3307", []string{"line 1 sets port, which the operator owns", "remove it"}},
		{"port without blanks", "port=3307", []string{"sets port"}},
		{"bind_address", "bind_address=0.0.0.0", []string{"sets bind_address"}},
		{"bind-address in a version group", "[mysqld-8.4]\nbind-address = 0.0.0.0", []string{"line 2", "sets bind_address"}},
		{"loose-port", "loose-port = 3307", []string{"sets port"}},
		{"loose_socket", "loose_socket=/tmp/x.sock", []string{"sets socket"}},
		{"skip-networking alone", "skip-networking", []string{"sets skip_networking"}},
		{"SKIP_GRANT_TABLES", "SKIP_GRANT_TABLES", []string{"sets skip_grant_tables"}},
		{"skip-grant-tables with a comment", "skip-grant-tables # for a moment", []string{"sets skip_grant_tables"}},
		{"datadir, indented", "[mariadb]\n   datadir = /tmp", []string{"line 2", "sets datadir"}},
		{"datadir with CRLF", "datadir\r\n", []string{"sets datadir"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateMyCnf(tc.myCnf)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Errorf("ValidateMyCnf(%q) = %v, want nil", tc.myCnf, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateMyCnf(%q) = nil, want an error containing %q", tc.myCnf, tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ValidateMyCnf(%q) = %q, want it to contain %q", tc.myCnf, err, w)
				}
			}
		})
	}
}
