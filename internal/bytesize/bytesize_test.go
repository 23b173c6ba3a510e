package bytesize

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]int64{"512MiB": 512 << 20, "4GiB": 4 << 30, "2GB": 2e9, "1000": 1000, "1.5KiB": 1536, " 3 MB ": 3e6, "7B": 7} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "-1GiB", "lots", "1e30GiB", "", "GiB"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
