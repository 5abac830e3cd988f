package schedule

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// naiveLastDue is lastDue as it was: every scheduled time since since, one Next call each. The
// reference the bounded search must agree with.
func naiveLastDue(s cron.Schedule, since, now time.Time) time.Time {
	var due time.Time
	for t := s.Next(since); !t.IsZero() && !t.After(now); t = s.Next(t) {
		due = t
	}
	return due
}

// naiveLastDueWithin is naiveLastDue over the window before now only: the same when a
// scheduled time lies in the window.
func naiveLastDueWithin(s cron.Schedule, since, now time.Time, window time.Duration) time.Time {
	if from := now.Add(-window); from.After(since) {
		since = from
	}
	return naiveLastDue(s, since, now)
}

// counting counts the Next calls of a schedule.
type counting struct {
	cron.Schedule
	calls int
}

func (c *counting) Next(t time.Time) time.Time { c.calls++; return c.Schedule.Next(t) }

func mustSchedule(t testing.TB, expr, zone string) cron.Schedule {
	t.Helper()
	spec := v1.BenchmarkScheduleSpec{Schedule: expr}
	if zone != "" {
		spec.TimeZone = ptr.To(zone)
	}
	s, _, err := v1.ParseSchedule(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustTime(t testing.TB, zone, value string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04:05", value, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLastDueExamples(t *testing.T) {
	cases := []struct {
		name, expr, zone string
		since, now, want string // in zone; want "" for none
	}{
		{"nothing due yet", "0 2 * * *", "UTC", "2026-11-23 02:00:00", "2026-11-24 01:59:59", ""},
		{"due exactly now", "0 2 * * *", "UTC", "2026-11-23 02:00:00", "2026-11-24 02:00:00", "2026-11-24 02:00:00"},
		{"since is not due again", "0 2 * * *", "UTC", "2026-11-24 02:00:00", "2026-11-24 02:00:00", ""},
		{"every minute, three days late", "* * * * *", "UTC", "2026-11-20 10:00:00", "2026-11-23 10:17:30", "2026-11-23 10:17:00"},
		{"first and second of the month", "0 0 1,2 * *", "UTC", "2020-01-15 00:00:00", "2026-11-20 12:00:00", "2026-11-02 00:00:00"},
		{"29 February, years apart", "0 0 29 2 *", "UTC", "2017-03-01 00:00:00", "2026-11-23 00:00:00", "2024-02-29 00:00:00"},
		{"@yearly", "@yearly", "Europe/Berlin", "2001-06-01 00:00:00", "2026-11-23 00:00:00", "2026-01-01 00:00:00"},
		// 02:30 does not exist on 8 March 2026 in New York: the 7th's is the newest.
		{"spring-forward gap", "30 2 * * *", "America/New_York", "2026-03-01 00:00:00", "2026-03-08 12:00:00", "2026-03-07 02:30:00"},
		{"half-hour zone", "30 2 * * *", "Asia/Kolkata", "2025-11-23 00:00:00", "2026-11-23 02:29:00", "2026-11-22 02:30:00"},
		{"@every counts from since", "@every 90m", "UTC", "2026-11-23 00:00:00", "2026-11-23 10:00:00", "2026-11-23 09:00:00"},
		{"@every, none yet", "@every 90m", "UTC", "2026-11-23 00:00:00", "2026-11-23 01:29:59", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustSchedule(t, c.expr, c.zone)
			since, now := mustTime(t, c.zone, c.since), mustTime(t, c.zone, c.now)
			got, err := lastDue(s, since, now)
			if err != nil {
				t.Fatal(err)
			}
			var want time.Time
			if c.want != "" {
				want = mustTime(t, c.zone, c.want)
			}
			if walk := naiveLastDue(s, since, now); !walk.Equal(want) {
				t.Fatalf("the walk over every time says %s, the case %s", walk, want)
			}
			if !got.Equal(want) {
				t.Errorf("lastDue = %s, want %s", got, want)
			}
		})
	}
	// 01:30 happens twice on 1 November 2026 in New York: at 01:45 EST the newest is 01:30 EST,
	// an hour after 01:30 EDT.
	s := mustSchedule(t, "30 1 * * *", "America/New_York")
	ny, _ := time.LoadLocation("America/New_York")
	est := time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC)
	got, err := lastDue(s, time.Date(2026, 10, 1, 0, 0, 0, 0, ny), est.Add(15*time.Minute))
	if err != nil || !got.Equal(est) || !naiveLastDue(s, time.Date(2026, 10, 1, 0, 0, 0, 0, ny), est.Add(15*time.Minute)).Equal(est) {
		t.Errorf("fold: lastDue = %s (%v), want %s (01:30 EST)", got.In(ny), err, est.In(ny))
	}
}

