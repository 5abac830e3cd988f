package resultsdb

import (
	"bufio"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A string the database refuses fails the whole run's write, every time it is retried (strict
// mode: error 1406, data too long; error 1366, invalid UTF-8), and a run's strings come from
// anyone who may create a run or run a server: a server's version string, a node's kernel, a
// target's message. So every string is made to fit its column before it is stored, with the
// limits read from the migrations themselves, so that a new column is never left unbounded.

// limit is what a string column holds: chars characters (VARCHAR, CHAR: utf8mb4 counts
// characters) or bytes bytes (TEXT types), whichever is set.
type limit struct {
	chars, bytes int
}

// textBytes are the byte limits of MariaDB's and MySQL's TEXT types.
var textBytes = map[string]int{"TINYTEXT": 255, "TEXT": 65535, "MEDIUMTEXT": 16777215, "LONGTEXT": 1<<32 - 1}

var (
	tableLine  = regexp.MustCompile(`(?i)^\s*(?:CREATE|ALTER)\s+TABLE\s+` + "`?" + `(\w+)`)
	columnLine = regexp.MustCompile(`(?i)^\s*(?:ADD\s+COLUMN\s+)?` + "`?" + `(\w+)` + "`?" +
		`\s+(VARCHAR|CHAR|TINYTEXT|MEDIUMTEXT|LONGTEXT|TEXT)\b(?:\((\d+)\))?`)
)

// columnLimits reads every string column's limit from the Up sections of the migrations in
// migrations, by table and column.
func columnLimits(migrations fs.FS) (map[string]map[string]limit, error) {
	files, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]limit{}
	for _, name := range files { // fs.Glob sorts: oldest first
		f, err := migrations.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		up, table := false, ""
		for sc.Scan() {
			line := sc.Text()
			switch strings.TrimSpace(line) {
			case "-- +goose Up":
				up = true
				continue
			case "-- +goose Down":
				up = false
				continue
			}
			if !up || strings.HasPrefix(strings.TrimSpace(line), "--") {
				continue
			}
			if m := tableLine.FindStringSubmatch(line); m != nil {
				table = strings.ToLower(m[1])
				continue
			}
			m := columnLine.FindStringSubmatch(line)
			if m == nil || table == "" {
				continue
			}
			col, typ := strings.ToLower(m[1]), strings.ToUpper(m[2])
			var l limit
			if n, ok := textBytes[typ]; ok {
				l.bytes = n
			} else {
				n, err := strconv.Atoi(m[3])
				if err != nil {
					_ = f.Close()
					return nil, fmt.Errorf("%s: %s.%s %s without a length", name, table, col, typ)
				}
				l.chars = n
			}
			if out[table] == nil {
				out[table] = map[string]limit{}
			}
			out[table][col] = l
		}
		_ = f.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return out, nil
}

// limits are the schema's string columns (columnLimits of the embedded migrations).
var limits = func() map[string]map[string]limit {
	l, err := columnLimits(Migrations())
	if err != nil {
		panic(err) // the embedded migrations are part of the binary
	}
	return l
}()

// fit makes s storable in a column of limit l: invalid UTF-8 replaced, then cut on a character
// boundary to the column's characters or bytes.
func fit(s string, l limit) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if l.bytes > 0 && len(s) > l.bytes {
		cut := l.bytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	if l.chars > 0 && len(s) > l.chars && utf8.RuneCountInString(s) > l.chars {
		n := 0
		for i := range s {
			if n == l.chars {
				s = s[:i]
				break
			}
			n++
		}
	}
	return s
}
