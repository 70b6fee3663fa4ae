package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcprt/mcprt/session"
	"io"
	"log/slog"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/fault"
)

// The proofs: each one a claim about what mcprt never loses, checked
// against the real binary (the last one against the embedded runtime), and
// each able to fail. Timing enters only as generous bounds that turn a hang
// into a failure.

// TestProofNothingLostUnderFaults: 10,000 requests, of which 10% call a
// tool that panics, 5% sleep past the 500 ms request deadline and 5% are
// cancelled right after they are sent. Every request is answered exactly
// once (a cancelled one not at all, or once if the cancel raced with the
// answer), stdout carries nothing but valid JSON-RPC, the server still
// answers correctly afterwards, and it exits 0 on stdin EOF with the hung
// requests in flight.
func TestProofNothingLostUnderFaults(t *testing.T) {
	t.Parallel()
	rep, err := (&fault.Campaign{
		// The crash-loop policy would rightly suspend a tool that panics
		// 1,000 times; here every one of those panics is the point.
		Command:     []string{binPath, "serve", "-request-timeout", "500ms", "-crash-intensity", "1000000"},
		Seed:        20260728,
		Requests:    10_000,
		Rates:       fault.Rates{Panic: 0.10, Hang: 0.05, Cancel: 0.05},
		HangFor:     2 * time.Second,
		Ending:      fault.EndEOF,
		Timeout:     90 * time.Second,
		ExitTimeout: exitTimeout,
	}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("campaign report:\n%s", rep)
	if !rep.OK() {
		t.Fatalf("problems: %v\nserver stderr (tail):\n%s", rep.Problems(), tail(rep.StderrTail, 3000))
	}
	if rep.Sent != 10_000 || rep.AnsweredTwice != 0 || rep.NeverAnswered != 0 || rep.ViolationCount != 0 {
		t.Errorf("sent %d, answered twice %d, never %d, violations %d", rep.Sent, rep.AnsweredTwice, rep.NeverAnswered, rep.ViolationCount)
	}
	if got := rep.AnsweredOnce + rep.Cancelled - rep.CancelledAnswered; got != rep.Sent {
		t.Errorf("answered once + cancelled unanswered = %d, want %d", got, rep.Sent)
	}
	// The plan is seeded: about 1,000 panics, 500 hangs and 500 cancels.
	for f, want := range map[string]int{"panic": 1000, "hang": 500, "cancel": 500} {
		if got := rep.Faults[f]; got < want*8/10 || got > want*12/10 {
			t.Errorf("%d %s faults injected, want about %d", got, f, want)
		}
	}
	// A cancel follows its request in the same write and is never held up
	// by back-pressure: racing the 500 ms deadline must be rare.
	if rep.CancelledAnswered > rep.Cancelled/10 {
		t.Errorf("%d of %d cancelled requests were answered anyway", rep.CancelledAnswered, rep.Cancelled)
	}
	if !rep.Healthy || rep.ExitCode != 0 {
		t.Errorf("healthy after %v, exit status %d", rep.Healthy, rep.ExitCode)
	}
}

// inFlight starts a server and sends n sleep calls of ms milliseconds
// without waiting, returning their id keys.
func inFlight(t *testing.T, n, ms int) (*Client, []string) {
	t.Helper()
	c := Start(t, Options{})
	c.Initialize("2025-11-25")
	var b strings.Builder
	keys := make([]string, n)
	for i := range n {
		id := fmt.Sprintf("flight-%d", i)
		keys[i] = strconv.Quote(id)
		b.WriteString(RequestLine(id, "tools/call", sleepParams(ms)) + "\n")
	}
	if err := c.SendRaw([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	return c, keys
}

// wantAllSlept checks that the server exited 0 with every key answered
// exactly once, "slept".
func wantAllSlept(t *testing.T, c *Client, keys []string) {
	t.Helper()
	code, ok := c.WaitExit(exitTimeout)
	if !ok {
		t.Fatal("no exit")
	}
	if code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	if !c.WaitReader(exitTimeout) {
		t.Fatal("stdout still open after the exit")
	}
	lost, wrong := 0, 0
	for _, k := range keys {
		rs := c.Responses(k)
		switch {
		case len(rs) == 0:
			lost++
		case len(rs) > 1:
			t.Errorf("%s answered %d times", k, len(rs)) // the client also reports it
		default:
			if got, err := toolTextErr(rs[0]); err != nil || got != "slept" {
				wrong++
				if wrong <= 3 {
					t.Errorf("%s answered %s, want \"slept\"", k, rs[0])
				}
			}
		}
	}
	if lost > 0 || wrong > 0 {
		t.Errorf("%d of %d in-flight requests lost, %d answered wrongly", lost, len(keys), wrong)
	}
}

// TestProofEOFWithRequestsInFlight: stdin closes right after 100 requests;
// all 100 are answered, then the server exits 0.
func TestProofEOFWithRequestsInFlight(t *testing.T) {
	t.Parallel()
	c, keys := inFlight(t, 100, 500)
	c.CloseStdin()
	wantAllSlept(t, c, keys)
}

// TestProofSIGTERMWithRequestsInFlight: SIGTERM while 100 requests are in
// flight (all read: a ping sent after them has been answered); all 100 are
// answered, then the server exits 0.
func TestProofSIGTERMWithRequestsInFlight(t *testing.T) {
	t.Parallel()
	c, keys := inFlight(t, 100, 500)
	c.Call("ping", nil)
	for _, k := range keys {
		if rs := c.Responses(k); len(rs) > 0 {
			t.Fatalf("%s answered before the signal: the test did not have it in flight", k)
		}
	}
	c.Signal(syscall.SIGTERM)
	wantAllSlept(t, c, keys)
}

// TestProofClosedStdoutExitsWithoutSpinning: the client closes its read end
// of stdout while requests are in flight (some for a minute) and keeps
// stdin open. The server exits on its own, status 0, within a bound, and
// uses little CPU doing so: a server spinning on EPIPE would burn a core
// for as long as it lingered.
func TestProofClosedStdoutExitsWithoutSpinning(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{Paused: true})
	var b strings.Builder
	b.WriteString(RequestLine(0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2e", "version": "1"},
	}) + "\n")
	b.WriteString(RequestLine(nil, "notifications/initialized", nil) + "\n")
	for i := range 20 {
		b.WriteString(RequestLine(100+i, "tools/call", sleepParams(60_000)) + "\n")
	}
	c.Send(strings.TrimSuffix(b.String(), "\n"))
	// Close stdout only once the server has read every line, so the sleeps
	// are surely in flight when its writes start failing.
	if unreadBytes(c.stdin) >= 0 && !settle(t, "stdin", func() bool { return unreadBytes(c.stdin) == 0 }) {
		t.Fatal("the server did not read its stdin")
	}
	c.CloseStdoutReader()
	closed := time.Now()
	// Quick calls make the server write, and so learn that nobody reads.
	for i := range 20 {
		if c.SendRaw([]byte(RequestLine(200+i, "tools/call", echoParams("into the void"))+"\n")) != nil {
			break
		}
	}
	code, ok := c.WaitExit(10 * time.Second)
	if !ok {
		t.Fatal("server still running 10s after the client closed stdout")
	}
	if code != 0 {
		t.Errorf("exit status %d, want 0", code)
	}
	c.mu.Lock()
	ps := c.exitState
	exitedAt := c.exitedAt
	c.mu.Unlock()
	cpu := ps.UserTime() + ps.SystemTime()
	t.Logf("exited %v after stdout closed, having used %v of CPU in all", exitedAt.Sub(closed).Round(time.Millisecond), cpu)
	// Start-up and the handshake take a few tens of ms; a spin until the
	// minute-long sleeps end, or just through the 5s drain, would take seconds.
	if cpu > time.Second {
		t.Errorf("the server used %v of CPU: spinning after EPIPE?", cpu)
	}
}

// procStatusKiB reads a field (VmRSS, VmHWM) of /proc/<pid>/status.
func procStatusKiB(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// TestProofUnreadResponsesBoundedMemory: a client writes 100,000 requests
// and reads no response. The server's memory stays bounded (it stops
// reading stdin instead of buffering: back-pressure), and once the client
// reads, every request is answered exactly once, correctly.
func TestProofUnreadResponsesBoundedMemory(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to measure memory")
	}
	const (
		n        = 100_000
		boundKiB = 64 << 10 // generous: the server itself needs about a tenth
	)
	c := Start(t, Options{Paused: true})
	pid := c.cmd.Process.Pid
	var written atomic.Int64
	writeErr := make(chan error, 1)
	go func() {
		err := c.SendRaw([]byte(RequestLine(0, "initialize", map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "e2e", "version": "1"},
		}) + "\n" + RequestLine(nil, "notifications/initialized", nil) + "\n"))
		var b []byte
		for i := 1; i <= n && err == nil; i += 100 {
			b = b[:0]
			for j := i; j < i+100 && j <= n; j++ {
				b = append(b, RequestLine(j, "tools/call", echoParams("unread "+strconv.Itoa(j)))...)
				b = append(b, '\n')
			}
			err = c.SendRaw(b)
			written.Store(int64(min(i+99, n)))
		}
		writeErr <- err
	}()

	// Wait for the writes to stall: the server stopped reading.
	var last int64 = -1
	for stable := 0; stable < 5; {
		time.Sleep(100 * time.Millisecond)
		select {
		case err := <-writeErr:
			t.Fatalf("all %d requests were written while nothing was read (err %v): no back-pressure", n, err)
		default:
		}
		if w := written.Load(); w == last {
			stable++
		} else {
			last, stable = w, 0
		}
	}
	rssStalled, err := procStatusKiB(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	c.Resume()
	select {
	case err := <-writeErr:
		if err != nil {
			t.Fatalf("writing requests: %v", err)
		}
	case <-time.After(2 * time.Minute):
		// A hang bound, not a speed test: the server works through the
		// rest of the 100,000 calls before the last write returns, which
		// under -race on a loaded 2-core machine took over 20 s.
		t.Fatal("writes still blocked after the client started reading")
	}
	if !c.waitUntil(2*time.Minute, func() bool { return len(c.byID) >= n+1 }) {
		c.mu.Lock()
		got := len(c.byID)
		c.mu.Unlock()
		t.Fatalf("only %d of %d responses arrived", got-1, n)
	}
	hwm, err := procStatusKiB(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stalled after %d of %d requests written; server RSS then %d KiB, peak RSS over the run %d KiB (bound %d KiB)",
		last, n, rssStalled, hwm, boundKiB)
	if hwm > boundKiB {
		t.Errorf("server peak RSS %d KiB, over the %d KiB bound", hwm, boundKiB)
	}
	bad := 0
	for i := 1; i <= n; i++ {
		rs := c.Responses(strconv.Itoa(i))
		if len(rs) != 1 {
			bad++
			continue
		}
		if got, err := toolTextErr(rs[0]); err != nil || got != "unread "+strconv.Itoa(i) {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d requests not answered exactly once with their text", bad, n)
	}
	c.CloseStdin()
	if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
		t.Errorf("exit: status %d, exited %v", code, ok)
	}
}

