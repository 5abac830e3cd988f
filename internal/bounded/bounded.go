// Package bounded cuts the messages the operator writes into the API to the sizes the API
// accepts, on rune boundaries, so that a long or binary server log never makes a status write or
// an Event fail, and never writes invalid UTF-8; and it stops a reader at a size limit, saying so.
package bounded

import (
	"fmt"
	"io"
	"strings"
)

// Limits of the fields the operator writes.
const (
	// Condition is metav1.Condition's message limit, enforced by the API server's validation
	// of every CRD that uses the type.
	Condition = 32768
	// Event keeps an Event readable in `kubectl describe` and within the 1 kB note limit of
	// events.k8s.io/v1.
	Event = 1024
	// Status bounds the free-text fields of a target's status (message, firstServerExit), which
	// are repeated in conditions and Events.
	Status = 4096
)

const ellipsis = "..."

// Head keeps the beginning of s in at most n bytes, ending with "..." when it cut.
func Head(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	if n <= len(ellipsis) {
		return ellipsis[:max(n, 0)]
	}
	cut := n - len(ellipsis)
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// Tail keeps the end of s in at most n bytes, starting with "..." when it cut: for logs, whose
// last lines say why something ended.
func Tail(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	if n <= len(ellipsis) {
		return ellipsis[:max(n, 0)]
	}
	cut := len(s) - (n - len(ellipsis))
	for cut < len(s) && !runeStart(s[cut]) {
		cut++
	}
	return ellipsis + s[cut:]
}

// runeStart says whether b begins a UTF-8 sequence (is not a continuation byte).
func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// TooLargeError is what a Reader returns once its input has passed its limit.
type TooLargeError struct {
	// Limit is the most bytes the Reader passes on.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("more than %s", Size(e.Limit))
}

// Reader passes on r's first n bytes and fails with a *TooLargeError if there are more: unlike
// io.LimitReader, whose cut is silent, a reader of a log that is too large learns that it did not
// see the whole log.
func Reader(r io.Reader, n int64) io.Reader {
	return &reader{r: r, left: n, limit: n}
}

type reader struct {
	r           io.Reader
	left, limit int64
}

func (l *reader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &TooLargeError{Limit: l.limit}
	}
	// One byte past the limit tells a log of exactly n bytes from a longer one.
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		n = int(l.left)
		l.left = -1
		return n, &TooLargeError{Limit: l.limit}
	}
	l.left -= int64(n)
	return n, err
}

// Size says n bytes the way a limit is written: "64 MiB", "4 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
