package runtime

import (
	"math"
	"runtime/debug"
)

// DefaultMemoryLimit is the soft memory limit (see debug.SetMemoryLimit)
// Serve gives the Go runtime when Options.MemoryLimit is 0 and GOMEMLIMIT
// is not set: 14 MiB.
//
// The reference server's live memory is small, a few MiB even with 256
// requests in flight or a 1 MiB payload being echoed, but without a limit
// the heap grows to twice the live data at every burst (GOGC=100) and what
// a burst freed goes back to the system only slowly, so bursts of
// different shapes pile up: 20-22 MiB of peak RSS over the load harness'
// sequential, pipelined and payload phases, each of which alone stays
// under 16 MiB. Near the limit the collector and the scavenger keep the
// runtime's memory down instead. Measured over those phases (mcpload,
// servers interleaved in one run):
//
//	limit   peak RSS MiB   throughput vs no limit (K=16, K=256, 64 KiB, 1 MiB echo)
//	none    19.5-22.0      a second unlimited server: 0.75-1.13
//	16MiB   18.0-18.2      0.64-1.01
//	14MiB   15.7-16.0      0.92-1.11 in the runs with a control, one 1 MiB outlier at 0.59
//	12MiB   15.2           1 MiB echo 0.36: the collector runs all the time
//	10MiB   15.1           K=256 0.09
//
// 14MiB is the lowest that costs nothing beyond the noise. A server whose
// live memory exceeds the limit still works, with more CPU spent
// collecting (an echo of 48 MiB takes twice as long): raise the limit, or
// turn it off, for such loads.
const DefaultMemoryLimit int64 = 14 << 20

// gcPercentUnderLimit is the collector's pace (GOGC) while a memory limit
// Serve set holds the heap down, unless GOGC is set. Collecting each time
// the heap doubles a live set of a few MiB only spends CPU when the limit
// already bounds memory: GOGC=400 took 8% off the CPU per call at K=256,
// with the same peak RSS and 1 MiB echo (mcpload, GOGC=100 and 400 side by
// side in one run). This is the pairing the Go GC guide describes, a
// memory limit with a lazier GOGC.
const gcPercentUnderLimit = 400

// memorySettings are what memoryPolicy decides for the Go runtime.
type memorySettings struct {
	setLimit  bool
	limit     int64
	setGC     bool
	gcPercent int
}

// memoryPolicy decides the settings for Options.MemoryLimit: a negative
// limit changes nothing; 0 means DefaultMemoryLimit unless GOMEMLIMIT is
// set; a positive one is set whatever GOMEMLIMIT says. Under the limit the
// collector is paced by gcPercentUnderLimit, unless GOGC is set or there
// is no limit (math.MaxInt64).
func memoryPolicy(limit int64, getenv func(string) string) memorySettings {
	var m memorySettings
	switch {
	case limit < 0:
		return m
	case limit == 0:
		if getenv("GOMEMLIMIT") != "" {
			return m
		}
		limit = DefaultMemoryLimit
	}
	m.setLimit, m.limit = true, limit
	if limit != math.MaxInt64 && getenv("GOGC") == "" {
		m.setGC, m.gcPercent = true, gcPercentUnderLimit
	}
	return m
}

// apply sets m on the Go runtime and returns what puts the previous
// settings back.
func (m memorySettings) apply() (restore func()) {
	prevLimit, prevGC := int64(-1), 0
	if m.setLimit {
		prevLimit = debug.SetMemoryLimit(m.limit)
	}
	if m.setGC {
		prevGC = debug.SetGCPercent(m.gcPercent)
	}
	return func() {
		if m.setGC {
			debug.SetGCPercent(prevGC)
		}
		if m.setLimit {
			debug.SetMemoryLimit(prevLimit)
		}
	}
}