// actorCensus follows hollywood's event stream: which actors are alive.
type actorCensus struct {
	mu      sync.Mutex
	live    map[string]bool
	started map[string]bool // every actor ever started, by PID ID
}

func (a *actorCensus) receive(c *actor.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch m := c.Message().(type) {
	case actor.ActorStartedEvent:
		a.live[m.PID.ID] = true
		a.started[m.PID.ID] = true
	case actor.ActorStoppedEvent:
		delete(a.live, m.PID.ID)
	}
}

func (a *actorCensus) count() (live, started int, sample []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id := range a.live {
		if len(sample) < 5 {
			sample = append(sample, id)
		}
	}
	return len(a.live), len(a.started), sample
}

// proofServer is a small server for the embedded proof: an echo, a sleep
// that honours cancellation, and a tool that panics.
func proofServer() *handlers.Server {
	srv := handlers.NewServer(mcp.Implementation{Name: "proof", Version: "1"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "echo"}}, func(_ context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return mcp.TextResult(a.Text), nil
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "sleep"}}, func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Ms int }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		select {
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			return mcp.TextResult("slept"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "panic"}}, fault.CrashLoop())
	return srv
}

// embeddedRound starts a tree in e over io.Pipe, exercises it (handshake,
// an echo, a panic, a sleep left in flight) and stops it the way round
// selects: stdin EOF, Stop, or Drain then EOF.
func embeddedRound(t *testing.T, e *actor.Engine, srv *handlers.Server, round int) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	inst, err := runtime.Start(e, srv, inR, outW, runtime.Options{
		Logger: slog.New(slog.DiscardHandler),
		// the sleep left in flight is cut short,
		Options: session.Options{DrainTimeout: 20 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	var reader sync.WaitGroup
	reader.Go(func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	})
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(callTimeout):
			t.Fatalf("round %d: no output", round)
			return ""
		}
	}
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	send(RequestLine(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "proof", "version": "1"}}))
	next()
	send(RequestLine(nil, "notifications/initialized", nil))
	send(RequestLine(2, "tools/call", echoParams("round "+strconv.Itoa(round))))
	if l := next(); !strings.Contains(l, `"round `+strconv.Itoa(round)+`"`) {
		t.Fatalf("round %d: echo answered %s", round, l)
	}
	send(RequestLine(3, "tools/call", map[string]any{"name": "panic", "arguments": map[string]any{}}))
	if l := next(); !strings.Contains(l, `"id":3,"result"`) || !strings.Contains(l, `"isError":true`) {
		t.Fatalf("round %d: panic answered %s", round, l)
	}
	send(RequestLine(4, "tools/call", sleepParams(60_000))) // in flight when the tree stops

	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	switch round % 3 {
	case 0:
		inW.Close()
	case 1:
		if err := inst.Stop(ctx); err != nil {
			t.Fatalf("round %d: Stop: %v", round, err)
		}
	case 2:
		inst.Drain()
	}
	// The sleep is answered by the drain (an error), or cut off by Stop.
	select {
	case <-inst.Done():
	case <-ctx.Done():
		t.Fatalf("round %d: the tree did not stop", round)
	}
	if err := inst.Err(); runtime.ExitCode(err) != runtime.ExitOK {
		t.Errorf("round %d: tree ended with %v", round, err)
	}
	inW.Close()
	outW.Close() // the caller's writer: ours to close, so the reader ends
	for range lines {
	}
	reader.Wait()
}

