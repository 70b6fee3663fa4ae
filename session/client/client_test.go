//go:build unix

package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// hangTimeout only turns a hang into a failure; nothing waits for it in a
// passing run.
const hangTimeout = 30 * time.Second

// mcprtPath is the real `mcprt` binary, built once by TestMain.
var (
	mcprtPath     string
	mcprtBuildErr error
)

func TestMain(m *testing.M) {
	if mode := os.Getenv("MCPRT_FAKE"); mode != "" {
		os.Exit(runFake(mode))
	}
	// hollywood logs through the default logger.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	dir, err := os.MkdirTemp("", "mcprt-client-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mcprtPath = filepath.Join(dir, "mcprt")
	if out, err := exec.Command("go", "build", "-o", mcprtPath, "github.com/mcprt/mcprt/cmd/mcprt").CombinedOutput(); err != nil {
		mcprtBuildErr = fmt.Errorf("go build ./cmd/mcprt: %v\n%s", err, out)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var quiet = slog.New(slog.DiscardHandler)

// opts are test defaults: short graces, so Close of a misbehaving server
// does not take the default 4 s.
func opts(o client.Options) *client.Options {
	if o.Logger == nil {
		o.Logger = quiet
	}
	if o.CloseGrace == 0 {
		o.CloseGrace = 2 * time.Second
	}
	if o.TermGrace == 0 {
		o.TermGrace = 2 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = hangTimeout
	}
	return &o
}

func connect(t *testing.T, cmd client.Command, o *client.Options) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	c, err := client.Connect(ctx, cmd, o)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	t.Cleanup(cancel)
	return ctx
}

func toolText(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		t.Fatalf("want one text content, got %+v", r.Content)
	}
	return r.Content[0].Text
}

func metaOf(t *testing.T, m fakeMsg) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(m.Params) > 0 {
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
	}
	return p.Meta
}

// TestLegacyHandshake: against a legacy server the client probes
// server/discover with the 2026-07-28 _meta, gets -32601, and falls back to
// initialize, then notifications/initialized, then plain requests.
func TestLegacyHandshake(t *testing.T) {
	t.Parallel()
	cmd, log := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{ClientInfo: mcp.Implementation{Name: "tester", Version: "9"}}))
	if c.Era() != client.EraLegacy || c.ProtocolVersion() != "2025-11-25" {
		t.Fatalf("era %v version %s", c.Era(), c.ProtocolVersion())
	}
	if c.ServerInfo().Name != "fake" || c.Instructions() != "legacy fake" {
		t.Errorf("server info %+v, instructions %q", c.ServerInfo(), c.Instructions())
	}
	if _, ok := c.Capabilities()["tools"]; !ok {
		t.Errorf("capabilities %v lack tools", c.Capabilities())
	}
	if err := c.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
	ms := sent(t, log)
	var methods []string
	for _, m := range ms {
		methods = append(methods, m.Method)
	}
	if want := []string{"server/discover", "initialize", "notifications/initialized", "ping"}; !slices.Equal(methods, want) {
		t.Fatalf("client sent %v, want %v", methods, want)
	}
	probe := metaOf(t, ms[0])
	for _, k := range []string{"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo"} {
		if probe[k] == nil {
			t.Errorf("probe _meta lacks %s: %s", k, ms[0].Params)
		}
	}
	var init struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ClientInfo      mcp.Implementation         `json:"clientInfo"`
	}
	if err := json.Unmarshal(ms[1].Params, &init); err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != "2025-11-25" || init.ClientInfo.Name != "tester" || init.Capabilities == nil || len(init.Capabilities) != 0 {
		t.Errorf("initialize params %s", ms[1].Params)
	}
	if ms[2].ID != nil {
		t.Errorf("initialized has an id: %s", ms[2].ID)
	}
	if metaOf(t, ms[3]) != nil {
		t.Errorf("legacy request carries _meta: %s", ms[3].Params)
	}
}

