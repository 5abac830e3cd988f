package redact

import (
	"slices"
	"testing"
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
		{"too short to hide", "error 1", []string{"1"}, "error 1"},
		{"nothing to hide", "FATAL: error 2013", []string{"S3cr3t!pw", ""}, "FATAL: error 2013"},
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
