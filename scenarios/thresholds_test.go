package scenarios

import (
	"strings"
	"testing"
)

func TestThresholdsTableErrorsNameLineAndKey(t *testing.T) {
	base := `name = "t"
duration = "10s"
[workload]
sessions = 1
calls = [ { tool = "x", count = 1 } ]
[services.s]
rps = 1
[tools.x]
service = "s"
[[strategy]]
name = "one"
[thresholds]
`
	for _, tc := range []struct{ body, want string }{
		{"answer_p95 = \"< 5s\"\nnosuch = \"< 1\"\n", `t.toml:14:1: thresholds.nosuch: no metric "nosuch"`},
		{"rate_limited_share = \"< 1s\"\n", "t.toml:13:1: thresholds.rate_limited_share: rate_limited_share is not a time"},
		{"answer_p95 = \"about 5s\"\n", "t.toml:13:1: thresholds.answer_p95: no comparison"},
		{"answer_p95 = 5\n", "t.toml:13:1: thresholds.answer_p95: wants a string"},
		{"[thresholds.two]\nanswer_p95 = \"< 5s\"\n", "thresholds.two: names no strategy of the scenario; the strategies are one"},
	} {
		_, err := Parse("t.toml", []byte(base+tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.body, err, tc.want)
		}
	}
}

func TestParseThreshold(t *testing.T) {
	th, err := ParseThreshold("bounded-64:answer_p95 <= 1.5s")
	if err != nil {
		t.Fatal(err)
	}
	if th.Strategy != "bounded-64" || th.Metric != "answer_p95" || th.Op != "<=" || th.Value != 1.5 {
		t.Errorf("%+v", th)
	}
	if !th.Holds(1.5) || th.Holds(1.6) {
		t.Error("<= 1.5 does not hold as it should")
	}
	for _, bad := range []string{"answer_p95", "answer_p95<", "x<1", "answered_share>=1m", "answer_p95=<1s",
		"answer_p95 >= nan", "answered_share > inf", "answered_share < -Inf", "answer_p95 < -5s", "answer_p95 < -5"} {
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// A bound is read in the unit the table shows, or refused: a bare number
// for a time (the table's ms, read as s) and a share above 1 (the table's
// percent) are refused with the way to write them.
func TestThresholdUnits(t *testing.T) {
	tests := []struct {
		give    string
		want    float64 // the bound in the metric's unit
		wantErr string
	}{
		{give: "answer_p95<5000", wantErr: "answer_p95 is a time, which the table shows in ms: a bare 5000 would be read as 5000 s; write the unit, such as 5000ms or 5000s"},
		{give: "turn_p95 <= 2.5", wantErr: "a bare 2.5 would be read as 2.5 s"},
		{give: "answer_p95<5000ms", want: 5},
		{give: "rate_limited_share<=1%", want: 0.01},
		{give: "rate_limited_share<=0.01", want: 0.01},
		{give: "answered_share>=95", wantErr: "answered_share is a fraction in [0, 1], which the table shows as a percent: write 95% or 0.95"},
		{give: "goodput_per_s>5%", wantErr: "goodput_per_s is not a share"},
		{give: "failed_turns<3", want: 3},
	}
	for _, tt := range tests {
		th, err := ParseThreshold(tt.give)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: %v, want an error saying %q", tt.give, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || th.Value != tt.want):
			t.Errorf("%s: %v, %v; want %g", tt.give, th.Value, err, tt.want)
		}
	}
}
