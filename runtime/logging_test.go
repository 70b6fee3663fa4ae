package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/stdio"
)

type forwarded struct {
	level, logger string
	data          string // the JSON object, as sent
}

// collector is a logSink that records what it is given.
type collector struct {
	mu  sync.Mutex
	got []forwarded
}

func (c *collector) sink(level, logger string, data any) {
	raw, ok := data.(json.RawMessage)
	if !ok || !json.Valid(raw) {
		panic(fmt.Sprintf("data is %T %q, want a JSON object", data, data))
	}
	c.mu.Lock()
	c.got = append(c.got, forwarded{level, logger, string(raw)})
	c.mu.Unlock()
}

func (c *collector) take() []forwarded {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.got
	c.got = nil
	return got
}

// syncBuffer is a local log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newPipeline returns a pipeline whose local log is JSON in a buffer at
// localLevel, connected to a collector, with forwarding still off and the
// backlog already gone (as after a client's first logging/setLevel).
func newPipeline(t *testing.T, localLevel slog.Level) (*logPipeline, *syncBuffer, *collector) {
	t.Helper()
	var local syncBuffer
	p := newLogPipeline(newLogHandler(&local, logOptions{Level: localLevel, JSON: true}))
	c := &collector{}
	p.SetSink(c.sink)
	mustSetLevel(t, p, "emergency")
	mustSetLevel(t, p, "off")
	return p, &local, c
}

func mustSetLevel(t *testing.T, p *logPipeline, level string) {
	t.Helper()
	if err := p.SetLevel(level); err != nil {
		t.Fatal(err)
	}
}

func localRecords(t *testing.T, s string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for line := range strings.Lines(s) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("local log line %q: %v", line, err)
		}
		recs = append(recs, m)
	}
	return recs
}

func TestLogOptionsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		level, format string
		want          slog.Level
		json, bad     bool
	}{
		{"", "", slog.LevelInfo, false, false},
		{"debug", "json", slog.LevelDebug, true, false},
		{"WARN", "JSON", slog.LevelWarn, true, false},
		{"warning", "text", slog.LevelWarn, false, false},
		{"notice", "", slog.LevelInfo + 2, false, false},
		{"Critical", "", slog.LevelError + 2, false, false},
		{"info+1", "", slog.LevelInfo + 1, false, false},
		{"loud", "", slog.LevelInfo, false, true},
		{"error", "xml", slog.LevelError, false, true},
	} {
		t.Setenv("LOG_LEVEL", tc.level)
		t.Setenv("LOG_FORMAT", tc.format)
		o, err := logOptionsFromEnv()
		if (err != nil) != tc.bad {
			t.Errorf("LOG_LEVEL=%q LOG_FORMAT=%q: err %v", tc.level, tc.format, err)
		}
		if o.Level.Level() != tc.want || o.JSON != tc.json {
			t.Errorf("LOG_LEVEL=%q LOG_FORMAT=%q: level %v json %v, want %v %v", tc.level, tc.format, o.Level, o.JSON, tc.want, tc.json)
		}
	}
}

func TestLogHandlerFormats(t *testing.T) {
	var text, js bytes.Buffer
	for _, w := range []*bytes.Buffer{&text, &js} {
		h := newLogHandler(w, logOptions{Level: slog.LevelDebug, JSON: w == &js})
		log := slog.New(h).With(componentKey, "session")
		log.Log(context.Background(), handlers.SlogLevel("notice"), "hello", "n", 1)
		log.Log(context.Background(), handlers.SlogLevel("critical"), "bad")
		log.Warn("careful")
	}
	lines := strings.Split(strings.TrimSpace(text.String()), "\n")
	for i, want := range []string{
		`level=NOTICE msg=hello component=session n=1`,
		`level=CRITICAL msg=bad component=session`,
		`level=WARN msg=careful component=session`,
	} {
		if !strings.HasPrefix(lines[i], "time=") || !strings.HasSuffix(lines[i], want) {
			t.Errorf("text line %q, want time=... %s", lines[i], want)
		}
	}
	recs := localRecords(t, js.String())
	for i, want := range []string{"NOTICE", "CRITICAL", "WARN"} {
		if recs[i]["level"] != want || recs[i][componentKey] != "session" || recs[i]["time"] == nil {
			t.Errorf("json record %v, want level %s, a time and the component", recs[i], want)
		}
	}
}

