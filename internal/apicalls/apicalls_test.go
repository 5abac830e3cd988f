package apicalls

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	rbacv1 "k8s.io/api/rbac/v1"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		method, url string
		want        Call
		ok          bool
	}{
		{"GET", "/api/v1/namespaces/a/pods/p", Call{Verb: "get", Resource: "pods", Namespaced: true}, true},
		{"GET", "/api/v1/namespaces/a/pods?labelSelector=x", Call{Verb: "list", Resource: "pods", Namespaced: true}, true},
		{"GET", "/api/v1/namespaces/a/pods?watch=true&resourceVersion=1", Call{Verb: "watch", Resource: "pods", Namespaced: true}, true},
		{"GET", "/api/v1/namespaces/a/pods/p/log?container=c", Call{Verb: "get", Resource: "pods", Subresource: "log", Namespaced: true}, true},
		{"GET", "/api/v1/nodes?limit=500", Call{Verb: "list", Resource: "nodes"}, true},
		{"GET", "/api/v1/pods", Call{Verb: "list", Resource: "pods"}, true},
		{"GET", "/api/v1/namespaces/a", Call{Verb: "get", Resource: "namespaces"}, true},
		{"GET", "/api/v1/namespaces", Call{Verb: "list", Resource: "namespaces"}, true},
		{"POST", "/apis/batch/v1/namespaces/a/jobs", Call{Verb: "create", Group: "batch", Resource: "jobs", Namespaced: true}, true},
		{"PUT", "/apis/coordination.k8s.io/v1/namespaces/a/leases/l", Call{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespaced: true}, true},
		{"PATCH", "/apis/mysqlbench.io/v1alpha1/namespaces/a/benchmarkruns/r/status",
			Call{Verb: "patch", Group: "mysqlbench.io", Resource: "benchmarkruns", Subresource: "status", Namespaced: true}, true},
		{"DELETE", "/apis/apps/v1/namespaces/a/statefulsets/s", Call{Verb: "delete", Group: "apps", Resource: "statefulsets", Namespaced: true}, true},
		{"DELETE", "/apis/apps/v1/namespaces/a/statefulsets", Call{Verb: "deletecollection", Group: "apps", Resource: "statefulsets", Namespaced: true}, true},
		{"POST", "/apis/authentication.k8s.io/v1/tokenreviews", Call{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"}, true},
		{"GET", "/api", Call{}, false},
		{"GET", "/api/v1", Call{}, false},
		{"GET", "/apis", Call{}, false},
		{"GET", "/apis/batch/v1", Call{}, false},
		{"GET", "/version", Call{}, false},
		{"GET", "/openapi/v3", Call{}, false},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := Parse(tc.method, u)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s %s: %+v %v, want %+v %v", tc.method, tc.url, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := Parse(http.MethodOptions, &url.URL{Path: "/api/v1/pods"}); ok {
		t.Error("OPTIONS parsed as a call")
	}
}

func TestAllowsAndUnused(t *testing.T) {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "pods/log"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"batch"}, Resources: []string{"*"}, Verbs: []string{"create"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
	}
	calls := []Call{
		{Verb: "get", Resource: "pods", Subresource: "log", Namespaced: true},
		{Verb: "create", Group: "batch", Resource: "jobs", Namespaced: true},
	}
	for _, c := range calls {
		if !Allows(rules, c) {
			t.Errorf("%s not allowed", c)
		}
	}
	for _, c := range []Call{
		{Verb: "get", Resource: "pods", Subresource: "status"},
		{Verb: "delete", Resource: "pods"},
		{Verb: "create", Group: "apps", Resource: "deployments"},
	} {
		if Allows(rules, c) {
			t.Errorf("%s allowed", c)
		}
	}
	want := []Grant{{Resource: "pods", Verb: "get"}, {Resource: "pods", Verb: "list"}, {Resource: "pods/log", Verb: "list"}}
	if got := Unused(rules, calls); !reflect.DeepEqual(got, want) {
		t.Errorf("unused %v, want %v", got, want)
	}
}

func TestAuthorizationDenial(t *testing.T) {
	rbac := []byte(`{"kind":"Status","message":"nodes is forbidden: User \"system:serviceaccount:a:b\" cannot list resource \"nodes\" in API group \"\" at the cluster scope","reason":"Forbidden","code":403}`)
	if msg, ok := authorizationDenial(rbac); !ok || msg == "" {
		t.Errorf("RBAC denial not recognised: %q %v", msg, ok)
	}
	admission := []byte(`{"message":"configmaps \"x\" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: , <nil>"}`)
	if _, ok := authorizationDenial(admission); !ok {
		t.Error("OwnerReferencesPermissionEnforcement's denial not recognised")
	}
	quota := []byte("k8s\x00\n\x0c\n\x02v1\x12\x06Status\x12statefulsets.apps \"x\" is forbidden: exceeded quota: q")
	if _, ok := authorizationDenial(quota); ok {
		t.Error("a quota's 403 taken for an RBAC denial")
	}
}

// The quoted message is cut to maxDenialMessage bytes on a rune boundary and stays valid UTF-8.
func TestAuthorizationDenialMessageBound(t *testing.T) {
	prefix := `{"message":"configmaps is forbidden: User \"system:serviceaccount:a:b\" cannot get resource \"configmaps\" in namespace \"`
	want := prefix[strings.Index(prefix, "forbidden: User "):]
	for _, tc := range []struct {
		name     string
		ns       string
		wantFull bool
	}{
		{"short, kept whole", "bench", true},
		{"ASCII, cut", strings.Repeat("n", 400), false},
		{"2-byte runes, cut", strings.Repeat("é", 200), false},
		{"3-byte runes, cut", strings.Repeat("€", 200), false},
		{"4-byte runes, cut", strings.Repeat("𝄞", 100), false},
		{"odd offset of multi-byte runes, cut", "x" + strings.Repeat("€", 200), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(prefix + tc.ns + `\"","code":403}`)
			msg, ok := authorizationDenial(body)
			if !ok {
				t.Fatal("RBAC denial not recognised")
			}
			if !utf8.ValidString(msg) || strings.ContainsRune(msg, utf8.RuneError) {
				t.Errorf("message is not clean UTF-8: %q", msg)
			}
			if len(msg) > maxDenialMessage {
				t.Errorf("message of %d bytes, want at most %d", len(msg), maxDenialMessage)
			}
			if !strings.HasPrefix(msg, want) {
				t.Errorf("message %q does not start with the authorizer's words", msg)
			}
			if cut := strings.HasSuffix(msg, "..."); cut == tc.wantFull {
				t.Errorf("cut %v, want %v: %q", cut, !tc.wantFull, msg)
			}
			if !tc.wantFull && len(msg) < maxDenialMessage-utf8.UTFMax {
				t.Errorf("message of %d bytes: cut more than one rune short of %d", len(msg), maxDenialMessage)
			}
		})
	}
}
