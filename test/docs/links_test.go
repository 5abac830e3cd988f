package docs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package's directory.
var root = filepath.Join("..", "..")

// readmeMaxLines keeps the README a page a user reads to the first run and the links to the rest;
// reference and measurements belong in docs/, where it links.
const readmeMaxLines = 400

// linkedDocs are the pages whose links are checked: the README, CONTRIBUTING and everything under
// docs/ (they link each other, so a heading renamed or a section moved breaks a link here).
func linkedDocs(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md found")
	}
	return append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md")}, docs...)
}

func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, at most %d: move reference to docs/ and measurements to docs/evidence.md, and link them", n, readmeMaxLines)
	}
}

// Every relative link of the README and docs/ names a file or directory that exists, and every
// #anchor a heading of the page it points into.
func TestDocLinksResolve(t *testing.T) {
	anchors := map[string][]string{} // by cleaned path
	anchorsOf := func(path string) []string {
		if a, ok := anchors[path]; ok {
			return a
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path]
	}
	checked := 0
	for _, doc := range linkedDocs(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(b)) {
			target := l.target
			if isExternal(target) {
				continue
			}
			checked++
			file, anchor, _ := strings.Cut(target, "#")
			path := filepath.Clean(doc)
			if file != "" {
				path = filepath.Clean(filepath.Join(filepath.Dir(doc), file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", rel(doc), l.line, target, rel(path))
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into %s, which is not markdown", rel(doc), l.line, target, rel(path))
				continue
			}
			if !slices.Contains(anchorsOf(path), anchor) {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", rel(doc), l.line, target, rel(path), anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: the link parser is broken", checked)
	}
}

// The README's two newcomer commands are `make demo` and `make test`, and CI runs the same test
// command, so that what a newcomer runs is what CI proves.
func TestReadmeCommandsAreCIs(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "**Two commands**")
	if !ok {
		t.Fatal("README.md has no **Two commands** paragraph")
	}
	_, block, _ = strings.Cut(block, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var cmds []string
	for _, line := range strings.Split(block, "\n") {
		if cmd, _, _ := strings.Cut(line, "#"); strings.TrimSpace(cmd) != "" {
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
	}
	if !slices.Equal(cmds, []string{"make demo", "make test"}) {
		t.Fatalf("README's two commands are %q, want make demo and make test", cmds)
	}
	if !regexp.MustCompile(`(?m)^make test$`).Match(ci) {
		t.Errorf(".ci/run does not run `make test`, the test command the README gives")
	}
}

// hack/kind.sh applies the README's first yaml block as the first run, so it must stay the
// first-run BenchmarkRun.
func TestReadmeFirstYAMLIsTheFirstRun(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, yaml, ok := strings.Cut(string(readme), "```yaml\n")
	if !ok {
		t.Fatal("README.md has no yaml block")
	}
	yaml, _, _ = strings.Cut(yaml, "```")
	for _, want := range []string{"kind: BenchmarkRun\n", "\n  name: first-run\n"} {
		if !strings.Contains(yaml, want) {
			t.Errorf("README.md's first yaml block lacks %q: hack/kind.sh applies it as the first run", want)
		}
	}
}

// A link of a markdown page and the line it is on.
type link struct {
	target string
	line   int
}

var (
	linkRE     = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	headingRE  = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// markdownLinks finds the inline links outside fenced code blocks and code spans.
func markdownLinks(doc string) []link {
	var out []link
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(doc))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			out = append(out, link{m[1], n})
		}
	}
	return out
}

// headingAnchors are the anchors GitHub gives a page's headings: lower case, the characters
// other than letters, digits, spaces, hyphens and underscores dropped, spaces as hyphens, and a
// repeated anchor suffixed -1, -2, ...
func headingAnchors(doc string) []string {
	var out []string
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		m := headingRE.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

func isExternal(target string) bool {
	return strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:")
}

func rel(path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}