// TestQuietProbeFallsBack: a legacy server that does not answer
// server/discover at all is taken for legacy after ProbeTimeout.
func TestQuietProbeFallsBack(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "quiet-probe")
	c := connect(t, cmd, opts(client.Options{ProbeTimeout: 300 * time.Millisecond}))
	if c.Era() != client.EraLegacy {
		t.Fatalf("era %v", c.Era())
	}
	if _, err := c.CallTool(ctx(t), "echo", map[string]string{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
}

// TestCounterOffer: the server answers initialize with another version;
// the client accepts one it speaks, unless a version was pinned.
func TestCounterOffer(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "legacy", "MCPRT_FAKE_VERSION=2024-11-05")
	c := connect(t, cmd, opts(client.Options{}))
	if c.ProtocolVersion() != "2024-11-05" {
		t.Errorf("version %s", c.ProtocolVersion())
	}
	_, err := client.Connect(ctx(t), cmd, opts(client.Options{Version: "2025-06-18"}))
	if err == nil || !strings.Contains(err.Error(), `answered protocol version "2024-11-05"; 2025-06-18 was required`) {
		t.Errorf("pinned version: %v", err)
	}
	cmd, _ = fakeCmd(t, "legacy", "MCPRT_FAKE_VERSION=1999-01-01")
	_, err = client.Connect(ctx(t), cmd, opts(client.Options{}))
	if err == nil || !strings.Contains(err.Error(), "does not speak") {
		t.Errorf("unknown version: %v", err)
	}
}

// TestModernSession: against a 2026-07-28 server every request carries the
// three _meta keys, progress tokens go into _meta too, and there is no
// initialize.
func TestModernSession(t *testing.T) {
	t.Parallel()
	cmd, log := fakeCmd(t, "modern")
	c := connect(t, cmd, opts(client.Options{}))
	if c.Era() != client.EraModern || c.ProtocolVersion() != "2026-07-28" || c.ServerInfo().Name != "fake" || c.Instructions() != "modern fake" {
		t.Fatalf("era %v version %s info %+v", c.Era(), c.ProtocolVersion(), c.ServerInfo())
	}
	tools, err := c.ListTools(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) < 10 {
		t.Errorf("tools: %v", tools)
	}
	var steps []client.Progress
	r, err := c.CallTool(ctx(t), "progress", nil, client.WithProgress(func(p client.Progress) { steps = append(steps, p) }))
	if err != nil {
		t.Fatal(err)
	}
	if toolText(t, r) != "done" || len(steps) != 3 || steps[2] != (client.Progress{Progress: 3, Total: 3, Message: "step 3"}) {
		t.Errorf("result %+v, progress %+v", r, steps)
	}
	if err := c.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
	for _, m := range sent(t, log) {
		if m.Method == "initialize" || m.Method == "ping" {
			t.Errorf("modern client sent %s", m.Method)
		}
		if m.ID == nil {
			continue
		}
		meta := metaOf(t, m)
		if string(meta["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` || string(meta["io.modelcontextprotocol/clientCapabilities"]) != "{}" || meta["io.modelcontextprotocol/clientInfo"] == nil {
			t.Errorf("%s _meta: %s", m.Method, m.Params)
		}
		if strings.Contains(string(m.Params), `"name":"progress"`) && string(meta["progressToken"]) != string(m.ID) {
			t.Errorf("progress call: token %s, id %s", meta["progressToken"], m.ID)
		}
	}
}

// TestEraPinning: EraModern against a legacy server fails instead of
// falling back; EraLegacy skips the probe; a modern server that speaks
// none of our versions is an error, not a fallback.
func TestEraPinning(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "legacy")
	_, err := client.Connect(ctx(t), cmd, opts(client.Options{Era: client.EraModern}))
	var re *client.RPCError
	if !errors.As(err, &re) || re.Err.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("modern against legacy: %v", err)
	}
	cmd, log := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{Era: client.EraLegacy}))
	c.Close()
	if ms := sent(t, log); len(ms) == 0 || ms[0].Method != "initialize" {
		t.Errorf("EraLegacy sent %v first", ms)
	}
	cmd, _ = fakeCmd(t, "modern-other")
	_, err = client.Connect(ctx(t), cmd, opts(client.Options{}))
	if err == nil || !strings.Contains(err.Error(), "no protocol version in common (server: 2099-01-01") {
		t.Errorf("modern-other: %v", err)
	}
	if _, err := client.Connect(ctx(t), cmd, opts(client.Options{Era: client.EraLegacy, Version: "2026-07-28"})); err == nil {
		t.Error("era legacy with a modern version was accepted")
	}
	for v, want := range map[string]client.Era{"2026-07-28": client.EraModern, "2025-11-25": client.EraLegacy, "2024-11-05": client.EraLegacy} {
		if era, ok := client.VersionEra(v); !ok || era != want {
			t.Errorf("VersionEra(%s) = %v, %v", v, era, ok)
		}
	}
	if _, ok := client.VersionEra("2099-01-01"); ok {
		t.Error("VersionEra knows 2099-01-01")
	}
}

