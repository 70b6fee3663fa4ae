package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// componentKey is the attribute naming the part of the process a record
// comes from. Loggers are made with logger.With(componentKey, "session");
// forwarded records carry it as the notification's logger.
const componentKey = "component"

// stdoutComponent is the component of captured stdout lines.
const stdoutComponent = "stdout"

// logBacklog is how many records a logPipeline keeps until the client first
// asks for log messages; it then gets them, so what a server logged (or
// printed) while starting up is not lost to it.
const logBacklog = 100

// logOptions configure newLogHandler. The zero value logs text at info.
type logOptions struct {
	// Level is the lowest level written (nil: info).
	Level slog.Leveler
	// JSON writes one JSON object per record instead of key=value text.
	JSON bool
}

// logOptionsFromEnv reads LOG_LEVEL and LOG_FORMAT. LOG_LEVEL takes slog's
// names (debug, info, warn, error, or offsets like info+2) and MCP's
// (notice, warning, critical, alert, emergency), in any case; LOG_FORMAT is
// text (the default) or json. A value it cannot use is named in the error,
// and the default is used in its place.
func logOptionsFromEnv() (logOptions, error) {
	var o logOptions
	var errs []error
	level, err := parseLevel(os.Getenv("LOG_LEVEL"))
	if err != nil {
		errs = append(errs, err)
	}
	o.Level = level
	switch f := strings.ToLower(strings.TrimSpace(os.Getenv("LOG_FORMAT"))); f {
	case "", "text":
	case "json":
		o.JSON = true
	default:
		errs = append(errs, fmt.Errorf("LOG_FORMAT=%q: want text or json", f))
	}
	return o, errors.Join(errs...)
}

func parseLevel(s string) (slog.Level, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return slog.LevelInfo, nil
	}
	if name := strings.ToLower(s); slices.Contains(mcp.LogLevels, name) {
		return handlers.SlogLevel(name), nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return slog.LevelInfo, fmt.Errorf("LOG_LEVEL=%q: want one of debug, info, notice, warn(ing), error, critical, alert, emergency", s)
	}
	return l, nil
}

// newLogHandler returns the handler for the process's own log, meant for
// os.Stderr (never fd 1: it may be captured, and would feed itself). Each
// record has a time, a level, a message and its attributes; the levels MCP
// names between slog's four are written by those names (NOTICE, CRITICAL,
// ALERT, EMERGENCY). In text, a goroutine stack (the stackKey attribute)
// is written below its record, one frame a line; JSON keeps it a string,
// a record being one line there.
func newLogHandler(w io.Writer, o logOptions) slog.Handler {
	ho := &slog.HandlerOptions{Level: o.Level, ReplaceAttr: mcpLevelNames}
	if o.JSON {
		return slog.NewJSONHandler(w, ho)
	}
	return newStackText(w, ho)
}

func mcpLevelNames(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 || a.Key != slog.LevelKey {
		return a
	}
	if l, ok := a.Value.Any().(slog.Level); ok {
		switch name := handlers.MCPLevel(l); name {
		case "notice", "critical", "alert", "emergency":
			if handlers.SlogLevel(name) == l {
				a.Value = slog.StringValue(strings.ToUpper(name))
			}
		}
	}
	return a
}

// logSink receives the records the client asked for. level is an MCP level
// name, logger the record's component ("" when it has none), and data a
// JSON object (a json.RawMessage): {"message": ..., attributes...}, groups
// as nested objects, plus "time" for records logged before the client
// asked. It is called from any goroutine that logs, concurrently, and must
// not block: hand the message to the session and return.
//
// Whatever the sink sets off must not log through the pipeline's Logger,
// or a forwarded record could produce another one, forever: the sink, the
// session's handling of what it sends, and the writer log through Local.
type logSink func(level, logger string, data any)

// logPipeline routes the process's logs: every record goes to the local
// handler (stderr), and the records at or above the level the client set
// also go to a logSink, which turns them into notifications/message.
// Forwarding is off until SetLevel turns it on. Captured stdout lines enter
// through Stdout.
type logPipeline struct {
	local  slog.Handler
	root   *fanout
	stdout *fanout

	min  atomic.Int64 // lowest forwarded level; levelOff when off
	sink atomic.Pointer[logSink]

	// Until forwarding is first on, records are kept for the client.
	// backlog, lost and replaying are guarded by mu.
	buffering atomic.Bool
	mu        sync.Mutex
	backlog   []kept
	lost      int
	replaying bool
}

const levelOff = math.MaxInt64

type kept struct {
	h   *fanout
	rec slog.Record
}

// newLogPipeline returns a pipeline writing to local (see newLogHandler),
// with forwarding off and no sink.
func newLogPipeline(local slog.Handler) *logPipeline {
	p := &logPipeline{local: local}
	p.min.Store(levelOff)
	p.buffering.Store(true)
	p.root = &fanout{p: p, local: local}
	p.stdout = p.root.WithAttrs([]slog.Attr{slog.String(componentKey, stdoutComponent)}).(*fanout)
	p.stdout.always = true
	return p
}

