package docs

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/mysqlbench/mysqlbench-operator/internal/plugin"
)

// docCommand is a `kubectl mysqlbench ...` command line a reader is told to run, and where.
type docCommand struct {
	where string
	line  string
	// inline: in a Markdown code span, within prose.
	inline bool
}

// Every command the product prints for a user is one the plugin accepts as printed: its
// subcommand exists, every flag is known and takes the value given, and its arguments satisfy
// the command's own checks (plot RUN -o chart.png, once printed by report.md, failed there).
// Commands that read files which are in the repository (--from examples/...) run whole,
// offline.
func TestDocumentedCommandsParse(t *testing.T) {
	cmds := documentedCommands(t)
	if len(cmds) < 40 {
		t.Fatalf("found only %d documented commands: the extraction lost them", len(cmds))
	}
	for _, c := range cmds {
		args, ok := shellArgs(c.line)
		if !ok {
			continue
		}
		if len(args) == 1 && c.inline {
			// Prose naming a command (`kubectl mysqlbench describe`): the command must exist.
			if err := commandExists(args[0]); err != nil {
				t.Errorf("%s: `kubectl mysqlbench %s`: %v", c.where, args[0], err)
			}
			continue
		}
		if err := parse(args); err != nil {
			t.Errorf("%s: `kubectl mysqlbench %s`: %v", c.where, strings.Join(args, " "), err)
			continue
		}
		if from := fromPaths(args); len(from) > 0 && allExist(from) {
			var out, errOut bytes.Buffer
			streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
			wd, _ := os.Getwd()
			if err := os.Chdir(repoRoot); err != nil {
				t.Fatal(err)
			}
			// What a command writes (plot --output-file, export --bundle) goes to a temporary
			// directory, not into the checkout.
			args = intoDir(args, t.TempDir())
			code := plugin.Execute(context.Background(), plugin.Options{Streams: streams}, args)
			_ = os.Chdir(wd)
			if code != 0 {
				t.Errorf("%s: `kubectl mysqlbench %s` exits %d offline: %s", c.where, strings.Join(args, " "), code, errOut.String())
			}
		}
	}
}

// The checks above must fail on what they are there to catch.
func TestDocumentedCommandsCheckCatchesMistakes(t *testing.T) {
	for _, line := range []string{
		"kubectl mysqlbench plot RUN -o chart.png",
		"kubectl mysqlbench get --no-such-flag",
		"kubectl mysqlbench frobnicate RUN",
		"kubectl mysqlbench compare ONLY-ONE",
		"kubectl mysqlbench export RUN -o csv --bundle",
	} {
		args, ok := shellArgs(line)
		if !ok {
			t.Fatalf("%q not read as a command", line)
		}
		if err := parse(args); err == nil {
			t.Errorf("%q passes the check", line)
		}
	}
	m := messageCommand.FindStringSubmatch("draw it (kubectl mysqlbench plot %s -o chart.png) later")
	if m == nil || m[2] != ")" || parse(strings.Fields(fmtVerb.ReplaceAllString(m[1], "NAME"))[2:]) == nil {
		t.Errorf("a message's command: %q not found or passes", m)
	}
	if args, _ := shellArgs("  kubectl mysqlbench get -o 'jsonpath={.items[*].metadata.name}' | sort  # names"); strings.Join(args, "|") !=
		"get|-o|jsonpath={.items[*].metadata.name}" {
		t.Errorf("shellArgs: %q", args)
	}
}

const repoRoot = "../.."

