package v1alpha1

// Conditions of BenchmarkRuns and BenchmarkSchedules: every type and reason the operator writes is
// declared here, once. Reasons are CamelCase words a tool can match on; the message says the rest.
//
// What each condition means, and who reads it:
//
// A BenchmarkRun carries
//   - Ready: True once the run has finished, every target succeeded and the results ConfigMap
//     holds results.json, results.csv and report.md (reason Succeeded); False before that
//     (Running) and after a failure (TargetFailed). `kubectl wait --for=condition=Ready` is the
//     way to wait for results: Ready never turns True before the ConfigMap is written.
//   - Progressing: True while the operator moves the run on (Running, or WaitingForServer /
//     Queued while it waits for something it started or for its turn). False while the run is
//     stuck on something in the cluster that may still resolve by itself (Unschedulable,
//     NotStarting, MissingReference and the server reasons below): the run keeps waiting up to
//     its timeouts. False with the final reason (Succeeded, TargetFailed) once finished.
//   - Failed: True as soon as one target failed (TargetFailed; the message names the target,
//     step and cause); the run still measures its other targets. False with Succeeded when no
//     target failed.
//   - Reconciling and Stalled, the pair kstatus, Flux and Argo CD read: Reconciling is True until
//     the run has finished (its reason is the run's phase); Stalled is True only once the run has
//     failed, which no retry heals (a new run is needed). A run waiting on the cluster is
//     Progressing=False but not Stalled: it is not finished and may still succeed.
//   - Regressed (runs created by a schedule): True when at least one cell regressed against the
//     baseline (Regressed); False with NoRegression, NoBaseline, Inconclusive or BaselineRefused
//     (spec.regression.baselineRun names a Secret or ConfigMap the template does not); Unknown with
//     AwaitingConfirmation while the schedule confirms the regression before alarming, then the
//     schedule's outcome (its status.confirmation): True Regressed, False RegressionNotConfirmed,
//     True RegressionUnconfirmed or ConfirmationFailed.
//
// A BenchmarkSchedule carries Ready (True while it creates runs: Scheduled, Suspended,
// WaitingForActiveRun), Stalled (True when only a spec change can help: InvalidSchedule,
// InvalidTimeZone, ScheduleNeverFires, InvalidTemplate, RunNameTaken; False with Valid) and
// Regressed (the newest compared run's: with a confirmation, Unknown AwaitingConfirmation while it
// runs, True Regressed once confirmed, False RegressionNotConfirmed, True RegressionUnconfirmed
// or ConfirmationFailed when no confirmation could decide). It does not carry Reconciling: its observedGeneration
// says whether its spec was acted on, and its runs are objects of their own.
//
// Every condition carries the observedGeneration of the spec it was computed from, and its
// lastTransitionTime comes from the operator's clock, to the second.

// Condition types.
const (
	// ConditionReady is True when every target has finished and the results ConfigMap is written.
	ConditionReady = "Ready"
	// ConditionProgressing is True while the run provisions servers and runs steps.
	ConditionProgressing = "Progressing"
	// ConditionFailed is True when a target failed; its message names the target, step and cause.
	ConditionFailed = "Failed"
	// ConditionReconciling is True while a BenchmarkRun has not finished (kstatus'
	// "abnormal-true" condition).
	ConditionReconciling = "Reconciling"
	// ConditionStalled is True when the object cannot make progress without a change from the
	// user: a failed run, or a schedule whose cron expression or time zone is invalid.
	ConditionStalled = "Stalled"
	// ConditionRegressed is True when at least one cell of a run regressed against its baseline
	// (a significant change of at least the schedule's minimum effect, not acknowledged); on the
	// schedule it reflects the last compared run.
	ConditionRegressed = "Regressed"
	// ConditionResultsStored is set on finished runs when the operator writes runs into a results
	// database (--results-database-secret): True once the run's rows are there, False while they
	// are not (the database is unreachable or its Secret unusable; the message says why). The run
	// keeps its phase either way: its rows are written when the database is back.
	ConditionResultsStored = "ResultsStored"
)

// Reasons of the ResultsStored condition.
const (
	// ReasonStored: the run's rows are in the results database.
	ReasonStored = "Stored"
	// ReasonDatabaseUnavailable: the results database could not be reached or refused the write;
	// the operator retries.
	ReasonDatabaseUnavailable = "DatabaseUnavailable"
	// ReasonDatabaseMisconfigured: the Secret naming the results database is missing or unusable;
	// the operator retries once it is fixed.
	ReasonDatabaseMisconfigured = "DatabaseMisconfigured"
)

