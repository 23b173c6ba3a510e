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
		{"answer_p95 = \"< 5\"\nnosuch = \"< 1\"\n", `t.toml:14:1: thresholds.nosuch: no metric "nosuch"`},
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