// TestExitDuringConnect: a server that dies before answering makes Connect
// fail with its exit status and last stderr lines.
func TestExitDuringConnect(t *testing.T) {
	t.Parallel()
	cmd := client.Command{Path: "sh", Args: []string{"-c", `echo "starting up" >&2; echo "fatal: MCP_TOKEN is not set" >&2; exit 1`}}
	_, err := client.Connect(ctx(t), cmd, opts(client.Options{}))
	var ee *client.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("want an *ExitError, got %v", err)
	}
	if !ee.Exited || ee.Code != 1 || !slices.Equal(ee.Stderr, []string{"starting up", "fatal: MCP_TOKEN is not set"}) {
		t.Errorf("exit error %+v", ee)
	}
	if !strings.Contains(err.Error(), "server exited with status 1: starting up; fatal: MCP_TOKEN is not set") {
		t.Errorf("message: %v", err)
	}
	// A server refusing its command line says why first, then prints its
	// usage: both ends are kept.
	script := `echo "flag provided but not defined: -bogus" >&2; echo "Usage of server:" >&2; i=0; while [ $i -lt 40 ]; do echo "  -flag$i  what it does" >&2; i=$((i+1)); done; exit 2`
	_, err = client.Connect(ctx(t), client.Command{Path: "sh", Args: []string{"-c", script}}, opts(client.Options{StderrLines: 3}))
	want := []string{"flag provided but not defined: -bogus", "Usage of server:", "  -flag0  what it does", "… 36 lines omitted …",
		"  -flag37  what it does", "  -flag38  what it does", "  -flag39  what it does"}
	if !errors.As(err, &ee) || ee.Code != 2 || !slices.Equal(ee.Stderr, want) {
		t.Errorf("usage error: %v", err)
	}
	_, err = client.Connect(ctx(t), client.Command{Path: "/no/such/server"}, opts(client.Options{}))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing binary: %v", err)
	}
	// Dir and Env reach the process.
	dir := t.TempDir()
	_, err = client.Connect(ctx(t), client.Command{Path: "sh", Args: []string{"-c", `pwd >&2; echo "$GREETING" >&2; exit 5`}, Dir: dir, Env: []string{"GREETING=hi"}}, opts(client.Options{}))
	if !errors.As(err, &ee) || !slices.Equal(ee.Stderr, []string{dir, "hi"}) {
		t.Errorf("dir and env: %v", err)
	}
}

// TestConnectContext: cancelling Connect's context stops the handshake at
// once and reaps the server; a deadline bounds the whole connect, the
// era probe included, whatever ProbeTimeout and Timeout say.
func TestConnectContext(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "silent")
	cctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := client.Connect(cctx, cmd, opts(client.Options{ProbeTimeout: time.Hour, Timeout: time.Hour}))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "server/discover") {
		t.Errorf("Connect, cancelled: %v", err)
	}

	start := time.Now()
	cause := errors.New("connect budget spent")
	cctx, cancel = context.WithTimeoutCause(context.Background(), 400*time.Millisecond, cause)
	defer cancel()
	_, err = client.Connect(cctx, cmd, opts(client.Options{ProbeTimeout: time.Hour, Timeout: time.Hour}))
	// The probe got half the time, then initialize ran into the deadline.
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), "initialize: connect budget spent") {
		t.Errorf("Connect with a deadline: %v", err)
	}
	// Generous: the deadline, then Close's graces (2 s each at most).
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("Connect with a 400ms deadline took %v", d)
	}
}

// TestProbeLeavesTimeForInitialize: a legacy server that ignores
// server/discover connects within a deadline shorter than ProbeTimeout,
// since the probe gets only half of the time left.
func TestProbeLeavesTimeForInitialize(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "quiet-probe")
	cctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := client.Connect(cctx, cmd, opts(client.Options{ProbeTimeout: time.Hour}))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	if c.Era() != client.EraLegacy {
		t.Errorf("era %v", c.Era())
	}
}

