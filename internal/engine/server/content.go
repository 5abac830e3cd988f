package server

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// An object under a name the run needs passes owned.Check when its controller reference names the
// run's UID. That proves little: the run's UID is readable by anyone who may read the run, and
// anyone who may create ConfigMaps or Secrets in its namespace may write such a reference before
// the operator creates the object. So what the server or sysbench executes or connects with is
// also checked against what the operator writes, every time Provision finds it already there:
//   - the server ConfigMap (the my.cnf the server reads, and the SQL it runs as root on its first
//     start), byte for byte;
//   - a Secret of generated credentials: every key the operator writes and none other; the
//     values it derives from the run (host, port, user, database) equal, and the passwords of
//     the shape password() generates. A forger who knows passwords he chose gains nothing
//     sysbench or the server would otherwise refuse him: the address is the run's own server.

// generated says whether s has the shape of a Password: 24 characters from [A-Za-z0-9].
func generated(s string) bool {
	if len(s) != 24 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ConfigMapDiffers says how got's content differs from want's, "" when it is the same.
func ConfigMapDiffers(got, want *corev1.ConfigMap) string {
	if !equality.Semantic.DeepEqual(got.Data, want.Data) || !equality.Semantic.DeepEqual(got.BinaryData, want.BinaryData) {
		return "its data is not what the operator writes for this run"
	}
	return ""
}

// SecretDiffers says how got differs from the Secret the operator writes (want, with StringData):
// the keys of want other than generatedKeys must hold want's values, generatedKeys must hold
// passwords of the operator's shape, and with exact no other key may be there. It names keys,
// never values. "" when got is what the operator writes.
func SecretDiffers(got, want *corev1.Secret, generatedKeys []string, exact bool) string {
	if got.Type != "" && got.Type != want.Type {
		return fmt.Sprintf("its type is %s, not %s", got.Type, want.Type)
	}
	value := func(k string) (string, bool) {
		if v, ok := got.Data[k]; ok {
			return string(v), true
		}
		v, ok := got.StringData[k]
		return v, ok
	}
	isGenerated := map[string]bool{}
	for _, k := range generatedKeys {
		isGenerated[k] = true
	}
	var wrong []string
	for k, w := range want.StringData {
		v, ok := value(k)
		switch {
		case !ok:
			wrong = append(wrong, k+" missing")
		case isGenerated[k] && !generated(v):
			wrong = append(wrong, k+" not a password the operator generates")
		case !isGenerated[k] && v != w:
			wrong = append(wrong, k+" changed")
		}
	}
	if exact {
		for _, k := range append(keysOf(got.Data), keysOfString(got.StringData)...) {
			if _, ok := want.StringData[k]; !ok {
				wrong = append(wrong, k+" added")
			}
		}
	}
	if len(wrong) == 0 {
		return ""
	}
	sort.Strings(wrong)
	return "keys: " + strings.Join(wrong, ", ")
}

func keysOf(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func keysOfString(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// NotTheOperators is the failure of a target whose object under a name the run needs claims to be
// the run's (its controller reference) but does not hold what the operator writes: what is the
// object and what uses it, and how it differs.
func NotTheOperators(object, usedBy, differs string) *ConfigError {
	return &ConfigError{Message: fmt.Sprintf("%s, %s, does not hold what the operator writes for this run (%s), "+
		"though it claims to belong to the run: it was changed, or made by someone else before the operator made it, "+
		"so nothing of the run uses it: delete it and create the run again, and find out who wrote it", object, usedBy, differs)}
}

// Password returns 24 random alphanumeric characters: no quoting issues in env vars, shells or
// my.cnf, and ~143 bits of entropy.
func Password() (string, error) {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b strings.Builder
	for range 24 {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			return "", err
		}
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String(), nil
}
