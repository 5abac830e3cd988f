package gotpc

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mysqlbench/mysqlbench-operator/internal/sysbench"
)

// LauncherPath is where the go-tpc image has the launcher (cmd/gotpc-launcher), its entrypoint.
const LauncherPath = "/gotpc-launcher"

// GoTPCPath is where the go-tpc image has go-tpc itself.
const GoTPCPath = "/go-tpc"

// maxOutput bounds what the launcher keeps of go-tpc's output to classify and parse it: go-tpc
// prints a block of [Current] lines every interval (about 1.2 KB every 10 s), so a step of hours
// keeps its head (the connection, the first errors) and its tail (the summary and the end).
const maxOutput = 1 << 20

// LauncherArgs are the launcher's arguments for step s: the step's shape only, never the
// connection or the password, which the launcher reads from its environment and the mounted
// password file.
func LauncherArgs(s Step) ([]string, error) {
	if err := s.launcherValidate(); err != nil {
		return nil, err
	}
	args := []string{"--phase=" + string(s.Phase), "--warehouses=" + strconv.Itoa(int(s.Warehouses))}
	if s.Threads > 0 {
		args = append(args, "--threads="+strconv.Itoa(int(s.Threads)))
	}
	if s.Duration > 0 {
		args = append(args, "--duration="+s.Duration.String())
	}
	if s.Interval > 0 {
		args = append(args, "--interval="+s.Interval.String())
	}
	if s.IgnoreError && (s.Phase == PhaseRun || s.Phase == PhaseWarmup) {
		args = append(args, "--ignore-error")
	}
	if s.CleanupAfterCheck && s.Phase == PhaseCheck {
		args = append(args, "--cleanup-after-check")
	}
	return args, nil
}

// goTPCPhase is the go-tpc sub-command of a launcher phase: a warm-up is a run.
func (p Phase) goTPCPhase() Phase {
	if p == PhaseWarmup {
		return PhaseRun
	}
	return p
}

// launcherValidate checks s as the launcher runs it: go-tpc's own rules for its sub-command.
func (s Step) launcherValidate() error {
	switch s.Phase {
	case PhaseWarmup, PhaseCleanup:
		g := s
		g.Phase = s.Phase.goTPCPhase()
		if s.Phase == PhaseCleanup {
			g.Phase, g.Threads, g.Duration = PhaseCheck, 0, 0 // cleanup takes what check takes
		}
		return g.Validate()
	}
	return s.Validate()
}