func TestPipelineForwardsOnlyWhatTheClientAskedFor(t *testing.T) {
	p, local, c := newPipeline(t, slog.LevelInfo)
	log := p.Logger().With(componentKey, "session")

	log.Error("before setLevel")
	if got := c.take(); len(got) != 0 {
		t.Fatalf("forwarded while off: %+v", got)
	}
	if p.Level() != "off" {
		t.Fatalf("Level %q, want off", p.Level())
	}

	mustSetLevel(t, p, "warning")
	log.Info("too low")
	log.Warn("loud enough", "k", "v")
	log.Debug("below everything")
	want := []forwarded{{"warning", "session", `{"message":"loud enough","k":"v"}`}}
	if got := c.take(); !slices.Equal(got, want) {
		t.Fatalf("forwarded %+v, want %+v", got, want)
	}

	// The local log is independent of the client's level, both ways.
	mustSetLevel(t, p, "debug")
	log.Debug("for the client only")
	if got := c.take(); len(got) != 1 || got[0].level != "debug" {
		t.Fatalf("forwarded %+v", got)
	}
	var msgs []string
	for _, r := range localRecords(t, local.String()) {
		msgs = append(msgs, r["msg"].(string))
	}
	if strings.Join(msgs, ",") != "before setLevel,too low,loud enough" {
		t.Fatalf("local log has %q", msgs)
	}

	if err := p.SetLevel("verbose"); err == nil {
		t.Fatal("SetLevel accepted an unknown level")
	}
	if p.Level() != "debug" {
		t.Fatalf("a bad SetLevel changed the level to %q", p.Level())
	}
	mustSetLevel(t, p, "off")
	log.Error("off again")
	if got := c.take(); len(got) != 0 {
		t.Fatalf("forwarded while off: %+v", got)
	}
}

func TestPipelineEnabledIsCheapWhenNobodyListens(t *testing.T) {
	p, _, _ := newPipeline(t, slog.LevelWarn)
	log := p.Logger()
	if log.Enabled(context.Background(), slog.LevelInfo) {
		t.Fatal("info enabled with the local level at warn and forwarding off")
	}
	mustSetLevel(t, p, "info")
	if !log.Enabled(context.Background(), slog.LevelInfo) {
		t.Fatal("info disabled while the client asked for it")
	}
	p.SetSink(nil)
	if log.Enabled(context.Background(), slog.LevelInfo) {
		t.Fatal("info enabled with no sink")
	}
}

func TestPipelineLevelMapping(t *testing.T) {
	// slog -> MCP: each MCP level's own slog level comes back as its name;
	// levels in between take the nearest name below.
	p, _, c := newPipeline(t, slog.LevelError+100)
	mustSetLevel(t, p, "debug")
	log := p.Logger()
	cases := map[slog.Level]string{
		slog.LevelInfo + 1:   "info",
		slog.LevelWarn - 1:   "notice",
		slog.LevelWarn + 1:   "warning",
		slog.LevelError + 7:  "emergency",
		slog.LevelError + 50: "emergency",
	}
	for _, name := range mcp.LogLevels {
		cases[handlers.SlogLevel(name)] = name
	}
	for l, want := range cases {
		log.Log(context.Background(), l, "m")
		got := c.take()
		if len(got) != 1 || got[0].level != want {
			t.Errorf("slog level %v forwarded as %+v, want %s", l, got, want)
		}
	}
	log.Log(context.Background(), slog.LevelDebug-1, "m")
	if got := c.take(); len(got) != 0 {
		t.Errorf("below debug forwarded: %+v", got)
	}

	// MCP -> slog: a minimum admits exactly the levels at or above it.
	for _, min := range mcp.LogLevels {
		mustSetLevel(t, p, min)
		if p.Level() != min {
			t.Errorf("Level() = %q after SetLevel(%q)", p.Level(), min)
		}
		for _, level := range mcp.LogLevels {
			log.Log(context.Background(), handlers.SlogLevel(level), "m")
			got := c.take()
			if want := mcp.LevelAdmits(min, level); (len(got) == 1) != want {
				t.Errorf("min %s, record %s: forwarded %+v, want %v", min, level, got, want)
			}
		}
	}
}

