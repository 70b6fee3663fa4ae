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

func TestMemoryPolicy(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		name     string
		flag     string
		explicit bool
		getenv   func(string) string
		want     memorySettings
	}{
		{"default", defaultMemoryLimit, false, env(), memorySettings{true, 14 << 20, true, gcPercentUnderLimit}},
		{"GOMEMLIMIT wins over the default", defaultMemoryLimit, false, env("GOMEMLIMIT", "1GiB"), memorySettings{}},
		{"the flag wins over GOMEMLIMIT", "32MiB", true, env("GOMEMLIMIT", "1GiB"), memorySettings{true, 32 << 20, true, gcPercentUnderLimit}},
		{"GOGC is left to the user", defaultMemoryLimit, false, env("GOGC", "100"), memorySettings{setLimit: true, limit: 14 << 20}},
		{"no limit, no change of pace", "off", true, env(), memorySettings{setLimit: true, limit: math.MaxInt64}},
	} {
		got, err := memoryPolicy(c.flag, c.explicit, c.getenv)
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	if _, err := memoryPolicy("14MB", true, env()); err == nil {
		t.Error("a bad size was accepted")
	}
}