// Logger returns the process's logger: local and, by level, forwarded.
func (p *logPipeline) Logger() *slog.Logger { return slog.New(p.root) }

// Handler returns the handler behind Logger.
func (p *logPipeline) Handler() slog.Handler { return p.root }

// Local returns a logger that only writes locally, for the code that
// forwarding sets off.
func (p *logPipeline) Local() *slog.Logger { return slog.New(p.local) }

// SetSink connects the pipeline to a session (nil disconnects it).
func (p *logPipeline) SetSink(s logSink) {
	if s == nil {
		p.sink.Store(nil)
		return
	}
	p.sink.Store(&s)
	p.replay()
}

// SetLevel sets the lowest level forwarded: an MCP level name (as sent in
// logging/setLevel), or "off" (or "") to forward nothing. The first time
// it turns forwarding on, with a sink set, the kept backlog is forwarded
// (by the new level) before anything newer.
func (p *logPipeline) SetLevel(level string) error {
	switch level {
	case "", "off":
		p.min.Store(levelOff)
		return nil
	}
	if !slices.Contains(mcp.LogLevels, level) {
		return fmt.Errorf("runtime: unknown log level %q", level)
	}
	p.min.Store(int64(handlers.SlogLevel(level)))
	p.replay()
	return nil
}

// Level returns the lowest level forwarded, or "off".
func (p *logPipeline) Level() string {
	m := p.min.Load()
	if m == levelOff {
		return "off"
	}
	return handlers.MCPLevel(slog.Level(m))
}

// Stdout takes one captured stdout line (the stdio.CaptureStdout
// callback). It is always written locally, as an info record of component
// "stdout" whatever the local level, so nothing printed is lost, and is
// forwarded with logger "stdout" at info. partial marks a line cut before
// its newline. Empty lines are skipped.
func (p *logPipeline) Stdout(line []byte, partial bool) {
	if len(line) == 0 {
		return
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, string(line), 0)
	if partial {
		r.AddAttrs(slog.Bool("partial", true))
	}
	_ = p.stdout.Handle(context.Background(), r)
}

// StdoutDropped reports captured output that was dropped because the
// pipeline could not keep up (the stdio.CaptureOptions.Dropped callback).
func (p *logPipeline) StdoutDropped(lines, bytes int64) {
	r := slog.NewRecord(time.Now(), slog.LevelWarn, "stdout output dropped: the log could not keep up", 0)
	r.AddAttrs(slog.Int64("lines", lines), slog.Int64("bytes", bytes))
	_ = p.stdout.Handle(context.Background(), r)
}

// admits reports whether a record at l is to be forwarded now.
func (p *logPipeline) admits(l slog.Level) bool {
	return int64(l) >= p.min.Load() && p.sink.Load() != nil
}

func (p *logPipeline) forward(h *fanout, r slog.Record, replayed bool) {
	if int64(r.Level) < p.min.Load() {
		return
	}
	s := p.sink.Load()
	if s == nil {
		return
	}
	logger, data := h.encode(r, replayed)
	(*s)(handlers.MCPLevel(r.Level), logger, data)
}

// keep holds r for the client while forwarding has never been on, and
// reports whether it did (or would have, for a record not written locally).
func (p *logPipeline) keep(h *fanout, r slog.Record, local bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.buffering.Load() {
		return false
	}
	if !local && !p.replaying {
		// Not even written locally: not worth keeping. During the replay
		// it is one the client asked for, and waits its turn.
		return true
	}
	if len(p.backlog) == logBacklog {
		p.backlog = p.backlog[:copy(p.backlog, p.backlog[1:])]
		p.lost++
	}
	p.backlog = append(p.backlog, kept{h, r.Clone()})
	return true
}

