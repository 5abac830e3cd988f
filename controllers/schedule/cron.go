package schedule

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// maxDueSearch bounds the Next calls of one lastDue. The search needs at most about 100 for any
// span a time.Duration holds (doubling windows from a minute to 292 years, then a bisection down
// to the second); the cap only guards against a schedule whose Next is not monotonic.
const maxDueSearch = 256

// lastDue is the newest scheduled time after since and at or before now; zero when none. Only
// the newest missed time is started (like a CronJob), however many were missed.
//
// It does not walk every tick since since: a "* * * * *" schedule suspended for a year would
// take half a million Next calls. It looks back from now in doubling windows (a minute, two,
// four, ... but never before since) until a window holds a scheduled time, then bisects that
// window's older half, where the newest time must lie: a few dozen Next calls whatever the span,
// in the schedule's own time zone and DST rules (its Next decides what is a scheduled time). The
// result is the walk's, except where robfig/cron's Next skips a midnight just after a DST change
// of half an hour (Lord Howe) or at midnight (St. John's before 2011): the walk jumped over that
// time, the search finds it.
//
// The error says the search stopped at maxDueSearch calls (a Next that is not monotonic); due is
// then the newest scheduled time found so far, still after since and at or before now, so the
// schedule moves on and the next reconcile searches from there.
func lastDue(s cron.Schedule, since, now time.Time) (time.Time, error) {
	if !now.After(since) {
		return time.Time{}, nil
	}
	if every, ok := s.(cron.ConstantDelaySchedule); ok {
		return lastDueEvery(every, since, now), nil
	}
	calls := 0
	next := func(t time.Time) time.Time { calls++; return s.Next(t) }
	// fires reports whether a scheduled time lies in (t, now], and the first one.
	fires := func(t time.Time) (time.Time, bool) {
		n := next(t)
		return n, !n.IsZero() && !n.After(now)
	}

	// Doubling windows (lo, now]: hi is the start of the last window without a scheduled time
	// (none lies in (hi, now]), due the first time in the first window with one.
	span := now.Sub(since)
	hi := now
	var due time.Time
	for w := time.Minute; ; {
		lo := since
		if w < span {
			lo = now.Add(-w)
		}
		var ok bool
		if due, ok = fires(lo); ok {
			break
		}
		if lo.Equal(since) {
			return time.Time{}, nil
		}
		hi = lo
		if w > span/2 {
			w = span
		} else {
			w *= 2
		}
	}

	// Bisection. Invariant: due is a scheduled time at or before now, and none lies in
	// (hi, now], so the newest one is in [due, hi]. Each round halves (due, hi]; ticks are
	// whole seconds apart, so it ends within log2 of the window in seconds.
	for {
		if calls >= maxDueSearch {
			return due, fmt.Errorf("the search for the newest scheduled time between %s and %s stopped after %d steps at %s",
				since.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), calls, due.UTC().Format(time.RFC3339))
		}
		after, ok := fires(due)
		if !ok {
			return due, nil
		}
		mid := due.Add(hi.Sub(due) / 2)
		if n, ok := fires(mid); ok {
			due = n // the newest is in (mid, hi]
		} else {
			hi, due = mid, after // none in (mid, now]: the newest is in [after, mid]
		}
	}
}

// lastDueEvery is lastDue for "@every <duration>": its times count from since (Next adds the
// delay to the second before), so the newest is a multiple of the delay after it.
func lastDueEvery(s cron.ConstantDelaySchedule, since, now time.Time) time.Time {
	base := since.Add(-time.Duration(since.Nanosecond()))
	n := now.Sub(base) / s.Delay
	if n < 1 {
		return time.Time{}
	}
	return base.Add(n * s.Delay)
}