type secret string

func (secret) LogValue() slog.Value { return slog.StringValue("***") }

type loud struct{}

func (loud) MarshalJSON() ([]byte, error) { return []byte(`"custom"`), nil }
func (loud) Error() string                { return "not this" }

func TestPipelineData(t *testing.T) {
	p, _, c := newPipeline(t, slog.LevelInfo)
	mustSetLevel(t, p, "debug")
	log := p.Logger().With(componentKey, "tools", "pid", 7).WithGroup("req").With("id", "a")
	log.Info("called",
		"err", errors.New("boom"),
		"took", 1500*time.Millisecond,
		"at", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"ratio", math.NaN(),
		"tok", secret("hunter2"),
		"ch", make(chan int),
		"loud", loud{},
		slog.Group("empty"),
		slog.Group("", "inline", true),
		slog.Group("sub", componentKey, "not the logger", "n", uint64(3)),
	)
	got := c.take()
	if len(got) != 1 {
		t.Fatalf("forwarded %+v", got)
	}
	if got[0].logger != "tools" {
		t.Errorf("logger %q, want the component", got[0].logger)
	}
	want := `{"message":"called","pid":7,"req":{"id":"a","err":"boom","took":"1.5s",` +
		`"at":"2026-01-02T03:04:05Z","ratio":"NaN","tok":"***","ch":"CHAN","loud":"custom",` +
		`"inline":true,"sub":{"component":"not the logger","n":3}}}`
	// A channel's %+v is an address: compare everything else.
	data := got[0].data
	if i := strings.Index(data, `"ch":"0x`); i >= 0 {
		j := strings.Index(data[i+6:], `"`)
		data = data[:i] + `"ch":"CHAN` + data[i+6+j:]
	}
	if data != want {
		t.Errorf("data\n got %s\nwant %s", data, want)
	}

	// A group with nothing in it is left out, however it got there.
	p.Logger().WithGroup("g").WithGroup("h").Info("bare")
	if got := c.take(); len(got) != 1 || got[0].data != `{"message":"bare"}` || got[0].logger != "" {
		t.Errorf("forwarded %+v", got)
	}
}

func TestPipelineStdout(t *testing.T) {
	p, local, c := newPipeline(t, slog.LevelError)
	p.Stdout([]byte("hello from fmt.Println"), false)
	p.Stdout([]byte("Password: "), true)
	p.Stdout(nil, false)
	if got := c.take(); len(got) != 0 {
		t.Fatalf("forwarded while off: %+v", got)
	}
	// Written locally although the local level is error: nothing printed
	// may vanish.
	recs := localRecords(t, local.String())
	if len(recs) != 2 || recs[0]["msg"] != "hello from fmt.Println" || recs[0][componentKey] != stdoutComponent ||
		recs[0]["level"] != "INFO" || recs[1]["partial"] != true {
		t.Fatalf("local log %v", recs)
	}

	mustSetLevel(t, p, "info")
	p.Stdout([]byte("hi"), false)
	p.Stdout([]byte("cut"), true)
	p.StdoutDropped(3, 300)
	want := []forwarded{
		{"info", "stdout", `{"message":"hi"}`},
		{"info", "stdout", `{"message":"cut","partial":true}`},
		{"warning", "stdout", `{"message":"stdout output dropped: the log could not keep up","lines":3,"bytes":300}`},
	}
	if got := c.take(); !slices.Equal(got, want) {
		t.Fatalf("forwarded %+v, want %+v", got, want)
	}
	mustSetLevel(t, p, "warning")
	p.Stdout([]byte("quiet"), false)
	if got := c.take(); len(got) != 0 {
		t.Fatalf("info forwarded at warning: %+v", got)
	}
}

