// Package apicalls records the Kubernetes API calls a client makes, as RBAC sees them (verb, API
// group, resource, subresource, namespaced or not), and compares them with RBAC rules: every call
// must be granted, and every granted verb must have been called. Tests use it to keep the
// manager's roles equal to what its code really does.
package apicalls

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
)

// Call is one API request in RBAC's terms.
type Call struct {
	Verb        string // get, list, watch, create, update, patch, delete, deletecollection
	Group       string // "" for the core group
	Resource    string
	Subresource string
	// Namespaced: the request named a namespace (/namespaces/<ns>/<resource>...). A request
	// without one, on a cluster-scoped resource or across all namespaces, needs a
	// ClusterRoleBinding.
	Namespaced bool
}

// ResourceName is resource or resource/subresource, as RBAC rules name it.
func (c Call) ResourceName() string {
	if c.Subresource != "" {
		return c.Resource + "/" + c.Subresource
	}
	return c.Resource
}

func (c Call) String() string {
	scope := "cluster-wide"
	if c.Namespaced {
		scope = "in a namespace"
	}
	return fmt.Sprintf("%s %s (group %q, %s)", c.Verb, c.ResourceName(), c.Group, scope)
}

// Parse turns a request into a Call; ok is false for requests that are not about a resource
// (discovery, /version, /openapi), which every authenticated user may make.
func Parse(method string, u *url.URL) (call Call, ok bool) {
	call, _, ok = parse(method, u)
	return call, ok
}

// parse is Parse that also returns the request's namespace.
func parse(method string, u *url.URL) (call Call, namespace string, ok bool) {
	segs := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api": // /api/v1/...
		segs = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis": // /apis/<group>/<version>/...
		call.Group = segs[1]
		segs = segs[3:]
	default:
		return Call{}, "", false
	}
	if len(segs) == 0 || segs[0] == "" {
		return Call{}, "", false // the group version's resource list
	}
	var name string
	if segs[0] == "namespaces" && len(segs) >= 3 {
		call.Namespaced = true
		namespace = segs[1]
		segs = segs[2:]
	}
	call.Resource = segs[0]
	if len(segs) > 1 {
		name = segs[1]
	}
	if len(segs) > 2 {
		call.Subresource = strings.Join(segs[2:], "/")
	}
	q := u.Query()
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			call.Verb = "watch"
		case name != "":
			call.Verb = "get"
		default:
			call.Verb = "list"
		}
	case http.MethodPost:
		call.Verb = "create"
	case http.MethodPut:
		call.Verb = "update"
	case http.MethodPatch:
		call.Verb = "patch"
	case http.MethodDelete:
		call.Verb = "delete"
		if name == "" {
			call.Verb = "deletecollection"
		}
	default:
		return Call{}, "", false
	}
	return call, namespace, true
}

// authorizationDenial finds, in a 403's body (JSON or protobuf), the message of the authorizer
// (`<resource> is forbidden: User "<user>" cannot <verb> resource ...`) or of the
// OwnerReferencesPermissionEnforcement admission plugin, which checks RBAC permissions too
// (`cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set
// finalizers on`, `cannot set an ownerRef on a resource you can't delete`). Other 403s (a quota,
// an admission policy) are not about RBAC.
func authorizationDenial(body []byte) (string, bool) {
	i := bytes.Index(body, []byte(`forbidden: User `))
	if i < 0 || !bytes.Contains(body[i:], []byte(" cannot ")) {
		i = bytes.Index(body, []byte(`forbidden: cannot set `))
	}
	if i < 0 {
		return "", false
	}
	msg := strings.Map(func(r rune) rune {
		if r < ' ' || r == utf8.RuneError {
			return -1
		}
		return r
	}, string(body[i:]))
	return bounded.Head(msg, maxDenialMessage), true
}

// maxDenialMessage keeps the authorizer's message, which a test failure quotes, to a few lines.
const maxDenialMessage = 300

// Denial is a request the authorizer refused (403 Forbidden with RBAC's message).
type Denial struct {
	Call    Call
	Method  string
	Path    string
	Message string
}

// Recorder counts the calls made through the rest.Configs it wraps.
type Recorder struct {
	mu      sync.Mutex
	calls   map[nsCall]int
	denials []Denial
}

type nsCall struct {
	Call
	namespace string
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{calls: map[nsCall]int{}} }

// Wrap returns a copy of cfg whose requests are recorded (after any transport wrapper cfg
// already has).
func (r *Recorder) Wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper{r: r, next: rt}
	})
	return cfg
}

