package charts

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/mysqlbench/mysqlbench-operator/api/v1alpha1"
	"github.com/mysqlbench/mysqlbench-operator/internal/cells"
	"github.com/mysqlbench/mysqlbench-operator/internal/results"
)

func TestEncode(t *testing.T) {
	p, err := Draw([]*results.Doc{golden(t, "two_targets")}, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		format       string
		size         Size
		wantW, wantH int // pixels; 0 = not checked
		err          string
	}{
		{"png", Size{}, 1575, 945, ""}, // DefaultDPI
		{"PNG", Size{Width: 10 * vg.Centimeter, Height: 6 * vg.Centimeter}, 787, 472, ""},
		{"png", Size{Height: 6 * vg.Centimeter}, 787, 472, ""},
		{"png", Size{Width: 4 * vg.Inch, Height: 3 * vg.Inch}, 800, 600, ""},
		{"png", Size{Width: 4 * vg.Inch, Height: 3 * vg.Inch, DPI: 300}, 1200, 900, ""},
		{"png", Size{Width: 8 * vg.Inch, Height: 4 * vg.Inch, DPI: 150}, 1200, 600, ""},
		{"png", Size{DPI: 72}, 567, 340, ""},
		{"svg", Size{DPI: 300}, 0, 0, ""},
		{"jpg", Size{}, 0, 0, `unsupported chart format "jpg": use png or svg`},
		{"png", Size{Width: -1}, 0, 0, "must not be negative"},
		{"png", Size{Width: 300 * vg.Centimeter}, 0, 0, "a png is at most"},
		{"png", Size{Width: 20 * vg.Inch, DPI: 600}, 0, 0, "a png is at most"},
		{"png", Size{DPI: -3}, 0, 0, "-3 dpi: give a resolution from 1 to 1200"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %vx%v %d dpi", tc.format, tc.size.Width, tc.size.Height, tc.size.DPI), func(t *testing.T) {
			var buf bytes.Buffer
			err := Encode(p, tc.format, tc.size, &buf)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantW == 0 {
				return
			}
			img, err := png.Decode(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != tc.wantW || b.Dy() != tc.wantH {
				t.Errorf("size %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.wantW, tc.wantH)
			}
		})
	}
	if err := Encode(p, "png", Size{}, failingWriter{}); err == nil {
		t.Error("a failed write is not an error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// checkEncoded encodes p as PNG and SVG and checks what a reader would see: a PNG of the
// requested size, not blank, in which every line's colour shows in minInk pixels or more, and a
// well-formed SVG with a path per line at least and no embedded fonts. It returns the SVG's texts.
func checkEncoded(t *testing.T, p *Chart, lines, minInk int) []string {
	t.Helper()
	w, h := 16*vg.Centimeter, 10*vg.Centimeter
	var pngBuf bytes.Buffer
	if err := Encode(p, "png", Size{Width: w, Height: h}, &pngBuf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(pngBuf.Bytes()))
	if err != nil {
		t.Fatalf("decode png: %v", err)
	}
	wantW, wantH := int(float64(w/vg.Inch)*DefaultDPI+0.5), int(float64(h/vg.Inch)*DefaultDPI+0.5)
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
		t.Errorf("png %dx%d, want %dx%d", b.Dx(), b.Dy(), wantW, wantH)
	}
	bg, inks := pixelCounts(img, lines)
	if total := wantW * wantH; bg > total*99/100 {
		t.Errorf("png nearly blank: %d of %d pixels are background", bg, total)
	}
	for i, n := range inks {
		if n < minInk {
			t.Errorf("png: line %d's colour %v shows in %d pixels, want %d or more", i, lineColor(i), n, minInk)
		}
	}

	var svgBuf bytes.Buffer
	if err := Encode(p, "svg", Size{Width: w, Height: h}, &svgBuf); err != nil {
		t.Fatal(err)
	}
	texts, paths, err := parseSVG(svgBuf.Bytes())
	if err != nil {
		t.Fatalf("svg is not well formed: %v", err)
	}
	if paths < lines+2 {
		t.Errorf("svg has %d paths for %d lines", paths, lines)
	}
	if bytes.Contains(svgBuf.Bytes(), []byte("@font-face")) {
		t.Error("svg embeds fonts")
	}

	if *outDir != "" {
		name := strings.NewReplacer("/", "_", " ", "_", ",", "", ":", "").Replace(t.Name())
		for ext, data := range map[string][]byte{"png": pngBuf.Bytes(), "svg": svgBuf.Bytes()} {
			if err := os.WriteFile(filepath.Join(*outDir, name+"."+ext), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return texts
}

// checkCaption checks that the SVG's texts say each phrase (the caption may wrap between words).
func checkCaption(t *testing.T, texts, phrases []string) {
	t.Helper()
	all := strings.Join(texts, " ")
	for _, ph := range phrases {
		if !strings.Contains(all, ph) {
			t.Errorf("chart does not say %q (texts %q)", ph, texts)
		}
	}
}

// pixelCounts counts white pixels and, for each of the first lines colours, pixels close to it.
func pixelCounts(img image.Image, lines int) (background int, inks []int) {
	inks = make([]int, min(lines, len(palette)))
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c == (color.RGBA{0xff, 0xff, 0xff, 0xff}) {
				background++
				continue
			}
			for i := range inks {
				if near(c, lineColor(i)) {
					inks[i]++
				}
			}
		}
	}
	return background, inks
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(a.R, b.R) <= 24 && d(a.G, b.G) <= 24 && d(a.B, b.B) <= 24
}

// parseSVG reads the whole document with encoding/xml and returns its texts and the number of
// path elements.
func parseSVG(data []byte) (texts []string, paths int, err error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	var inText, root bool
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if !root {
				if tk.Name.Local != "svg" {
					return nil, 0, fmt.Errorf("root element %q", tk.Name.Local)
				}
				root = true
			}
			switch tk.Name.Local {
			case "path":
				paths++
			case "text":
				inText = true
			}
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(tk))
			}
		}
	}
	if !root {
		return nil, 0, errors.New("no svg element")
	}
	return texts, paths, nil
}

