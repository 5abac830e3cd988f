package resultsdb

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Keys of the Secret that names the results database. Either DSNKey alone (a go-sql-driver DSN,
// "user:password@tcp(host:3306)/db"), or HostKey with the others: PortKey defaults to 3306,
// DatabaseKey to DefaultDatabase, TLSKey to no TLS ("true", "skip-verify" or "preferred").
const (
	DSNKey      = "dsn"
	HostKey     = "host"
	PortKey     = "port"
	UserKey     = "user"
	PasswordKey = "password"
	DatabaseKey = "database"
	TLSKey      = "tls"
)

// DefaultDatabase is the database (schema) the tables go into when the Secret names none.
const DefaultDatabase = "mysqlbench"

// Config reads a results database Secret's data into a driver configuration, refusing what
// would connect somewhere unintended or never work: the error names the key to fix.
func Config(data map[string][]byte) (*mysql.Config, error) {
	var known []string
	for k := range data {
		switch k {
		case DSNKey, HostKey, PortKey, UserKey, PasswordKey, DatabaseKey, TLSKey:
		default:
			known = append(known, k)
		}
	}
	if len(known) > 0 {
		sort.Strings(known)
		return nil, fmt.Errorf("unknown keys %s: the Secret holds either %q alone, or %q, %q, %q and optionally %q, %q, %q",
			strings.Join(known, ", "), DSNKey, HostKey, UserKey, PasswordKey, PortKey, DatabaseKey, TLSKey)
	}
	var cfg *mysql.Config
	if dsn, ok := data[DSNKey]; ok {
		for _, k := range []string{HostKey, PortKey, UserKey, PasswordKey, DatabaseKey, TLSKey} {
			if _, dup := data[k]; dup {
				return nil, fmt.Errorf("key %q and key %q both set: give the DSN alone or the separate keys", DSNKey, k)
			}
		}
		parsed, err := mysql.ParseDSN(strings.TrimSpace(string(dsn)))
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", DSNKey, err)
		}
		cfg = parsed
	} else {
		host := strings.TrimSpace(string(data[HostKey]))
		user := strings.TrimSpace(string(data[UserKey]))
		switch {
		case host == "":
			return nil, fmt.Errorf("key %q is missing or empty (or give the whole DSN in key %q)", HostKey, DSNKey)
		case user == "":
			return nil, fmt.Errorf("key %q is missing or empty", UserKey)
		}
		port := 3306
		if p := strings.TrimSpace(string(data[PortKey])); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("key %q: %q is not a port number (1-65535)", PortKey, p)
			}
			port = n
		}
		cfg = mysql.NewConfig()
		cfg.Net = "tcp"
		cfg.Addr = net.JoinHostPort(host, strconv.Itoa(port))
		cfg.User = user
		cfg.Passwd = string(data[PasswordKey])
		cfg.DBName = strings.TrimSpace(string(data[DatabaseKey]))
		switch t := strings.TrimSpace(string(data[TLSKey])); t {
		case "", "false":
		case "true", "skip-verify", "preferred":
			cfg.TLSConfig = t
		default:
			return nil, fmt.Errorf("key %q: %q is not one of true, false, skip-verify, preferred", TLSKey, t)
		}
	}
	if cfg.DBName == "" {
		cfg.DBName = DefaultDatabase
	}
	return normalize(cfg), nil
}

// normalize sets what the store relies on whatever the DSN said: times in UTC read back as
// time.Time, several statements per migration file, and bounded waits.
func normalize(cfg *mysql.Config) *mysql.Config {
	// The driver's own log lines (a dropped idle connection) carry nothing its returned errors
	// do not, and would bypass the caller's structured log.
	cfg.Logger = &mysql.NopLogger{}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.MultiStatements = true
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = time.Minute
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = time.Minute
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	// Times are stored as UTC wall clock, whatever the server's own time zone.
	cfg.Params["time_zone"] = "'+00:00'"
	return cfg
}

// ParseDSN reads a DSN given on a command line (the plugin's --database-dsn).
func ParseDSN(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	if cfg.DBName == "" {
		cfg.DBName = DefaultDatabase
	}
	return normalize(cfg), nil
}

// Describe names a configuration's server and database without its password, for messages.
func Describe(cfg *mysql.Config) string {
	return fmt.Sprintf("%s@%s/%s", cfg.User, cfg.Addr, cfg.DBName)
}