// TestProofEmbeddedStartStopLeaksNothing: 100 trees started and stopped in
// one engine over io.Pipe, each with a panic and a request in flight at the
// stop, leave no goroutine and no actor behind.
//
// Not parallel: goroutines are counted process-wide, so this runs while the
// package's parallel tests are still paused.
func TestProofEmbeddedStartStopLeaksNothing(t *testing.T) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	census := &actorCensus{live: map[string]bool{}, started: map[string]bool{}}
	probe := e.SpawnFunc(census.receive, "census")
	e.Subscribe(probe)
	defer func() {
		e.Unsubscribe(probe) // a dead subscriber would turn every event into a dead letter, forever
		<-e.Poison(probe).Done()
	}()
	// Events are delivered asynchronously: see one through before counting.
	<-e.Poison(e.SpawnFunc(func(*actor.Context) {}, "warmup")).Done()
	settle(t, "the warm-up actor's events", func() bool { live, started, _ := census.count(); return live == 0 && started == 1 })

	before := goruntime.NumGoroutine()
	srv := proofServer()
	const rounds = 100
	for round := range rounds {
		embeddedRound(t, e, srv, round)
	}
	var after int
	if !settle(t, "goroutines", func() bool { after = goruntime.NumGoroutine(); return after <= before }) {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before %d rounds, %d after:\n%s", before, rounds, after, buf[:goruntime.Stack(buf, true)])
	}
	var live, started int
	var sample []string
	if !settle(t, "actors", func() bool { live, started, sample = census.count(); return live == 0 }) {
		t.Errorf("%d of %d actors started are still alive, for example %v", live, started, sample)
	}
	census.mu.Lock()
	registered := 0
	for id := range census.started {
		kind, name, _ := strings.Cut(id, "/")
		if e.Registry.GetPID(kind, name) != nil {
			registered++
		}
	}
	census.mu.Unlock()
	if registered > 0 {
		t.Errorf("%d stopped actors are still in the engine's registry", registered)
	}
	t.Logf("%d rounds: %d actors started and stopped; goroutines %d before, %d after", rounds, started, before, after)
	if started < rounds*5 {
		t.Errorf("only %d actors seen started in %d rounds: the census missed events", started, rounds)
	}
}

// settle polls cond for up to 10s: the runtime's goroutines and hollywood's
// event stream finish their work shortly after the calls that caused it.
func settle(t *testing.T, what string, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Logf("%s did not settle within 10s", what)
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
