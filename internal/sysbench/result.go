package sysbench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mysqlbench/mysqlbench-operator/internal/client/load"
	"github.com/mysqlbench/mysqlbench-operator/internal/serverstats"
)

// FormatVersion is the version of the reporter's JSON lines this package reads.
const FormatVersion = 1

// Record types of the reporter's JSON lines.
const (
	recordInterval = "interval"
	recordFinal    = "final"
	recordServer   = "server"
	// recordServerBegin opens a server snapshot: every error line until its server line is the
	// snapshot's (sysbench runs nothing else then).
	recordServerBegin = "serverBegin"
)

// maxLine bounds one line of output; a FATAL line quoting a multi-kilobyte query must not abort
// parsing (longer lines are cut).
const maxLine = 1 << 20

// ParseOutput reads a sysbench container's output: a Pod log, its stdout, or a termination
// message that the kubelet filled from the log tail (FallbackToLogsOnError). JSON lines of the
// reporter become Intervals and Final; error lines are kept in Fatal; other text is ignored. A
// malformed reporter line is an error, since it means the contract is broken.
func ParseOutput(r io.Reader) (load.Output, error) {
	var p parser
	err := EachLine(r, "sysbench", p.addLine)
	if err == nil {
		p.endSnapshot(true)
	}
	p.series.finish(&p.out)
	return p.out, err
}

// EachLine calls add with every line of a client's output (without its newline, cut to maxLine
// bytes, numbered from 1) until add fails or the output ends; client names the output in a read
// error. mysqlslap's parser reads its container's output the same way.
func EachLine(r io.Reader, client string, add func(line string, lineNo int) error) error {
	br := bufio.NewReaderSize(r, 64*1024)
	lineNo := 0
	for {
		line, err := readLine(br)
		if len(line) > 0 || err == nil {
			lineNo++
			if perr := add(line, lineNo); perr != nil {
				return fmt.Errorf("line %d: %w", lineNo, perr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s output: %w", client, err)
		}
	}
}

// parser builds an Output line by line.
type parser struct {
	out    load.Output
	series series
	// inSnapshot is true between a serverBegin line and the next server line; held.Fatal are
	// the error lines seen meanwhile, within the same caps as out.Fatal.
	inSnapshot bool
	held       load.Output
}

// endSnapshot closes a snapshot's window. Its error lines are dropped when the snapshot printed
// its line, and kept as the step's when it did not (sysbench died during it).
func (p *parser) endSnapshot(keep bool) {
	if keep {
		for _, line := range p.held.Fatal {
			p.out.AddFatal(line)
		}
	}
	p.inSnapshot = false
	p.held.ClearFatal()
}

// readLine returns the next line without its newline, cut to maxLine bytes.
func readLine(br *bufio.Reader) (string, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf) < maxLine {
			buf = append(buf, chunk[:min(len(chunk), maxLine-len(buf))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return strings.TrimRight(string(buf), "\r\n"), err
	}
}

func (p *parser) addLine(line string, lineNo int) error {
	trimmed := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(trimmed, "{"):
		return p.addRecord([]byte(trimmed), lineNo)
	case strings.HasPrefix(trimmed, "FATAL:"),
		strings.HasPrefix(trimmed, "invalid option"),
		strings.HasPrefix(trimmed, "Unknown command:"),
		strings.Contains(trimmed, "does not implement the"):
		if p.inSnapshot {
			p.held.AddFatal(trimmed)
		} else {
			p.out.AddFatal(trimmed)
		}
	}
	return nil
}

// addRecord decodes one JSON line. Lines whose type this package does not know (another
// wrapper's output) are ignored like any other text: they are not the contract.
func (p *parser) addRecord(line []byte, lineNo int) error {
	o := &p.out
	var head struct {
		Type    string `json:"type"`
		Version int    `json:"version"`
		At      string `json:"at"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		// Not JSON after all (e.g. a Lua table printed by a custom script): human text.
		return nil
	}
	switch head.Type {
	case recordInterval:
		p.endSnapshot(true)
		var iv load.Interval
		if err := json.Unmarshal(line, &iv); err != nil {
			return fmt.Errorf("reporter interval: %w", err)
		}
		p.series.add(iv)
	case recordFinal:
		p.endSnapshot(true)
		f, err := decodeFinal(line)
		if err != nil {
			return err
		}
		o.Final = f
	case recordServerBegin:
		p.endSnapshot(true)
		p.inSnapshot = true
	case recordServer:
		p.endSnapshot(false)
		if head.At == serverstats.AtStart {
			// Nothing but the snapshot prints an error line before it.
			o.ClearFatal()
		}
		s, err := decodeServer(line)
		if err != nil {
			o.AddServerError(fmt.Sprintf("line %d: %v", lineNo, err))
			return nil
		}
		o.AddServer(s)
	}
	return nil
}

func decodeFinal(line []byte) (*load.Final, error) {
	var f load.Final
	if err := json.Unmarshal(line, &f); err != nil {
		return nil, fmt.Errorf("reporter final: %w", err)
	}
	if f.Version != FormatVersion {
		return nil, fmt.Errorf("reporter final: format version %d, this operator reads %d "+
			"(the reporter ConfigMap and the operator are out of step)", f.Version, FormatVersion)
	}
	if f.Command == "" {
		return nil, fmt.Errorf("reporter final: no command")
	}
	return &f, nil
}

// ParseTerminationMessage reads a step's final result from its container's termination message
// (the reporter writes its final line there). It is an error when the message holds no final
// report, e.g. when the kubelet filled it from the log tail of a failed container; read that
// with ParseOutput and Classify.
func ParseTerminationMessage(msg string) (*load.Final, error) {
	out, err := ParseOutput(strings.NewReader(msg))
	if err != nil {
		return nil, fmt.Errorf("termination message: %w", err)
	}
	if out.Final == nil {
		return nil, errors.New("termination message holds no final sysbench report")
	}
	return out.Final, nil
}

func decodeServer(line []byte) (serverstats.Snapshot, error) {
	var s serverstats.Snapshot
	if err := json.Unmarshal(line, &s); err != nil {
		return serverstats.Snapshot{}, fmt.Errorf("reporter server snapshot: %w", err)
	}
	if s.Version != FormatVersion {
		return serverstats.Snapshot{}, fmt.Errorf("reporter server snapshot: format version %d, this operator reads %d",
			s.Version, FormatVersion)
	}
	if s.At != serverstats.AtStart && s.At != serverstats.AtEnd {
		return serverstats.Snapshot{}, fmt.Errorf("reporter server snapshot: at %q, want %q or %q",
			s.At, serverstats.AtStart, serverstats.AtEnd)
	}
	return s, nil
}
