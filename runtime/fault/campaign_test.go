package fault

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session"
)

// fakeCampaign runs a short campaign against the fake server in mode.
func fakeCampaign(t *testing.T, mode string, c Campaign) *Report {
	t.Helper()
	c.Command, c.Env = fakeCommand(t, mode)
	if c.Requests == 0 {
		c.Requests = 200
	}
	if c.ExitTimeout == 0 {
		c.ExitTimeout = 5 * time.Second
	}
	c.Timeout = 30 * time.Second
	rep, err := c.Run(context.Background())
	if err != nil {
		t.Fatalf("mode %s: %v", mode, err)
	}
	return rep
}

// TestCampaignOnCorrectFake: the fake server, when it breaks no rule,
// passes every ending with every fault on. The failing modes below are
// therefore failing for their one broken rule.
func TestCampaignOnCorrectFake(t *testing.T) {
	t.Parallel()
	rates := DefaultRates
	rates.Garbage = 0.05
	for _, end := range []Ending{EndEOF, EndSIGTERM, EndClosedStdout} {
		rep := fakeCampaign(t, "ok", Campaign{Seed: 3, Rates: rates, Ending: end, HugeSize: 64 << 10})
		if !rep.OK() {
			t.Errorf("ending %v: correct fake server failed:\n%s", end, rep)
			continue
		}
		if end != EndClosedStdout && rep.AnsweredOnce+rep.Cancelled-rep.CancelledAnswered != rep.Sent {
			t.Errorf("ending %v: counts do not add up:\n%s", end, rep)
		}
		for _, f := range []string{"panic", "hang", "slow", "cancel"} {
			if rep.Faults[f] == 0 {
				t.Errorf("ending %v: no %s fault injected in %d requests", end, f, rep.Sent)
			}
		}
	}
}

// TestCampaignDetects: each broken rule is reported, with the right count.
func TestCampaignDetects(t *testing.T) {
	t.Parallel()
	quiet := Rates{} // only checked echo calls: each failure below has one cause
	cases := []struct {
		mode  string
		rates Rates
		check func(*Report) string
	}{
		{"double", quiet, func(r *Report) string {
			if r.AnsweredTwice == 0 || !strings.Contains(strings.Join(r.Violations, "\n"), "answered 2 times") {
				return "double answers not reported"
			}
			return ""
		}},
		{"garbage", quiet, func(r *Report) string {
			if r.ViolationCount != 1 || !strings.Contains(r.Violations[0], "not a JSON-RPC message") {
				return "the stray line was not reported as the one violation"
			}
			return ""
		}},
		{"lose", quiet, func(r *Report) string {
			if want := 200 / 13; r.NeverAnswered != want || !r.Healthy {
				return fmt.Sprintf("never answered %d, want %d", r.NeverAnswered, want)
			}
			return ""
		}},
		{"wedge", quiet, func(r *Report) string {
			if r.Healthy || !strings.Contains(strings.Join(r.Problems(), "\n"), "health check") {
				return "a server that stopped answering passed the health check"
			}
			return ""
		}},
		{"wrong", quiet, func(r *Report) string {
			if r.ViolationCount != 1 || !strings.Contains(r.Violations[0], "want") {
				return "the wrong echo was not reported"
			}
			return ""
		}},
		{"unknown", quiet, func(r *Report) string {
			if r.ViolationCount != 1 || !strings.Contains(r.Violations[0], "unknown id 999999") {
				return "the response to an unknown id was not reported"
			}
			return ""
		}},
		{"nocancel", Rates{Cancel: 0.2}, func(r *Report) string {
			if !strings.Contains(strings.Join(r.Problems(), "\n"), "cancellation looks ignored") {
				return "ignored cancellations not reported"
			}
			return ""
		}},
		{"exit1", quiet, func(r *Report) string {
			if r.ExitCode != 1 || !r.Exited || r.ExitedEarly {
				return "exit status 1 not reported"
			}
			return ""
		}},
		{"noexit", quiet, func(r *Report) string {
			if r.Exited {
				return "a server that never exits was reported as exited"
			}
			return ""
		}},
		{"crash", quiet, func(r *Report) string {
			if !r.ExitedEarly || r.ExitCode != 2 {
				return "the crash was not reported as an early exit with status 2"
			}
			return ""
		}},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			c := Campaign{Seed: 5, Rates: tc.rates, ExitTimeout: 2 * time.Second}
			rep := fakeCampaign(t, tc.mode, c)
			if rep.OK() {
				t.Fatalf("mode %s passed:\n%s", tc.mode, rep)
			}
			if why := tc.check(rep); why != "" {
				t.Errorf("mode %s: %s:\n%s", tc.mode, why, rep)
			}
		})
	}
}

