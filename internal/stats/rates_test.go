package stats

import "testing"

// TestFalsePositiveRate checks, on seeded synthetic A/A data (both runs drawn from the same
// distribution), that Compare calls Regressed or Improved in at most alpha of the trials, even
// with no minimum effect at all: the property that the fixed-percentage rule lacked.
func TestFalsePositiveRate(t *testing.T) {
	const trials = 2000
	for _, alpha := range []float64{0.05, 0.01} {
		for _, cv := range []float64{0.01, 0.05} {
			for _, n := range []int{3, 5, 8, 10} {
				for _, minEffect := range []float64{0, 0.05} {
					opts := Options{Alpha: alpha, MinEffect: minEffect, HigherIsBetter: true}
					r := simulate(42, trials, n, cv, 0, opts)
					fp := r.falsePositive()
					t.Logf("alpha=%.2f cv=%.0f%% n=%2d minEffect=%.0f%%: false positives %.4f (exact size of the test %.4f)",
						alpha, 100*cv, n, 100*minEffect, fp, exactSize(n, alpha))
					if size := exactSize(n, alpha); size > alpha {
						t.Errorf("exact size %.4f of the U test at n=%d > alpha %v", size, n, alpha)
					}
					if fp > alpha {
						t.Errorf("alpha=%v cv=%v n=%d minEffect=%v: false-positive rate %.4f > alpha", alpha, cv, n, minEffect, fp)
					}
				}
			}
		}
	}
}

// TestDetectionRate checks that a true 5 % QPS drop is found with enough repetitions, and that
// it is never called Improved.
func TestDetectionRate(t *testing.T) {
	const trials = 1000
	for _, tc := range []struct {
		n             int
		cv, minEffect float64
		atLeast       float64
	}{
		{3, 0.01, 0, 0},      // the test cannot reach alpha with 3 vs 3
		{5, 0.01, 0, 0.99},   // 5 σ apart: always separated
		{8, 0.02, 0, 0.95},   //
		{8, 0.02, 0.03, 0.9}, // a minimum effect below the true change costs little
		{8, 0.05, 0, 0.3},    // noisy: more repetitions needed
	} {
		r := simulate(7, trials, tc.n, tc.cv, -0.05, Options{MinEffect: tc.minEffect, HigherIsBetter: true})
		got := r.rate(r.regressed)
		t.Logf("n=%d cv=%.0f%% minEffect=%.0f%%: detected %.3f, inconclusive %.3f, no change %.3f",
			tc.n, 100*tc.cv, 100*tc.minEffect, got, r.rate(r.inconcl), r.rate(r.noChange))
		if got < tc.atLeast || r.improved != 0 {
			t.Errorf("n=%d cv=%v minEffect=%v: detection %.3f < %.3f or %d Improved", tc.n, tc.cv, tc.minEffect, got, tc.atLeast, r.improved)
		}
	}
}
