package gate

import "testing"

func TestParsePercent(t *testing.T) {
	tests := []struct {
		give string
		want float64
		ok   bool
	}{
		{"10%", 0.10, true},
		{"10", 0.10, true},
		{" 2.5 % ", 0.025, true},
		{"0", 0, false},
		{"-5%", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParsePercent(tt.give)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePercent(%q) = %g, %v; want %g, ok %v", tt.give, got, err, tt.want, tt.ok)
		}
	}
}
