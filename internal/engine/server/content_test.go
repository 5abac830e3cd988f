package server

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

const (
	pw1 = "abcdefghijklmnopqrstuvwx"
	pw2 = "ABCDEFGHIJKLMNOPQRSTUVW0"
)

func TestGenerated(t *testing.T) {
	for s, want := range map[string]bool{pw1: true, pw2: true, "": false, "known": false,
		pw1[:23]: false, pw1 + "y": false, pw1[:23] + "-": false, pw1[:23] + "é"[:1]: false} {
		if got := generated(s); got != want {
			t.Errorf("generated(%q) = %v, want %v", s, got, want)
		}
	}
	for range 20 {
		p, err := Password()
		if err != nil || !generated(p) {
			t.Fatalf("Password() = %q, %v: not of its own shape", p, err)
		}
	}
}

// SecretDiffers names what a Secret found under a name the run needs has that the operator's
// does not: changed fixed values, passwords of another shape, missing keys and, when exact,
// added ones. Never a value.
func TestSecretDiffers(t *testing.T) {
	want := &corev1.Secret{Type: corev1.SecretTypeOpaque, StringData: map[string]string{
		"host": "srv-0.srv.bench.svc", "port": "3306", "user": "sbtest", "password": pw1, "root-password": pw2}}
	data := func(edit func(map[string][]byte)) *corev1.Secret {
		s := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
		for k, v := range want.StringData {
			s.Data[k] = []byte(v)
		}
		if edit != nil {
			edit(s.Data)
		}
		return s
	}
	generatedKeys := []string{"password", "root-password"}
	for _, tc := range []struct {
		name  string
		got   *corev1.Secret
		exact bool
		want  string
	}{
		{"the operator's", data(nil), true, ""},
		{"other passwords of the operator's shape", data(func(d map[string][]byte) { d["password"] = []byte(pw2) }), true, ""},
		{"a password the forger chose", data(func(d map[string][]byte) { d["password"] = []byte("known") }), true,
			"keys: password not a password the operator generates"},
		{"another host", data(func(d map[string][]byte) { d["host"] = []byte("attacker.example") }), true, "keys: host changed"},
		{"a key missing", data(func(d map[string][]byte) { delete(d, "user") }), true, "keys: user missing"},
		{"a key added", data(func(d map[string][]byte) { d["ssl-ca"] = []byte("x") }), true, "keys: ssl-ca added"},
		{"a key added, not exact", data(func(d map[string][]byte) { d["pmmserverkey"] = []byte("x") }), false, ""},
		{"another type", func() *corev1.Secret { s := data(nil); s.Type = corev1.SecretTypeBasicAuth; return s }(), true,
			"its type is kubernetes.io/basic-auth, not Opaque"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SecretDiffers(tc.got, want, generatedKeys, tc.exact)
			if got != tc.want {
				t.Errorf("SecretDiffers = %q, want %q", got, tc.want)
			}
			if strings.Contains(got, "attacker") || strings.Contains(got, "known") {
				t.Errorf("it quotes a value: %q", got)
			}
		})
	}
}
