package report

import (
	"fmt"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/nodeinfo"
	"github.com/mysqlbench/mysqlbench-operator/internal/report/format"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

// placements are where doc's targets ran, for nodeinfo.Spread.
func placements(doc *results.Doc) []nodeinfo.Placement {
	out := make([]nodeinfo.Placement, 0, len(doc.Targets))
	for _, tr := range doc.Targets {
		out = append(out, nodeinfo.Placement{Target: tr.Name, Node: tr.Node, InstanceNodes: tr.InstanceNodes})
	}
	return out
}

// writeNodeSpread says, under the first table, when the targets compared there (or the instances
// of one target) ran on different nodes: their differences then include the nodes'.
func writeNodeSpread(b *strings.Builder, doc *results.Doc) {
	if s := nodeinfo.Spread(placements(doc)); len(s) > 0 {
		fmt.Fprintf(b, "\n%s\n", format.MDText(strings.Join(s, " ")))
	}
}

// writeNodes is the "Nodes" section: a line per target naming the node its server ran on and
// what the node is. None when no target's node is recorded (every server external, or results
// written before nodes were recorded).
func writeNodes(b *strings.Builder, doc *results.Doc) {
	recorded := false
	for _, tr := range doc.Targets {
		recorded = recorded || tr.Node != nil
	}
	if !recorded {
		return
	}
	b.WriteString("\n## Nodes\n\n")
	for _, tr := range doc.Targets {
		if tr.Node == nil {
			fmt.Fprintf(b, "- %s: not recorded (the operator does not run this server, or it was never probed)\n", format.MDText(tr.Name))
			continue
		}
		line := tr.Node.Name
		if shape := nodeinfo.Shape(*tr.Node); shape != "" {
			line += ", " + shape
		}
		if len(tr.InstanceNodes) > 1 {
			line += fmt.Sprintf(" (the latest of its instances' nodes %s)", strings.Join(tr.InstanceNodes, ", "))
		}
		fmt.Fprintf(b, "- %s: %s\n", format.MDText(tr.Name), format.MDText(line))
	}
}
