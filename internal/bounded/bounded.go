// Package bounded cuts the messages the operator writes into the API to the sizes the API
// accepts, on rune boundaries, so that a long or binary server log never makes a status write or
// an Event fail, and never writes invalid UTF-8.
package bounded

import "strings"

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
