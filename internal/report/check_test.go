package report

import (
	"strings"
	"testing"
)

func TestScanCanonicalAcceptsWhatEncodeSeriesWrites(t *testing.T) {
	iv := intervalsFixture(400, 8)
	for _, budget := range []int{1 << 20, 3000, 200, 80} {
		enc, err := EncodeSeries(iv, budget)
		if err != nil {
			t.Fatal(err)
		}
		if err := scanCanonical(enc); err != nil {
			t.Errorf("budget %d: %v on %.120s", budget, err, enc)
		}
	}
	empty, _ := EncodeSeries(nil, 100)
	if err := scanCanonical(empty); err != nil {
		t.Errorf("empty series: %v", err)
	}
}

func TestScanCanonicalRejects(t *testing.T) {
	cols := `,"tps":[1],"qps":[1],"read":[1],"write":[1],"other":[1],"latencyMs":[1],"errors":[1],"reconnects":[1]}`
	head := `{"bucketSeconds":1,"intervals":1,"threads":1,"t":[1]`
	if err := scanCanonical(head + cols); err != nil {
		t.Fatalf("the reference case is rejected: %v", err)
	}
	for name, in := range map[string]string{
		"whitespace":       `{"bucketSeconds": 1,"intervals":0,"threads":1}`,
		"unknown field":    `{"bucketSeconds":1,"intervals":0,"threads":1,"x":1}`,
		"duplicate field":  `{"bucketSeconds":1,"bucketSeconds":1,"intervals":0,"threads":1}`,
		"negative int":     `{"bucketSeconds":-1,"intervals":0,"threads":1}`,
		"leading zero":     `{"bucketSeconds":01,"intervals":0,"threads":1}`,
		"short column":     strings.Replace(head+cols, `"qps":[1]`, `"qps":[]`, 1),
		"long column":      strings.Replace(head+cols, `"qps":[1]`, `"qps":[1,2]`, 1),
		"missing column":   strings.Replace(head+cols, `,"qps":[1]`, ``, 1),
		"bad number":       strings.Replace(head+cols, `"qps":[1]`, `"qps":[1.]`, 1),
		"bare minus":       strings.Replace(head+cols, `"qps":[1]`, `"qps":[-]`, 1),
		"string in array":  strings.Replace(head+cols, `"qps":[1]`, `"qps":["1"]`, 1),
		"trailing bytes":   head + cols + `x`,
		"unterminated":     head,
		"dropped + points": strings.Replace(head+cols, `"threads":1`, `"threads":1,"pointsDropped":true`, 1),
	} {
		if scanCanonical(in) == nil {
			t.Errorf("%s: accepted %s", name, in)
		}
	}
}

func TestCheckSeriesFallsBackToDecoding(t *testing.T) {
	enc, _ := EncodeSeries(intervalsFixture(20, 4), 1<<20)
	spaced := strings.ReplaceAll(enc, ",", ", ")
	got, err := checkSeries(spaced)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != enc {
		t.Errorf("a valid series in another layout was not re-encoded canonically:\n%.120s\n%.120s", got, enc)
	}
	if _, err := checkSeries(`{"t":[1,2],"tps":[1]}`); err == nil {
		t.Error("an inconsistent series was accepted")
	}
}