// documentedCommands are the plugin's command lines in the README and docs/, the chart's
// NOTES.txt, the report.md files the operator renders (internal/report's golden files) and the
// plugin's own help examples.
func documentedCommands(t *testing.T) []docCommand {
	t.Helper()
	var out []docCommand
	files := []string{filepath.Join(repoRoot, "README.md"), filepath.Join(repoRoot, "charts/mysqlbench-operator/templates/NOTES.txt")}
	for _, pattern := range []string{"docs/*.md", "internal/report/testdata/*/report.md"} {
		m, err := filepath.Glob(filepath.Join(repoRoot, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if strings.HasSuffix(f, ".txt") {
			// Helm's template actions stand for a value.
			text = regexp.MustCompile(`\{\{-?[^}]*-?\}\}`).ReplaceAllString(text, "x")
		}
		rel, _ := filepath.Rel(repoRoot, f)
		// Code spans are read outside fenced blocks, whose lines lineCommand reads.
		for _, m := range inlineCommand.FindAllString(fencedBlock.ReplaceAllString(text, ""), -1) {
			out = append(out, docCommand{where: rel, line: strings.Join(strings.Fields(strings.Trim(m, "`")), " "), inline: true})
		}
		for _, m := range lineCommand.FindAllString(text, -1) {
			if !strings.Contains(m, "`") {
				out = append(out, docCommand{where: rel, line: strings.TrimSpace(m)})
			}
		}
	}
	out = append(out, messageCommands(t)...)
	root := plugin.NewCommand(plugin.Options{})
	for _, sub := range root.Commands() {
		// A long example goes on on the next line after a backslash, as in a shell.
		for _, l := range strings.Split(strings.ReplaceAll(sub.Example, "\\\n", " "), "\n") {
			if strings.Contains(l, "kubectl mysqlbench ") {
				out = append(out, docCommand{where: "help of " + sub.Name(), line: l})
			}
		}
	}
	return out
}

// messageCommands are the commands the code's messages tell users to run (errors, notes, report
// text): in its string literals, a command up to the bracket, backquote or separator that ends
// it, with the verbs of fmt standing for a name. A command the literal cuts off is left out.
func messageCommands(t *testing.T) []docCommand {
	t.Helper()
	var out []docCommand
	for _, dir := range []string{"internal", "controllers"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(repoRoot, path)
			ast.Inspect(f, func(n ast.Node) bool {
				if kv, ok := n.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Example" {
						return false // the help's examples are read from the commands
					}
				}
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				text, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, m := range messageCommand.FindAllStringSubmatch(text, -1) {
					if m[2] == "" {
						continue // cut off by the literal's end
					}
					line := fmtVerb.ReplaceAllString(m[1], "NAME")
					out = append(out, docCommand{where: rel + " (a message)", line: line, inline: true})
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

var (
	// fencedBlock is a Markdown code block between ``` lines.
	fencedBlock = regexp.MustCompile("(?ms)^[ \t]*```.*?^[ \t]*```[ \t]*$")
	// messageCommand is a command in a message and what ends it (empty: the literal's end).
	messageCommand = regexp.MustCompile("(kubectl mysqlbench [^)`;,'\"\n]*?)([)`;,'\"\n]|$)")
	fmtVerb        = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	// inlineCommand is a command in a Markdown code span, which may wrap across lines.
	inlineCommand = regexp.MustCompile("`[^`]*kubectl mysqlbench [^`]*`")
	// lineCommand is a command on a line of its own (a code block, NOTES.txt's indented lines).
	lineCommand = regexp.MustCompile(`(?m)^[ \t]*(?:\$ )?(?:[A-Z_]+=\S+ )?kubectl mysqlbench .*$`)
)

// shellArgs splits a command line as a shell would, up to a comment, redirection or pipe, and
// returns what follows "kubectl mysqlbench"; false for prose that only names the plugin
// ("kubectl mysqlbench <TAB>", "... export RUN ...").
func shellArgs(line string) ([]string, bool) {
	if strings.Contains(line, "<TAB>") {
		return nil, false
	}
	var words []string
	var cur strings.Builder
	inWord, quote := false, rune(0)
	runes := []rune(line)
scan:
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '#' && !inWord, r == '|', r == '>', r == ';', r == '&':
			break scan
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	for i := 0; i+1 < len(words); i++ {
		if words[i] == "kubectl" && words[i+1] == "mysqlbench" {
			args := words[i+2:]
			for _, a := range args {
				if strings.Contains(a, "...") {
					return nil, false
				}
			}
			return args, len(args) > 0
		}
	}
	return nil, false
}

// parse runs the plugin's own parsing on args, nothing else: the subcommand, its flags and
// their values, its argument checks and required flags.
func parse(args []string) error {
	root := newRoot()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if cmd == root {
		return errNotACommand
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return err
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return err
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return err
	}
	return checkFlagValues(cmd)
}

// newRoot is the plugin's command tree as Execute completes it (completion is added then).
func newRoot() *cobra.Command {
	root := plugin.NewCommand(plugin.Options{})
	root.InitDefaultCompletionCmd()
	return root
}

func commandExists(name string) error {
	root := newRoot()
	if cmd, _, err := root.Find([]string{name}); err != nil || cmd == root {
		return errNotACommand
	}
	return nil
}

type parseError string

func (e parseError) Error() string { return string(e) }

const errNotACommand = parseError("no such subcommand")

// checkFlagValues refuses values the commands refuse before reading anything: an -o the
// command does not print, export's -o and --bundle together.
func checkFlagValues(cmd *cobra.Command) error {
	o := cmd.Flags().Lookup("output")
	if o == nil || !o.Changed {
		return nil
	}
	format, _, _ := strings.Cut(o.Value.String(), "=")
	usage := o.Usage
	if !strings.Contains(usage, format) {
		return parseError("-o " + format + ": not a format of " + cmd.Name() + " (" + usage + ")")
	}
	if b := cmd.Flags().Lookup("bundle"); b != nil && b.Changed {
		return parseError("export: -o and --bundle together")
	}
	return nil
}

// fromPaths are the paths of --from.
func fromPaths(args []string) []string {
	var out []string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--from="); ok {
			out = append(out, v)
		} else if a == "--from" && i+1 < len(args) {
			out = append(out, args[i+1])
		}
	}
	return out
}

func allExist(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
			return false
		}
	}
	return true
}

// intoDir is args with the path of every flag that names a file or directory the command
// writes moved into dir.
func intoDir(args []string, dir string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		for _, flag := range []string{"--output-file", "--bundle"} {
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				out[i] = flag + "=" + filepath.Join(dir, filepath.Base(v))
			} else if a == flag && i+1 < len(out) {
				out[i+1] = filepath.Join(dir, filepath.Base(out[i+1]))
			}
		}
	}
	return out
}