// TestStdoutHygiene: lines on the server's stdout that are not JSON-RPC
// are logged and skipped; a 2025-03-26 batch line is taken apart.
func TestStdoutHygiene(t *testing.T) {
	t.Parallel()
	h := &recordingHandler{}
	cmd, _ := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{Logger: slog.New(h), MaxLineBytes: 1 << 20}))
	// Over MaxLineBytes: skipped, and its request fails at once.
	_, err := c.CallTool(ctx(t), "huge", nil)
	if err == nil || !strings.Contains(err.Error(), "longer than MaxLineBytes (1048576)") {
		t.Errorf("huge: %v", err)
	}
	r, err := c.CallTool(ctx(t), "garbage", nil)
	if err != nil || toolText(t, r) != "after garbage" {
		t.Fatalf("garbage: %v %v", r, err)
	}
	if n := h.count("server wrote a line that is not a JSON-RPC message"); n != 2 {
		t.Errorf("%d warnings for 2 bad lines", n)
	}
	// Bytes that are not UTF-8, inside strings, reach the caller as
	// U+FFFD, as encoding/json reads them: JSON text is UTF-8, and what a
	// client passes on (a gateway relays results and logs as they came)
	// must be.
	var logs []string
	stop := c.Subscribe("notifications/message", func(n client.Notification) { logs = append(logs, string(n.Params)) })
	var raw json.RawMessage
	err = c.Call(ctx(t), "tools/call", map[string]any{"name": "latin1"}, &raw)
	stop()
	if err != nil || !utf8.Valid(raw) || !strings.Contains(string(raw), "na\uFFFDve \uFFFD") {
		t.Errorf("latin1: %q %v", raw, err)
	}
	if len(logs) != 1 || !utf8.Valid([]byte(logs[0])) || !strings.Contains(logs[0], "caf\uFFFD") {
		t.Errorf("latin1 log: %q", logs)
	}
	var batched []string
	c.Subscribe("notifications/message", func(n client.Notification) { batched = append(batched, string(n.Params)) })
	r, err = c.CallTool(ctx(t), "batch", nil)
	if err != nil || toolText(t, r) != "batched result" || len(batched) != 1 || !strings.Contains(batched[0], `"data":"batched"`) {
		t.Errorf("batch: %v %v, notifications %v", r, err, batched)
	}
}

// TestNeverAnswers: a server that reads but never writes fails Connect with
// a timeout (after the probe timed out and initialize did too); a request
// the server never answers times out, is cancelled with
// notifications/cancelled, and the session goes on.
func TestNeverAnswers(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "silent")
	_, err := client.Connect(ctx(t), cmd, opts(client.Options{ProbeTimeout: 200 * time.Millisecond, Timeout: 500 * time.Millisecond}))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "initialize timed out") {
		t.Errorf("silent server: %v", err)
	}
	if err != nil && !strings.Contains(err.Error(), "fake server starting in mode silent") {
		t.Errorf("connect error lacks the server's stderr: %v", err)
	}

	cmd, log := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{}))
	_, err = c.CallTool(ctx(t), "hang", nil, client.WithTimeout(300*time.Millisecond))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hang: %v", err)
	}
	var hangID json.RawMessage
	for _, m := range sent(t, log) {
		if m.Method == "tools/call" {
			hangID = m.ID
		}
	}
	eventually(t, "notifications/cancelled for the hung call", func() bool {
		for _, m := range sent(t, log) {
			if m.Method == "notifications/cancelled" && strings.Contains(string(m.Params), `"requestId":`+string(hangID)) {
				return true
			}
		}
		return false
	})
	// Cancelling through the context works the same way.
	cctx, cancel := context.WithCancel(ctx(t))
	done := make(chan error, 1)
	go func() { _, err := c.CallTool(cctx, "hang", nil); done <- err }()
	eventually(t, "the second hung call to be sent", func() bool {
		n := 0
		for _, m := range sent(t, log) {
			if m.Method == "tools/call" {
				n++
			}
		}
		return n == 2
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	r, err := c.CallTool(ctx(t), "echo", map[string]string{"text": "still here"})
	if err != nil || toolText(t, r) != "still here" {
		t.Fatalf("after the timeouts: %v %v", r, err)
	}
}

// TestIgnoresSIGTERM: Close escalates to SIGKILL after the graces, reports
// it, and reaps the process.
func TestIgnoresSIGTERM(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "ignore-term")
	c := connect(t, cmd, opts(client.Options{CloseGrace: 200 * time.Millisecond, TermGrace: 200 * time.Millisecond}))
	pid := c.PID()
	err := c.Close()
	var ee *client.ExitError
	if !errors.As(err, &ee) || !ee.Killed || ee.Signal != syscall.SIGKILL {
		t.Fatalf("Close: %v (%+v)", err, ee)
	}
	if !strings.Contains(err.Error(), "ignored stdin EOF and SIGTERM; killed") {
		t.Errorf("message: %v", err)
	}
	assertReaped(t, pid)
	if !errors.Is(c.Err(), client.ErrClosed) {
		t.Errorf("Err after Close: %v", c.Err())
	}
	if _, err := c.ListTools(ctx(t)); !errors.Is(err, client.ErrClosed) {
		t.Errorf("request after Close: %v", err)
	}
}

