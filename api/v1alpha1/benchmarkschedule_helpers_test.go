package v1alpha1_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

func TestRunNameIsTheScheduledMinuteInUTC(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 3, 7, 59, 0, berlin) // 02:07 UTC; seconds are not part of the name
	if got, want := v1.RunName("nightly", at), "nightly-202611250207"; got != want {
		t.Errorf("RunName = %q, want %q", got, want)
	}
}

func TestParseSchedule(t *testing.T) {
	from := time.Date(2026, 11, 25, 0, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, schedule string
		zone           *string
		wantNext       time.Time
		wantReason     string
		wantErr        string
	}{
		{name: "UTC when unset", schedule: "0 2 * * *", wantNext: time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)},
		{name: "in the time zone", schedule: "0 2 * * *", zone: ptr.To("America/New_York"),
			wantNext: time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)},
		{name: "macro", schedule: "@daily", wantNext: time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)},
		{name: "bad expression", schedule: "61 * * * *", wantReason: v1.ReasonInvalidSchedule, wantErr: "write five fields"},
		{name: "unknown zone", schedule: "0 2 * * *", zone: ptr.To("Mars/Olympus"), wantReason: v1.ReasonInvalidTimeZone,
			wantErr: "use an IANA name"},
		{name: "Local is the manager's zone, not a schedule's", schedule: "0 2 * * *", zone: ptr.To("Local"),
			wantReason: v1.ReasonInvalidTimeZone, wantErr: "use an IANA name"},
		{name: "empty zone", schedule: "0 2 * * *", zone: ptr.To(""), wantReason: v1.ReasonInvalidTimeZone, wantErr: "use an IANA name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, reason, err := v1.ParseSchedule(v1.BenchmarkScheduleSpec{Schedule: tc.schedule, TimeZone: tc.zone})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || reason != tc.wantReason {
					t.Fatalf("got reason %q, error %v; want reason %q and an error saying %q", reason, err, tc.wantReason, tc.wantErr)
				}
				return
			}
			if err != nil || reason != "" {
				t.Fatalf("got reason %q, error %v; want none", reason, err)
			}
			if got := s.Next(from); !got.Equal(tc.wantNext) {
				t.Errorf("Next(%s) = %s, want %s", from, got.UTC(), tc.wantNext)
			}
		})
	}
}
