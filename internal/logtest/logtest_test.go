package logtest

import (
	"bufio"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestLinesIsExactlySizeBytesOfTheLines(t *testing.T) {
	for _, size := range []int64{0, 1, 5, 6, 7, 1000, 100003} {
		b, err := io.ReadAll(Lines(size, func(i int) string { return "l" + strconv.Itoa(i) }))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(b)) != size {
			t.Fatalf("size %d: read %d bytes", size, len(b))
		}
		var want strings.Builder
		for i := 0; int64(want.Len()) < size; i++ {
			want.WriteString("l" + strconv.Itoa(i) + "\n")
		}
		if string(b) != want.String()[:size] {
			t.Fatalf("size %d: %q", size, b)
		}
	}
}

// A reader that keeps what it reads shows it; one that throws it away does not.
func TestPeakLiveSeesWhatTheReaderKeeps(t *testing.T) {
	const size = 32 << 20
	line := func(int) string { return strings.Repeat("x", 99) }
	keeping := PeakLive(Lines(size, line), 1<<20, func(r io.Reader) {
		var kept []string
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			kept = append(kept, sc.Text())
		}
		runtime.KeepAlive(kept)
	})
	if keeping < size {
		t.Errorf("a reader that keeps %d bytes of lines: %d bytes live at its peak", size, keeping)
	}
	dropping := PeakLive(Lines(size, line), 1<<20, func(r io.Reader) {
		sc := bufio.NewScanner(r)
		n := 0
		for sc.Scan() {
			n += len(sc.Text())
		}
	})
	if dropping > 1<<20 {
		t.Errorf("a reader that keeps nothing: %d bytes live at its peak", dropping)
	}
}
