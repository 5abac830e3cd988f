//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"testing"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/gotpc"
)

// BenchmarkGoTPCFidelity is BenchmarkFidelity for TPC-C: the tpmC of one go-tpc ladder step
// through a BenchmarkRun (the launcher in the go-tpc image, an external target) against the same
// go-tpc tpcc run by hand (the image's /go-tpc in a bare Pod on the client node), against one
// server started on the database node and loaded once, interleaved A B B A ...
//
//	make bench-fidelity-gotpc   # E2E_FIDELITY_ROUNDS (6), E2E_FIDELITY_MAX_ROUNDS (60),
//	                            # E2E_FIDELITY_PRECISION (0.02), E2E_FIDELITY_THREADS (4),
//	                            # E2E_STEP (10s), E2E_GOTPC_WAREHOUSES (1), E2E_FIDELITY_IMAGE (mariadb:11.8),
//	                            # E2E_GOTPC_IMAGE (ghcr.io/mysqlbench/go-tpc:v1.0.7)
//
// It reports the ratio operator tpmC / hand tpmC as the geometric mean of the per-round ratios
// with its 95 % t interval, adding rounds until the interval is within ±precision.
func BenchmarkGoTPCFidelity(b *testing.B) {
	fs := fidelitySetup(b, "gotpc-fidelity", env("E2E_FIDELITY_IMAGE", "mariadb:11.8"), "4")
	image := env("E2E_GOTPC_IMAGE", v1.DefaultGoTPCImage)
	warehouses, err := strconv.Atoi(env("E2E_GOTPC_WAREHOUSES", "1"))
	if err != nil || warehouses < 1 {
		b.Fatalf("E2E_GOTPC_WAREHOUSES=%q: want a positive integer", env("E2E_GOTPC_WAREHOUSES", ""))
	}
	step := fs.step.Round(1e9)
	// What an engineer types: go-tpc's own flags, the connection from the Pod's environment.
	byHand := func(phase string, threads int) []string {
		args := []string{gotpc.GoTPCPath, "tpcc", phase, "--driver=mysql", "--host=$(HOST)", "--port=$(PORT)",
			"--user=$(USER)", "--password=$(PASSWORD)", "--db=$(DATABASE)", fmt.Sprintf("--warehouses=%d", warehouses)}
		switch phase {
		case "prepare":
			return append(args, fmt.Sprintf("--threads=%d", warehouses), "--no-check")
		default:
			return append(args, fmt.Sprintf("--threads=%d", threads), fmt.Sprintf("--time=%s", step), "--ignore-error")
		}
	}
	handRun(b, fs.c, fs.cs, fs.ns, "gotpc-prepare", image, fs.secret.Name, byHand("prepare", 0))
	handRun(b, fs.c, fs.cs, fs.ns, "gotpc-warmup", image, fs.secret.Name, byHand("run", fs.threads))

	workload := v1.Workload{Client: v1.ClientGoTPC, TPCC: &v1.TPCCWorkload{Warehouses: int32(warehouses),
		Check: new(bool), Image: env("E2E_GOTPC_IMAGE", "")}}
	f := fidelityRounds(b, fs.rounds, fs.maxRounds, fs.precision, "tpmC",
		func(i int) float64 {
			r := operatorRun(b, fs.c, fs.ns, i, fs.secret.Name, workload, int32(fs.threads), step, env("E2E_SYSBENCH_IMAGE", ""))
			if r.TPCC == nil {
				b.Fatalf("operator round %d recorded no TPC-C result: %+v", i, r)
			}
			return r.TPCC.TpmC
		},
		func(i int) float64 {
			out := handRun(b, fs.c, fs.cs, fs.ns, fmt.Sprintf("gotpc-hand-%d", i), image, fs.secret.Name, byHand("run", fs.threads))
			res, err := gotpc.Parse(out)
			if err != nil {
				b.Fatalf("hand run %d: %v\n%s", i, err, out)
			}
			return res.TpmC
		})
	f.report(b, fmt.Sprintf("%d threads, %s steps, TPC-C %d warehouse(s)", fs.threads, step, warehouses), "tpmC", "tpmc", "")
}
