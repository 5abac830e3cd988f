package plugin

import (
	"fmt"
	"io"

	"k8s.io/cli-runtime/pkg/printers"

	v1 "github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/nodeinfo"
)

// writeNodes is describe's "Nodes" section: the node each target's server ran on and what it is,
// then whether the targets (or one target's instances) ran on different nodes, so that a reader
// comparing the tables below knows when the nodes differ too. Nothing when no node is recorded
// (external and Percona targets, or targets not probed yet).
func writeNodes(w io.Writer, run *v1.BenchmarkRun) error {
	var placements []nodeinfo.Placement
	recorded := false
	for _, t := range run.Spec.Targets {
		p := nodeinfo.Placement{Target: t.Name}
		if ts := targetStatus(run, t.Name); ts != nil {
			p.Node, p.InstanceNodes = ts.Node, ts.InstanceNodes
		}
		recorded = recorded || p.Node != nil
		placements = append(placements, p)
	}
	if !recorded {
		return nil
	}
	_, _ = fmt.Fprintln(w, "\nNodes:")
	tw := printers.GetNewTabWriter(indent(w))
	_, _ = fmt.Fprintln(tw, "TARGET\tNODE\tWHAT")
	for _, p := range placements {
		name, what := "-", "not recorded (a server the operator does not run, or not probed yet)"
		if n := p.Node; n != nil {
			name, what = n.Name, nodeinfo.Describe(*n)
			if what == "" {
				what = "the Node could not be read"
			}
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Target, name, what)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range nodeinfo.Spread(placements) {
		_, _ = fmt.Fprintf(w, "  %s\n", s)
	}
	return nil
}
