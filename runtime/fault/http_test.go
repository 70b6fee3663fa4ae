package fault

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session"
)

// The built mcprt, shared by the tests that run `mcprt serve -http`.
var mcprtBin struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if mcprtBin.dir != "" {
		os.RemoveAll(mcprtBin.dir)
	}
	os.Exit(code)
}

// buildMcprt builds cmd/mcprt once per test binary, with -race when the
// tests have it, so that the server under chaos is checked too.
func buildMcprt(t *testing.T) string {
	t.Helper()
	mcprtBin.once.Do(func() {
		mcprtBin.dir, mcprtBin.err = os.MkdirTemp("", "fault-mcprt-")
		if mcprtBin.err != nil {
			return
		}
		mcprtBin.path = filepath.Join(mcprtBin.dir, "mcprt")
		args := []string{"build", "-o", mcprtBin.path}
		if raceEnabled() {
			args = append(args, "-race")
		}
		gotool, err := exec.LookPath("go")
		if err != nil {
			gotool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
		}
		mcprtBin.out, mcprtBin.err = exec.Command(gotool, append(args, "github.com/mcprt/mcprt/cmd/mcprt")...).CombinedOutput()
	})
	if mcprtBin.err != nil {
		t.Fatalf("building mcprt: %v\n%s", mcprtBin.err, mcprtBin.out)
	}
	return mcprtBin.path
}

func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			return true
		}
	}
	return false
}

// httpRates inject every fault often enough that a few hundred requests
// see each of them.
var httpRates = Rates{Panic: 0.05, Hang: 0.02, Slow: 0.10, Cancel: 0.08, Garbage: 0.10, Pause: 0.02, Disconnect: 0.02, Delete: 0.02}

func eraName(modern bool) string {
	if modern {
		return "modern"
	}
	return "legacy"
}

// TestHTTPCampaignMcprt runs the campaign against `mcprt serve -http` in
// both eras, ending with SIGTERM, every fault on: a body past
// -http-max-body must get 413, a paused client's 8 MiB answer blocks the
// server's writes to it while other calls go on, and so on (see http.go).
func TestHTTPCampaignMcprt(t *testing.T) {
	t.Parallel()
	bin := buildMcprt(t)
	const maxBody = 12 << 20
	for _, modern := range []bool{false, true} {
		rep, err := (&Campaign{
			Command: []string{bin, "serve", "-http", "127.0.0.1:0", "-http-max-body", strconv.Itoa(maxBody),
				"-request-timeout", "2s", "-drain-timeout", "1s"},
			HTTP:     true,
			Modern:   modern,
			Seed:     7,
			Requests: 400,
			Rates:    httpRates,
			MaxBody:  maxBody,
			HugeSize: maxBody + 1<<20,
			// A bound on a hang, not a measure: with every package of
			// the suite running beside it on two cores, 400 calls under
			// -race took 75 s (20 s alone).
			Timeout:     3 * time.Minute,
			ExitTimeout: 20 * time.Second,
		}).Run(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", eraName(modern), err)
		}
		if !rep.OK() {
			t.Errorf("%s era:\n%s\nserver stderr:\n%s", eraName(modern), rep, rep.StderrTail)
			continue
		}
		t.Logf("%s era:\n%s", eraName(modern), rep)
		if rep.Transport != "http" || rep.Era != eraName(modern) || rep.Ending != EndSIGTERM || !rep.Exited || rep.ExitCode != 0 {
			t.Errorf("%s era: transport %q era %q ending %v exited %v status %d", eraName(modern), rep.Transport, rep.Era, rep.Ending, rep.Exited, rep.ExitCode)
		}
		if got := rep.AnsweredOnce + rep.Cancelled - rep.CancelledAnswered; got != rep.Sent {
			t.Errorf("%s era: %d answered once or cancelled, %d sent", eraName(modern), got, rep.Sent)
		}
		want := []string{"panic", "hang", "slow", "cancel", "pause", "disconnect", "huge", "media-type", "unknown-method"}
		statuses := []int{200, 400, 413, 415, 404}
		if modern {
			want = append(want, "header-mismatch", "notification")
			statuses = append(statuses, 202)
		} else {
			want = append(want, "delete", "unknown-session", "no-session")
			statuses = append(statuses, 202, 204)
		}
		for _, f := range want {
			if rep.Faults[f] == 0 {
				t.Errorf("%s era: no %s fault in %d requests", eraName(modern), f, rep.Sent)
			}
		}
		for _, s := range statuses {
			if rep.HTTPStatuses[s] == 0 {
				t.Errorf("%s era: no HTTP %d seen", eraName(modern), s)
			}
		}
	}
}