// TestCloseEscalation: a server that exits on stdin EOF, or on SIGTERM,
// closes cleanly (nil); either way it is reaped.
func TestCloseEscalation(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"legacy", "ignore-eof"} {
		cmd, _ := fakeCmd(t, mode)
		c := connect(t, cmd, opts(client.Options{CloseGrace: 200 * time.Millisecond}))
		pid := c.PID()
		if err := c.Close(); err != nil {
			t.Errorf("%s: Close: %v", mode, err)
		}
		assertReaped(t, pid)
	}
}

// TestCloseNeverHandshook: a server that never answered the handshake is
// sent SIGTERM as soon as the connect gives up, without the stdin-EOF
// grace: with CloseGrace and TermGrace of an hour, the failed Connect
// returns at all only if Close did not wait for either.
func TestCloseNeverHandshook(t *testing.T) {
	t.Parallel()
	cctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		c, err := client.Connect(cctx, client.Command{Path: "sleep", Args: []string{"100"}},
			opts(client.Options{CloseGrace: time.Hour, TermGrace: time.Hour}))
		if c != nil {
			c.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Connect: %v, want the deadline", err)
		}
	case <-time.After(hangTimeout):
		t.Fatal("Connect to a silent server waited for the close graces after its deadline")
	}
}

func assertReaped(t *testing.T, pid int) {
	t.Helper()
	// kill(pid, 0) succeeds on a zombie: ESRCH means reaped.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d still exists after Close (kill 0: %v)", pid, err)
	}
}

// recordingHandler counts log records by message.
type recordingHandler struct {
	mu   sync.Mutex
	msgs []string
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.msgs = append(h.msgs, r.Message)
	h.mu.Unlock()
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordingHandler) count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

// TestStderrFlood: 20,000 stderr lines are logged as LogLimit lines and one
// throttling line per window, while requests go on unaffected.
func TestStderrFlood(t *testing.T) {
	t.Parallel()
	h := &recordingHandler{}
	cmd, _ := fakeCmd(t, "flood", "MCPRT_FAKE_FLOOD=20000")
	c := connect(t, cmd, opts(client.Options{Logger: slog.New(h), LogLimit: 5, LogWindow: time.Hour}))
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		wg.Go(func() {
			r, err := c.CallTool(ctx(t), "echo", map[string]string{"text": fmt.Sprint(i)})
			if err == nil && (len(r.Content) != 1 || r.Content[0].Text != fmt.Sprint(i)) {
				err = fmt.Errorf("echo %d: %+v", i, r)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := h.count("server stderr"); n != 5 {
		t.Errorf("%d stderr lines logged, want 5", n)
	}
	if n := h.count("server stderr: throttling"); n != 1 {
		t.Errorf("%d throttling lines, want 1", n)
	}
}

// TestCrashMidRequest: when the server dies, every pending request fails
// at once with its exit status and stderr, not with a timeout.
func TestCrashMidRequest(t *testing.T) {
	t.Parallel()
	cmd, log := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{}))
	const hung = 5
	errs := make(chan error, hung)
	for range hung {
		go func() {
			_, err := c.CallTool(context.Background(), "hang", nil, client.WithTimeout(time.Hour))
			errs <- err
		}()
	}
	eventually(t, "the hung calls to reach the server", func() bool {
		n := 0
		for _, m := range sent(t, log) {
			if m.Method == "tools/call" {
				n++
			}
		}
		return n == hung
	})
	_, err := c.CallTool(ctx(t), "crash", nil)
	var ee *client.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || !slices.Contains(ee.Stderr, "fatal: crashing as asked") {
		t.Fatalf("crash call: %v", err)
	}
	for range hung {
		select {
		case err := <-errs:
			if !errors.As(err, &ee) || ee.Code != 3 {
				t.Errorf("pending call: %v", err)
			}
		case <-time.After(hangTimeout):
			t.Fatal("a pending call did not fail")
		}
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done not closed after the crash")
	}
	if _, err := c.ListTools(ctx(t)); !errors.As(err, &ee) {
		t.Errorf("request after the crash: %v", err)
	}
	if err := c.Close(); !errors.As(err, &ee) || ee.Code != 3 {
		t.Errorf("Close after the crash: %v", err)
	}
}

// TestListsAndRefresh: lists follow every page; list_changed refreshes the
// cached list in the background and says so.
func TestListsAndRefresh(t *testing.T) {
	t.Parallel()
	changed := make(chan client.ListKind, 4)
	cmd, _ := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{OnListChanged: func(k client.ListKind) { changed <- k }}))
	if _, ok := c.CachedTools(); ok {
		t.Error("tools cached before anyone listed them")
	}
	tools, err := c.ListTools(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	names := func(ts []mcp.Tool) []string {
		var n []string
		for _, t := range ts {
			n = append(n, t.Name)
		}
		return n
	}
	if got := names(tools); len(got) != 17 || got[0] != "echo" || got[16] != "latin1" {
		t.Fatalf("tools over two pages: %v", got)
	}
	if _, err := c.CallTool(ctx(t), "change", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case k := <-changed:
		if k != client.ListTools {
			t.Errorf("changed %v", k)
		}
	case <-time.After(hangTimeout):
		t.Fatal("no refresh after list_changed")
	}
	cachedTools, _ := c.CachedTools()
	if got := names(cachedTools); !slices.Contains(got, "new") || len(got) != 18 {
		t.Errorf("cache after refresh: %v", got)
	}
}

