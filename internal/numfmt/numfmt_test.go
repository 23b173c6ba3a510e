package numfmt

import (
	"math"
	"testing"
)

func TestNum(t *testing.T) {
	tests := []struct {
		give float64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {10_000_000, "10,000,000"},
		{46.666666, "46.67"}, {0.7, "0.7"}, {-1234.5, "-1,234.5"}, {-0.001, "0"}, {166.6666, "166.67"},
	}
	for _, tt := range tests {
		if got := Num(tt.give); got != tt.want {
			t.Errorf("Num(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestFixedAndFriends(t *testing.T) {
	tests := []struct {
		give string
		got  string
		want string
	}{
		{"Fixed 2 decimals kept", Fixed(1234.5, 2, false), "1,234.50"},
		{"Fixed trims", Fixed(1234.5, 2, true), "1,234.5"},
		{"Fixed +Inf", Fixed(math.Inf(1), 0, false), "+Inf"},
		{"Counted one", Counted(1, "call/turn", "calls/turn"), "1 call/turn"},
		{"Counted many", Counted(1.5, "call/turn", "calls/turn"), "1.5 calls/turn"},
		{"Millis whole", Millis(1234.4), "1,234"},
		{"Millis decimal", Millis(12.34), "12.3"},
		{"AnswerMillis unanswered", AnswerMillis(math.Inf(1)), "—"},
		{"Rates both", Rates(9000, 9e6, false), "9,000 requests/min and 9,000,000 tokens/min"},
		{"Rates tokens", Rates(0, 5e5, false), "500,000 tokens/min"},
		{"Rates per second", Rates(300, 0, true), "5 requests/s"},
		{"Rates none", Rates(0, 0, true), ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.give, tt.got, tt.want)
		}
	}
}
