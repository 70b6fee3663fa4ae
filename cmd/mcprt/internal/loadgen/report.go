package loadgen

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// WriteTable writes res for people: one figure per row, with how it was
// taken.
func WriteTable(w io.Writer, res *Result) error {
	server := res.Server
	if server == "" {
		server = "server"
	}
	fmt.Fprintf(w, "%s, %s era (%s); timed call: %s\n", server, res.Era, res.Version, res.Call)
	fmt.Fprintf(w, "command: %s; %gs per phase, first fifth warm-up\n\n", strings.Join(res.Command, " "), res.PhaseSec)
	var rows [][3]string
	row := func(label, value, how string) { rows = append(rows, [3]string{label, value, how}) }
	if c := res.ColdStart; c != nil {
		row("cold start → handshake reply, p50", f2(c.P50Ms)+" ms", fmt.Sprintf("%d runs, min %s, max %s ms", c.Runs, f2(c.MinMs), f2(c.MaxMs)))
	}
	if res.IdleRSSKiB > 0 {
		how := "VmRSS after handshake"
		if f := res.IdleFileKiB; f > 0 && f <= res.IdleRSSKiB {
			how += fmt.Sprintf(": %s of file pages (the binary), %s of its own", mib(f), mib(res.IdleRSSKiB-f))
		}
		row("idle RSS", mib(res.IdleRSSKiB), how)
	}
	if s := res.Sequential; s != nil {
		row("sequential round trip, p50", f1(s.P50Us)+" µs", fmt.Sprintf("%d calls, mean %s µs", s.Calls, f1(s.MeanUs)))
		row("sequential round trip, p90", f1(s.P90Us)+" µs", "")
		row("sequential round trip, p99", f1(s.P99Us)+" µs", fmt.Sprintf("max %s µs", f1(s.MaxUs)))
		row("server CPU per call, sequential", f1(s.CPUUsPerCall)+" µs", "utime+stime / calls")
	}
	for _, p := range res.Pipelined {
		row(fmt.Sprintf("pipelined K=%d", p.K), strconv.FormatFloat(p.ReqPerSec, 'f', 0, 64)+" req/s", fmt.Sprintf("%d calls", p.Calls))
	}
	for _, p := range res.Pipelined {
		row(fmt.Sprintf("server CPU per call, K=%d", p.K), f1(p.CPUUsPerCall)+" µs", "utime+stime / calls")
	}
	for _, p := range res.Payload {
		row("echo "+SizeName(p.Bytes), f1(p.MiBPerSec)+" MiB/s", fmt.Sprintf("size / median RTT (%s ms), %d calls", f2(p.RTTP50Ms), p.Calls))
	}
	if res.PeakRSSKiB > 0 {
		row("peak RSS", mib(res.PeakRSSKiB), "VmHWM at the end")
	}
	if res.ExitAfterEOF != "" {
		row("after stdin EOF", res.ExitAfterEOF, "")
	}
	// Labels left, values right-aligned on their unit.
	lw, vw := 0, 0
	for _, r := range rows {
		lw = max(lw, utf8.RuneCountInString(r[0]))
		vw = max(vw, utf8.RuneCountInString(r[1]))
	}
	for _, r := range rows {
		line := pad(r[0], lw, false) + "  " + pad(r[1], vw, true)
		if r[2] != "" {
			line += "   " + r[2]
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(w, "\nnote: %s\n", n)
	}
	if res.Failure != "" {
		fmt.Fprintf(w, "\nFAILED: %s\n", res.Failure)
	}
	return nil
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
func mib(kib int64) string {
	return strconv.FormatFloat(float64(kib)/1024, 'f', 1, 64) + " MiB"
}

func pad(s string, w int, right bool) string {
	fill := strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
	if right {
		return fill + s
	}
	return s + fill
}