// replay forwards the backlog once forwarding is first on. The sink is
// called without the lock held; records logged meanwhile join the backlog
// and go out after it, so the client sees them in order.
func (p *logPipeline) replay() {
	p.mu.Lock()
	if !p.buffering.Load() || p.replaying || p.min.Load() == levelOff || p.sink.Load() == nil {
		p.mu.Unlock()
		return
	}
	p.replaying = true
	for {
		batch, lost := p.backlog, p.lost
		p.backlog, p.lost = nil, 0
		if len(batch) == 0 && lost == 0 {
			p.buffering.Store(false)
			p.replaying = false
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		if lost > 0 {
			r := slog.NewRecord(time.Now(), slog.LevelWarn, "earlier log records were not kept", 0)
			r.AddAttrs(slog.Int("lost", lost))
			p.forward(p.root.WithAttrs([]slog.Attr{slog.String(componentKey, "mcprt")}).(*fanout), r, false)
		}
		for _, k := range batch {
			p.forward(k.h, k.rec, true)
		}
		p.mu.Lock()
	}
}

// fanout is the pipeline's slog.Handler.
type fanout struct {
	p      *logPipeline
	local  slog.Handler // with this handler's attributes and groups
	goas   []groupOrAttrs
	always bool // written locally whatever the local level (stdout lines)
}

// groupOrAttrs is one WithGroup (group set) or WithAttrs call, in order, so
// the forwarded copy can be built the way the local handler builds its own.
type groupOrAttrs struct {
	group string
	attrs []slog.Attr
}

func (h *fanout) Enabled(ctx context.Context, l slog.Level) bool {
	return h.local.Enabled(ctx, l) || h.p.admits(l)
}

func (h *fanout) Handle(ctx context.Context, r slog.Record) error {
	var err error
	local := h.always || h.local.Enabled(ctx, r.Level)
	if local {
		err = h.local.Handle(ctx, r)
	}
	if h.p.buffering.Load() && h.p.keep(h, r, local) {
		return err
	}
	h.p.forward(h, r, false)
	return err
}

func (h *fanout) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	return &fanout{
		p:      h.p,
		local:  h.local.WithAttrs(as),
		goas:   append(slices.Clip(h.goas), groupOrAttrs{attrs: as}),
		always: h.always,
	}
}

func (h *fanout) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &fanout{
		p:      h.p,
		local:  h.local.WithGroup(name),
		goas:   append(slices.Clip(h.goas), groupOrAttrs{group: name}),
		always: h.always,
	}
}

// encode builds the forwarded copy of r: its component as the logger, and
// the rest as a JSON object whose members keep their logged order.
func (h *fanout) encode(r slog.Record, replayed bool) (logger string, data json.RawMessage) {
	e := encoder{buf: make([]byte, 0, 256)}
	e.buf = append(e.buf, `{"message":`...)
	e.buf = appendJSON(e.buf, r.Message)
	if replayed {
		e.buf = append(e.buf, `,"time":`...)
		e.buf = appendJSON(e.buf, r.Time.Format(time.RFC3339Nano))
	}
	var open []int // per open group, the length of buf before it
	for _, goa := range h.goas {
		if goa.group != "" {
			open = append(open, e.openGroup(goa.group))
			continue
		}
		for _, a := range goa.attrs {
			e.attr(a, len(open) == 0)
		}
	}
	r.Attrs(func(a slog.Attr) bool {
		e.attr(a, len(open) == 0)
		return true
	})
	for i := len(open) - 1; i >= 0; i-- {
		e.closeGroup(open[i])
	}
	e.buf = append(e.buf, '}')
	return e.logger, e.buf
}

type encoder struct {
	buf    []byte
	logger string
}

func (e *encoder) key(k string) {
	if e.buf[len(e.buf)-1] != '{' {
		e.buf = append(e.buf, ',')
	}
	e.buf = appendJSON(e.buf, k)
	e.buf = append(e.buf, ':')
}

func (e *encoder) openGroup(name string) int {
	start := len(e.buf)
	e.key(name)
	e.buf = append(e.buf, '{')
	return start
}

// closeGroup ends the group opened at start, or removes it when it is
// empty, as slog's handlers do.
func (e *encoder) closeGroup(start int) {
	if e.buf[len(e.buf)-1] == '{' {
		e.buf = e.buf[:start]
		return
	}
	e.buf = append(e.buf, '}')
}

// attr writes a; top reports that it is outside any group, where the
// component attribute becomes the logger instead of data.
func (e *encoder) attr(a slog.Attr, top bool) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if top && a.Key == componentKey && a.Value.Kind() == slog.KindString {
		e.logger = a.Value.String()
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		as := a.Value.Group()
		if a.Key == "" {
			for _, ga := range as {
				e.attr(ga, top)
			}
			return
		}
		start := e.openGroup(a.Key)
		for _, ga := range as {
			e.attr(ga, false)
		}
		e.closeGroup(start)
		return
	}
	e.key(a.Key)
	e.buf = appendValue(e.buf, a.Value)
}

func appendValue(b []byte, v slog.Value) []byte {
	switch v.Kind() {
	case slog.KindString:
		return appendJSON(b, v.String())
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool())
	case slog.KindFloat64:
		f := v.Float64()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return appendJSON(b, strconv.FormatFloat(f, 'g', -1, 64))
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	case slog.KindDuration:
		return appendJSON(b, v.Duration().String())
	case slog.KindTime:
		return appendJSON(b, v.Time().Format(time.RFC3339Nano))
	}
	x := v.Any()
	if _, ok := x.(json.Marshaler); !ok {
		if err, ok := x.(error); ok {
			// Most errors marshal as {}: their text is what matters.
			return appendJSON(b, err.Error())
		}
	}
	raw, err := json.Marshal(x)
	if err != nil {
		return appendJSON(b, fmt.Sprintf("%+v", x))
	}
	return append(b, raw...)
}

func appendJSON(b []byte, s string) []byte {
	raw, _ := json.Marshal(s) // a string always marshals
	return append(b, raw...)
}
