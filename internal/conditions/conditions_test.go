package conditions

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mysqlbench/mysqlbench-operator/internal/bounded"
)

func TestSet(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 700_000_000, time.UTC)
	t1 := t0.Add(90 * time.Second)
	cases := []struct {
		name        string
		steps       []metav1.ConditionStatus // statuses set one after another, at t0, t1, ...
		wantChanged []bool
		wantTime    time.Time // lastTransitionTime after the last step
	}{
		{"new condition takes the clock's time, to the second", []metav1.ConditionStatus{metav1.ConditionTrue},
			[]bool{true}, t0.Truncate(time.Second)},
		{"same status keeps the transition time", []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionTrue},
			[]bool{true, false}, t0.Truncate(time.Second)},
		{"new status moves the transition time", []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse},
			[]bool{true, true}, t1.Truncate(time.Second)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var conds []metav1.Condition
			for i, s := range c.steps {
				now := t0.Add(time.Duration(i) * 90 * time.Second)
				if got := Set(&conds, 3, now, "Ready", s, "R", "m"); got != c.wantChanged[i] {
					t.Errorf("step %d: changed = %v, want %v", i, got, c.wantChanged[i])
				}
			}
			got := meta.FindStatusCondition(conds, "Ready")
			if got == nil || !got.LastTransitionTime.Time.Equal(c.wantTime) || got.ObservedGeneration != 3 {
				t.Fatalf("condition %+v, want lastTransitionTime %s and observedGeneration 3", got, c.wantTime)
			}
		})
	}
}

func TestSetBoundsTheMessage(t *testing.T) {
	var conds []metav1.Condition
	long := strings.Repeat("é", bounded.Condition) // 2 bytes each: twice the limit
	Set(&conds, 1, time.Now(), "Failed", metav1.ConditionTrue, "TargetFailed", long)
	msg := conds[0].Message
	if len(msg) > bounded.Condition || !utf8.ValidString(msg) || !strings.HasSuffix(msg, "...") {
		t.Fatalf("message of %d bytes (valid UTF-8: %v), want at most %d ending in ...", len(msg), utf8.ValidString(msg), bounded.Condition)
	}
}