// TestQPSByThreadsSVG checks the size of the chart the operator stores in the results ConfigMap
// (1 MiB for everything) for the largest realistic run.
func TestQPSByThreadsSVG(t *testing.T) {
	cases := []struct {
		name     string
		doc      *results.Doc
		maxBytes int
	}{
		{"two targets", golden(t, "two_targets"), 15_000},
		{"8 targets x 12 thread counts x 10 repetitions", synth{name: "nightly", targets: bigTargets, threads: bigLadder,
			reps: 10, qps: scaling}.doc(), 60_000},
		{"12 targets x 12 thread counts x 3 repetitions", synth{name: "nightly", targets: append(slices.Clone(bigTargets),
			"tidb", "pg-mysql", "vitess", "aurora"), threads: bigLadder, reps: 3, qps: scaling}.doc(), 80_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svg, err := QPSByThreadsSVG(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d bytes", len(svg))
			if len(svg) > tc.maxBytes {
				t.Errorf("%d bytes, want at most %d", len(svg), tc.maxBytes)
			}
			if _, _, err := parseSVG(svg); err != nil {
				t.Errorf("svg is not well formed: %v", err)
			}
			if !bytes.Contains(svg, []byte("QPS by threads")) {
				t.Error("svg lacks its title")
			}
		})
	}
	if _, err := QPSByThreadsSVG(&results.Doc{Run: results.Run{Name: "new", Namespace: "bench", Phase: "Running"}}); err == nil ||
		!strings.Contains(err.Error(), "no measured steps yet") {
		t.Errorf("run without steps: error %v", err)
	}
}

func BenchmarkQPSByThreadsSVG(b *testing.B) {
	doc := synth{name: "nightly", targets: bigTargets, threads: bigLadder, reps: 10, qps: scaling}.doc()
	b.ReportAllocs()
	var n int
	for b.Loop() {
		svg, err := QPSByThreadsSVG(doc)
		if err != nil {
			b.Fatal(err)
		}
		n = len(svg)
	}
	b.ReportMetric(float64(n), "bytes")
}

// tpccDoc is s's document as go-tpc would have measured it: the throughput as tpmC, no QPS.
func tpccDoc(s synth) *results.Doc {
	d := s.doc()
	d.Workload = results.Workload{Client: string(v1alpha1.ClientGoTPC), TPCC: &results.TPCCWorkload{Warehouses: 10}}
	for ti := range d.Targets {
		tg := &d.Targets[ti]
		var steps []v1alpha1.StepResult
		for si := range tg.Steps {
			st := &tg.Steps[si]
			st.TPCC = &v1alpha1.TPCCResult{TpmC: st.QPS.Total / 10}
			st.QPS = v1alpha1.QPS{}
			steps = append(steps, st.StepResult)
		}
		if len(tg.Cells) > 0 {
			tg.Cells = nil
			for _, c := range cells.Status(steps) {
				tg.Cells = append(tg.Cells, results.Cell{CellStats: c})
			}
		}
	}
	return d
}

