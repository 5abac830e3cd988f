package resultsdb

import (
	"testing"
	"testing/fstest"
)

// The limits come from the migrations as written: CREATE TABLE and ALTER TABLE ... ADD COLUMN,
// VARCHAR/CHAR in characters and TEXT types in bytes, the Down sections ignored.
func TestColumnLimits(t *testing.T) {
	fsys := fstest.MapFS{
		"00001_a.sql": {Data: []byte("-- comment VARCHAR(1)\n-- +goose Up\nCREATE TABLE runs (\n  uid CHAR(36) CHARACTER SET ascii NOT NULL,\n" +
			"  spec MEDIUMTEXT NOT NULL,\n  n INT NOT NULL\n);\n-- +goose Down\nCREATE TABLE runs (uid VARCHAR(1));\n")},
		"00002_b.sql": {Data: []byte("-- +goose Up\nALTER TABLE runs\n  ADD COLUMN note VARCHAR(255) NULL,\n  ADD COLUMN msg TEXT NULL;\n")},
	}
	got, err := columnLimits(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]limit{"uid": {chars: 36}, "spec": {bytes: 16777215}, "note": {chars: 255}, "msg": {bytes: 65535}}
	if len(got["runs"]) != len(want) {
		t.Fatalf("limits %v, want %v", got, want)
	}
	for col, l := range want {
		if got["runs"][col] != l {
			t.Errorf("runs.%s: %+v, want %+v", col, got["runs"][col], l)
		}
	}
	// The schema's own: the column of the server's version string.
	if l := limits["targets"]["server_version"]; l.chars != 255 {
		t.Errorf("targets.server_version: %+v, want 255 characters", l)
	}
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		l    limit
		want string
	}{
		{"abc", limit{chars: 5}, "abc"},
		{"ééé", limit{chars: 2}, "éé"},
		{"ééé", limit{bytes: 5}, "éé"},
		{"a\xffb", limit{chars: 10}, "a\uFFFDb"},
		{"😀😀", limit{bytes: 6}, "😀"},
	} {
		if got := fit(tc.in, tc.l); got != tc.want {
			t.Errorf("fit(%q, %+v) = %q, want %q", tc.in, tc.l, got, tc.want)
		}
	}
}
