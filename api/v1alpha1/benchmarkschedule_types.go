package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy says what a schedule does when a run is due while an earlier one is active.
// +kubebuilder:validation:Enum=Forbid;Allow;Replace
type ConcurrencyPolicy string

const (
	// ConcurrencyForbid never overlaps runs: a run that comes due while the previous one is active
	// waits for it, and starts once it finishes if that is still within startingDeadlineSeconds.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyAllow starts every run on time, whatever is still running.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyReplace deletes the active runs (and their servers) and starts the new one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// Labels and annotations on the BenchmarkRuns a schedule creates.
const (
	// LabelSchedule names the BenchmarkSchedule that created a run.
	LabelSchedule = "mysqlbench.io/schedule"
	// AnnotationScheduledTime is the instant (RFC 3339, UTC) the run was scheduled for.
	AnnotationScheduledTime = "mysqlbench.io/scheduled-time"
	// LabelConfirmationOf names the schedule whose regression a confirmation run re-measures.
	// Confirmation runs do not carry LabelSchedule: they are neither compared with a baseline
	// nor a baseline themselves, nor part of the schedule's history.
	LabelConfirmationOf = "mysqlbench.io/confirmation-of"
	// LabelConfirms names the scheduled run whose regression a confirmation run re-measures.
	LabelConfirms = "mysqlbench.io/confirms"
	// AnnotationConfirmationBaseline names that run's baseline.
	AnnotationConfirmationBaseline = "mysqlbench.io/confirmation-baseline"
	// AnnotationConfirmationTime is when the schedule decided to create the confirmation run
	// (RFC 3339, UTC), on its clock: maxPerDay counts these, of first attempts.
	AnnotationConfirmationTime = "mysqlbench.io/confirmation-time"
	// AnnotationConfirmationAttempt is which confirmation run of its regression a run is: 1 for
	// the first, 2 for the one after an Inconclusive first, and so on (unset: 1).
	AnnotationConfirmationAttempt = "mysqlbench.io/confirmation-attempt"
)

// BenchmarkRunTemplate is the BenchmarkRun a schedule creates each time.
type BenchmarkRunTemplate struct {
	// Metadata: labels and annotations copied onto every run.
	// +optional
	Metadata RunTemplateMetadata `json:"metadata,omitempty"`
	// Spec of every run.
	Spec BenchmarkRunSpec `json:"spec"`
}

// RunTemplateMetadata are the labels and annotations of a scheduled run.
type RunTemplateMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// RegressionPolicy says what counts as a regression when a run is compared with its baseline.
type RegressionPolicy struct {
	// QPSDropPercent is the smallest QPS drop that matters, as a percentage of the baseline's
	// median, e.g. 5: a cell (one target at one thread count) regressed when a two-sided
	// Mann-Whitney U test over the repetitions of both runs finds a difference (p < alpha) and
	// its median QPS fell by at least this much.
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	QPSDropPercent *float64 `json:"qpsDropPercent,omitempty"`
	// P95RisePercent is the smallest rise of the p95 latency's median that matters, e.g. 10; the
	// same test decides.
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000
	// +optional
	P95RisePercent *float64 `json:"p95RisePercent,omitempty"`
	// Alpha is the significance level of the test, from 0.001 to 0.5 (default 0.05): the
	// largest chance of calling a cell Regressed or Improved when nothing changed. A cell whose
	// repetitions are too few for the test to ever reach it (1 against 1, 3 against 3 at 0.05)
	// is Inconclusive, and the comparison says how many repetitions are needed.
	// +kubebuilder:default=0.05
	// +kubebuilder:validation:Minimum=0.001
	// +kubebuilder:validation:Maximum=0.5
	// +optional
	Alpha *float64 `json:"alpha,omitempty"`
	// MaxRepetitions lets the schedule add repetitions, up to this many (1 to 10), when a
	// comparison is Inconclusive: the next run measures what the test needs (neededRepetitions)
	// or twice the inconclusive run's repetitions, whichever is more, within this bound and
	// within the 512 steps a run may have. A run after a decisive comparison keeps its
	// predecessor's repetitions; the template's repetitions are always the minimum. Unset: every
	// run measures the template's repetitions.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	MaxRepetitions *int32 `json:"maxRepetitions,omitempty"`
	// RunToRunCVPercent is how much, in percent (coefficient of variation), a target's level
	// moves between two runs beyond what its repetitions show: another night, another server
	// instance, other neighbours. Two runs differing by less than this allows cannot be called
	// Regressed on their own (the comparison says Inconclusive, and the schedule confirms). It is
	// the last of three sources, each recorded in the comparison: the spread between server
	// instances seen inside the run (serverInstance PerRepetition) removes the per-target part;
	// the spread of the schedule's retained runs (5 or more) replaces it; otherwise this value,
	// default 6 (measured on the local cluster: instances add 6-8 % to a one-thread cell's CV;
	// docs/statistics.md has the derivation). 0 says runs differ only by their repetitions' noise.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=50
	// +optional
	RunToRunCVPercent *float64 `json:"runToRunCVPercent,omitempty"`
	// Acknowledged are known regressions that must stop alerting: a Regressed cell (or change
	// point) they cover counts as acknowledged instead, so it no longer makes the run Regressed.
	// At most 32.
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	// +optional
	Acknowledged []Acknowledgement `json:"acknowledged,omitempty"`
	// BaselineRun pins the BenchmarkRun (same namespace, Succeeded) every run is compared with,
	// e.g. a run of the last release. When unset, each run is compared with the previous
	// successful run of this schedule. Every Secret and ConfigMap the pinned run names
	// (targets[].secretRef, workload.customScript) must be named by spec.template too: the
	// operator reads and re-measures the baseline on behalf of this schedule's author, whom the
	// admission policy checked only for the template's names. A baseline naming others is
	// refused (Regressed=False, reason BaselineRefused, with a Warning Event saying which).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	BaselineRun string `json:"baselineRun,omitempty"`
	// Confirm re-measures a regression before it alarms: when a run's comparison is Regressed,
	// the schedule creates a confirmation run that measures, for each regressed target, the
	// baseline's server (its image and my.cnf) and the run's side by side (interleaved when the
	// engines allow), each side on a new server instance every round, at the flagged thread
	// counts only, with at least the run's repetitions. Its verdict pairs the two sides round by
	// round. An Inconclusive confirmation is measured again with twice the repetitions, within
	// maxRuns, 10 repetitions and 512 steps. Only a regression a confirmation run finds again
	// sets Regressed=True with reason Regressed, sends the Regressed Warning and sets the
	// regressed metrics.
	// +optional
	Confirm ConfirmPolicy `json:"confirm,omitempty"`
}

// ConfirmPolicy bounds the confirmation runs of a schedule.
type ConfirmPolicy struct {
	// Enabled: confirm a regression before alarming (default true). Disabled: a Regressed
	// comparison alarms at once.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// Repetitions each cell of the first confirmation run measures, per side, 2 to 10 (default
	// 5), raised to the compared run's repetitions when it had more: a confirmation never
	// measures less than what it confirms. Lowered, if need be, so the run stays within 512
	// steps, but never below the compared run's (the regression then alarms unconfirmed).
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=10
	// +optional
	Repetitions *int32 `json:"repetitions,omitempty"`
	// MaxPerDay is how many regressions the schedule sets out to confirm in any 24 hours, 1 to
	// 24 (default 2): first confirmation runs, as a re-measurement of an Inconclusive one belongs
	// to its regression (maxRuns bounds those). A regression beyond it alarms without
	// confirmation, saying so (reason RegressionUnconfirmed).
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=24
	// +optional
	MaxPerDay *int32 `json:"maxPerDay,omitempty"`
	// MaxRuns is how many confirmation runs one regression may take, 1 to 4 (default 3): the
	// first, then, while each ends Inconclusive, another with twice the repetitions, as long as
	// that stays within 10 repetitions and 512 steps. When none of them decides, the regression
	// alarms unconfirmed (reason ConfirmationInconclusive).
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4
	// +optional
	MaxRuns *int32 `json:"maxRuns,omitempty"`
	// TimeoutMinutes: a confirmation run not finished this many minutes after it was decided,
	// 10 to 1440 (default 360), is deleted and the regression alarms without confirmation
	// (reason ConfirmationFailed).
	// +kubebuilder:default=360
	// +kubebuilder:validation:Minimum=10
	// +kubebuilder:validation:Maximum=1440
	// +optional
	TimeoutMinutes *int32 `json:"timeoutMinutes,omitempty"`
}

// ConfirmationState is where the confirmation of a regression is.
// +kubebuilder:validation:Enum=Pending;Running;Confirmed;NotConfirmed;Inconclusive;Skipped;Failed
type ConfirmationState string

const (
	// ConfirmationPending: decided and recorded; the confirmation run is created next.
	ConfirmationPending ConfirmationState = "Pending"
	// ConfirmationRunning: the confirmation run exists and has not finished.
	ConfirmationRunning ConfirmationState = "Running"
	// ConfirmationConfirmed: the confirmation run found the regression again: Regressed is True.
	ConfirmationConfirmed ConfirmationState = "Confirmed"
	// ConfirmationNotConfirmed: the baseline's servers and the run's, measured side by side, do
	// not differ by a regression: no alarm.
	ConfirmationNotConfirmed ConfirmationState = "NotConfirmed"
	// ConfirmationInconclusive: every confirmation run the bounds allowed (maxRuns, 10
	// repetitions, 512 steps) was Inconclusive: the regression alarms unconfirmed.
	ConfirmationInconclusive ConfirmationState = "Inconclusive"
	// ConfirmationSkipped: no confirmation run was started (maxPerDay reached, the baseline is
	// gone, or the cells do not fit one run): the regression alarms unconfirmed.
	ConfirmationSkipped ConfirmationState = "Skipped"
	// ConfirmationFailed: the confirmation run failed, was deleted or timed out: the regression
	// alarms unconfirmed.
	ConfirmationFailed ConfirmationState = "Failed"
)

// Final is true for the states that end a confirmation.
func (s ConfirmationState) Final() bool {
	return s != ConfirmationPending && s != ConfirmationRunning
}

// Confirmation is the re-measurement of a regressed comparison.
type Confirmation struct {
	// Run is the scheduled run whose comparison was Regressed, or Inconclusive with suspects;
	// Baseline its baseline.
	Run string `json:"run"`
	// +optional
	Baseline string `json:"baseline,omitempty"`
	// Verdict is the compared run's verdict that called for the confirmation: Regressed (the
	// default, and what a record without it means), or Inconclusive with suspects, which
	// alarms only when confirmed: a confirmation that cannot decide leaves it Inconclusive.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// State: Pending, Running, Confirmed, NotConfirmed, Inconclusive, Skipped or Failed.
	State ConfirmationState `json:"state"`
	// ConfirmationRun is the BenchmarkRun that re-measures the flagged cells (the newest, when
	// an Inconclusive one was measured again): for each regressed target T a target T-base (the
	// baseline's server) and T (the run's).
	// +optional
	ConfirmationRun string `json:"confirmationRun,omitempty"`
	// Attempt is which confirmation run of this regression ConfirmationRun is: 1 for the first,
	// one more for each re-measurement after an Inconclusive one.
	// +optional
	Attempt int32 `json:"attempt,omitempty"`
	// Repetitions of ConfirmationRun, per side.
	// +optional
	Repetitions int32 `json:"repetitions,omitempty"`
	// Cells are the flagged cells re-measured, "target@threads", or "target/workload@threads"
	// in a run of several workloads.
	// +kubebuilder:validation:MaxItems=128
	// +listType=atomic
	// +optional
	Cells []string `json:"cells,omitempty"`
	// Order of the confirmation run: Interleaved when every target is engine builtin, else
	// Sequential (hours apart, so less able to tell a regression from a slow night).
	// +optional
	Order RunOrder `json:"order,omitempty"`
	// StartTime is when ConfirmationRun was decided (for a re-measurement, when the previous
	// run ended Inconclusive); CompletionTime when the confirmation ended.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Result is the comparison of the newest finished confirmation run: each target's servers
	// of the run against its baseline's servers, paired round by round (targets named as in the
	// run).
	// +optional
	Result *Comparison `json:"result,omitempty"`
	// Message says what was decided and why, naming the confirmed targets and cells.
	// +optional
	Message string `json:"message,omitempty"`
}

// ConfirmEnabled says whether regressions are confirmed before they alarm (default true).
func (p RegressionPolicy) ConfirmEnabled() bool {
	return p.Confirm.Enabled == nil || *p.Confirm.Enabled
}

// ConfirmRepetitions is the repetitions of a confirmation run (default 5).
func (p RegressionPolicy) ConfirmRepetitions() int32 {
	if p.Confirm.Repetitions == nil {
		return 5
	}
	return *p.Confirm.Repetitions
}

// ConfirmMaxRuns is how many confirmation runs one regression may take (default 3).
func (p RegressionPolicy) ConfirmMaxRuns() int32 {
	if p.Confirm.MaxRuns == nil {
		return 3
	}
	return *p.Confirm.MaxRuns
}

// ConfirmMaxPerDay is how many regressions may be set out to confirm in 24 hours (default 2).
func (p RegressionPolicy) ConfirmMaxPerDay() int {
	if p.Confirm.MaxPerDay == nil {
		return 2
	}
	return int(*p.Confirm.MaxPerDay)
}

// ConfirmTimeout is how long a confirmation may take (default 6 h).
func (p RegressionPolicy) ConfirmTimeout() time.Duration {
	if p.Confirm.TimeoutMinutes == nil {
		return 6 * time.Hour
	}
	return time.Duration(*p.Confirm.TimeoutMinutes) * time.Minute
}

// AckMetric names the metric an acknowledgement covers.
// +kubebuilder:validation:Enum=QPS;P95
type AckMetric string

const (
	AckQPS AckMetric = "QPS"
	AckP95 AckMetric = "P95"
)

// Acknowledgement is a known regression of one target (at one thread count, or all) that must
// stop alerting.
type Acknowledgement struct {
	// Target is the target's name, as in the template.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Target string `json:"target"`
	// Workload is the name of a workload of spec.workloads or spec.preset; unset: every
	// workload of the target (a run of one spec.workload has only that one).
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Workload string `json:"workload,omitempty"`
	// Threads is the thread count; unset: every thread count of the target.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Threads *int32 `json:"threads,omitempty"`
	// Metric is QPS or P95; unset: both.
	// +optional
	Metric AckMetric `json:"metric,omitempty"`
	// Reason says why the regression is accepted, e.g. a link to the ticket; it is shown in
	// comparison.md.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Reason string `json:"reason"`
	// Until ends the acknowledgement: runs that finish after it alert again. Unset: no end.
	// +optional
	Until *metav1.Time `json:"until,omitempty"`
}

// BenchmarkScheduleSpec is when to run which benchmark, and what counts as a regression.
type BenchmarkScheduleSpec struct {
	// Schedule in cron format: five fields (minute hour day-of-month month day-of-week), or a
	// macro such as @daily or @hourly, e.g. "0 2 * * *" for 02:00 every night.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="!self.contains('TZ=')",message="schedule must not carry CRON_TZ= or TZ=: set spec.timeZone instead"
	Schedule string `json:"schedule"`

	// TimeZone the schedule is read in: an IANA name such as Europe/Berlin or America/New_York.
	// When unset, UTC (not the manager's local time, which differs between clusters).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// StartingDeadlineSeconds: a run that could not start within this many seconds of its
	// scheduled time (the manager was down, or Forbid kept it waiting) is skipped and reported
	// with a MissedSchedule Event. When unset, a late run starts as soon as it can.
	// +kubebuilder:validation:Minimum=1
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// ConcurrencyPolicy: Forbid (the default: a run never overlaps the previous one), Allow, or
	// Replace (delete the active runs and start the new one).
	// +kubebuilder:default=Forbid
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// Suspend stops new runs; active runs go on. When it is cleared, the newest time missed while
	// suspended is started late unless startingDeadlineSeconds has passed (as for a CronJob).
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// SuccessfulRunsHistoryLimit is how many successful runs to keep, at least 1 because the
	// newest is the next run's baseline. Older ones are deleted with their results. The default,
	// 14 (two weeks of nightly runs), is what the change-point analysis of status.history needs:
	// with fewer than 8 runs it can never find a shift, and with 14 it finds a 10 % drop of one
	// target 5 nights after it in 84 % of histories while flat ones alarm on at most 5 % of
	// nights (BenchmarkHistoryCalibration).
	// +kubebuilder:default=14
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	SuccessfulRunsHistoryLimit *int32 `json:"successfulRunsHistoryLimit,omitempty"`

	// FailedRunsHistoryLimit is how many failed runs to keep.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	FailedRunsHistoryLimit *int32 `json:"failedRunsHistoryLimit,omitempty"`

	// Regression holds the test's level, the minimum effects, the acknowledged regressions and
	// the baseline of the comparison made when a run succeeds.
	// +optional
	Regression RegressionPolicy `json:"regression,omitempty"`

	// Template is the BenchmarkRun to create at each scheduled time. Editing it changes the next
	// run only; runs already created keep their spec.
	Template BenchmarkRunTemplate `json:"template"`
}

// BenchmarkScheduleStatus is what the schedule did and what its last run showed.
type BenchmarkScheduleStatus struct {
	// ObservedGeneration is the spec generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready (the schedule is valid and acted on), Stalled (the schedule, time zone
	// or template is invalid) and Regressed (the newest compared run).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Active are the names of the runs that have not finished.
	// +listType=atomic
	// +optional
	Active []string `json:"active,omitempty"`
	// LastScheduleTime is the scheduled time of the newest run created.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// LastMissedTime is the newest scheduled time that was skipped: past
	// startingDeadlineSeconds, or its run could not be created.
	// +optional
	LastMissedTime *metav1.Time `json:"lastMissedTime,omitempty"`
	// NextScheduleTime is when the next run is due (unset while suspended).
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
	// LastSuccessfulTime is when the newest successful run completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// LastRun is the newest finished run, and LastRunPhase its phase.
	// +optional
	LastRun string `json:"lastRun,omitempty"`
	// +optional
	LastRunPhase RunPhase `json:"lastRunPhase,omitempty"`
	// Verdict of the newest compared run, short, e.g. "Regressed 3/24", "OK 0/24" or
	// "NoBaseline".
	// +optional
	Verdict string `json:"verdict,omitempty"`
	// LastComparison is the newest run's comparison with its baseline.
	// +optional
	LastComparison *Comparison `json:"lastComparison,omitempty"`
	// History is the change-point analysis of the retained successful runs: sustained shifts
	// of a cell's median across several nights, which no single comparison shows.
	// +optional
	History *History `json:"history,omitempty"`
	// Confirmation is the newest regressed comparison's re-measurement (spec.regression.confirm).
	// +optional
	Confirmation *Confirmation `json:"confirmation,omitempty"`
}

// History is the change-point analysis of a schedule's retained successful runs.
type History struct {
	// Run is the newest run analysed; the analysis is redone when a newer run is compared.
	Run string `json:"run"`
	// Runs is how many successful runs the analysis spans (successfulRunsHistoryLimit bounds
	// it; with fewer than 8 no shift can be significant).
	Runs int32 `json:"runs"`
	// Autocorrelation is the lag-1 autocorrelation of the nights, pooled over every series and
	// removed before testing (0: none found).
	// +optional
	Autocorrelation float64 `json:"autocorrelation,omitempty"`
	// RegressedCells counts the cells with a sustained harmful shift (QPS down or p95 up by at
	// least the minimum effect, adjusted q < alpha) that no acknowledgement covers.
	RegressedCells int32 `json:"regressedCells"`
	// ChangePoints are up to 10 shifts, harmful unacknowledged ones first, then by size.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +optional
	ChangePoints []ChangePoint `json:"changePoints,omitempty"`
}

// ChangePoint is a sustained shift of one cell's median in a schedule's history.
type ChangePoint struct {
	Target string `json:"target"`
	// Workload names the cell's workload in a run of several; unset with one spec.workload.
	// +optional
	Workload string    `json:"workload,omitempty"`
	Threads  int32     `json:"threads"`
	Metric   AckMetric `json:"metric"`
	// Since is the first run at the new level.
	Since string `json:"since"`
	// Before and After are the medians of the cell's medians before and since the shift;
	// ChangePercent is After/Before - 1 in percent.
	Before        float64 `json:"before"`
	After         float64 `json:"after"`
	ChangePercent float64 `json:"changePercent"`
	// P is the permutation test's p-value; Q the same adjusted over every series of the
	// analysis (Benjamini-Hochberg): the shift counts when Q < alpha.
	P float64 `json:"p"`
	// +optional
	Q float64 `json:"q,omitempty"`
	// Regressed: the shift is harmful (QPS down, p95 up).
	// +optional
	Regressed bool `json:"regressed,omitempty"`
	// Acknowledged: spec.regression.acknowledged covers it.
	// +optional
	Acknowledged bool `json:"acknowledged,omitempty"`
}

// Verdict of a comparison.
// +kubebuilder:validation:Enum=Regressed;NoRegression;Inconclusive;NoBaseline
type Verdict string

const (
	// VerdictRegressed: a target's geometric-mean ratio, or one cell, regressed, significant
	// after the Benjamini-Hochberg adjustment over every test of the comparison.
	VerdictRegressed Verdict = "Regressed"
	// VerdictNoRegression: nothing regressed, and every target's geometric-mean interval rules
	// out a QPS drop (or p95 rise) of the minimum effect.
	VerdictNoRegression Verdict = "NoRegression"
	// VerdictInconclusive: nothing regressed, but some target's interval is too wide to rule out
	// a drop of the minimum effect (too few repetitions or thread counts for the noise).
	VerdictInconclusive Verdict = "Inconclusive"
	// VerdictNoBaseline: nothing to compare with (the first run, or no common cells).
	VerdictNoBaseline Verdict = "NoBaseline"
)

// Comparison is a run's QPS and p95 latency against its baseline: per target (the geometric
// mean of its cells' ratios, with an interval) and cell by cell (one target at one thread
// count); the full table is comparison.md in the run's results ConfigMap.
type Comparison struct {
	// Run is the compared run.
	Run string `json:"run"`
	// Baseline is the run it was compared with; empty when there was none.
	// +optional
	Baseline string `json:"baseline,omitempty"`
	// Verdict: Regressed (a cell regressed), Inconclusive (none regressed, some inconclusive),
	// NoRegression or NoBaseline.
	Verdict Verdict `json:"verdict"`
	// Metric names the throughput the QPS fields hold when it is not queries per second: tpmC
	// for go-tpc runs. Empty: QPS.
	// +optional
	Metric string `json:"metric,omitempty"`
	// ComparedCells counts the cells both runs measured.
	ComparedCells int32 `json:"comparedCells"`
	// RegressedCells, ImprovedCells, NoChangeCells and InconclusiveCells count the cells of
	// each verdict; they add up to ComparedCells.
	RegressedCells int32 `json:"regressedCells"`
	// +optional
	ImprovedCells int32 `json:"improvedCells,omitempty"`
	// +optional
	NoChangeCells int32 `json:"noChangeCells,omitempty"`
	// +optional
	InconclusiveCells int32 `json:"inconclusiveCells,omitempty"`
	// AcknowledgedCells counts regressed cells that spec.regression.acknowledged covers: they
	// do not make the run Regressed.
	// +optional
	AcknowledgedCells int32 `json:"acknowledgedCells,omitempty"`
	// NeededRepetitions is set when cells were inconclusive because there were too few
	// repetitions for the test to reach alpha: the repetitions per run that can.
	// +optional
	NeededRepetitions int32 `json:"neededRepetitions,omitempty"`
	// Suspects are what an Inconclusive comparison could not clear: targets whose estimated
	// change is harmful by at least the minimum effect, and cells ("target@threads") whose
	// repetitions lie wholly beyond it. A night shift can put them there as well as a
	// regression, so a schedule re-measures them in a confirmation run as it does a regressed
	// comparison's cells, and alarms only if the confirmation finds the regression.
	// +kubebuilder:validation:MaxItems=64
	// +listType=atomic
	// +optional
	Suspects []string `json:"suspects,omitempty"`
	// QPSDropPercent and P95RisePercent are the minimum effects applied, Alpha the test's level.
	QPSDropPercent float64 `json:"qpsDropPercent"`
	P95RisePercent float64 `json:"p95RisePercent"`
	// +optional
	Alpha float64 `json:"alpha,omitempty"`
	// Worst are up to five regressed cells, worst first.
	// +listType=atomic
	// +optional
	Worst []CellChange `json:"worst,omitempty"`
	// Targets are the per-target verdicts: the geometric mean over the target's cells of the
	// run's median over the baseline's, with its interval. They decide NoRegression. A run of
	// several workloads has one per target and workload (16 targets x 16 workloads at most).
	// +kubebuilder:validation:MaxItems=256
	// +listType=atomic
	// +optional
	Targets []TargetChange `json:"targets,omitempty"`
	// Tests counts the p-values (targets and cells, QPS and p95) adjusted together by the
	// Benjamini-Hochberg procedure; 0 for comparisons recorded before it was used.
	// +optional
	Tests int32 `json:"tests,omitempty"`
	// Message is the verdict in a sentence, naming the worst cells.
	// +optional
	Message string `json:"message,omitempty"`
}

// CellVerdict is the verdict on one cell of a comparison.
// +kubebuilder:validation:Enum=Regressed;Improved;NoChange;Inconclusive
type CellVerdict string

const (
	CellRegressed    CellVerdict = "Regressed"
	CellImproved     CellVerdict = "Improved"
	CellNoChange     CellVerdict = "NoChange"
	CellInconclusive CellVerdict = "Inconclusive"
)

// TargetChange is one target of a run against the same target of its baseline, over the cells
// (thread counts) both measured: the geometric mean of the ratios of the medians (run /
// baseline), with a t interval on the log scale whose noise is the larger of the cells'
// disagreement and the repetitions' spread.
type TargetChange struct {
	Target string `json:"target"`
	// Workload names the workload whose cells these are, in a run of several (each workload of
	// a target is judged on its own); unset with one spec.workload.
	// +optional
	Workload string `json:"workload,omitempty"`
	// Cells is how many thread counts entered (acknowledged cells are left out).
	Cells int32 `json:"cells"`
	// Verdict of the target: Regressed when QPS or p95 regressed, else Inconclusive when either
	// interval is too wide to rule out the minimum effect, else Improved or NoChange.
	Verdict CellVerdict `json:"verdict"`
	// QPSRatio is the geometric mean of run/baseline median QPS (0.95: 5 % slower), QPSLow and
	// QPSHigh its interval at Confidence (0 when none could be formed), QPSP its two-sided
	// p-value and QPSQ the p-value adjusted over the comparison's tests.
	QPSRatio float64 `json:"qpsRatio"`
	// +optional
	QPSLow float64 `json:"qpsLow,omitempty"`
	// +optional
	QPSHigh float64 `json:"qpsHigh,omitempty"`
	// +optional
	QPSP float64 `json:"qpsP,omitempty"`
	// +optional
	QPSQ float64 `json:"qpsQ,omitempty"`
	// +optional
	QPSVerdict CellVerdict `json:"qpsVerdict,omitempty"`
	// P95Ratio and the rest: the same for the p95 latency (1.10: 10 % slower); 0 when not
	// measured.
	// +optional
	P95Ratio float64 `json:"p95Ratio,omitempty"`
	// +optional
	P95Low float64 `json:"p95Low,omitempty"`
	// +optional
	P95High float64 `json:"p95High,omitempty"`
	// +optional
	P95P float64 `json:"p95P,omitempty"`
	// +optional
	P95Q float64 `json:"p95Q,omitempty"`
	// +optional
	P95Verdict CellVerdict `json:"p95Verdict,omitempty"`
	// Confidence of the intervals (1 - 2·alpha: the two one-sided tests' level).
	// +optional
	Confidence float64 `json:"confidence,omitempty"`
	// QPSVsOthers is the target's QPS ratio divided by the other targets' geometric mean ratio:
	// a change the other targets of the same runs did not see, which a shift of the whole run
	// (night, machine) cannot explain. 0 with a single target. QPSVsOthersLow/High bound it at
	// Confidence, QPSVsOthersP is its two-sided p-value.
	// +optional
	QPSVsOthers float64 `json:"qpsVsOthers,omitempty"`
	// +optional
	QPSVsOthersLow float64 `json:"qpsVsOthersLow,omitempty"`
	// +optional
	QPSVsOthersHigh float64 `json:"qpsVsOthersHigh,omitempty"`
	// +optional
	QPSVsOthersP float64 `json:"qpsVsOthersP,omitempty"`
	// RunToRunCVPercent is the between-run spread of the target's level the QPS interval
	// allows for beyond the repetitions, and RunToRunSource where it comes from: "history" (the
	// schedule's retained runs), "policy" (spec.regression.runToRunCVPercent), "default" or
	// "same run" (both sides measured in one run).
	// +optional
	RunToRunCVPercent float64 `json:"runToRunCVPercent,omitempty"`
	// +optional
	RunToRunSource string `json:"runToRunSource,omitempty"`
	// InstancesMeasured: every repetition of the target had its own server instance in both runs
	// (serverInstance PerRepetition), so the repetitions' spread includes the spread between
	// instances and the comparison with the other targets needs no allowance for it.
	// +optional
	InstancesMeasured bool `json:"instancesMeasured,omitempty"`
	// InstanceCVPercent is, when InstancesMeasured, the spread between server instances measured
	// inside the two runs: the CV of the target's QPS repetitions, pooled over its cells.
	// +optional
	InstanceCVPercent float64 `json:"instanceCVPercent,omitempty"`
	// MinDetectablePercent is about the smallest QPS drop, in percent, this comparison would
	// find in 4 of 5 pairs of runs with the same noise: above the policy's qpsDropPercent the
	// setup is too noisy to judge a drop of that size.
	// +optional
	MinDetectablePercent float64 `json:"minDetectablePercent,omitempty"`
	// RepetitionsCannotDecide: the target is inconclusive and more repetitions would not
	// change that, because the run-to-run allowance alone is wider than the distance to the
	// minimum effect (a confirmation run, or the schedule's history, can).
	// +optional
	RepetitionsCannotDecide bool `json:"repetitionsCannotDecide,omitempty"`
	// Note says why an interval is missing or which noise estimate it used.
	// +optional
	Note string `json:"note,omitempty"`
}

// CellChange is one target at one thread count (of one workload), against the baseline.
type CellChange struct {
	Target string `json:"target"`
	// Workload names the cell's workload in a run of several; unset with one spec.workload.
	// +optional
	Workload string `json:"workload,omitempty"`
	Threads  int32  `json:"threads"`
	// Verdict of the cell: Regressed when QPS or p95 latency regressed, else Inconclusive when
	// either is, else Improved when either improved, else NoChange.
	// +optional
	Verdict CellVerdict `json:"verdict,omitempty"`
	// QPSVerdict and P95Verdict are the verdicts of the two metrics.
	// +optional
	QPSVerdict CellVerdict `json:"qpsVerdict,omitempty"`
	// +optional
	P95Verdict CellVerdict `json:"p95Verdict,omitempty"`
	// Acknowledged: the cell regressed, but spec.regression.acknowledged covers every metric
	// that did; AcknowledgedReason is the acknowledgement's reason.
	// +optional
	Acknowledged bool `json:"acknowledged,omitempty"`
	// +optional
	AcknowledgedReason string `json:"acknowledgedReason,omitempty"`
	// BaselineN and N are the repetitions of the cell in the baseline and the run.
	// +optional
	BaselineN int32 `json:"baselineN,omitempty"`
	// +optional
	N int32 `json:"n,omitempty"`
	// QPSP and P95P are the p-values of the U test on QPS and p95 latency; QPSQ and P95Q the
	// same adjusted (Benjamini-Hochberg) over every test of the comparison: a change is
	// significant when the adjusted value is below alpha.
	// +optional
	QPSP float64 `json:"qpsP,omitempty"`
	// +optional
	P95P float64 `json:"p95P,omitempty"`
	// +optional
	QPSQ float64 `json:"qpsQ,omitempty"`
	// +optional
	P95Q float64 `json:"p95Q,omitempty"`
	// BaselineQPSCV and QPSCV are the coefficients of variation of the repetitions' QPS, in
	// percent: above 5 the cell is noisy.
	// +optional
	BaselineQPSCV float64 `json:"baselineQPSCV,omitempty"`
	// +optional
	QPSCV float64 `json:"qpsCV,omitempty"`
	// BaselineQPSSpread and QPSSpread are the half-widths, in percent of the median, of the
	// medians' intervals (the larger side), at SpreadConfidence: 95 % with 6 repetitions or
	// more, less with fewer (the whole range of 5 covers the median with 93.75 %).
	// +optional
	BaselineQPSSpread float64 `json:"baselineQPSSpread,omitempty"`
	// +optional
	QPSSpread float64 `json:"qpsSpread,omitempty"`
	// +optional
	SpreadConfidence float64 `json:"spreadConfidence,omitempty"`
	// NeededRepetitions: for an Inconclusive cell with too few repetitions to reach alpha, the
	// repetitions per run that can.
	// +optional
	NeededRepetitions int32 `json:"neededRepetitions,omitempty"`
	// BaselineQPS and QPS are the medians of the total queries per second of baseline and run.
	BaselineQPS float64 `json:"baselineQPS"`
	QPS         float64 `json:"qps"`
	// QPSChangePercent is (QPS - BaselineQPS) / BaselineQPS x 100: negative is slower.
	QPSChangePercent float64 `json:"qpsChangePercent"`
	// BaselineP95Ms and P95Ms are the medians of the 95th percentile latencies; 0 when not measured.
	// +optional
	BaselineP95Ms float64 `json:"baselineP95Ms,omitempty"`
	// +optional
	P95Ms float64 `json:"p95Ms,omitempty"`
	// P95ChangePercent is (P95Ms - BaselineP95Ms) / BaselineP95Ms x 100: positive is slower.
	// +optional
	P95ChangePercent float64 `json:"p95ChangePercent,omitempty"`
	// Regressed is true when Verdict is Regressed and the cell is not acknowledged.
	// +optional
	Regressed bool `json:"regressed,omitempty"`
}

// BenchmarkSchedule creates a BenchmarkRun from its template on a cron schedule (nightly runs
// from Git), keeps a bounded history, and compares each successful run with the previous one.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bms,categories=mysqlbench
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last Run",type=string,JSONPath=`.status.lastRun`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.lastRunPhase`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.verdict`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.nextScheduleTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 50",message="metadata.name must be at most 50 characters: runs are named <schedule>-<yyyymmddhhmm> and a run name is at most 63"
type BenchmarkSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is when to run what.
	Spec BenchmarkScheduleSpec `json:"spec"`
	// Status is what the schedule did.
	// +optional
	Status BenchmarkScheduleStatus `json:"status,omitempty"`
}

// BenchmarkScheduleList is a list of BenchmarkSchedules.
//
// +kubebuilder:object:root=true
type BenchmarkScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkSchedule `json:"items"`
}

func init() {
	SchemeBuilder.Register(&BenchmarkSchedule{}, &BenchmarkScheduleList{})
}
