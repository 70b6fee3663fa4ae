// Package audit writes the audit log: one JSON line per request that
// reached a handler or a backend, made from the request's mcp.server span
// (Log.Record is a trace.Tracer's OnEnd). Who called (the access token's
// subject and client id, never the token), what (method, tool, prompt or
// resource, backend, and for the gateway's remote backends the credential
// mode the call used), how it ended and how long it took. Lines are queued
// and written by one goroutine, so that a slow disk never holds a call:
// past the queue's bound, lines are dropped and counted. Reopen (on
// SIGHUP) lets the operator's log rotation move the file.
package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/trace"
)

// DefaultQueue is the lines that may wait for the writer.
const DefaultQueue = 16384

// Options shape a Log.
type Options struct {
	// Endpoint names where requests arrive: "stdio", or the HTTP path.
	Endpoint string
	// Backend, when set, names the backend a tool, prompt or resource
	// belongs to (the gateway's naming), "" for none.
	Backend func(method, name string) string
	// Credential, when set, names whom a backend's requests are made as
	// (the gateway's "auth": "service", "exchange" or "user"; "" for a
	// local backend): with the line's principal, which caller used which
	// credential. The credential itself is never in a line.
	Credential func(backend string) string
	// Args keeps a request's arguments and its result in its line
	// (mcprt's -audit-args): off by default, as they may hold anything.
	Args bool
	// Queue bounds the lines waiting (0: DefaultQueue).
	Queue int
}

// Log is an audit log. Open one, Start it, and Close it.
type Log struct {
	opts    Options
	path    string   // "": w is a stream of the process's (stdout), never reopened
	f       *os.File // the file at path
	w       *bufio.Writer
	queue   chan []byte
	reopen  chan chan error
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	dropped atomic.Uint64
	written atomic.Uint64
}

// Open opens (appending, creating) the file at path, or when path is
// "-", writes to out (the process's stdout, when it is not the protocol).
func Open(path string, out io.Writer, opts Options) (*Log, error) {
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	l := &Log{opts: opts, queue: make(chan []byte, opts.Queue), reopen: make(chan chan error),
		stop: make(chan struct{}), done: make(chan struct{})}
	if path == "-" {
		if out == nil {
			return nil, errors.New("audit: no stream to write to")
		}
		l.w = bufio.NewWriterSize(out, 64<<10)
	} else {
		f, err := openFile(path)
		if err != nil {
			return nil, err
		}
		l.path, l.f = path, f
		l.w = bufio.NewWriterSize(f, 64<<10)
	}
	return l, nil
}

func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, errors.New("audit: " + err.Error())
	}
	return f, nil
}

// Start starts the writing goroutine.
func (l *Log) Start() { go l.run() }

// Close writes what is queued, closes the file and stops the goroutine.
func (l *Log) Close() error {
	l.once.Do(func() { close(l.stop) })
	<-l.done
	if l.path != "" {
		return l.f.Close()
	}
	return nil
}

// Reopen closes and reopens the file (after rotation moved it); it is
// a no-op for a stream.
func (l *Log) Reopen() error {
	if l.path == "" {
		return nil
	}
	ch := make(chan error, 1)
	select {
	case l.reopen <- ch:
		return <-ch
	case <-l.done:
		return errors.New("audit: closed")
	}
}

// Dropped is how many lines were lost to a full queue (or a failed write).
func (l *Log) Dropped() uint64 { return l.dropped.Load() }

// Written is how many lines were written.
func (l *Log) Written() uint64 { return l.written.Load() }

func (l *Log) run() {
	defer close(l.done)
	flush := time.NewTicker(200 * time.Millisecond)
	defer flush.Stop()
	for {
		select {
		case line := <-l.queue:
			l.write(line)
		case <-flush.C:
			l.flush()
		case ch := <-l.reopen:
			// What was recorded before the reopen goes to the old file.
			l.drain()
			l.flush()
			f, err := openFile(l.path)
			if err == nil {
				l.f.Close()
				l.f = f
				l.w.Reset(f)
			}
			ch <- err
		case <-l.stop:
			l.drain()
			l.flush()
			return
		}
	}
}

// drain writes every line queued now.
func (l *Log) drain() {
	for {
		select {
		case line := <-l.queue:
			l.write(line)
		default:
			return
		}
	}
}