// TestServerRequests: in the legacy era the server's roots/list,
// sampling/createMessage and elicitation/create reach the handlers, whose
// capabilities were declared; without handlers nothing is declared and the
// answer is -32601.
func TestServerRequests(t *testing.T) {
	t.Parallel()
	o := opts(client.Options{
		Roots: func(context.Context) ([]mcp.Root, error) {
			return []mcp.Root{{URI: "file:///work", Name: "work"}}, nil
		},
		Sampling: func(_ context.Context, params json.RawMessage) (any, error) {
			return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "sampled " + string(params)}, "model": "m"}, nil
		},
		Elicitation: func(context.Context, json.RawMessage) (any, error) {
			return nil, &jsonrpc.Error{Code: -32042, Message: "no human here"}
		},
	})
	cmd, log := fakeCmd(t, "legacy")
	c := connect(t, cmd, o)
	for tool, want := range map[string]string{
		"roots":  `"result":{"roots":[{"uri":"file:///work","name":"work"}]}`,
		"sample": `sampled {\"message\":\"please\"}`,
		"elicit": `"error":{"code":-32042,"message":"no human here"}`,
	} {
		r, err := c.CallTool(ctx(t), tool, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := toolText(t, r); !strings.Contains(got, want) {
			t.Errorf("%s: the server got %s, want %s", tool, got, want)
		}
	}
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(sent(t, log)[1].Params, &init)
	if string(init.Capabilities["roots"]) != "{}" || string(init.Capabilities["sampling"]) != "{}" || string(init.Capabilities["elicitation"]) != `{"form":{}}` {
		t.Errorf("declared capabilities %s", sent(t, log)[1].Params)
	}

	cmd, _ = fakeCmd(t, "legacy")
	c = connect(t, cmd, opts(client.Options{}))
	r, err := c.CallTool(ctx(t), "roots", nil)
	if err != nil || !strings.Contains(toolText(t, r), `"code":-32601`) {
		t.Errorf("roots without a handler: %v %v", r, err)
	}
}

