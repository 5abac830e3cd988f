// Package redact removes credential values from text the operator copies out of a pod (a step's
// failure lines) into places other users read: the run's status, conditions and Events.
package redact

import (
	"sort"
	"strings"
)

// Marker replaces a credential value.
const Marker = "[redacted]"

// MinLength is the shortest value replaced: shorter ones (a one-letter password, "1") would
// mangle every word that contains them, and are no secret worth the name either.
const MinLength = 4

// publicKeys are the keys of a connection Secret whose values the user needs to read in an
// error ("Access denied for user 'sbtest'@'10.0.0.7'", "Unknown MySQL server host 'db'"), and
// which grant nothing without the password.
var publicKeys = map[string]bool{"host": true, "port": true, "user": true, "database": true}

// Secret returns the values of a Secret's data worth hiding: every key's value except the public
// connection keys (host, port, user, database), each also without surrounding whitespace (a
// password file's trailing newline).
func Secret(data map[string][]byte) []string {
	var out []string
	for k, v := range data {
		if publicKeys[k] {
			continue
		}
		out = append(out, string(v))
		if t := strings.TrimSpace(string(v)); t != string(v) {
			out = append(out, t)
		}
	}
	return out
}

// Values replaces every occurrence in text of each value at least MinLength bytes long with
// Marker, longest values first (so a value that contains another is hidden whole).
func Values(text string, values ...string) string {
	vs := make([]string, 0, len(values))
	for _, v := range values {
		if len(v) >= MinLength && strings.Contains(text, v) {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) })
	for _, v := range vs {
		text = strings.ReplaceAll(text, v, Marker)
	}
	return text
}
