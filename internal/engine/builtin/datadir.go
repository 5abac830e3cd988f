package builtin

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/client"
	"github.com/mysqlbench/mysqlbench-operator/internal/specs"
)

// The parts of DataEmptyDirLimit.
const (
	// dataBytesPerRow is what a sysbench row may take in the data volume: the row itself
	// (specs.BytesPerRow; about 230 bytes on real servers, more once updates split pages) and, on
	// servers that write the binary log (MySQL 8.0 and later by default), prepare's INSERTs
	// logged once more (about 200 bytes a row).
	dataBytesPerRow = 3 * specs.BytesPerRow
	// serverFilesBytes is the server's own files beyond the tables: the system, undo and
	// temporary tablespaces, the redo log at its default size (96 to 100MiB), the grant tables.
	serverFilesBytes = 2 << 30
	// binlogBytesPerSecond is the binary log a writing workload may add per second of the
	// ladder: about 1.5KB per oltp_write_only transaction at some 20,000 a second on a fast
	// server.
	binlogBytesPerSecond = 32 << 20
	// dataFloor is the least the limit is.
	dataFloor = 4 << 30
	// dataCeiling is the most: an emptyDir is the node's disk, shared with every other pod
	// there. The CRD refuses data that cannot fit it (tables × tableSize × 600 bytes + 2GiB)
	// without spec.storage; a long writing ladder whose binary log outgrows it is evicted, and the
	// step says so: such a ladder needs spec.storage.
	dataCeiling = 64 << 30
)

// readOnlyScripts are the stock scripts that write nothing after prepare.
var readOnlyScripts = map[v1.OLTPScript]bool{
	"oltp_point_select": true, "oltp_read_only": true, "select_random_points": true, "select_random_ranges": true,
}

// DataEmptyDirLimit is the sizeLimit of a builtin server's data emptyDir when spec.storage is
// unset: the kubelet evicts the pod when the volume grows beyond it, so a runaway server cannot
// fill its node's disk, while a benchmark never comes near it. It is the sum of
//   - 600 bytes per sbtest row (dataBytesPerRow: the tables and prepare's binary log), or what
//     the client says its prepare loads (client.DataBytes: go-tpc's warehouses);
//   - 2GiB for the server's own files (serverFilesBytes);
//   - the redo log the target's myCnf asks for (innodb_redo_log_capacity, or
//     innodb_log_file_size × innodb_log_files_in_group, default 2 files), which the servers
//     allocate in full;
//   - for workloads that write (every stock script but oltp_point_select, oltp_read_only and the
//     select_random_* ones, and any custom script), 32MiB per second of the ladder (all its
//     repetitions), warm-up included, for the binary log;
//
// and at least 4GiB, at most 64GiB. Data that needs more room than the node should give an
// emptyDir belongs on spec.storage.
func DataEmptyDirLimit(spec v1.BenchmarkRunSpec, t v1.Target) resource.Quantity {
	if spec.Suite() {
		// The largest of its workloads' data (one data set is on the volume at a time), and
		// the binary log of all of its steps when one of them writes.
		var limit resource.Quantity
		for _, w := range spec.OrderedWorkloads() {
			one := spec.WithWorkload(w.Workload)
			one.Workloads, one.Preset = nil, nil
			if q := DataEmptyDirLimit(one, t); q.Cmp(limit) > 0 {
				limit = q
			}
		}
		return limit
	}
	tables, tableSize := int64(max(spec.Workload.Tables, 1)), spec.Workload.TableSize
	if tableSize <= 0 {
		tableSize = 10000
	}
	data := tables * tableSize * dataBytesPerRow
	if b, ok := client.For(spec.Workload).DataBytes(spec.Workload); ok {
		data = b
	}
	limit := data + serverFilesBytes + specs.ConfiguredRedoBytes(t.MyCnf)
	if spec.Workload.CustomScript != nil || !readOnlyScripts[spec.Workload.Script] {
		// Every repetition of the ladder writes its binlog too.
		ladder := spec.Ladder.WarmupDuration() + time.Duration(spec.StepCount())*spec.Ladder.StepDurationOrDefault()
		limit += int64(ladder/time.Second) * binlogBytesPerSecond
	}
	return *resource.NewQuantity(min(max(limit, dataFloor), dataCeiling), resource.BinarySI)
}