// TestHTTPCampaignInProcess serves testServer with runtime/streamhttp
// in-process, both eras, the Injector failing its calls.
func TestHTTPCampaignInProcess(t *testing.T) {
	t.Parallel()
	for _, modern := range []bool{false, true} {
		inj := NewInjector(9, HandlerRates{Panic: 0.4, Hang: 0.2, Error: 0.4})
		rep, err := (&Campaign{
			Server: testServer(inj),
			ServerOptions: runtime.Options{
				Logger:  slog.New(slog.DiscardHandler),
				Options: session.Options{RequestTimeout: time.Second, DrainTimeout: time.Second},
			},
			HTTP:        true,
			Modern:      modern,
			Seed:        3,
			Requests:    300,
			Rates:       Rates{Panic: 0.2, Hang: 0.05, Slow: 0.1, Cancel: 0.05, Garbage: 0.05, Pause: 0.01, Disconnect: 0.01, Delete: 0.01},
			Tools:       Tools{Panic: "flaky"},
			MaxBody:     128 << 10,
			HugeSize:    200 << 10,
			Clients:     6,
			Timeout:     60 * time.Second,
			ExitTimeout: 20 * time.Second,
		}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Errorf("%s era:\n%s", eraName(modern), rep)
		}
		t.Logf("%s era:\n%s", eraName(modern), rep)
		if rep.Clients != 6 || inj.count(faultPanic) == 0 || inj.count(faultHang) == 0 {
			t.Errorf("%s era: %d clients, injected %d panics and %d hangs:\n%s", eraName(modern), rep.Clients, inj.count(faultPanic), inj.count(faultHang), rep)
		}
	}
}

