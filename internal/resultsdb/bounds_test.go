package resultsdb_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mysqlbench/mysqlbench-operator/internal/resultsdb"
)

// Strings longer than their columns, multi-byte at the cut and with invalid UTF-8, are stored
// cut to fit on a character boundary, in a strict-mode MariaDB that refuses anything longer
// (error 1406) or invalid (1366) for the whole run: one server's odd version string must not
// keep a run out of the database for ever.
func TestOverlongStringsAreCutToTheirColumns(t *testing.T) {
	srv, cfg := database(t)
	if mode := srv.MustSQL(t, "SELECT @@GLOBAL.sql_mode"); !strings.Contains(mode, "STRICT_TRANS_TABLES") {
		t.Fatalf("sql_mode %q: the test needs strict mode, where an overlong value fails the write", mode)
	}
	s := open(t, cfg, resultsdb.OpenOptions{})
	run, doc := fixture(t, uid(40), shape{targets: 1, threads: 1, reps: 1}, 1)
	ts := &run.Status.Targets[0]
	ts.ServerVersion = "11.8.3-" + strings.Repeat("é", 300) + "\xff"
	ts.Message = strings.Repeat("😀", 20000) // 80,000 bytes: past TEXT's 65,535
	ts.Node.KernelVersion = strings.Repeat("k", 254) + "ü-tail"
	ts.Node.OSImage = "Debian \xc3"
	doc.Targets[0].Image = "registry.example/" + strings.Repeat("a", 1100)
	rec, err := resultsdb.Build(run, doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write(context.Background(), rec); err != nil {
		t.Fatalf("write with overlong strings: %v", err)
	}
	var version, message, kernel, osImage, image string
	if err := s.DB().QueryRow("SELECT server_version, message, node_kernel, node_os_image, image FROM targets WHERE run_uid = ?",
		rec.UID).Scan(&version, &message, &kernel, &osImage, &image); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, got, prefix string
		chars, bytes      int
	}{
		{"server_version", version, "11.8.3-éé", 255, 0},
		{"message", message, "😀😀", 0, 65535},
		{"node_kernel", kernel, "kkkk", 255, 0},
		{"node_os_image", osImage, "Debian ", 0, 0}, // short, only its invalid byte replaced
		{"image", image, "registry.example/aaa", 1024, 0},
	} {
		switch {
		case !utf8.ValidString(c.got):
			t.Errorf("%s is not valid UTF-8: %q", c.name, c.got)
		case !strings.HasPrefix(c.got, c.prefix):
			t.Errorf("%s = %.40q..., want it to start with %q", c.name, c.got, c.prefix)
		case c.chars > 0 && utf8.RuneCountInString(c.got) != c.chars:
			t.Errorf("%s has %d characters, want exactly %d (the column's length)", c.name, utf8.RuneCountInString(c.got), c.chars)
		case c.bytes > 0 && (len(c.got) > c.bytes || len(c.got) < c.bytes-3):
			t.Errorf("%s has %d bytes, want the column's %d less at most one character", c.name, len(c.got), c.bytes)
		}
	}
	// A record is what it stores: building it again gives the same hash, so a retried write
	// changes nothing.
	again, err := resultsdb.Build(run, doc)
	if err != nil || again.Hash != rec.Hash {
		t.Fatalf("rebuilt hash %s (%v), want %s", again.Hash, err, rec.Hash)
	}
}
