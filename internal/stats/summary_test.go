package stats

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSummarize(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		if s := Summarize(nil); s != (Summary{}) {
			t.Fatalf("Summarize(nil) = %+v, want zero", s)
		}
	})
	t.Run("one sample", func(t *testing.T) {
		s := Summarize([]float64{1234})
		want := Summary{N: 1, Median: 1234, CILow: 1234, CIHigh: 1234, Mean: 1234, Min: 1234, Max: 1234}
		if s != want {
			t.Fatalf("got %+v, want %+v", s, want)
		}
	})
	t.Run("five samples: no 95% interval", func(t *testing.T) {
		in := []float64{105, 100, 95, 110, 90}
		s := Summarize(in)
		if s.N != 5 || s.Median != 100 || s.Min != 90 || s.Max != 110 || s.Mean != 100 {
			t.Fatalf("got %+v", s)
		}
		if s.CIValid || s.CILow != 90 || s.CIHigh != 110 || !near(s.CIConfidence, 0.9375) {
			t.Fatalf("n=5 interval: got [%v, %v] valid=%v conf=%v, want full range, invalid, 0.9375", s.CILow, s.CIHigh, s.CIValid, s.CIConfidence)
		}
		// sample stddev of {-10,-5,0,5,10}: sqrt(250/4)
		if !near(s.StdDev, math.Sqrt(62.5)) || !near(s.CV, math.Sqrt(62.5)/100) {
			t.Fatalf("stddev %v cv %v", s.StdDev, s.CV)
		}
		if in[0] != 105 {
			t.Fatal("Summarize modified its input")
		}
	})
	t.Run("six samples: full range at 96.9%", func(t *testing.T) {
		s := Summarize([]float64{6, 1, 5, 2, 4, 3})
		if !s.CIValid || s.CILow != 1 || s.CIHigh != 6 || !near(s.CIConfidence, 1-2.0/64) || s.Median != 3.5 {
			t.Fatalf("got %+v", s)
		}
	})
	t.Run("ten samples: 2nd and 9th order statistics", func(t *testing.T) {
		s := Summarize([]float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1})
		if !s.CIValid || s.CILow != 2 || s.CIHigh != 9 || s.Median != 5.5 || s.CIConfidence < 0.95 {
			t.Fatalf("got %+v", s)
		}
	})
}

func TestNoisy(t *testing.T) {
	quiet := Summarize([]float64{1000, 1010, 990, 1005, 995}) // CV 0.8 %
	loud := Summarize([]float64{1000, 1100, 900, 1050, 950})  // CV 7.9 %
	single := Summarize([]float64{1000})
	if Noisy(quiet, DefaultMaxCV) || !Noisy(loud, DefaultMaxCV) || Noisy(single, 0) {
		t.Fatalf("Noisy: quiet cv=%.4f loud cv=%.4f single: got %v %v %v", quiet.CV, loud.CV,
			Noisy(quiet, DefaultMaxCV), Noisy(loud, DefaultMaxCV), Noisy(single, 0))
	}
}
