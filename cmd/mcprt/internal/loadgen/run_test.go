package loadgen

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/loadgen/loadgentest"
)

// TestHelperServer is not a test: it is the fake server when the test
// binary runs itself as a child (see loadgentest).
func TestHelperServer(t *testing.T) {
	loadgentest.ServeIfChild()
	t.Skip("only runs as a child process")
}

// fake returns a Config that benchmarks the fake server with mode.
func fake(mode string) Config {
	return Config{
		Argv:       []string{os.Args[0], "-test.run=^TestHelperServer$"},
		Env:        append(os.Environ(), loadgentest.EnvVar+"="+mode),
		Duration:   50 * time.Millisecond,
		ColdStarts: 2,
		Ks:         []int{1, 300},
		Payloads:   []int{1 << 10, 256 << 10},
		Timeout:    5 * time.Second, // only turns a hang into a failure
	}
}

// Both eras, so that the pipelined phase runs both with the reader writing
// (small legacy requests) and with a writer goroutine (K=300 modern
// requests do not fit in a pipe).
func TestRunAgainstFakeServer(t *testing.T) {
	for _, era := range []string{EraLegacy, EraModern} {
		t.Run(era, func(t *testing.T) {
			t.Parallel()
			cfg := fake("ok")
			cfg.Era = era
			var mu sync.Mutex
			var phases []string
			cfg.Progress = func(msg string, live bool) {
				mu.Lock()
				defer mu.Unlock()
				if !live {
					phases = append(phases, msg)
				}
			}
			res, err := Run(cfg)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Server != "loadgentest 1" || !strings.Contains(res.Call, "echo") {
				t.Errorf("server %q, call %q", res.Server, res.Call)
			}
			if res.ColdStart == nil || res.ColdStart.Runs != 2 || res.ColdStart.P50Ms <= 0 {
				t.Errorf("cold start: %+v", res.ColdStart)
			}
			if s := res.Sequential; s == nil || s.Calls == 0 || s.P50Us <= 0 || s.P50Us > s.P99Us {
				t.Errorf("sequential: %+v", s)
			}
			if len(res.Pipelined) != 2 || res.Pipelined[1].K != 300 || res.Pipelined[1].ReqPerSec <= 0 {
				t.Errorf("pipelined: %+v", res.Pipelined)
			}
			if len(res.Payload) != 2 || res.Payload[1].MiBPerSec <= 0 || res.Payload[1].Calls < 3 {
				t.Errorf("payload: %+v", res.Payload)
			}
			if res.IdleRSSKiB <= 0 || res.PeakRSSKiB < res.IdleRSSKiB {
				t.Errorf("RSS idle %d, peak %d", res.IdleRSSKiB, res.PeakRSSKiB)
			}
			// A running executable has some of its pages mapped, and a Go
			// process has memory of its own besides.
			if res.IdleFileKiB <= 0 || res.IdleFileKiB >= res.IdleRSSKiB {
				t.Errorf("idle file pages %d KiB of %d KiB RSS", res.IdleFileKiB, res.IdleRSSKiB)
			}
			if res.ExitAfterEOF != "exit 0" {
				t.Errorf("exit after EOF: %q", res.ExitAfterEOF)
			}
			if len(phases) < 7 {
				t.Errorf("progress saw %d phases: %q", len(phases), phases)
			}
		})
	}
}

func TestRunFailures(t *testing.T) {
	for _, tc := range []struct {
		mode, want string
		era        string
		timeout    time.Duration
	}{
		{mode: "die-after=30", want: "exited (exit 3)"},
		{mode: "die-after=30", want: "exited (exit 3)", era: EraModern},
		{mode: "wrong-after=30", want: "wrong text"},
		{mode: "stall-after=30", want: "no progress for 200ms", timeout: 200 * time.Millisecond},
	} {
		t.Run(tc.mode+tc.era, func(t *testing.T) {
			t.Parallel()
			cfg := fake(tc.mode)
			cfg.Era = tc.era
			cfg.Skip = map[string]bool{PhaseCold: true}
			cfg.Duration = time.Minute // the failure must end the run, not the clock
			if tc.timeout > 0 {
				cfg.Timeout = tc.timeout
			}
			res, err := Run(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v, want an error about %q", err, tc.want)
			}
			if res.Failure != err.Error() {
				t.Errorf("Failure %q, want %q", res.Failure, err)
			}
			if res.IdleRSSKiB <= 0 {
				t.Errorf("figures measured before the failure were lost: %+v", res)
			}
		})
	}
}

// The pipelined phase must fail, not hang, when the server dies with many
// calls in flight and the writer goroutine busy.
func TestRunServerDiesWhilePipelined(t *testing.T) {
	cfg := fake("die-after=2000")
	cfg.Era = EraModern
	cfg.Ks = []int{1000}
	cfg.Duration = time.Minute
	cfg.Skip = map[string]bool{PhaseCold: true, PhaseSeq: true}
	_, err := Run(cfg)
	if err == nil || !strings.Contains(err.Error(), "pipelined K=1000") {
		t.Fatalf("Run: %v, want a failure of the pipelined phase", err)
	}
}

func TestRunMissingTool(t *testing.T) {
	cfg := fake("ok")
	cfg.Tool = "nope"
	cfg.Skip = map[string]bool{PhaseCold: true}
	if _, err := Run(cfg); err == nil || !strings.Contains(err.Error(), `no tool "nope"`) {
		t.Fatalf("Run: %v", err)
	}
}

func TestRunPing(t *testing.T) {
	cfg := fake("ok")
	cfg.Ping = true
	cfg.Skip = map[string]bool{PhaseCold: true, PhasePayload: true}
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Call != "ping" || res.Sequential == nil || len(res.Pipelined) != 2 {
		t.Errorf("call %q, sequential %+v, pipelined %+v", res.Call, res.Sequential, res.Pipelined)
	}
}

// The fake server answers initialize with 2025-06-18 whatever it is asked:
// the run goes on in that revision, unless the one asked was required.
func TestRunRequireVersion(t *testing.T) {
	cfg := fake("ok")
	cfg.Version = "2025-11-25"
	cfg.Skip = map[string]bool{PhaseCold: true, PhaseSeq: true, PhasePipe: true, PhasePayload: true}
	res, err := Run(cfg)
	if err != nil || res.Version != "2025-06-18" {
		t.Errorf("counter-offer accepted: version %q, err %v", res.Version, err)
	}
	cfg.RequireVersion = true
	_, err = Run(cfg)
	if err == nil || !strings.Contains(err.Error(), `answered protocol version "2025-06-18"; 2025-11-25 was required`) {
		t.Errorf("required version: %v", err)
	}
}
