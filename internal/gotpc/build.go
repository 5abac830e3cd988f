// Package gotpc builds the command lines of go-tpc's TPC-C workload (github.com/pingcap/go-tpc
// v1.0.7) and reads what it prints. It is pure: no Kubernetes, no processes.
package gotpc

import (
	"fmt"
	"strconv"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// Version is the go-tpc release whose flags and output this package follows.
const Version = "v1.0.7"

// EnvPassword holds the benchmark user's password in the client container. go-tpc v1.0.7 reads
// the password only from --password (no environment variable, no option file), so it has to be
// an argument: the Pod spec fills EnvPassword from the connection Secret and the kubelet expands
// $(MYSQLBENCH_PASSWORD) in the args, so the password never lands in the Pod spec itself (it is
// still visible in the process list inside the container).
const EnvPassword = "MYSQLBENCH_PASSWORD"

// Limits of what the operator asks go-tpc for.
const (
	MinWarehouses = 1
	// MaxWarehouses bounds a prepare to about 1.3 TB (see BytesPerWarehouse) and some hours.
	MaxWarehouses = 10000
	MinDuration   = time.Second
)

// BytesPerWarehouse and FixedBytes size the data of a prepare. Measured with go-tpc v1.0.7 on
// MariaDB 10.11 (InnoDB, file per table), the database directory after prepare --no-check
// takes 152.6 MB for 1 warehouse and 259.1 MB for 2: 106.5 MB per warehouse and 46 MB for the
// item table and the rest that does not grow with warehouses. A 6 s run on 1 warehouse added
// 8.6 MB. Both figures are rounded up for the redo log, the run's inserts and some growth.
const (
	BytesPerWarehouse int64 = 128 << 20
	FixedBytes        int64 = 64 << 20
)

// Phase is the go-tpc tpcc sub-command.
type Phase string

// go-tpc tpcc's sub-commands the operator runs.
const (
	PhasePrepare Phase = "prepare"
	PhaseRun     Phase = "run"
	// PhaseCheck runs TPC-C's consistency conditions; on MariaDB 10.11 condition 3.3.2.10 (a
	// correlated subquery per customer) made the whole check of one warehouse take 192 s, so
	// give it a generous deadline.
	PhaseCheck Phase = "check"
)

// Step is one go-tpc invocation.
type Step struct {
	Phase      Phase
	Warehouses int32
	// Threads are the load threads of prepare and the clients of run; check uses one per
	// warehouse at most, go-tpc's own choice.
	Threads int32
	// Duration is the measured time of a run; go-tpc v1.0.7 has no warm-up flag, so a warm-up
	// is a separate, shorter run whose result is discarded.
	Duration time.Duration
	// Interval is how often a run prints its [Current] line; zero keeps go-tpc's 10 s.
	Interval time.Duration
	// IgnoreError keeps a run's clients going after a failed transaction (deadlocks and lock
	// wait timeouts happen under contention); the failures are counted in the *_ERR lines.
	IgnoreError bool
	// StorageBytes, when set, is the volume of the server: a prepare that would not fit is refused.
	StorageBytes int64
	// CleanupAfterCheck makes the launcher drop the TPC-C tables (go-tpc tpcc cleanup) once a
	// check held: the data of a server the user keeps.
	CleanupAfterCheck bool
}

// Validate says what is wrong with s, or nil.
func (s Step) Validate() error {
	switch s.Phase {
	case PhasePrepare, PhaseRun, PhaseCheck:
	default:
		return fmt.Errorf("go-tpc phase %q: want %s, %s or %s", s.Phase, PhasePrepare, PhaseRun, PhaseCheck)
	}
	if s.Warehouses < MinWarehouses || s.Warehouses > MaxWarehouses {
		return fmt.Errorf("go-tpc warehouses %d: want %d to %d", s.Warehouses, MinWarehouses, MaxWarehouses)
	}
	if s.Phase != PhaseCheck && s.Threads < 1 {
		return fmt.Errorf("go-tpc threads %d: want at least 1", s.Threads)
	}
	if s.Phase == PhaseRun {
		if s.Duration < MinDuration {
			return fmt.Errorf("go-tpc run duration %s: want at least %s", s.Duration, MinDuration)
		}
		if s.Duration%time.Second != 0 {
			return fmt.Errorf("go-tpc run duration %s: want whole seconds", s.Duration)
		}
	}
	if s.Interval < 0 || s.Interval%time.Second != 0 {
		return fmt.Errorf("go-tpc interval %s: want whole seconds, or 0 for go-tpc's 10s", s.Interval)
	}
	if s.StorageBytes > 0 {
		if need := int64(s.Warehouses)*BytesPerWarehouse + FixedBytes; need > s.StorageBytes {
			return fmt.Errorf("go-tpc warehouses %d need about %d MiB (%d MiB each) but the server's storage is %d MiB: "+
				"lower the warehouses to %d or raise spec.storage.size",
				s.Warehouses, need>>20, BytesPerWarehouse>>20, s.StorageBytes>>20, max(0, (s.StorageBytes-FixedBytes)/BytesPerWarehouse))
		}
	}
	return nil
}

// Args are go-tpc's arguments for s (without the program name), with the connection as
// $(VAR) references for the kubelet to expand from the container's environment.
func Args(s Step) ([]string, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	args := []string{"tpcc", string(s.Phase),
		"--driver=mysql",
		"--host=$(" + sysbench.EnvHost + ")",
		"--port=$(" + sysbench.EnvPort + ")",
		"--user=$(" + sysbench.EnvUser + ")",
		"--password=$(" + EnvPassword + ")",
		"--db=$(" + sysbench.EnvDatabase + ")",
		"--warehouses=" + strconv.Itoa(int(s.Warehouses)),
	}
	switch s.Phase {
	case PhasePrepare:
		// --no-check: prepare's own consistency check ends with condition 3.3.2.10, a correlated
		// subquery that MariaDB 10.11 ran for minutes on a single warehouse; check is its own step.
		args = append(args, "--threads="+strconv.Itoa(int(s.Threads)), "--no-check")
	case PhaseRun:
		args = append(args, "--threads="+strconv.Itoa(int(s.Threads)),
			"--time="+strconv.Itoa(int(s.Duration/time.Second))+"s")
		if s.IgnoreError {
			args = append(args, "--ignore-error")
		}
	}
	if s.Interval > 0 {
		args = append(args, "--interval="+strconv.Itoa(int(s.Interval/time.Second))+"s")
	}
	return args, nil
}
