// Command gotpc-launcher is the go-tpc image's entrypoint: it runs one step of a BenchmarkRun's
// TPC-C workload with go-tpc and writes the step's result where the operator reads it (the
// container's termination message). See internal/gotpc.Launch.
//
//	gotpc-launcher --phase=run --warehouses=10 --threads=8 --duration=60s --ignore-error
//
// The connection comes from MYSQLBENCH_HOST, _PORT, _USER and _DATABASE, the password from the
// mounted Secret file (/etc/mysqlbench/credentials/password), go-tpc from /go-tpc; the record goes
// to MYSQLBENCH_RESULT_FILE (/dev/termination-log) and to stdout. MYSQLBENCH_PASSWORD_FILE and
// MYSQLBENCH_GOTPC move the password file and go-tpc (tests).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mysqlbench/mysqlbench-operator/internal/gotpc"
	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	resultFile := envOr(sysbench.EnvResultFile, sysbench.TerminationMessagePath)
	fail := func(phase gotpc.Phase, msg string) int {
		rec := gotpc.Record{Phase: phase, ExitCode: 2, Failure: &gotpc.Failure{Reason: gotpc.ReasonFailed, Message: msg}}
		_, _ = fmt.Fprintln(os.Stderr, "gotpc-launcher:", msg)
		write(rec, resultFile)
		return 2
	}
	step, err := gotpc.ParseLauncherArgs(args)
	if err != nil {
		return fail("", err.Error())
	}
	conn, err := gotpc.ReadConnection(os.Getenv, envOr("MYSQLBENCH_PASSWORD_FILE", sysbench.PasswordFile))
	if err != nil {
		return fail(step.Phase, err.Error())
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	rec := gotpc.Launch(ctx, envOr("MYSQLBENCH_GOTPC", gotpc.GoTPCPath), step, conn, os.Stdout)
	write(rec, resultFile)
	if rec.Failure != nil || rec.ExitCode != 0 {
		return max(rec.ExitCode, 1)
	}
	return 0
}

// write puts the record on stdout (the log) and into the result file; a record that cannot be
// written leaves the kubelet's log tail as the termination message, which the operator reads
// as a launcher that wrote no result.
func write(rec gotpc.Record, path string) {
	line, err := rec.Encode()
	if err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "gotpc-launcher: encode the result:", err)
		return
	}
	_, _ = os.Stdout.Write(line)
	if err := os.WriteFile(path, line, 0o644); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, "gotpc-launcher: write the result:", err)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