// Reasons of a BenchmarkRun's conditions. Reconciling and Stalled of an unfinished run take the
// run's phase (Pending, Provisioning, ...) as their reason.
const (
	// ReasonRunning: the run measures its targets.
	ReasonRunning = "Running"
	// ReasonSucceeded: finished, every target measured.
	ReasonSucceeded = "Succeeded"
	// ReasonTargetFailed: a target failed (or the results could not be written).
	ReasonTargetFailed = "TargetFailed"
	// ReasonWaiting: the run waits for something it started (a server coming up) or for an
	// earlier run's object of the same name to be deleted.
	ReasonWaiting = "WaitingForServer"
	// ReasonWritingResults: every target has finished; the results ConfigMap is being written.
	ReasonWritingResults = "WritingResults"
	// ReasonQueued: the run waits for a node of its database pool, behind the runs named.
	ReasonQueued = "Queued"
	// ReasonUnschedulable: a pod of the run cannot be scheduled (past the scheduling grace).
	ReasonUnschedulable = "Unschedulable"
	// ReasonNotStarting: a pod the run waits for is not starting, and the cluster's Events say
	// why (a volume that cannot be mounted, a quota or admission policy refusing the pod, ...).
	ReasonNotStarting = "NotStarting"
	// ReasonMissingReference: the spec names an object that does not exist (yet).
	ReasonMissingReference = "MissingReference"
	// ReasonNoPoolNodes: no Ready, schedulable node matches the database pool's node selector,
	// so no server of the run can be placed; the target waits (not provisioning anything) and
	// fails when none comes.
	ReasonNoPoolNodes = "NoPoolNodes"
	// ReasonAdmissionPolicyAbsent (a Warning Event when a run starts): the admission policy
	// that lets only users who may read a Secret or ConfigMap name it in a run is not installed
	// and bound, so the API server did not check who named what (docs/security.md).
	ReasonAdmissionPolicyAbsent = "AdmissionPolicyAbsent"
)

// Reasons a target's server is not ready; the engines report them and the run's Progressing
// condition shows them.
const (
	ReasonStarting  = "ServerStarting"
	ReasonImagePull = "ImagePullFailing"
	ReasonCrashing  = "ServerCrashing"
	ReasonConfig    = "InvalidServerConfig"
	ReasonSecret    = "ConnectionSecretMissing"
	// ReasonOperator: another operator (Percona's) runs the server and reports it unhealthy.
	ReasonOperator = "ServerOperatorError"
)

// Reasons of a BenchmarkSchedule's conditions, and of the Regressed condition of the runs it
// compares.
const (
	ReasonScheduled       = "Scheduled"
	ReasonSuspended       = "Suspended"
	ReasonWaitingForRun   = "WaitingForActiveRun"
	ReasonValid           = "Valid"
	ReasonInvalidSchedule = "InvalidSchedule"
	ReasonInvalidTimeZone = "InvalidTimeZone"
	ReasonNeverFires      = "ScheduleNeverFires"
	ReasonInvalidTemplate = "InvalidTemplate"
	ReasonRunNameTaken    = "RunNameTaken"
	ReasonRegressed       = "Regressed"
	ReasonNoRegression    = "NoRegression"
	ReasonNoBaseline      = "NoBaseline"
	// ReasonInconclusive: no cell regressed, but some could not be decided (Regressed=False).
	ReasonInconclusive = "Inconclusive"
	// ReasonChangePoint (an Event): the history of the retained runs shows a sustained harmful
	// shift.
	ReasonChangePoint = "ChangePoint"
	// ReasonMissedSchedule (an Event): a scheduled time passed its starting deadline.
	ReasonMissedSchedule = "MissedSchedule"
	// ReasonAwaitingConfirmation: the comparison is Regressed and a confirmation run re-measures
	// it before anything alarms (Regressed=Unknown; also the Normal Event that says so).
	ReasonAwaitingConfirmation = "AwaitingConfirmation"
	// ReasonRegressionNotConfirmed: the confirmation run did not find the regression again
	// (Regressed=False; also the Normal Event).
	ReasonRegressionNotConfirmed = "RegressionNotConfirmed"
	// ReasonRegressionUnconfirmed: no confirmation run was started (maxPerDay reached, the
	// baseline gone, too many cells): the regression alarms unconfirmed (Regressed=True).
	ReasonRegressionUnconfirmed = "RegressionUnconfirmed"
	// ReasonConfirmationFailed: the confirmation run failed, was deleted or timed out: the
	// regression alarms unconfirmed (Regressed=True).
	ReasonConfirmationFailed = "ConfirmationFailed"
	// ReasonConfirmationInconclusive (a Normal Event): a confirmation run could not decide, and
	// the regression is measured again with more repetitions; as a Regressed=True reason: no
	// confirmation run within the bounds could decide, so it alarms unconfirmed.
	ReasonConfirmationInconclusive = "ConfirmationInconclusive"
	// ReasonBaselineRefused: spec.regression.baselineRun names a run whose Secrets or ConfigMaps
	// the schedule's template does not name, so it is neither compared with nor re-measured
	// (Regressed=False on the run and the schedule; a Warning Event names what to fix).
	ReasonBaselineRefused = "BaselineRefused"
)
