package v1alpha1

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// Helpers the operator and the kubectl plugin share: both must name a scheduled run and read a
// schedule's expression the same way. They live with the types (cron is a small, dependency-free
// module) so the plugin need not import the controllers.

// runNameTimeLayout is the scheduled time in a run's name: <schedule>-<yyyymmddhhmm>, in UTC.
const runNameTimeLayout = "200601021504"

// RunName is the name of the run a schedule creates for a scheduled time: deterministic, so a
// manager restarted at that instant finds the run it created instead of creating another.
func RunName(schedule string, at time.Time) string {
	return schedule + "-" + at.UTC().Format(runNameTimeLayout)
}

// ParseSchedule reads spec.schedule in spec.timeZone (UTC when unset). The error says what to
// fix; reason is the condition reason for it.
func ParseSchedule(spec BenchmarkScheduleSpec) (sched cron.Schedule, reason string, err error) {
	loc := time.UTC
	if spec.TimeZone != nil {
		loc, err = time.LoadLocation(*spec.TimeZone)
		if err != nil || *spec.TimeZone == "" || *spec.TimeZone == "Local" {
			return nil, ReasonInvalidTimeZone, fmt.Errorf(
				"spec.timeZone %q is not a time zone: use an IANA name such as UTC, Europe/Berlin or America/New_York", *spec.TimeZone)
		}
	}
	s, err := cron.ParseStandard(spec.Schedule)
	if err != nil {
		return nil, ReasonInvalidSchedule, fmt.Errorf(
			"spec.schedule %q: %w: write five fields (minute hour day-of-month month day-of-week), e.g. \"0 2 * * *\", or a macro such as @daily",
			spec.Schedule, err)
	}
	if ss, ok := s.(*cron.SpecSchedule); ok {
		ss.Location = loc // ParseStandard reads the expression in the manager's local time
	}
	return s, "", nil
}

// OfSuspects says whether the confirmation re-measures the suspects of an Inconclusive
// comparison rather than a regression: only a Confirmed outcome alarms then.
func (c Confirmation) OfSuspects() bool { return c.Verdict == VerdictInconclusive }
