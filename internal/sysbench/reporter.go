// Package sysbench owns the contract between the operator and sysbench 1.0.x: how a step's
// container invokes sysbench (Build), the Lua reporter that makes sysbench report
// machine-readable results (ReporterScript), and how those results and failures are read back
// (ParseOutput, ParseTerminationMessage, Classify). sysbench's human-readable text is never parsed
// as a result: it differs between versions and even between 1.0.20's own reporters. The shapes
// it fills (load.Step, load.Invocation, load.Output, load.Failure) are internal/client/load's,
// every client's; internal/client/sysbench adapts this package to the operator's Client. The
// connection contract here (the Secret's keys, the password file, the probe) is every client's.
//
// A sysbench container built from a load.Invocation needs:
//   - a ConfigMap volume holding ReporterScript() under ReporterConfigMapKey, mounted at
//     ReporterMountPath, and for workload.customScript the user's ConfigMap at
//     CustomScriptMountPath;
//   - TerminationMessagePath as its terminationMessagePath and terminationMessagePolicy
//     FallbackToLogsOnError: on success the message is the final JSON report; a failed step
//     writes none, so the kubelet puts the log tail there instead, with the FATAL lines Classify
//     needs. Either way Classify(exitCode, ParseOutput(message)) decides the step without log
//     access;
//   - the Invocation's Volumes and VolumeMounts (the Secret's password key as PasswordFile, an
//     in-memory directory for OptionFile), and a pod fsGroup that is a group of the container's
//     user, so that it can read PasswordFile (mode 0440);
//   - an image with /bin/sh, sysbench 1.0.x, cp, mkdir and sha256sum on PATH;
//   - EnvReporterSHA256 (Build sets it) and, with a custom script, EnvScriptSHA256 set to the
//     digests of the content the operator checked: the launcher runs nothing else.
//
// Build's command is a fixed /bin/sh line rather than sysbench itself for two reasons: the
// password must reach sysbench without being in its argv or environment, which only an option
// file does, and the Secret's database key is optional (default sbtest), while Kubernetes can
// neither default an env var from a missing optional key nor leave out an argument whose $(VAR)
// is unset. The line writes the option file, applies that default and execs sysbench with the
// args untouched ("$@").
package sysbench

import (
	_ "embed"
)

// Where a sysbench Job mounts things. The controller builds the volumes from these.
const (
	// ReporterMountPath is where the operator's reporter ConfigMap is mounted; it holds
	// ReporterConfigMapKey.
	ReporterMountPath = "/opt/mysqlbench"
	// ReporterConfigMapKey is the key (and file name) of the reporter script in its ConfigMap.
	ReporterConfigMapKey = "reporter.lua"
	// CustomScriptMountPath is where the ConfigMap with the user's script is mounted when
	// workload.customScript is set; the script is the file named after its key.
	CustomScriptMountPath = "/opt/mysqlbench/script"
	// TerminationMessagePath is the container's termination message file; the reporter writes the
	// final result there. It is the Kubernetes default; set it explicitly on the container anyway.
	TerminationMessagePath = "/dev/termination-log"
)

// ReporterPath is the reporter script's path inside a sysbench container.
const ReporterPath = ReporterMountPath + "/" + ReporterConfigMapKey

//go:embed reporter.lua
var reporterScript string

// ReporterScript returns the Lua reporter that every sysbench Job runs, to be stored under
// ReporterConfigMapKey in a ConfigMap the operator owns. It is mounted rather than baked into the
// image so that any sysbench 1.0.x image with the stock scripts works.
func ReporterScript() string { return reporterScript }
