package main

import (
	"math"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"14MiB", 14 << 20, true}, {defaultMemoryLimit, 14 << 20, true}, {"1048576", 1 << 20, true},
		{"512KiB", 512 << 10, true}, {"2GiB", 2 << 30, true}, {"1TiB", 1 << 40, true}, {"100B", 100, true},
		{"off", math.MaxInt64, true}, {"0", math.MaxInt64, true}, {"0MiB", math.MaxInt64, true},
		{"", 0, false}, {"MiB", 0, false}, {"14MB", 0, false}, {"1.5GiB", 0, false}, {"-1", 0, false},
		{"14 MiB", 0, false}, {"9999999999TiB", 0, false},
	} {
		got, err := parseSize(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
