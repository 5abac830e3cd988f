package plugin

import (
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// helpWidth is a terminal's width: help is read in one, where a longer line wraps mid-word.
const helpWidth = 80

// finishHelp wraps every command's long help at helpWidth and makes the usage's flag lists
// wrap there too. The texts are written as paragraphs, one line each; indented lines (commands,
// lists) are kept as they are.
func finishHelp(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	addCompletionExamples(root)
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Long = wrapParagraphs(c.Long, helpWidth)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	cobra.AddTemplateFunc("wrappedFlagUsages", func(fs *pflag.FlagSet) string { return fs.FlagUsagesWrapped(helpWidth) })
	t := root.UsageTemplate()
	t = strings.ReplaceAll(t, ".LocalFlags.FlagUsages", "wrappedFlagUsages .LocalFlags")
	t = strings.ReplaceAll(t, ".InheritedFlags.FlagUsages", "wrappedFlagUsages .InheritedFlags")
	// cobra's closing line runs past 80 columns under a subcommand: the same, shorter.
	t = strings.ReplaceAll(t, `Use "{{.CommandPath}} [command] --help" for more information about a command.`,
		`See "{{.CommandPath}} COMMAND --help" for a command's help.`)
	root.SetUsageTemplate(t)
}

// addCompletionExamples gives cobra's completion commands examples like the others'.
func addCompletionExamples(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		c.Example = "  source <(kubectl mysqlbench completion bash)\n" +
			"  kubectl mysqlbench completion zsh > \"${fpath[1]}/_kubectl-mysqlbench\""
		for _, sh := range c.Commands() {
			if sh.Example == "" {
				sh.Example = "  kubectl mysqlbench completion " + sh.Name() + " > kubectl-mysqlbench." + sh.Name()
			}
		}
	}
}

// wrapParagraphs breaks each line of text longer than width at spaces, keeping its indent on
// the lines it continues on.
func wrapParagraphs(text string, width int) string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if utf8.RuneCountInString(l) <= width {
			out = append(out, l)
			continue
		}
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
		line := indent
		for _, w := range strings.Fields(l) {
			if line != indent && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width {
				out = append(out, line)
				line = indent
			}
			if line != indent {
				line += " "
			}
			line += w
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