// ParseLauncherArgs reads the launcher's arguments (LauncherArgs' form) back into a Step.
func ParseLauncherArgs(args []string) (Step, error) {
	fs := flag.NewFlagSet("gotpc-launcher", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var s Step
	var phase string
	var warehouses, threads int
	fs.StringVar(&phase, "phase", "", "prepare, warmup, run, check or cleanup")
	fs.IntVar(&warehouses, "warehouses", 0, "TPC-C warehouses")
	fs.IntVar(&threads, "threads", 0, "load threads (prepare) or clients (warmup, run)")
	fs.DurationVar(&s.Duration, "duration", 0, "how long a run measures, whole seconds")
	fs.DurationVar(&s.Interval, "interval", 0, "how often a run reports, whole seconds (0: go-tpc's 10s)")
	fs.BoolVar(&s.IgnoreError, "ignore-error", false, "keep clients going after a failed transaction")
	fs.BoolVar(&s.CleanupAfterCheck, "cleanup-after-check", false, "drop the TPC-C tables after the check")
	if err := fs.Parse(args); err != nil {
		return Step{}, fmt.Errorf("gotpc-launcher: %w", err)
	}
	if fs.NArg() > 0 {
		return Step{}, fmt.Errorf("gotpc-launcher: unexpected argument %q", fs.Arg(0))
	}
	if warehouses > MaxWarehouses || threads > 1<<20 {
		return Step{}, fmt.Errorf("gotpc-launcher: warehouses %d or threads %d out of range", warehouses, threads)
	}
	s.Phase, s.Warehouses, s.Threads = Phase(phase), int32(warehouses), int32(threads)
	if err := s.launcherValidate(); err != nil {
		return Step{}, fmt.Errorf("gotpc-launcher: %w", err)
	}
	return s, nil
}

// Connection is where go-tpc connects, from the launcher's environment and password file.
type Connection struct {
	Host, Port, User, Database, Password string
}

// ReadConnection reads the connection from the environment (sysbench.EnvHost, EnvPort, EnvUser,
// EnvDatabase; the database defaults to sysbench.DefaultDatabase) and the password from file.
// Its errors never quote the password.
func ReadConnection(getenv func(string) string, passwordFile string) (Connection, error) {
	c := Connection{Host: getenv(sysbench.EnvHost), Port: getenv(sysbench.EnvPort), User: getenv(sysbench.EnvUser),
		Database: getenv(sysbench.EnvDatabase)}
	if c.Database == "" {
		c.Database = sysbench.DefaultDatabase
	}
	for name, v := range map[string]string{sysbench.EnvHost: c.Host, sysbench.EnvPort: c.Port, sysbench.EnvUser: c.User} {
		if v == "" {
			return Connection{}, fmt.Errorf("%s is empty: the connection Secret lacks its key", name)
		}
	}
	if _, err := strconv.ParseUint(c.Port, 10, 16); err != nil {
		return Connection{}, fmt.Errorf("%s %q is not a port number", sysbench.EnvPort, c.Port)
	}
	b, err := os.ReadFile(passwordFile)
	if err != nil {
		return Connection{}, fmt.Errorf("cannot read the password file %s: %w", passwordFile, errors.Unwrap(err))
	}
	switch {
	case len(b) == 0:
		return Connection{}, fmt.Errorf("the password file %s is empty: the connection Secret's password key is empty", passwordFile)
	case bytes.ContainsAny(b, "\n\r\x00"):
		return Connection{}, fmt.Errorf("the password in %s holds a line break or a NUL byte (a trailing newline too, "+
			"as `echo pw > file` leaves): write the Secret's password without one", passwordFile)
	}
	c.Password = string(b)
	return c, nil
}

// commandArgs are go-tpc's arguments for sub-command phase of s with the real connection: Args
// with every $(VAR) replaced, the password as --password (go-tpc v1.0.7 reads it nowhere else).
func commandArgs(s Step, phase Phase, c Connection) ([]string, error) {
	g := s
	g.Phase = phase
	if phase == PhaseCleanup {
		return []string{"tpcc", "cleanup", "--driver=mysql", "--host=" + c.Host, "--port=" + c.Port, "--user=" + c.User,
			"--password=" + c.Password, "--db=" + c.Database, "--warehouses=" + strconv.Itoa(int(s.Warehouses))}, nil
	}
	args, err := Args(g)
	if err != nil {
		return nil, err
	}
	repl := strings.NewReplacer(
		"$("+sysbench.EnvHost+")", c.Host, "$("+sysbench.EnvPort+")", c.Port, "$("+sysbench.EnvUser+")", c.User,
		"$("+sysbench.EnvDatabase+")", c.Database)
	for i, a := range args {
		if a == "--password=$("+EnvPassword+")" {
			args[i] = "--password=" + c.Password
			continue
		}
		args[i] = repl.Replace(a)
	}
	return args, nil
}

// Launch runs step s with go-tpc at program against connection c: go-tpc's output is copied to
// out as it comes, and the Record it returns says how the step ended (never an error: a launcher
// that cannot run go-tpc records why). A check with CleanupAfterCheck runs go-tpc's cleanup after
// a check that held. ctx ending (SIGTERM) stops go-tpc with SIGTERM.
func Launch(ctx context.Context, program string, s Step, c Connection, out io.Writer) (rec Record) {
	rec = Record{Phase: s.Phase, Warehouses: s.Warehouses, Threads: s.Threads}
	began := time.Now()
	defer func() { rec.Seconds = time.Since(began).Seconds() }()

	output, code := runGoTPC(ctx, program, s, s.Phase.goTPCPhase(), c, out)
	rec.ExitCode = code
	if f, failed := Classify(s.Phase.goTPCPhase(), output, code); failed {
		rec.Failure, rec.Tail = &f, tail(output)
		return rec
	}
	switch s.Phase {
	case PhaseRun, PhaseWarmup:
		res, err := Parse(output)
		if err != nil {
			rec.Failure, rec.Tail = &Failure{Reason: ReasonNothing, Message: err.Error(), Retryable: true}, tail(output)
			return rec
		}
		rec.Result = &res
	case PhaseCheck:
		res, err := ParseCheck(output)
		if err != nil {
			rec.Failure, rec.Tail = &Failure{Reason: ReasonFailed, Message: "go-tpc check: " + err.Error()}, tail(output)
			return rec
		}
		rec.Check = &res
		if res.Failure != "" {
			rec.Failure = &Failure{Reason: ReasonCheckFailed, Message: "a TPC-C consistency condition does not hold: " + res.Failure}
			rec.ExitCode = max(rec.ExitCode, 1)
			return rec
		}
		if s.CleanupAfterCheck {
			cleanOut, cleanCode := runGoTPC(ctx, program, s, PhaseCleanup, c, out)
			rec.ExitCode = cleanCode
			if f, failed := Classify(PhaseCleanup, cleanOut, cleanCode); failed {
				f.Message = "the check held, but dropping the TPC-C tables failed: " + f.Message
				rec.Failure, rec.Tail = &f, tail(cleanOut)
			}
		}
	}
	return rec
}

// ReasonCheckFailed: a TPC-C consistency condition did not hold after the ladder.
const ReasonCheckFailed = "ConsistencyCheckFailed"

// runGoTPC runs one go-tpc sub-command, copying its output to out, and returns what it kept of
// the output and its exit code (-1 when a signal ended it, 127 when it could not start).
func runGoTPC(ctx context.Context, program string, s Step, phase Phase, c Connection, out io.Writer) (string, int) {
	args, err := commandArgs(s, phase, c)
	if err != nil {
		return "gotpc-launcher: " + err.Error(), 2
	}
	cmd := exec.Command(program, args...)
	keep := &boundedBuffer{limit: maxOutput}
	w := io.MultiWriter(out, keep)
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/tmp"} // nothing of the launcher's environment
	if err := cmd.Start(); err != nil {
		return fmt.Sprintf("gotpc-launcher: cannot start %s: %v", program, err), 127
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
		case <-done:
		}
	}()
	err = cmd.Wait()
	close(done)
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode() // -1 when a signal ended it
	case err != nil:
		code = 1
	}
	return keep.String(), code
}

// tail is the end of go-tpc's output for the record, at most MaxTailBytes.
func tail(output string) string {
	output = strings.TrimSpace(output)
	if len(output) > MaxTailBytes {
		output = output[len(output)-MaxTailBytes:]
		if i := strings.IndexByte(output, '\n'); i >= 0 && i < len(output)-1 {
			output = output[i+1:]
		}
	}
	return output
}

// boundedBuffer keeps the first half of limit bytes written and the last half, dropping the
// middle, so a long run's output costs bounded memory and keeps what classifying and parsing
// read: the connection and the first errors at the head, the summary and the end at the tail.
type boundedBuffer struct {
	mu      sync.Mutex
	limit   int
	head    []byte
	tail    []byte
	dropped bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.limit/2 - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 {
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if over := len(b.tail) - b.limit/2; over > 0 {
		b.tail = append(b.tail[:0], b.tail[over:]...)
		b.dropped = true
	}
	return n, nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.dropped {
		return string(b.head) + string(b.tail)
	}
	// Cut the tail at its first whole line: a line cut in two would read as garbage.
	t := b.tail
	if i := bytes.IndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	}
	return string(b.head) + "\n" + string(t)
}
