package bounded

import (
	"strings"
	"testing"
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
