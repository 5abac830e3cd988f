package report

import (
	"errors"
	"fmt"
)

// embeddedSeries is a series as Render embeds it in results.json: the stored bytes, checked. Keeping
// the bytes instead of decoding and re-encoding makes Render several times cheaper on a big run
// (hundreds of thousands of numbers) and keeps the embedded series exactly as large as the
// budget allowed.
type embeddedSeries []byte

// MarshalJSON returns the checked bytes as they are.
func (s embeddedSeries) MarshalJSON() ([]byte, error) { return s, nil }

// checkSeries returns the bytes of a stored series ready to embed. The form EncodeSeries writes is
// checked by a fast scan; anything else (hand-edited, other whitespace, unknown fields) goes
// through DecodeSeries and is re-encoded, or is rejected with its error.
func checkSeries(raw string) (embeddedSeries, error) {
	if scanCanonical(raw) == nil {
		return embeddedSeries(raw), nil
	}
	s, err := DecodeSeries(raw)
	if err != nil {
		return nil, err
	}
	return embeddedSeries(s.appendJSON()), nil
}

// seriesFields are the fields EncodeSeries writes; arrays are true.
var seriesFields = map[string]bool{
	"bucketSeconds": false, "intervals": false, "threads": false, "pointsDropped": false,
	"t": true, "tps": true, "qps": true, "read": true, "write": true, "other": true,
	"latencyMs": true, "errors": true, "reconnects": true,
}

var errNotCanonical = errors.New("not in the form EncodeSeries writes")

// scanCanonical accepts exactly the JSON EncodeSeries writes: no whitespace, known fields once
// each, non-negative integers, and either no columns or all of them with equal lengths. It
// checks number syntax but does not convert numbers, which is what makes it fast.
func scanCanonical(s string) error {
	i := 0
	next := func(c byte) bool {
		if i < len(s) && s[i] == c {
			i++
			return true
		}
		return false
	}
	if !next('{') {
		return errNotCanonical
	}
	seen := map[string]bool{}
	columns, points := 0, -1
	for first := true; !next('}'); first = false {
		if !first && !next(',') {
			return errNotCanonical
		}
		if !next('"') {
			return errNotCanonical
		}
		start := i
		for i < len(s) && s[i] != '"' {
			i++
		}
		key := s[start:i]
		isArray, known := seriesFields[key]
		if !known || seen[key] || !next('"') || !next(':') {
			return errNotCanonical
		}
		seen[key] = true
		switch {
		case key == "pointsDropped":
			if !hasPrefixAt(s, i, "true") {
				return errNotCanonical
			}
			i += len("true")
		case !isArray:
			start := i
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			if i == start || (s[start] == '0' && i-start > 1) {
				return errNotCanonical
			}
		default:
			if !next('[') {
				return errNotCanonical
			}
			n := 0
			for !next(']') {
				if n > 0 && !next(',') {
					return errNotCanonical
				}
				end := scanNumber(s, i)
				if end < 0 {
					return errNotCanonical
				}
				i = end
				n++
			}
			if points >= 0 && n != points {
				return fmt.Errorf("%w: column %q has %d points, others %d", errNotCanonical, key, n, points)
			}
			points = n
			columns++
		}
	}
	if i != len(s) {
		return errNotCanonical
	}
	if columns != 0 && columns != 9 {
		return errNotCanonical
	}
	if seen["pointsDropped"] && columns != 0 {
		return errNotCanonical
	}
	return nil
}

func hasPrefixAt(s string, i int, p string) bool { return len(s)-i >= len(p) && s[i:i+len(p)] == p }

// scanNumber returns the end of the JSON number starting at i, or -1 if there is none.
func scanNumber(s string, i int) int {
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return -1
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return -1
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return -1
		}
	}
	return i
}