// TestCampaignPlanIsSeeded: the same seed sends the same faults.
func TestCampaignPlanIsSeeded(t *testing.T) {
	t.Parallel()
	faults := func(seed uint64) map[string]int {
		rep := fakeCampaign(t, "ok", Campaign{Seed: seed, Rates: DefaultRates, Requests: 300, HugeSize: 1 << 10})
		if !rep.OK() {
			t.Fatalf("seed %d:\n%s", seed, rep)
		}
		return rep.Faults
	}
	a, b, c := faults(11), faults(11), faults(12)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("seed 11 injected %v, then %v", a, b)
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("seeds 11 and 12 injected the same faults %v", a)
	}
}

func TestCampaignRejectsBadConfig(t *testing.T) {
	for _, c := range []Campaign{
		{},
		{Command: []string{"x"}, Server: handlers.NewServer(mcp.Implementation{}, "")},
		{Command: []string{"x"}, Rates: Rates{Panic: 0.7, Cancel: 0.7}},
		{Command: []string{"x"}, Rates: Rates{Pause: -1}},
	} {
		if _, err := c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "bad campaign") {
			t.Errorf("%+v: err %v, want ErrBadCampaign", c, err)
		}
	}
}

// testServer has the tools a campaign looks for, the panic tool being a
// handler wrapped by an Injector that fails every call one way or another.
func testServer(inj *Injector) *handlers.Server {
	srv := handlers.NewServer(mcp.Implementation{Name: "fault-test", Version: "1"}, "")
	echo := func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return mcp.TextResult(a.Text), nil
	}
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "echo"}}, echo)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "flaky"}}, inj.Wrap(echo))
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "sleep"}}, func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Ms int }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		t := time.NewTimer(time.Duration(a.Ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return mcp.TextResult("slept"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return srv
}

// TestCampaignInProcess runs every ending against an mcprt tree started
// in-process, legacy and 2026-07-28.
func TestCampaignInProcess(t *testing.T) {
	t.Parallel()
	for _, modern := range []bool{false, true} {
		for _, end := range []Ending{EndEOF, EndSIGTERM, EndClosedStdout} {
			inj := NewInjector(9, HandlerRates{Panic: 0.4, Hang: 0.2, Error: 0.4})
			rep, err := (&Campaign{
				Server: testServer(inj),
				ServerOptions: runtime.Options{
					Logger: slog.New(slog.DiscardHandler),
					// Long enough that a busy machine running -race does
					// not turn quick calls into timeouts; short enough that
					// hung calls are answered within the test.
					Options: session.Options{RequestTimeout: time.Second},
				},
				Seed:     uint64(end) + 1,
				Requests: 400,
				Rates:    Rates{Panic: 0.2, Hang: 0.05, Slow: 0.1, Cancel: 0.05, Garbage: 0.03, Pause: 0.01},
				Tools:    Tools{Panic: "flaky"},
				Ending:   end,
				Modern:   modern,
				HugeSize: 64 << 10,
				Timeout:  30 * time.Second,
			}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() {
				t.Errorf("modern %v, ending %v:\n%s", modern, end, rep)
			}
			if inj.count(faultPanic) == 0 || inj.count(faultHang) == 0 || inj.count(faultError) == 0 {
				t.Errorf("modern %v, ending %v: injector counts panic %d hang %d error %d: a fault was never exercised",
					modern, end, inj.count(faultPanic), inj.count(faultHang), inj.count(faultError))
			}
		}
	}
}

// TestCampaignRequireVersion: the fake server answers initialize with
// 2025-06-18 whatever it is offered; a required other revision fails the
// handshake, an offered one does not.
func TestCampaignRequireVersion(t *testing.T) {
	t.Parallel()
	c := Campaign{Requests: 20, ProtocolVersion: "2025-11-25", RequireVersion: true, Timeout: 30 * time.Second, ExitTimeout: 5 * time.Second}
	c.Command, c.Env = fakeCommand(t, "ok")
	_, err := c.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), `protocol version "2025-06-18"; 2025-11-25 was required`) {
		t.Errorf("required version: %v", err)
	}
	rep := fakeCampaign(t, "ok", Campaign{Requests: 20, ProtocolVersion: "2025-11-25"})
	if !rep.OK() {
		t.Errorf("offered version:\n%s", rep)
	}
}
