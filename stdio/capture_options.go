package stdio

import (
	"errors"
	"time"
)

// Defaults for CaptureOptions' zero values.
const (
	defaultCaptureIdle     = 50 * time.Millisecond
	defaultCaptureChunk    = 16 << 10
	defaultCaptureQueue    = 1024
	defaultCaptureMaxStall = time.Second
	defaultCaptureStopWait = time.Second
)

// errCaptureHeld is returned by Capture.Stop when the pipe behind fd 1 was
// still open elsewhere (typically a child process that inherited fd 1 and
// outlived it) after StopWait: what was in the pipe then was delivered, and
// later writes by that holder fail with EPIPE.
var errCaptureHeld = errors.New("stdio: captured stdout still held open by another process")

// CaptureOptions tune CaptureStdout. The zero value is ready to use.
type CaptureOptions struct {
	// Idle is how long a line without its newline waits for more output
	// before it is delivered as it is (0: 50ms). A prompt
	// printed without a newline still shows up.
	Idle time.Duration
	// Chunk is the longest delivery: longer lines are cut into pieces of at
	// most Chunk bytes, on a UTF-8 boundary when there is one nearby
	// (0: 16 KiB; at least utf8.UTFMax).
	Chunk int
	// Queue is how many deliveries may wait for the callback
	// (0: 1024).
	Queue int
	// MaxStall is how long reading waits for a full queue before it drops
	// output instead (0: 1s; negative: never drop, let
	// writers of fd 1 block until the callback catches up). Dropping lasts
	// until the queue has room again; each run of drops is reported through
	// Dropped and counted in its stats.
	MaxStall time.Duration
	// StopWait bounds how long Stop waits for other holders of the pipe,
	// such as children that inherited fd 1, to close it
	// (0: 1s).
	StopWait time.Duration
	// Dropped, if set, is told how many lines and bytes were dropped, on the
	// delivering goroutine, in order: right before the first delivery after
	// the gap, or last of all.
	Dropped func(lines, bytes int64)
}

// captureStats count what a Capture has handled so far.
type captureStats struct {
	Lines, Bytes               int64 // deliveries and their bytes
	DroppedLines, DroppedBytes int64 // output dropped while the callback lagged
}