type roundTripper struct {
	r    *Recorder
	next http.RoundTripper
}

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	call, ns, ok := parse(req.Method, req.URL)
	if ok {
		t.r.mu.Lock()
		t.r.calls[nsCall{call, ns}]++
		t.r.mu.Unlock()
	}
	resp, err := t.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusForbidden {
		// Keep the server's reason (it names the user and the missing permission), then hand
		// the body on unread.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if msg, ok := authorizationDenial(body); ok {
			t.r.mu.Lock()
			t.r.denials = append(t.r.denials, Denial{Call: call, Method: req.Method, Path: req.URL.Path, Message: msg})
			t.r.mu.Unlock()
		}
	}
	return resp, err
}

// Calls returns the distinct calls recorded so far, sorted.
func (r *Recorder) Calls() []Call {
	return r.collect(func(string) bool { return true })
}

// CallsIn returns the distinct calls recorded so far in one namespace ("": the calls that named
// none), sorted.
func (r *Recorder) CallsIn(namespace string) []Call {
	return r.collect(func(ns string) bool { return ns == namespace })
}

// Namespaces returns the namespaces calls were made in, sorted.
func (r *Recorder) Namespaces() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for c := range r.calls {
		if c.namespace != "" && !slices.Contains(out, c.namespace) {
			out = append(out, c.namespace)
		}
	}
	sort.Strings(out)
	return out
}

func (r *Recorder) collect(in func(namespace string) bool) []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[Call]bool{}
	out := []Call{}
	for c := range r.calls {
		if in(c.namespace) && !seen[c.Call] {
			seen[c.Call] = true
			out = append(out, c.Call)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Denials returns the requests answered 403 Forbidden.
func (r *Recorder) Denials() []Denial {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.denials)
}

// Grant is one verb on one resource that a rule grants.
type Grant struct {
	Group    string
	Resource string // resource or resource/subresource
	Verb     string
}

func (g Grant) String() string { return fmt.Sprintf("%s %s (group %q)", g.Verb, g.Resource, g.Group) }

// Grants expands resource rules into single grants (rules for nonResourceURLs are left out).
func Grants(rules []rbacv1.PolicyRule) []Grant {
	seen := map[Grant]bool{}
	var out []Grant
	for _, rule := range rules {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				for _, v := range rule.Verbs {
					gr := Grant{Group: g, Resource: res, Verb: v}
					if !seen[gr] {
						seen[gr] = true
						out = append(out, gr)
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Allows says whether a rule grants the call (wildcards included; resourceNames are not
// considered: the operator's rules use none).
func Allows(rules []rbacv1.PolicyRule, c Call) bool {
	for _, g := range Grants(rules) {
		if g.covers(c) {
			return true
		}
	}
	return false
}

func (g Grant) covers(c Call) bool {
	return (g.Group == c.Group || g.Group == rbacv1.APIGroupAll) &&
		(g.Resource == c.ResourceName() || g.Resource == rbacv1.ResourceAll) &&
		(g.Verb == c.Verb || g.Verb == rbacv1.VerbAll)
}

// Unused returns the grants no call used.
func Unused(rules []rbacv1.PolicyRule, calls []Call) []Grant {
	var out []Grant
	for _, g := range Grants(rules) {
		if !slices.ContainsFunc(calls, g.covers) {
			out = append(out, g)
		}
	}
	return out
}

// Role is a Role or ClusterRole read from a manifest.
type Role struct {
	Kind  string
	Name  string
	Rules []rbacv1.PolicyRule
}

// ReadRoles reads the Roles and ClusterRoles of a YAML file (one or more documents); other kinds
// are skipped.
func ReadRoles(path string) ([]Role, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var roles []Role
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Rules []rbacv1.PolicyRule `json:"rules"`
		}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if obj.Kind == "Role" || obj.Kind == "ClusterRole" {
			roles = append(roles, Role{Kind: obj.Kind, Name: obj.Metadata.Name, Rules: obj.Rules})
		}
	}
	if len(roles) == 0 {
		return nil, fmt.Errorf("%s: no Role or ClusterRole", path)
	}
	return roles, nil
}

// Rules reads the rules of every Role and ClusterRole in the files.
func Rules(paths ...string) ([]rbacv1.PolicyRule, error) {
	var rules []rbacv1.PolicyRule
	for _, p := range paths {
		roles, err := ReadRoles(p)
		if err != nil {
			return nil, err
		}
		for _, r := range roles {
			rules = append(rules, r.Rules...)
		}
	}
	return rules, nil
}
