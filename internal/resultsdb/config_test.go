package resultsdb_test

import (
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    map[string]string
		want    string // Describe of the configuration
		wantErr string
	}{
		{name: "separate keys, defaults", data: map[string]string{"host": "db.results.svc", "user": "bench", "password": "pw"},
			want: "bench@db.results.svc:3306/mysqlbench"},
		{name: "port and database", data: map[string]string{"host": "10.0.0.5", "port": "3307", "user": "u", "password": "p", "database": "history"},
			want: "u@10.0.0.5:3307/history"},
		{name: "IPv6 host", data: map[string]string{"host": "fd00::5", "user": "u"}, want: "u@[fd00::5]:3306/mysqlbench"},
		{name: "dsn", data: map[string]string{"dsn": "bench:pw@tcp(db:3306)/nightly?tls=skip-verify"}, want: "bench@db:3306/nightly"},
		{name: "dsn without database", data: map[string]string{"dsn": "bench:pw@tcp(db:3306)/"}, want: "bench@db:3306/mysqlbench"},
		{name: "no host", data: map[string]string{"user": "u"}, wantErr: `key "host" is missing`},
		{name: "no user", data: map[string]string{"host": "h"}, wantErr: `key "user" is missing`},
		{name: "bad port", data: map[string]string{"host": "h", "user": "u", "port": "33o6"}, wantErr: `key "port": "33o6" is not a port`},
		{name: "bad tls", data: map[string]string{"host": "h", "user": "u", "tls": "yes"}, wantErr: `key "tls": "yes"`},
		{name: "dsn and keys", data: map[string]string{"dsn": "u@tcp(h)/d", "host": "h"}, wantErr: `key "dsn" and key "host" both set`},
		{name: "bad dsn", data: map[string]string{"dsn": "u@h:3306/d"}, wantErr: `key "dsn"`},
		{name: "unknown key", data: map[string]string{"host": "h", "user": "u", "passwd": "p"}, wantErr: "unknown keys passwd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := map[string][]byte{}
			for k, v := range tc.data {
				data[k] = []byte(v)
			}
			cfg, err := resultsdb.Config(data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := resultsdb.Describe(cfg); got != tc.want {
				t.Errorf("Describe = %q, want %q", got, tc.want)
			}
			if !cfg.ParseTime || cfg.Loc.String() != "UTC" {
				t.Errorf("times not read as UTC time.Time: parseTime %v, loc %v", cfg.ParseTime, cfg.Loc)
			}
		})
	}
}
