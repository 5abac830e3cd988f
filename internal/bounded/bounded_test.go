package bounded

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func TestHeadAndTail(t *testing.T) {
	cases := []struct {
		name, in   string
		n          int
		head, tail string
	}{
		{"fits", "abc", 3, "abc", "abc"},
		{"ascii cut", "abcdefgh", 6, "abc...", "...fgh"},
		{"multi-byte runes never split", "ééééé", 8, "éé...", "...éé"}, // é is 2 bytes
		{"a 3-byte rune at the cut", "a€b€c", 6, "a...", "...c"},
		{"invalid UTF-8 replaced", "a\xffb", 10, "a\uFFFDb", "a\uFFFDb"},
		{"tiny limit", "abcdef", 2, "..", ".."},
		{"zero", "abcdef", 0, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Head(tc.in, tc.n); got != tc.head {
				t.Errorf("Head(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.head)
			}
			if got := Tail(tc.in, tc.n); got != tc.tail {
				t.Errorf("Tail(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.tail)
			}
		})
	}
}

// Whatever the input, the output is valid UTF-8 within the limit.
func TestBoundsHoldForAnyInput(t *testing.T) {
	inputs := []string{strings.Repeat("日本語\xfe", 5000), strings.Repeat("x", 40000), "\xe2\x82", ""}
	for _, in := range inputs {
		for _, n := range []int{0, 1, 3, 4, 5, 100, Event, Status, Condition} {
			for name, f := range map[string]func(string, int) string{"Head": Head, "Tail": Tail} {
				out := f(in, n)
				if len(out) > n || !utf8.ValidString(out) {
					t.Errorf("%s(%d bytes, %d): %d bytes, valid UTF-8 %v", name, len(in), n, len(out), utf8.ValidString(out))
				}
			}
		}
	}
}

// A Reader passes on a log of up to its limit whole, and fails, after passing the limit's bytes,
// on a longer one, whatever the sizes of the reads.
func TestReaderFailsPastItsLimit(t *testing.T) {
	for _, tc := range []struct {
		size, limit int64
		tooLarge    bool
	}{
		{0, 0, false},
		{10, 10, false},
		{9, 10, false},
		{11, 10, true},
		{1, 0, true},
		{100000, 65536, true},
		{65536, 65536, false},
	} {
		for _, chunk := range []int{1, 7, 4096, 1 << 20} {
			var src io.Reader = strings.NewReader(strings.Repeat("x", int(tc.size)))
			if chunk == 1 {
				src = iotest.OneByteReader(src)
			}
			r := Reader(src, tc.limit)
			var got int64
			buf := make([]byte, chunk)
			var err error
			for err == nil {
				var n int
				n, err = r.Read(buf)
				got += int64(n)
			}
			var tl *TooLargeError
			switch {
			case tc.tooLarge && (!errors.As(err, &tl) || tl.Limit != tc.limit):
				t.Errorf("%d bytes, limit %d, reads of %d: error %v, want a TooLargeError", tc.size, tc.limit, chunk, err)
			case !tc.tooLarge && !errors.Is(err, io.EOF):
				t.Errorf("%d bytes, limit %d, reads of %d: error %v, want EOF", tc.size, tc.limit, chunk, err)
			case got != min(tc.size, tc.limit):
				t.Errorf("%d bytes, limit %d, reads of %d: passed on %d bytes", tc.size, tc.limit, chunk, got)
			}
		}
	}
	if got := (&TooLargeError{Limit: 64 << 20}).Error(); got != "more than 64 MiB" {
		t.Errorf("message %q", got)
	}
}
