// Package images checks the repository's Dockerfiles.
package images

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// pinned is a registry image by tag and digest: the tag says what it is, the digest which one.
var pinned = regexp.MustCompile(`^[a-z0-9][a-z0-9._/:-]*:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}$`)

// unpinned lists the FROM lines of a Dockerfile that pull a registry image without its digest;
// scratch and earlier build stages pull nothing.
func unpinned(dockerfile string) []string {
	stages := map[string]bool{"scratch": true}
	var out []string
	for _, line := range strings.Split(dockerfile, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.EqualFold(fields[0], "FROM") {
			continue
		}
		if ref := fields[1]; !stages[ref] && !pinned.MatchString(ref) {
			out = append(out, strings.TrimSpace(line))
		}
		if len(fields) >= 4 && strings.EqualFold(fields[2], "AS") {
			stages[fields[3]] = true
		}
	}
	return out
}

func TestUnpinned(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		dockerfile string
		want       []string
	}{
		{"FROM golang:1.24 AS builder\nRUN go build\nFROM gcr.io/distroless/static:nonroot\n",
			[]string{"FROM golang:1.24 AS builder", "FROM gcr.io/distroless/static:nonroot"}},
		{"FROM debian@sha256:" + strings.Repeat("ab", 32), []string{"FROM debian@sha256:" + strings.Repeat("ab", 32)}}, // no tag
		{"FROM golang:1.26" + digest + " AS builder\nFROM builder AS test\nfrom scratch\n", nil},
		{"FROM registry.example.com:5000/db/mysql:8.4" + digest, nil},
		{"FROM builder\nFROM golang:1.26" + digest + " AS builder", []string{"FROM builder"}}, // not a stage yet
	} {
		if got := unpinned(tc.dockerfile); !slices.Equal(got, tc.want) {
			t.Errorf("unpinned(%q) = %q, want %q", tc.dockerfile, got, tc.want)
		}
	}
}

// Every base image the repository's Dockerfiles pull from a registry is pinned by digest, its
// tag kept (make pin-images).
func TestBaseImagesArePinnedByDigest(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files", "Dockerfile", "*/Dockerfile", "*.Dockerfile").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	if !slices.Contains(files, "Dockerfile") || !slices.Contains(files, "images/sysbench/Dockerfile") {
		t.Fatalf("Dockerfiles %v, want the manager's and the sysbench image's among them", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range unpinned(string(b)) {
			t.Errorf("%s: %q is not pinned: write FROM name:tag@sha256:<digest> (make pin-images)", f, line)
		}
	}
}
