// Package docs checks that the README and docs/ say what the code and the manifests do, and that
// their links lead somewhere.
package docs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// grant is one verb on one resource (or non-resource URL) of one role file.
type grant struct{ file, group, resource, verb string }

// The permissions table of docs/security.md lists every rule of config/rbac/*.yaml, no more: a
// permission added to a role (Jobs' deletecollection, say) is not granted silently.
func TestReadmeListsEveryPermission(t *testing.T) {
	fromRoles := roleGrants(t)
	fromDoc := docGrants(t)
	for _, g := range fromRoles {
		if !slices.Contains(fromDoc, g) {
			t.Errorf("docs/security.md's permissions table lacks %s: %s %s in group %q", g.file, g.verb, g.resource, g.group)
		}
	}
	for _, g := range fromDoc {
		if !slices.Contains(fromRoles, g) {
			t.Errorf("docs/security.md's permissions table lists %s: %s %s in group %q, which that role does not grant", g.file, g.verb, g.resource, g.group)
		}
	}
	if len(fromRoles) < 40 {
		t.Errorf("only %d grants read from config/rbac: the roles were not found", len(fromRoles))
	}
}

// roleGrants reads every Role and ClusterRole of config/rbac.
func roleGrants(t *testing.T) []grant {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "rbac", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []grant
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
		for {
			var role rbacv1.ClusterRole // a Role's rules have the same shape
			if err := dec.Decode(&role); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if role.Kind != "Role" && role.Kind != "ClusterRole" {
				continue
			}
			for _, r := range role.Rules {
				for _, verb := range r.Verbs {
					for _, url := range r.NonResourceURLs {
						out = append(out, grant{filepath.Base(path), "", url, verb})
					}
					for _, group := range r.APIGroups {
						for _, res := range r.Resources {
							out = append(out, grant{filepath.Base(path), group, res, verb})
						}
					}
				}
			}
		}
	}
	return out
}

// securityDoc holds the permissions table.
var securityDoc = filepath.Join("..", "..", "docs", "security.md")

// docGrants reads the table after the rbac-table marker of docs/security.md.
func docGrants(t *testing.T) []grant {
	t.Helper()
	b, err := os.ReadFile(securityDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "<!-- rbac-table:")
	if !ok {
		t.Fatal("docs/security.md has no <!-- rbac-table: ... --> marker before its permissions table")
	}
	var out []grant
	for i, line := range strings.Split(table, "\n")[1:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if i < 2 { // the header and its rule
			continue
		}
		if len(cells) != 5 {
			t.Fatalf("docs/security.md permissions row %q: %d cells, want 5", line, len(cells))
		}
		file := strings.Trim(strings.TrimSpace(cells[0]), "`")
		group := strings.Trim(strings.TrimSpace(cells[1]), "`")
		switch group {
		case "core", "(non-resource URL)":
			group = ""
		}
		for _, res := range strings.Split(cells[2], ",") {
			for _, verb := range strings.Split(cells[3], ",") {
				out = append(out, grant{file, group, strings.Trim(strings.TrimSpace(res), "`"), strings.TrimSpace(verb)})
			}
		}
	}
	return out
}