func TestPipelineReplaysStartupLogsOnce(t *testing.T) {
	var local syncBuffer
	p := newLogPipeline(newLogHandler(&local, logOptions{JSON: true}))
	log := p.Logger().With(componentKey, "main")
	log.Info("starting")
	p.Stdout([]byte("banner from a library"), false)
	log.Warn("config file missing")
	log.Debug("not even local") // below the local level: not kept

	c := &collector{}
	mustSetLevel(t, p, "info") // no sink yet: nothing to replay to
	p.SetSink(c.sink)
	got := c.take()
	if len(got) != 3 {
		t.Fatalf("replayed %+v", got)
	}
	for i, w := range []struct{ level, logger, msg string }{
		{"info", "main", "starting"},
		{"info", "stdout", "banner from a library"},
		{"warning", "main", "config file missing"},
	} {
		var d map[string]any
		json.Unmarshal([]byte(got[i].data), &d)
		if got[i].level != w.level || got[i].logger != w.logger || d["message"] != w.msg {
			t.Errorf("replayed %d: %+v, want %+v", i, got[i], w)
		}
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(d["time"])); err != nil {
			t.Errorf("replayed %d has no time: %s", i, got[i].data)
		}
	}

	log.Info("live")
	if got := c.take(); len(got) != 1 || got[0].data != `{"message":"live"}` {
		t.Fatalf("live record %+v", got)
	}
	// Later pauses are the client's choice: nothing is kept for it.
	mustSetLevel(t, p, "off")
	log.Error("while off")
	mustSetLevel(t, p, "debug")
	if got := c.take(); len(got) != 0 {
		t.Fatalf("replayed again: %+v", got)
	}
}

func TestPipelineBacklogIsBounded(t *testing.T) {
	p := newLogPipeline(newLogHandler(&syncBuffer{}, logOptions{}))
	for i := range logBacklog + 5 {
		p.Logger().Info("r", "i", i)
	}
	c := &collector{}
	p.SetSink(c.sink)
	mustSetLevel(t, p, "warning") // the replay is filtered by the new level
	if got := c.take(); len(got) != 1 || got[0].logger != "mcprt" || got[0].data != `{"message":"earlier log records were not kept","lost":5}` {
		t.Fatalf("got %+v", got)
	}

	p = newLogPipeline(newLogHandler(&syncBuffer{}, logOptions{}))
	for i := range logBacklog + 5 {
		p.Logger().Info("r", "i", i)
	}
	p.SetSink(c.sink)
	mustSetLevel(t, p, "info")
	got := c.take()
	if len(got) != logBacklog+1 {
		t.Fatalf("%d forwarded, want %d", len(got), logBacklog+1)
	}
	if !strings.Contains(got[1].data, `"i":5}`) || !strings.Contains(got[logBacklog].data, fmt.Sprintf(`"i":%d}`, logBacklog+4)) {
		t.Fatalf("kept the wrong records: first %s last %s", got[1].data, got[logBacklog].data)
	}
}

func TestPipelineForwardingPathDoesNotLoop(t *testing.T) {
	var local syncBuffer
	p := newLogPipeline(newLogHandler(&local, logOptions{JSON: true}))
	var calls int
	var mu sync.Mutex
	sinkLog := p.Local().With(componentKey, "forwarder")
	// A sink that logs on every call, at a level the client asked for, as
	// a session that failed to send would: through Local, as required.
	p.SetSink(func(level, logger string, data any) {
		mu.Lock()
		calls++
		mu.Unlock()
		sinkLog.Error("could not forward", "level", level)
	})
	mustSetLevel(t, p, "debug")
	p.Logger().Warn("one")
	p.Stdout([]byte("two"), false)
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Fatalf("sink called %d times for 2 records", calls)
	}
	n := 0
	for _, r := range localRecords(t, local.String()) {
		if r[componentKey] == "forwarder" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("the forwarder's own records: %d in the local log, want 2", n)
	}
}

