// Package stats is the statistics core for repeated benchmark runs (issue #15): per-cell
// summaries, run-to-run verdicts from a test rather than a fixed threshold, and change points
// in a schedule's history. It is pure Go with no Kubernetes types, so the controllers and the
// report can share it.
//
// # Unit of evidence: one repetition
//
// A sample is one value per repetition of a whole sysbench step (the step's QPS, TPS or p95
// latency), never the per-second values inside one step. Noise between runs (a new server
// process, buffer pool warmed differently, another node, neighbours on the host) is much larger
// than the noise inside one run, and consecutive seconds are strongly correlated, so 60
// per-second samples of one run are not 60 independent observations: a test fed with them finds
// "significant" differences between identical configurations. Only repetitions see the
// between-run noise, so n is the number of repetitions.
//
// # Medians and Mann-Whitney
//
// Benchmark results are not normal: they are skewed and have outliers (one repetition that hit
// a checkpoint or a noisy neighbour). The median ignores a single outlier and its confidence
// interval (Summary.CILow..CIHigh) is distribution-free: two order statistics chosen from the
// binomial distribution. Comparisons use the two-sided Mann-Whitney U test, which assumes only
// that the repetitions of each side are independent and identically distributed. Both are what
// benchstat does (golang.org/x/perf/benchmath) and what Vitess's nightly benchmarks use; the
// computations come from github.com/aclements/go-moremath/stats, the library benchmath itself
// calls for them (benchmath is a thin wrapper, and its current release would force the whole
// module onto a newer Go). With few samples the exact U distribution is used, so the
// false-positive rate is at most alpha by construction, whatever the noise distribution.
//
// # The verdict rule (Compare)
//
// Let p be the U test's p-value, Delta = median(cur)/median(base) - 1, MinEffect the smallest
// change that matters (the schedule's percentages), and [DeltaLow, DeltaHigh] the Moses
// confidence interval of the shift at level 1 - 2·alpha (the inversion of the same test):
//
//  1. p < alpha and |Delta| >= MinEffect: Regressed or Improved, by the direction of Delta and
//     whether higher is better for the metric.
//  2. p < alpha and |Delta| < MinEffect: NoChange. The change is real but smaller than what
//     matters (a test alone flags 0.5 % moves once there are many repetitions).
//  3. p >= alpha and the sample sizes cannot reach alpha at all (MinP(n1, n2) >= alpha: n=1
//     against n=1, today's single runs, gives p=1 at best; 3 against 3 gives 0.1):
//     Inconclusive, with NeededN, the repetitions per run that can (4 at alpha 0.05).
//  4. p >= alpha and the interval lies within (-MinEffect, +MinEffect): NoChange. This is an
//     equivalence test (two one-sided tests at alpha): the data rule out a change that matters.
//  5. otherwise Inconclusive: not significant, but a change of MinEffect is not ruled out
//     either (too few repetitions for this noise). Repeating the runs is the answer, as in
//     Chromium's bisection, which says "unknown" and adds repetitions.
//
// Why not simply "|Delta| < MinEffect means NoChange" in case 4? With 4 noisy repetitions a
// 3 % median move is compatible with a 10 % regression; calling it NoChange would hide exactly
// the cells that need more repetitions. A point estimate is enough in cases 1 and 2 because the
// test has already excluded "no change". Because a verdict needs both p < alpha and
// |Delta| >= MinEffect, a true change of exactly MinEffect is reported only about half the time
// (its observed Delta falls below MinEffect half the time): set MinEffect somewhat below the
// change that must be caught. The benchmarks in this package measure both rates.
//
// # Measured on synthetic data (stats_bench_test.go)
//
// A/A (lognormal noise, CV 1-5 %, 5000 trials per cell): Regressed or Improved in at most
// alpha of the trials: 0 % at n = 3 (the test cannot fire), 2.9-3.6 % at n = 4-5 and
// 4.2-4.9 % at n = 8-10 with no minimum effect, as the exact size of the test predicts (its true
// value does not depend on the CV: ranks do not see the scale of the noise); with MinEffect 5 %,
// at most 0.1 % at CV 1-2 % and 2.1-2.6 % at CV 5 %.
//
// A/B with a true 5 % drop and no minimum effect: found in 99.8-100 % of the trials at CV 1 %
// from n = 4, in 70/88/99.6 % at CV 2 % for n = 4/5/8, and 15/22/45 % at CV 5 %: noisy cells
// need 10 or more repetitions. n = 3 never finds anything, by design (NeededN says 4). With
// MinEffect 3 % the rates drop by at most 4 points; with MinEffect 5 %, equal to the true drop,
// they stay near 50 %, as explained above.
//
// # History (ChangePoint)
//
// A slow drift (say 0.3 % a night) never crosses MinEffect between two consecutive runs. The
// change-point detector looks at the medians of all retained runs of a schedule, one value per
// night: it finds the split of the series that maximises the E-Divisive energy statistic
// (Matteson and James, 2014, as used by MongoDB's performance CI), requires MinSegment points on
// each side, and gives a p-value from a permutation test with a seeded random number generator,
// so the same history always gives the same answer. The permutation test is exact for one
// series of independent nights; a schedule tests many series at once and its nights are often
// autocorrelated, so internal/compare adjusts the series' p-values together (AdjustBH, with
// StopAfter for cheap permutations) and whitens each series by the nights' pooled
// autocorrelation (PooledPhi, CPOptions.Phi) before testing. For one series alone a shift is only as visible as the number of
// nights it has lasted (about 3 in 4 after 3 nights for a 5 % step at CV 2 %, nearly always
// after 8), and a drift of -0.3 % a night over 30 nights is found in 99.5 % of histories.
package stats
