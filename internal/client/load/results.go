package load

import "github.com/mysqlbench/mysqlbench-operator/internal/results"

// Columns are columns a client adds to results.csv, filled on the rows of its runs' steps and
// empty on the others'. results.csv has the columns of every client, so that its header does
// not depend on the run; scripts address them by name.
type Columns struct {
	// After is the column of results.csv they follow, one every run has ("over_duration"); ""
	// puts them at the end, after those of the clients registered before. A new client's go at
	// the end: columns only ever grow there.
	After string
	// Names are the columns' names.
	Names []string
	// Values are the columns of step st of a run of the client, one per name; cell is the
	// step's cell (target and threads) when the run has repetitions (repeated), the zero Cell
	// otherwise.
	Values func(st results.Step, cell results.Cell, repeated bool) []string
}

// Widest are the widest figures a step's result realistically holds, as SeriesBudget's worst
// case assumes them: a client fills its own fields of the worst step with them.
type Widest struct {
	// Rate is the widest rate (QPS, tpmC), Latency the widest latency in milliseconds, Count
	// the widest count (errors, transactions).
	Rate, Latency float64
	Count         int64
}

// RunLabels are what the results database records of a run's workload in its runs row.
type RunLabels struct {
	// Workload says what the steps ran: "oltp_read_write", "tpcc:10-warehouses".
	Workload string
	// Tables and TableSize are the prepared sbtest tables and their rows, when the client
	// runs on them; nil otherwise.
	Tables, TableSize *int64
}