// go-tpc runs are drawn as tpmC by threads, from their steps or their cells' medians; they never
// share a chart with runs that counted queries.
func TestDrawTPCC(t *testing.T) {
	for _, reps := range []int{1, 3} {
		s := synth{name: "tpcc", targets: []string{"mysql97", "mariadb118"}, threads: []int32{1, 4, 16}, reps: reps, qps: scaling}
		p, err := Draw([]*results.Doc{tpccDoc(s)}, Spec{})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Title.Text, "tpmC by threads") || p.Y.Label.Text != "new-order transactions per minute" {
			t.Errorf("%d repetitions: title %q, y axis %q", reps, p.Title.Text, p.Y.Label.Text)
		}
		// The axis reaches the largest tpmC (target 0 at 16 threads), not 0 nor the QPS.
		if want := scaling(0, 16, 1) / 10; p.Y.Max < want*0.98 || p.Y.Max > want*2 {
			t.Errorf("%d repetitions: y axis up to %.0f, want about %.0f", reps, p.Y.Max, want)
		}
	}
	s := synth{name: "sb", targets: []string{"mysql97"}, threads: []int32{1, 4}, reps: 1, qps: scaling}
	tp := s
	tp.name = "tpcc"
	if _, err := Draw([]*results.Doc{s.doc(), tpccDoc(tp)}, Spec{}); err == nil || !strings.Contains(err.Error(), "separate charts") {
		t.Errorf("go-tpc and sysbench on one chart: %v", err)
	}
}

// A go-tpc run's timeline draws each step's tpmC over its duration (go-tpc stores no per-second
// series), not a QPS of zero, and never shares a chart with runs that counted queries.
func TestDrawTimelineTPCC(t *testing.T) {
	s := synth{name: "tpcc", targets: []string{"mysql97", "mariadb118"}, threads: []int32{1, 4, 16}, reps: 2, seconds: 60, qps: scaling}
	d := tpccDoc(s)
	var maxTpmC float64
	for ti := range d.Targets {
		for si := range d.Targets[ti].Steps {
			st := &d.Targets[ti].Steps[si]
			st.Series = nil
			maxTpmC = math.Max(maxTpmC, st.TPCC.TpmC)
		}
	}
	if maxTpmC < 20000 {
		t.Fatalf("largest tpmC %.0f: the test wants a plausible TPC-C ladder", maxTpmC)
	}
	p, err := Draw([]*results.Doc{d}, Spec{Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Title.Text, "tpmC over time") || p.Y.Label.Text != "new-order transactions per minute" {
		t.Errorf("title %q, y axis %q; want tpmC over time, new-order transactions per minute", p.Title.Text, p.Y.Label.Text)
	}
	if p.Y.Min != 0 || math.Abs(p.Y.Max-maxTpmC*timelineHeadroom) > 1e-6 {
		t.Errorf("y axis %v..%v, want 0..%v (the largest step's tpmC)", p.Y.Min, p.Y.Max, maxTpmC)
	}
	texts := checkEncoded(t, p, 2, 4)
	checkCaption(t, texts, []string{"go-tpc records no per-second series", "12 steps"})

	traces, _, err := timeline(&d.Targets[0], QPS, d.Ladder.StepDurationSeconds)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range traces {
		want := d.Targets[0].Steps[i].TPCC.TpmC
		if !tr.flat || len(tr.xys) != 2 || tr.xys[0].Y != want || tr.xys[1].Y != want {
			t.Errorf("step %d: trace %+v, want flat at its tpmC %v", i, tr, want)
		}
	}

	sb := synth{name: "sb", targets: []string{"mysql97"}, threads: []int32{1, 4}, reps: 1, qps: scaling}
	if _, err := Draw([]*results.Doc{sb.doc(), d}, Spec{Timeline: true}); err == nil || !strings.Contains(err.Error(), "separate charts") {
		t.Errorf("go-tpc and sysbench on one timeline: %v, want refused", err)
	}
}