// TestInputRequired: a 2026-07-28 input_required result is answered with
// the same handlers and retried with a new id, inputResponses and the
// requestState echoed; a state-only result is retried at once; a request
// for a handler that is missing fails the call.
func TestInputRequired(t *testing.T) {
	t.Parallel()
	var elicited json.RawMessage
	o := opts(client.Options{
		Roots: func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///r"}}, nil },
		Elicitation: func(_ context.Context, p json.RawMessage) (any, error) {
			elicited = p
			return map[string]any{"action": "accept", "content": map[string]any{"name": "octocat"}}, nil
		},
	})
	cmd, log := fakeCmd(t, "modern")
	c := connect(t, cmd, o)
	r, err := c.CallTool(ctx(t), "ask", map[string]any{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(toolText(t, r)), &got); err != nil {
		t.Fatal(err)
	}
	if string(got["who"]) != `{"action":"accept","content":{"name":"octocat"}}` || string(got["where"]) != `{"roots":[{"uri":"file:///r"}]}` {
		t.Errorf("input responses the server got: %s", toolText(t, r))
	}
	if !strings.Contains(string(elicited), `"message":"Your name?"`) {
		t.Errorf("handler params %s", elicited)
	}
	var calls []fakeMsg
	for _, m := range sent(t, log) {
		if m.Method == "tools/call" {
			calls = append(calls, m)
		}
	}
	if len(calls) != 2 || string(calls[0].ID) == string(calls[1].ID) {
		t.Fatalf("want two tools/call with different ids, got %+v", calls)
	}
	var retry struct {
		Arguments    map[string]any `json:"arguments"`
		RequestState string         `json:"requestState"`
		Meta         map[string]any `json:"_meta"`
	}
	json.Unmarshal(calls[1].Params, &retry)
	if retry.RequestState != "st-1" || retry.Arguments["x"] != 1.0 || retry.Meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" {
		t.Errorf("retry params %s", calls[1].Params)
	}
	if caps := metaOf(t, calls[0])["io.modelcontextprotocol/clientCapabilities"]; string(caps) != `{"elicitation":{"form":{}},"roots":{}}` {
		t.Errorf("declared capabilities %s", caps)
	}

	r, err = c.CallTool(ctx(t), "shed", nil)
	if err != nil || toolText(t, r) != "state busy inputs false" {
		t.Errorf("state-only retry: %v %v", r, err)
	}

	cmd, _ = fakeCmd(t, "modern")
	c = connect(t, cmd, opts(client.Options{Roots: o.Roots}))
	_, err = c.CallTool(ctx(t), "ask", nil)
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound || !strings.Contains(err.Error(), `input request "who" (elicitation/create)`) {
		t.Errorf("missing handler: %v", err)
	}
}

// TestSubscribe: notifications reach the subscribers of their method, in
// order, before the response they preceded.
func TestSubscribe(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{}))
	var mu sync.Mutex
	var got, all []string
	unsub := c.Subscribe("notifications/message", func(n client.Notification) {
		mu.Lock()
		got = append(got, string(n.Params))
		mu.Unlock()
	})
	c.Subscribe("", func(n client.Notification) {
		mu.Lock()
		all = append(all, n.Method)
		mu.Unlock()
	})
	if _, err := c.CallTool(ctx(t), "log", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(got) != 1 || !strings.Contains(got[0], "hello from the server") {
		t.Errorf("message subscriber got %v", got)
	}
	mu.Unlock()
	unsub()
	if _, err := c.CallTool(ctx(t), "log", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx(t), "change", nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Errorf("unsubscribed func still called: %v", got)
	}
	if want := []string{"notifications/message", "notifications/message", "notifications/tools/list_changed"}; !slices.Equal(all, want) {
		t.Errorf("catch-all subscriber got %v, want %v", all, want)
	}
}