// TestLastDueAgreesWithTheNaiveWalk compares the bounded search with the walk over every
// scheduled time, for many schedules, zones and random (since, now) pairs (fixed seed).
func TestLastDueAgreesWithTheNaiveWalk(t *testing.T) {
	// maxSpan keeps the naive walk to a few thousand Next calls a case.
	schedules := []struct {
		expr    string
		maxSpan time.Duration
	}{
		{"* * * * *", 3 * 24 * time.Hour},
		{"*/7 * * * *", 14 * 24 * time.Hour},
		{"0 * * * *", 120 * 24 * time.Hour},
		{"30 2 * * *", 8 * 365 * 24 * time.Hour},
		{"30 1 * * *", 8 * 365 * 24 * time.Hour},
		{"0 3 * * *", 8 * 365 * 24 * time.Hour},
		{"0 9 * * 1-5", 8 * 365 * 24 * time.Hour},
		{"0 0 * * 0", 20 * 365 * 24 * time.Hour},
		{"0 0 1,2 * *", 40 * 365 * 24 * time.Hour},
		{"15 3 31 * *", 40 * 365 * 24 * time.Hour},
		{"* 0 1 * *", 3 * 365 * 24 * time.Hour},
		{"0 0 29 2 *", 40 * 365 * 24 * time.Hour},
		{"@yearly", 40 * 365 * 24 * time.Hour},
		{"@monthly", 40 * 365 * 24 * time.Hour},
		{"@weekly", 20 * 365 * 24 * time.Hour},
		{"@hourly", 120 * 24 * time.Hour},
		{"@every 90m", 120 * 24 * time.Hour},
		{"@every 7s", 12 * time.Hour},
	}
	zones := []string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe",
		"America/Sao_Paulo", "Pacific/Chatham", "America/St_Johns"}
	rng := rand.New(rand.NewSource(16))
	start := time.Date(1995, 1, 1, 0, 0, 0, 0, time.UTC)
	cases, skipped := 0, 0
	for _, sc := range schedules {
		for _, zone := range zones {
			s := mustSchedule(t, sc.expr, zone)
			for range 25 {
				now := start.Add(time.Duration(rng.Int63n(int64(40 * 365 * 24 * time.Hour))))
				if rng.Intn(3) > 0 {
					now = now.Add(time.Duration(rng.Int63n(int64(time.Second)))) // and sub-second
				}
				// Log-uniform spans: as many short ones (a reconcile a minute late) as long ones.
				span := time.Duration(float64(time.Second) * math.Pow(float64(sc.maxSpan)/float64(time.Second), rng.Float64()))
				since := now.Add(-span)
				switch rng.Intn(4) { // exactly on a scheduled time, the edges of (since, now]
				case 0:
					now = s.Next(now.Add(-time.Minute))
				case 1:
					since = s.Next(since.Add(-time.Minute))
				}
				if now.IsZero() || since.IsZero() {
					continue
				}
				cases++
				want := naiveLastDue(s, since, now)
				c := &counting{Schedule: s}
				var got time.Time
				var err error
				if _, every := s.(cron.ConstantDelaySchedule); every {
					got, err = lastDue(s, since, now)
				} else {
					got, err = lastDue(c, since, now)
				}
				switch {
				case err == nil && got.Equal(want):
				case err == nil && got.After(want) && !got.After(now) && s.Next(got.Add(-time.Second)).Equal(got):
					// robfig/cron's Next skips a midnight just after a DST change at midnight
					// (St. John's before 2011) or of half an hour (Lord Howe): the walk jumped
					// over got, a scheduled time the search found.
					skipped++
				default:
					t.Errorf("%q in %s, since %s, now %s: lastDue = %s (%v), the walk %s",
						sc.expr, zone, since.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano), got, err, want)
				}
				if c.calls > 100 {
					t.Errorf("%q in %s over %s: %d Next calls", sc.expr, zone, span, c.calls)
				}
			}
		}
	}
	t.Logf("%d cases; in %d the walk skipped the scheduled time found", cases, skipped)
}

// TestLastDueCostDoesNotGrowWithTheSpan: a schedule last handled 250 years ago costs a few dozen
// Next calls, not 130 million.
func TestLastDueCostDoesNotGrowWithTheSpan(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 17, 30, 0, time.UTC)
	for _, c := range []struct {
		expr   string
		window time.Duration // holds the newest scheduled time before now
	}{
		{"* * * * *", time.Hour},
		{"0 2 * * *", 48 * time.Hour},
		{"0 0 29 2 *", 9 * 365 * 24 * time.Hour},
		{"* 0 1 * *", 40 * 24 * time.Hour},
	} {
		for _, years := range []int{0, 1, 10, 30, 250} {
			s := &counting{Schedule: mustSchedule(t, c.expr, "Europe/Berlin")}
			since := now.AddDate(-years, 0, -1)
			due, err := lastDue(s, since, now)
			if want := naiveLastDueWithin(s.Schedule, since, now, c.window); err != nil || !due.Equal(want) || s.calls > 100 {
				t.Errorf("%q since %d years: due %s (want %s), err %v, %d Next calls", c.expr, years, due, want, err, s.calls)
			}
		}
	}
}

// stuck is a schedule whose Next is not monotonic: always the same time.
type stuck struct{ at time.Time }

func (s stuck) Next(time.Time) time.Time { return s.at }

func TestLastDueStopsAtTheCap(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	since := now.AddDate(-1, 0, 0)
	at := now.Add(-time.Hour)
	due, err := lastDue(stuck{at}, since, now)
	if err == nil || !due.Equal(at) {
		t.Errorf("lastDue = %s, %v; want %s and an error", due, err, at)
	}
}

// BenchmarkLastDue: a "* * * * *" schedule last handled ten years ago.
func BenchmarkLastDue(b *testing.B) {
	s := mustSchedule(b, "* * * * *", "UTC")
	now := time.Date(2026, 11, 23, 10, 17, 30, 0, time.UTC)
	since := now.AddDate(-10, 0, 0)
	b.Run("walk", func(b *testing.B) {
		for range b.N {
			naiveLastDue(s, since, now)
		}
	})
	b.Run("bounded", func(b *testing.B) {
		for range b.N {
			if _, err := lastDue(s, since, now); err != nil {
				b.Fatal(err)
			}
		}
	})
}
