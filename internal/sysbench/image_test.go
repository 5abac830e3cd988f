package sysbench

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var imageDir = filepath.Join("..", "..", "images", "sysbench")

// readPackages reads images/sysbench/packages.txt: name=version per line, # comments.
func readPackages(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(imageDir, "packages.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	pkgs := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, version, ok := strings.Cut(line, "=")
		if !ok || name == "" || version == "" {
			t.Fatalf("packages.txt line %q is not name=version: every package is pinned", line)
		}
		if _, dup := pkgs[name]; dup {
			t.Fatalf("packages.txt lists %s twice", name)
		}
		pkgs[name] = version
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestImage checks the sysbench image's Dockerfile against packages.txt and the sysbench this
// machine runs: the image installs exactly the pinned list, as a numeric non-root user, and the
// pinned sysbench is the build the real tests execute.
func TestImage(t *testing.T) {
	dockerfile, err := os.ReadFile(filepath.Join(imageDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(dockerfile)
	pkgs := readPackages(t)

	if !regexp.MustCompile(`(?m)^FROM debian:bookworm-slim\b`).MatchString(df) {
		t.Errorf("the image must be FROM debian:bookworm-slim")
	}
	// The Dockerfile installs the list from the file instead of repeating it, so the two cannot
	// disagree; make sure it still does, and names no package of its own.
	if !strings.Contains(df, "COPY packages.txt ") || !strings.Contains(df, "xargs apt-get install") {
		t.Errorf("the Dockerfile must install the packages listed in packages.txt")
	}
	if m := regexp.MustCompile(`apt-get install[^\n]*\b(sysbench|lib[a-z0-9.-]+)=`).FindString(df); m != "" {
		t.Errorf("the Dockerfile pins a package itself (%q): pin it in packages.txt", m)
	}
	users := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindAllStringSubmatch(df, -1)
	if len(users) == 0 {
		t.Fatalf("the image sets no USER: it would run as root")
	}
	uid, _, _ := strings.Cut(users[len(users)-1][1], ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("final USER %q must be a numeric non-root uid (runAsNonRoot cannot verify names)", users[len(users)-1][1])
	}
	if !strings.Contains(df, "/usr/share/sysbench/oltp_point_select.lua") {
		t.Errorf("the image build must check that the stock scripts are installed")
	}
	if _, ok := pkgs["sysbench"]; !ok {
		t.Errorf("packages.txt does not pin sysbench")
	}

	// The build the tests run must be the build the image ships.
	if _, err := exec.LookPath("dpkg-query"); err != nil {
		t.Logf("no dpkg-query: cannot compare with the installed sysbench")
		return
	}
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "sysbench").Output()
	if err != nil {
		if os.Getenv("MYSQLBENCH_REQUIRE_REAL") == "1" {
			t.Fatalf("sysbench is not installed from apt: %v", err)
		}
		t.Logf("sysbench not installed from apt: %v", err)
		return
	}
	if got := strings.TrimSpace(string(out)); got != pkgs["sysbench"] {
		t.Errorf("installed sysbench is %s, the image pins %s: update packages.txt or CI's apt install", got, pkgs["sysbench"])
	}
}