// TestNoGoroutineLeft: after Close every goroutine the client started has
// ended, whether the server exited cleanly or crashed.
func TestNoGoroutineLeft(t *testing.T) {
	// Not parallel: it counts the process's goroutines.
	before := runtime.NumGoroutine()
	for _, tool := range []string{"echo", "crash"} {
		cmd, _ := fakeCmd(t, "legacy")
		c, err := client.Connect(ctx(t), cmd, opts(client.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ListTools(ctx(t)); err != nil {
			t.Fatal(err)
		}
		c.CallTool(ctx(t), tool, map[string]string{"text": "x"})
		c.Close()
	}
	eventually(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

// TestCloseCancelsInFlight: Close tells the server about the requests it
// abandons (notifications/cancelled, before stdin closes), and they fail
// with ErrClosed.
func TestCloseCancelsInFlight(t *testing.T) {
	t.Parallel()
	cmd, log := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{}))
	errs := make(chan error, 1)
	go func() { _, err := c.CallTool(context.Background(), "hang", nil); errs <- err }()
	var id json.RawMessage
	eventually(t, "the call to reach the server", func() bool {
		for _, m := range sent(t, log) {
			if m.Method == "tools/call" {
				id = m.ID
				return true
			}
		}
		return false
	})
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; !errors.Is(err, client.ErrClosed) {
		t.Errorf("pending call: %v", err)
	}
	ms := sent(t, log)
	last := ms[len(ms)-1]
	if last.Method != "notifications/cancelled" || !strings.Contains(string(last.Params), `"requestId":`+string(id)) {
		t.Errorf("last message before EOF: %s %s", last.Method, last.Params)
	}
}

// TestExtensions: Options.Extensions are declared as
// capabilities.extensions, at initialize and on every 2026-07-28 request;
// WithExtensions replaces them on one 2026-07-28 request.
func TestExtensions(t *testing.T) {
	t.Parallel()
	ui := map[string]json.RawMessage{"io.modelcontextprotocol/ui": json.RawMessage(`{"mimeTypes":["text/html;profile=mcp-app"]}`), "com.example/x": nil}
	const want = `{"com.example/x":{},"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`
	extOf := func(caps json.RawMessage) string {
		var c struct {
			Extensions json.RawMessage `json:"extensions"`
		}
		_ = json.Unmarshal(caps, &c)
		return string(c.Extensions)
	}

	cmd, log := fakeCmd(t, "legacy")
	c := connect(t, cmd, opts(client.Options{Extensions: ui}))
	if err := c.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
	for _, m := range sent(t, log) {
		if m.Method != "initialize" {
			continue
		}
		var init struct{ Capabilities json.RawMessage }
		_ = json.Unmarshal(m.Params, &init)
		if got := extOf(init.Capabilities); got != want {
			t.Errorf("initialize extensions %s, want %s", got, want)
		}
	}

	cmd, log = fakeCmd(t, "modern")
	c = connect(t, cmd, opts(client.Options{Extensions: ui}))
	if _, err := c.CallTool(ctx(t), "echo", map[string]string{"text": "a"}); err != nil {
		t.Fatal(err)
	}
	const own = `{"com.example/y":{"v":2}}`
	if _, err := c.CallTool(ctx(t), "echo", map[string]string{"text": "b"}, client.WithExtensions(json.RawMessage(own))); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, m := range sent(t, log) {
		if m.Method != "tools/call" {
			continue
		}
		seen++
		got, w := extOf(metaOf(t, m)["io.modelcontextprotocol/clientCapabilities"]), want
		if strings.Contains(string(m.Params), `"text":"b"`) {
			w = own
		}
		if got != w {
			t.Errorf("%s: extensions %s, want %s", m.Params, got, w)
		}
	}
	if seen != 2 {
		t.Errorf("%d tools/call sent, want 2", seen)
	}
}

// TestCallToolNilArguments: arguments that are nil, even a nil map, are
// left out rather than sent as null, which servers refuse (arguments are
// an object).
func TestCallToolNilArguments(t *testing.T) {
	t.Parallel()
	cmd, log := fakeCmd(t, "modern")
	c := connect(t, cmd, opts(client.Options{}))
	var none map[string]any
	for _, args := range []any{nil, none, (*struct{})(nil)} {
		if _, err := c.CallTool(ctx(t), "progress", args); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range sent(t, log) {
		if m.Method == "tools/call" && strings.Contains(string(m.Params), `"arguments"`) {
			t.Errorf("sent arguments: %s", m.Params)
		}
	}
}

// TestRetryListedVersion: a server that refuses the probe's version with
// -32022 but lists it (or another this client speaks) among those it
// supports gets one retry with it, with EraAuto and with EraModern.
func TestRetryListedVersion(t *testing.T) {
	t.Parallel()
	for _, era := range []client.Era{client.EraAuto, client.EraModern} {
		cmd, log := fakeCmd(t, "modern-refuse-once")
		c := connect(t, cmd, opts(client.Options{Era: era}))
		if c.Era() != client.EraModern || c.ProtocolVersion() != "2026-07-28" {
			t.Errorf("era option %v: connected in era %v, version %s", era, c.Era(), c.ProtocolVersion())
		}
		n := 0
		for _, m := range sent(t, log) {
			if m.Method == "server/discover" {
				n++
			}
		}
		if n != 2 {
			t.Errorf("era option %v: %d server/discover sent, want 2", era, n)
		}
	}
}