func (l *Log) write(line []byte) {
	if _, err := l.w.Write(line); err != nil {
		l.dropped.Add(1)
		return
	}
	l.written.Add(1)
}

func (l *Log) flush() { _ = l.w.Flush() }

// Record queues the audit line of a finished span: server spans only (a
// request that reached this process's handler); it never blocks.
func (l *Log) Record(s *trace.Span) {
	if s.Kind != trace.KindServer {
		return
	}
	line := l.encode(s)
	select {
	case l.queue <- line:
	default:
		l.dropped.Add(1)
	}
}

// Entry is one line of the audit log.
type Entry struct {
	Time     time.Time `json:"time"`
	Subject  string    `json:"principal,omitempty"`
	ClientID string    `json:"clientId,omitempty"`
	Endpoint string    `json:"endpoint"`
	Method   string    `json:"method"`
	Tool     string    `json:"tool,omitempty"`
	Prompt   string    `json:"prompt,omitempty"`
	Resource string    `json:"resource,omitempty"`
	Backend  string    `json:"backend,omitempty"`
	// Credential is the backend's credential mode (Options.Credential).
	Credential string `json:"credential,omitempty"`
	// Outcome is "result", "tool_error", "error" (Code says which),
	// "refused" (access: the caller's token lacks a scope) or "cancelled".
	Outcome    string          `json:"outcome"`
	Code       int             `json:"code,omitempty"`
	DurationMS float64         `json:"durationMs"`
	TaskID     string          `json:"taskId,omitempty"`
	TraceID    string          `json:"traceId"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
}

func (l *Log) encode(s *trace.Span) []byte {
	e := Entry{Time: s.Start.UTC(), Subject: s.Principal, ClientID: s.ClientID, Endpoint: l.opts.Endpoint,
		DurationMS: float64(s.End.Sub(s.Start).Microseconds()) / 1000, TraceID: s.Context.TraceID.String(),
		Outcome: "result"}
	for _, a := range s.Attrs {
		switch a.Key {
		case trace.AttrMethod:
			e.Method = a.Str
		case trace.AttrToolName:
			e.Tool = a.Str
		case trace.AttrPromptName:
			e.Prompt = a.Str
		case trace.AttrResourceURI:
			e.Resource = a.Str
		case trace.AttrErrorType:
			switch a.Str {
			case trace.ErrorTool:
				e.Outcome = "tool_error"
			case "cancelled":
				e.Outcome = "cancelled"
			default:
				e.Outcome = "error"
				e.Code, _ = strconv.Atoi(a.Str)
				if e.Code == jsonrpc.CodeInsufficientScope {
					e.Outcome = "refused"
				}
			}
		}
	}
	if e.Resource == "" && s.Params != nil && (e.Method == "resources/read") {
		if raw, ok := jsonrpc.Member(s.Params, "uri"); ok {
			e.Resource, _ = jsonrpc.Unquote(raw)
		}
	}
	if e.Method == "tools/call" && s.Response != nil {
		// A call made a task: its id, from the CreateTaskResult.
		if res, ok := jsonrpc.Member(s.Response, "result"); ok {
			if task, ok := jsonrpc.Member(res, "task"); ok {
				if id, ok := jsonrpc.Member(task, "taskId"); ok {
					e.TaskID, _ = jsonrpc.Unquote(id)
				}
			}
		}
	}
	if l.opts.Backend != nil {
		name := e.Tool
		if name == "" {
			name = e.Prompt
		}
		if name == "" {
			name = e.Resource
		}
		e.Backend = l.opts.Backend(e.Method, name)
	}
	if e.Backend != "" && l.opts.Credential != nil {
		e.Credential = l.opts.Credential(e.Backend)
	}
	if l.opts.Args {
		if s.Params != nil {
			if raw, ok := jsonrpc.Member(s.Params, "arguments"); ok {
				e.Arguments = json.RawMessage(raw)
			}
		}
		if raw, ok := jsonrpc.Member(s.Response, "result"); ok && json.Valid(raw) {
			e.Result = json.RawMessage(raw)
		}
	}
	b, err := json.Marshal(e)
	if err != nil {
		// Only a result that is not JSON can fail: without it, then.
		e.Arguments, e.Result = nil, nil
		b, _ = json.Marshal(e)
	}
	return append(b, '\n')
}

var _ io.Closer = (*Log)(nil)
