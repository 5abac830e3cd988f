package redact

import (
	"slices"
	"strings"
	"testing"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

func TestValues(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		values     []string
		want       string
	}{
		{"a password in a FATAL line", "FATAL: error 1045: Access denied for user 'sbtest' (using password: S3cr3t!pw)",
			[]string{"S3cr3t!pw"}, "FATAL: error 1045: Access denied for user 'sbtest' (using password: [redacted])"},
		{"every occurrence", "a=hunter22 b=hunter22", []string{"hunter22"}, "a=[redacted] b=[redacted]"},
		{"the longer value first", "key=abcdefgh", []string{"abcd", "abcdefgh"}, "key=[redacted]"},
		{"nothing to hide", "FATAL: error 2013", []string{"S3cr3t!pw", ""}, "FATAL: error 2013"},
		// Short values: hidden where they stand alone, never inside a word or a number.
		{"a short value as a token", "login failed: password xy7 rejected", []string{"xy7"}, "login failed: password [redacted] rejected"},
		{"a short value quoted", "using 'ab'", []string{"ab"}, "using '[redacted]'"},
		{"a short value inside words", "about abc1045 tab", []string{"ab"}, "about abc1045 tab"},
		{"a one-byte value", "error 1045 (exit 1)", []string{"1"}, "error 1045 (exit [redacted])"},
		// A value cut before redaction (by a line limit or the kubelet): its leading part at the
		// end of the text or of a line.
		{"a cut value at the end", "FATAL: password: S3cr3t", []string{"S3cr3t!pw"}, "FATAL: password: [redacted]"},
		{"a cut value before an ellipsis", "FATAL: password: S3cr...", []string{"S3cr3t!pw"}, "FATAL: password: [redacted]..."},
		{"a cut value at a line's end", "FATAL: pw=S3cr3\nFATAL: next", []string{"S3cr3t!pw"}, "FATAL: pw=[redacted]\nFATAL: next"},
		{"a short cut token", "password: S3", []string{"S3cr3t!pw"}, "password: [redacted]"},
		{"a short tail of a word is kept", "connection lost", []string{"t!pw-secret"}, "connection lost"},
		{"one byte is kept", "exit code 1: S", []string{"S3cr3t!pw"}, "exit code 1: S"},
	} {
		if got := Values(tc.text, tc.values...); got != tc.want {
			t.Errorf("%s: Values(%q) = %q, want %q", tc.name, tc.text, got, tc.want)
		}
	}
}

func TestSecret(t *testing.T) {
	got := Secret(map[string][]byte{
		"host": []byte("db.other-team.svc"), "port": []byte("3306"), "user": []byte("sbtest"), "database": []byte("sbtest"),
		"password": []byte("S3cr3t!pw\n"), "token": []byte("tkn-123456"),
	})
	slices.Sort(got)
	if want := []string{"S3cr3t!pw", "S3cr3t!pw\n", "tkn-123456"}; !slices.Equal(got, want) {
		t.Errorf("Secret = %q, want %q", got, want)
	}
}

// A password that a FATAL line carries across the point where a failure is cut for display is
// hidden whole: no part of it long enough to mean anything is shown, wherever the cut falls.
func TestCutRedactsFirst(t *testing.T) {
	const password = "Zq9-secret-Xw7-only-in-the-Secret"
	for pad := 380; pad < 520; pad++ {
		line := "FATAL: custom script: " + strings.Repeat("x", pad) + " password=" + password + " end"
		f := sysbench.Classify(1, load.Output{Fatal: []string{line}})
		if f == nil {
			t.Fatal("a FATAL line classified as success")
		}
		shown := Cut(f.Reason, sysbench.MaxReason, password)
		if len(shown) > sysbench.MaxReason {
			t.Fatalf("pad %d: shown failure is %d bytes, over %d", pad, len(shown), sysbench.MaxReason)
		}
		for n := 4; n <= len(password); n++ {
			if strings.Contains(shown, password[:n]) {
				t.Fatalf("pad %d: the shown failure %q shows the password's first %d bytes", pad, shown, n)
			}
		}
	}
}