// TestHTTPCampaignURL drives a server at a URL, which the campaign does not
// end: legacy sessions are DELETEd, 2026-07-28 streams closed, and the
// server still serves afterwards.
func TestHTTPCampaignURL(t *testing.T) {
	t.Parallel()
	srv, u, err := startHTTPTree(testServer(NewInjector(1, HandlerRates{})), runtime.Options{
		Logger:  slog.New(slog.DiscardHandler),
		Options: session.Options{RequestTimeout: time.Second, DrainTimeout: time.Second},
	}, 128<<10)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.kill()
	for _, modern := range []bool{false, true, false} {
		rep, err := (&Campaign{
			URL:         u,
			Modern:      modern,
			Seed:        4,
			Requests:    200,
			Rates:       httpRates,
			MaxBody:     128 << 10,
			HugeSize:    200 << 10,
			Timeout:     60 * time.Second,
			ExitTimeout: 20 * time.Second,
		}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.Ending != EndNone || rep.Exited {
			t.Errorf("%s era:\n%s", eraName(modern), rep)
		}
	}
	rep, err := (&Campaign{URL: u, AutoEra: true, Requests: 50, Rates: DefaultRates, Timeout: 60 * time.Second}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Era != "modern" {
		t.Errorf("AutoEra against mcprt, which speaks 2026-07-28: era %q\n%s", rep.Era, rep)
	}
}

// TestHTTPCampaignOnCorrectFake: the fake HTTP server, when it breaks no
// rule, passes in both eras with every fault on, at a URL and as a process
// that prints its URL on stdout and is ended with SIGTERM.
func TestHTTPCampaignOnCorrectFake(t *testing.T) {
	t.Parallel()
	const maxBody = 128 << 10
	u, _ := startFakeHTTP(t, "ok", maxBody)
	for _, modern := range []bool{false, true} {
		c := Campaign{URL: u, Modern: modern, Seed: 2, Requests: 300, Rates: httpRates, MaxBody: maxBody, HugeSize: 200 << 10,
			Timeout: 60 * time.Second, ExitTimeout: 10 * time.Second}
		rep, err := c.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() {
			t.Errorf("%s era, at a URL:\n%s", eraName(modern), rep)
		}
		c.URL = ""
		c.Command, c.Env = fakeHTTPCommand(t, "ok", maxBody)
		c.HTTP = true
		if rep, err = c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || !rep.Exited || rep.ExitCode != 0 {
			t.Errorf("%s era, as a process:\n%s", eraName(modern), rep)
		}
	}
}

// TestHTTPCampaignDetects: each broken rule of the fake HTTP server is
// reported, with a violation that says what was wrong.
func TestHTTPCampaignDetects(t *testing.T) {
	t.Parallel()
	quiet := Rates{}
	cases := []struct {
		mode  string
		rates Rates
		want  string // in the violations or problems
		check func(*Report, *fakeHTTP) bool
	}{
		{"double", quiet, "answered 2 times", func(r *Report, _ *fakeHTTP) bool { return r.AnsweredTwice > 0 }},
		// Each request the fake dropped, and no other, is never answered
		// (how many depends on how many of the campaign's requests were
		// echo calls, and in which order two clients' calls arrived).
		{"drop", quiet, "never answered: HTTP 200, an SSE stream of 0 messages", func(r *Report, f *fakeHTTP) bool {
			return r.NeverAnswered > 0 && r.NeverAnswered == f.drops()
		}},
		{"status", Rates{Garbage: 0.2}, "want HTTP 400", nil},
		{"getresp", quiet, "a response on the GET stream", func(r *Report, _ *fakeHTTP) bool { return r.AnsweredTwice > 0 }},
		{"stall", Rates{Pause: 0.01}, "one client that does not read stalls the others", nil},
		{"nocancel", Rates{Cancel: 0.3}, "cancellation looks ignored", nil},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			u, fake := startFakeHTTP(t, tc.mode, 16<<20)
			rep, err := (&Campaign{URL: u, Seed: 5, Requests: 200, Rates: tc.rates, Clients: 2,
				PauseFor: 50 * time.Millisecond, Timeout: 60 * time.Second, ExitTimeout: 3 * time.Second}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(append(rep.Violations, rep.Problems()...), "\n")
			t.Logf("mode %s:\n%s", tc.mode, rep)
			if rep.OK() || !strings.Contains(all, tc.want) || (tc.check != nil && !tc.check(rep, fake)) {
				t.Errorf("mode %s: want a failure saying %q:\n%s", tc.mode, tc.want, rep)
			}
		})
	}
	t.Run("exit1", func(t *testing.T) {
		t.Parallel()
		c := Campaign{HTTP: true, Requests: 50, Timeout: 60 * time.Second, ExitTimeout: 10 * time.Second}
		c.Command, c.Env = fakeHTTPCommand(t, "exit1", 1<<20)
		rep, err := c.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() || rep.ExitCode != 1 || !strings.Contains(strings.Join(rep.Problems(), "\n"), "exit status 1") {
			t.Errorf("exit status 1 not reported:\n%s", rep)
		}
	})
}

func TestHTTPCampaignRejectsBadConfig(t *testing.T) {
	for _, c := range []Campaign{
		{URL: "ftp://127.0.0.1/mcp"},
		{URL: "http://127.0.0.1:1/mcp", Ending: EndSIGTERM},
		{Command: []string{"x"}, HTTP: true, Ending: EndClosedStdout},
		{Command: []string{"x"}, Ending: EndNone},
		{Command: []string{"x"}, AutoEra: true},
		{Command: []string{"x"}, URL: "http://127.0.0.1:1/mcp"},
		{URL: "http://127.0.0.1:1/mcp", MaxBody: -1},
	} {
		if _, err := c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "bad campaign") {
			t.Errorf("%+v: err %v, want ErrBadCampaign", c, err)
		}
	}
}

func TestEndpointIn(t *testing.T) {
	for line, want := range map[string]string{
		"mcprt: serving Streamable HTTP on http://127.0.0.1:41234/mcp": "http://127.0.0.1:41234/mcp",
		"listening at http://0.0.0.0:8080/mcp.":                        "http://127.0.0.1:8080/mcp",
		"(http://[::]:8080)":                                           "http://[::1]:8080",
		`{"msg":"up","url":"https://localhost:9/x"}`:                   "https://localhost:9/x",
		"no url here":                 "",
		"http:// is not a url either": "",
	} {
		if got := endpointIn([]byte(line)); got != want {
			t.Errorf("endpointIn(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestReadSSE: readSSE reads strictly (the cases are session/sse's
// TestStrict) and stops when its callback says so.
func TestReadSSE(t *testing.T) {
	var got []string
	err := readSSE(strings.NewReader("data: a\n\ndata: b\n\n"), func(d []byte) bool { got = append(got, string(d)); return false })
	if !errors.Is(err, errStopped) || strings.Join(got, "|") != "a" {
		t.Errorf("a callback that stops: events %q, err %v", got, err)
	}
	if err := readSSE(strings.NewReader("data: {}"), func([]byte) bool { return true }); err == nil {
		t.Error("a stream ending inside a line was read as whole")
	}
}
