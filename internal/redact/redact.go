// Package redact removes credential values from text the operator copies out of a pod (a step's
// failure lines) into places other users read: the run's status, conditions and Events.
//
// Redact before cutting: text cut to a size first can end in the middle of a value, and the part
// left is no longer an occurrence of it. Values hides such a leading part too where text was
// visibly cut (at its end and at the end of a line), for the cuts the operator does not control
// (the kubelet's termination message, a parser's line limit).
package redact

import (
	"sort"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
)

// Marker replaces a credential value.
const Marker = "[redacted]"

// MinLength is the shortest value hidden wherever it occurs. A shorter one (a one-letter
// password, "1") occurs inside every other word and number, so it is hidden only where it
// stands as a whole token ("using password: ab"), not inside "abort" or "error 1045"; that also
// hides a short value's every appearance as itself, which is all a reader could recognise.
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

// Values hides each value in text behind Marker: every occurrence of a value at least MinLength
// bytes long, a shorter one where it is a whole token, and a value's leading part (MinLength
// bytes or more, or a whole token) at the end of text or of one of its lines, where a cut made
// before redaction would have left it. Longer values go first, so a value that contains another
// is hidden whole.
func Values(text string, values ...string) string {
	vs := make([]string, 0, len(values))
	for _, v := range values {
		if v != "" {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return len(vs[i]) > len(vs[j]) })
	for _, v := range vs {
		if len(v) >= MinLength {
			text = strings.ReplaceAll(text, v, Marker)
		} else {
			text = replaceTokens(text, v)
		}
	}
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		body := strings.TrimRight(line, "\r\n")
		for _, v := range vs {
			body = hideCutEnd(body, v)
		}
		lines[i] = body + line[len(strings.TrimRight(line, "\r\n")):]
	}
	return strings.Join(lines, "")
}

// wordByte says whether b may be part of a word: a token boundary is any other byte. Bytes of
// multi-byte UTF-8 characters count as word bytes, so a short value is never hidden inside one.
func wordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= 0x80
}

// replaceTokens hides the occurrences of v in text that stand alone: not preceded or followed
// by a word byte.
func replaceTokens(text, v string) string {
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, v)
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		before := len(text) - len(rest) + i // index in text
		after := before + len(v)
		alone := (before == 0 || !wordByte(text[before-1])) && (after == len(text) || !wordByte(text[after]))
		b.WriteString(rest[:i])
		if alone {
			b.WriteString(Marker)
		} else {
			b.WriteString(v)
		}
		rest = rest[i+len(v):]
	}
}

// hideCutEnd hides the longest leading part of v that line ends with, when it is long enough to
// be told apart from ordinary text (MinLength bytes) or stands as a whole token of at least two
// bytes there (one byte of a value at the end of a line is too common to tell, and tells little).
// A cut "..." appended after it is kept.
func hideCutEnd(line, v string) string {
	body, tail := line, ""
	if strings.HasSuffix(body, "...") {
		body, tail = body[:len(body)-3], "..."
	}
	for n := min(len(v)-1, len(body)); n > 0; n-- {
		if !strings.HasSuffix(body, v[:n]) {
			continue
		}
		start := len(body) - n
		if n >= MinLength || n >= 2 && (start == 0 || !wordByte(body[start-1])) {
			return body[:start] + Marker + tail
		}
	}
	return line
}

// Cut hides values in text (Values), then cuts it to at most n bytes (bounded.Head): in this
// order, so that no value is cut in half before it is looked for.
func Cut(text string, n int, values ...string) string {
	return bounded.Head(Values(text, values...), n)
}
