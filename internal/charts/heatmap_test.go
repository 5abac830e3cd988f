package charts

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// The heat map of a suite: a PNG of the asked size, and (in its SVG) a labelled row per
// workload and thread count, a column per target but the base, each cell's ratio and interval.
func TestHeatmap(t *testing.T) {
	doc := suiteDoc(t)
	p, err := Heatmap(doc, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(p, "png", Size{Width: 16 * vg.Centimeter, Height: 12 * vg.Centimeter, DPI: 100}, &buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	// 16 cm and 12 cm at 100 dpi.
	if b := img.Bounds(); math.Abs(float64(b.Dx())-630) > 1 || math.Abs(float64(b.Dy())-472) > 1 {
		t.Errorf("png %v, want 630 x 472 pixels", b)
	}
	p, _ = Heatmap(doc, "", "")
	var svg bytes.Buffer
	if err := Encode(p, "svg", Size{}, &svg); err != nil {
		t.Fatal(err)
	}
	s := svg.String()
	for _, want := range []string{"QPS relative to mysql57", ">ps80<", ">points @ 1<", ">rw @ 64<", ">0.90<", ">[0.87, 0.93]<"} {
		if !strings.Contains(s, want) {
			t.Errorf("the heat map's svg lacks %q", want)
		}
	}
	if n := strings.Count(s, ">0.90<"); n != 6 {
		t.Errorf("%d cells labelled 0.90, want 6 (2 workloads x 3 thread counts)", n)
	}
	if strings.Contains(s, ">mysql57<") {
		t.Errorf("the base target has a column of its own")
	}

	// Errors a user can act on.
	if _, err := Heatmap(doc, "mysql80", ""); err == nil || !strings.Contains(err.Error(), `base target "mysql80"`) {
		t.Errorf("an unknown base: %v", err)
	}
	one := *doc
	one.Targets = one.Targets[:1]
	if _, err := Heatmap(&one, "", ""); err == nil || !strings.Contains(err.Error(), "has one target") {
		t.Errorf("one target: %v", err)
	}
}

func TestHeatColor(t *testing.T) {
	span := math.Log(1.25)
	for _, tc := range []struct {
		ratio float64
		want  color.RGBA
	}{
		{1, color.RGBA{255, 255, 255, 255}},
		{0.8, heatLow},   // the span's end, below
		{0.5, heatLow},   // saturated
		{1.25, heatHigh}, // the span's end, above
		{1.5, heatHigh},
	} {
		if got := heatColor(tc.ratio, span); got != tc.want {
			t.Errorf("ratio %v: %v, want %v", tc.ratio, got, tc.want)
		}
	}
	// Between: lighter than the end, on its side.
	if c := heatColor(0.9, span); c.R <= c.B || c.B <= heatLow.B || c.B == 255 {
		t.Errorf("0.9: %v, want a light red", c)
	}
	if c := heatColor(1.1, span); c.B <= c.R {
		t.Errorf("1.1: %v, want a light blue", c)
	}
	if textOn(heatLow) != color.White || textOn(color.RGBA{240, 240, 240, 255}) != color.Black {
		t.Errorf("text colours")
	}
}
