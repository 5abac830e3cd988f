package specs

import (
	"fmt"
	"math"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/enginefacts"
)

// BytesPerRow is the least disk space one sysbench row takes (INT id, INT k, CHAR(120) c,
// CHAR(60) pad, InnoDB's row overhead and the k index); real servers use about 230 bytes.
const BytesPerRow = 200

// CheckDataFits rejects a run whose sbtest data cannot fit the servers' data volume, before any
// server is provisioned: the prepare would otherwise fill the volume and fail with error 1114
// after minutes or hours.
func CheckDataFits(spec v1.BenchmarkRunSpec) error {
	if spec.Storage == nil {
		return nil
	}
	if spec.Suite() {
		// One data set is on the volume at a time: each workload's must fit.
		for _, w := range spec.OrderedWorkloads() {
			if err := CheckDataFits(single(spec, w)); err != nil {
				return fmt.Errorf("workload %s: %w", w.Name, err)
			}
		}
		return nil
	}
	tables, tableSize := int64(max(spec.Workload.Tables, 1)), spec.Workload.TableSize
	if tableSize <= 0 {
		tableSize = 10000
	}
	rows := tables * tableSize
	need := rows * BytesPerRow
	if have := spec.Storage.Size.Value(); have < need {
		return fmt.Errorf("the sbtest data does not fit storage.size %s: workload.tables × workload.tableSize = %d rows "+
			"need at least %s on disk (%d bytes per row; real servers use about 230): raise storage.size to at least %s "+
			"or lower tables or tableSize", spec.Storage.Size.String(), rows, humanBytes(need), BytesPerRow, humanBytes(need*5/4))
	}
	return nil
}

// CheckTargetData is what the controller checks of a target's data and client before it provisions anything
// for it: what the workload's client needs (client.Validate: an image, options it accepts), so a
// run that cannot measure fails before its servers start, and that the sbtest data fits the data
// volume of a server the operator runs (CheckDataFits); an external server's disk is the user's
// business, and without a prepare step (skipPrepare, a client that makes its own tables) there
// is no sbtest data to fit.
func CheckTargetData(spec v1.BenchmarkRunSpec, t v1.Target) error {
	if spec.Suite() {
		for _, w := range spec.OrderedWorkloads() {
			if err := CheckTargetData(single(spec, w), t); err != nil {
				return fmt.Errorf("workload %s: %w", w.Name, err)
			}
		}
		return nil
	}
	if err := client.For(spec.Workload).Validate(spec, t); err != nil {
		return err
	}
	if !enginefacts.Of(t.Engine).CreatesServer || !client.Prepares(spec.Workload) {
		return nil
	}
	return CheckDataFits(spec)
}

// single is spec with w as its one spec.workload.
func single(spec v1.BenchmarkRunSpec, w v1.RunWorkload) v1.BenchmarkRunSpec {
	one := spec.WithWorkload(w.Workload)
	one.Workloads, one.Preset = nil, nil
	return one
}

// humanBytes writes n bytes in binary units, rounded up ("1.9Gi").
func humanBytes(n int64) string {
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d", n)
	}
	return fmt.Sprintf("%.1f%s", math.Ceil(v*10)/10, units[i])
}
