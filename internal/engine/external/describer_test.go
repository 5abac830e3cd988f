package external

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
)

// A Secret's owner opts in with exactly the label's value "true"; anything else is refused with
// the Secret, the label and the command that adds it.
func TestConsentMissing(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   []string // substrings; none: consent given
	}{
		{map[string]string{v1.LabelAllowBenchmark: "true"}, nil},
		{nil, []string{"Secret bench/rds-conn named by target rds does not carry the label mysqlbench.io/allow-benchmark,",
			"`kubectl label secret rds-conn -n bench mysqlbench.io/allow-benchmark=true`"}},
		{map[string]string{v1.LabelAllowBenchmark: "True"}, []string{`carries the label mysqlbench.io/allow-benchmark="True", not "true"`}},
		{map[string]string{"mysqlbench.io/allow": "true"}, []string{"does not carry the label"}},
	} {
		s := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "rds-conn", Namespace: "bench", Labels: tc.labels}}
		got := ConsentMissing(s, "rds")
		if len(tc.want) == 0 && got != "" {
			t.Errorf("labels %v: %q, want consent", tc.labels, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("labels %v: %q, want it to say %q", tc.labels, got, w)
			}
		}
	}
}