func TestPipelineConcurrentUse(t *testing.T) {
	var local syncBuffer
	p := newLogPipeline(newLogHandler(&local, logOptions{}))
	c := &collector{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			log := p.Logger().With(componentKey, fmt.Sprint("g", g))
			for i := range 500 {
				log.Info("m", "i", i)
				p.Stdout([]byte("out"), false)
			}
		})
	}
	wg.Go(func() {
		p.SetSink(c.sink)
		for i := range 200 {
			mustSetLevel(t, p, mcp.LogLevels[i%len(mcp.LogLevels)])
		}
		mustSetLevel(t, p, "info")
	})
	wg.Wait()
	// Once on, per-goroutine order holds across the replay and live records.
	last := map[string]int{}
	for _, f := range c.take() {
		if !strings.HasPrefix(f.logger, "g") {
			continue
		}
		var d struct{ I int }
		json.Unmarshal([]byte(f.data), &d)
		if prev, ok := last[f.logger]; ok && d.I <= prev {
			t.Fatalf("%s: record %d forwarded after %d", f.logger, d.I, prev)
		}
		last[f.logger] = d.I
	}
}

// TestCapturedStdoutThroughThePipeline wires stdio.CaptureStdout into a
// pipeline the way Serve is meant to, in a child copy of the test binary
// (it takes the real fd 1): stray prints end up in the local log and, once
// the client asked, with the client.
func TestCapturedStdoutThroughThePipeline(t *testing.T) {
	if os.Getenv("MCPRT_LOGGING_HELPER") == "1" {
		capturedStdoutHelper()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCapturedStdoutThroughThePipeline$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MCPRT_LOGGING_HELPER=1")
	if os.Getenv("GORACE") == "" {
		cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper: %v\n%s", err, stderr.String())
	}

	var stray []string
	for _, r := range localRecords(t, stderr.String()) {
		if r[componentKey] == stdoutComponent {
			stray = append(stray, r["msg"].(string))
		}
	}
	if want := "early,from Go,from a child"; strings.Join(stray, ",") != want {
		t.Errorf("local log has stdout lines %q, want %s\n%s", stray, want, stderr.String())
	}
	var sent []struct{ Level, Logger, Data string }
	if err := json.Unmarshal(stdout.Bytes(), &sent); err != nil {
		t.Fatalf("helper stdout %q: %v", stdout.String(), err)
	}
	var got []string
	for _, s := range sent {
		var d map[string]any
		json.Unmarshal([]byte(s.Data), &d)
		got = append(got, fmt.Sprintf("%s %s %v", s.Level, s.Logger, d["message"]))
	}
	want := []string{"info stdout early", "info stdout from Go", "info stdout from a child"}
	if !slices.Equal(got, want) {
		t.Errorf("forwarded %q, want %q", got, want)
	}
}

func capturedStdoutHelper() {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p := newLogPipeline(newLogHandler(os.Stderr, logOptions{JSON: true}))
	claimed, err := stdio.Claim()
	if err != nil {
		fail(err)
	}
	capture, err := stdio.CaptureStdout(p.Stdout, stdio.CaptureOptions{Dropped: p.StdoutDropped})
	if err != nil {
		fail(err)
	}
	fmt.Println("early") // before the client asked: kept and replayed

	type sent struct{ Level, Logger, Data string }
	var mu sync.Mutex
	var out []sent
	p.SetSink(func(level, logger string, data any) {
		mu.Lock()
		out = append(out, sent{level, logger, string(data.(json.RawMessage))})
		mu.Unlock()
	})
	if err := p.SetLevel("info"); err != nil {
		fail(err)
	}
	fmt.Println("from Go")
	child := exec.Command("sh", "-c", "echo 'from a child'")
	child.Stdout = os.Stdout
	if err := child.Run(); err != nil {
		fail(err)
	}
	if err := capture.Stop(); err != nil {
		fail(err)
	}
	claimed.Restore()
	mu.Lock()
	b, _ := json.Marshal(out)
	mu.Unlock()
	os.Stdout.Write(b)
	os.Exit(0)
}
