package gotpc

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The go-tpc image runs go-tpc through the operator's launcher (cmd/gotpc-launcher): it reads the
// connection from the container's environment and the password from the mounted Secret file,
// runs go-tpc with Args, copies go-tpc's output to its own stdout (the pod log), and writes one
// Record as a JSON line to the termination message, where the controller reads a step's result.
// A Record is what the controller trusts; the log is for people and for the per-interval series.

// RecordType marks a launcher's record among other JSON lines.
const RecordType = "gotpc"

// RecordVersion is the version of Record this operator writes and reads; a launcher image of
// another version is refused with a message naming both.
const RecordVersion = 1

// MaxTailBytes bounds Record.Tail: the termination message holds at most 4096 bytes.
const MaxTailBytes = 1024

// Launcher phases beyond go-tpc's own sub-commands.
const (
	// PhaseWarmup is a run whose result is discarded (go-tpc has no warm-up flag).
	PhaseWarmup Phase = "warmup"
	// PhaseCleanup drops the TPC-C tables (go-tpc tpcc cleanup): the data of a server the run
	// does not own (engine external), after the check when Step.CleanupAfterCheck.
	PhaseCleanup Phase = "cleanup"
)

// Record is what one launcher run wrote: the step it ran, how go-tpc ended, and what it measured.
type Record struct {
	Type    string `json:"type"`
	Version int    `json:"version"`
	// Phase is the launcher's phase (prepare, warmup, run, check, cleanup).
	Phase      Phase `json:"phase"`
	Warehouses int32 `json:"warehouses"`
	Threads    int32 `json:"threads,omitempty"`
	// ExitCode is go-tpc's (of its last invocation); -1 when it was killed by a signal, and the
	// launcher's own failures (a missing password file) have ExitCode 2 and Failure set.
	ExitCode int `json:"exitCode"`
	// Seconds is go-tpc's wall time, for every phase.
	Seconds float64 `json:"seconds"`
	// Result is a run's or warm-up's result, without its intervals (they stay in the log).
	Result *Result `json:"result,omitempty"`
	// Check is a check's result.
	Check *CheckResult `json:"check,omitempty"`
	// Failure is Classify's verdict on go-tpc's whole output, when the step failed.
	Failure *Failure `json:"failure,omitempty"`
	// Tail is the end of go-tpc's output when the step failed, at most MaxTailBytes.
	Tail string `json:"tail,omitempty"`
}

// Encode is r as one JSON line, type and version set, within the termination message's limit:
// the tail and then the per-type stats other than new-order's percentiles are shortened first.
func (r Record) Encode() ([]byte, error) {
	r.Type, r.Version = RecordType, RecordVersion
	if len(r.Tail) > MaxTailBytes {
		r.Tail = "…" + r.Tail[len(r.Tail)-MaxTailBytes:]
	}
	if r.Result != nil {
		res := *r.Result
		res.Intervals = nil
		r.Result = &res
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) > 4000 {
		return nil, fmt.Errorf("go-tpc record of %d bytes does not fit a termination message", len(b))
	}
	return append(b, '\n'), nil
}

// FindRecord returns the last launcher record among the lines of msg (a termination message or a
// pod log), and whether there was one. A record of another version is an error that says so.
func FindRecord(msg string) (Record, bool, error) {
	lines := strings.Split(msg, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "{") || !strings.Contains(line, `"`+RecordType+`"`) {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Type != RecordType {
			continue
		}
		if r.Version != RecordVersion {
			return Record{}, true, fmt.Errorf("go-tpc launcher record version %d, this operator reads %d: "+
				"use the go-tpc image of this operator's release (workload.tpcc.image)", r.Version, RecordVersion)
		}
		return r, true, nil
	}
	return Record{}, false, nil
}
