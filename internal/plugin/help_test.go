package plugin

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Every command's help fits a terminal of helpWidth columns and shows how it is used: an
// Examples section of kubectl mysqlbench command lines.
func TestHelpHasExamplesAndFitsATerminal(t *testing.T) {
	root := NewCommand(Options{})
	var all []*cobra.Command
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(all) < 12 {
		t.Fatalf("only %d commands: the tree was not walked", len(all))
	}
	for _, c := range all {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		if c != root && !strings.Contains(c.Example, "kubectl mysqlbench "+c.Name()) &&
			!strings.Contains(c.Example, "kubectl mysqlbench completion "+c.Name()) {
			t.Errorf("%s: no example of kubectl mysqlbench %s", c.CommandPath(), c.Name())
		}
		var out bytes.Buffer
		r := NewCommand(Options{Streams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}})
		args := append(strings.Fields(strings.TrimPrefix(c.CommandPath(), root.CommandPath())), "--help")
		r.SetArgs(args)
		if err := r.Execute(); err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		help := out.String()
		if c != root && !strings.Contains(help, "\nExamples:\n") {
			t.Errorf("%s --help has no Examples section", c.CommandPath())
		}
		for i, l := range strings.Split(help, "\n") {
			if n := utf8.RuneCountInString(l); n > helpWidth {
				t.Errorf("%s --help line %d has %d columns, at most %d: %q", c.CommandPath(), i+1, n, helpWidth, l)
			}
		}
	}
}

func TestWrapParagraphs(t *testing.T) {
	in := "one two three four five\n  kept as it is\n\n    indented words that go on and on"
	want := "one two three\nfour five\n  kept as it is\n\n    indented\n    words that\n    go on and on"
	if got := wrapParagraphs(in, 16); got != want {
		t.Errorf("wrapParagraphs:\n%s\nwant\n%s", got, want)
	}
}
