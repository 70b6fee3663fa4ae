package runtime

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime/internal/sessionactor"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/stdio"
	"github.com/mcprt/mcprt/stdio/wire"
	"github.com/mcprt/mcprt/supervisor"
)

// Options configure a server. The zero value is ready to use.
type Options struct {
	// Logger receives the runtime's logs (nil: slog.Default()).
	Logger *slog.Logger
	// MaxLineBytes caps one input line (0: stdio.DefaultMaxLine, 64 MiB).
	MaxLineBytes int
	// Options are each session's bounds, deadlines, crash policy and
	// logging, the same struct streamhttp.Options embeds, so that stdio
	// and HTTP sessions are configured alike (see session.Options). On
	// stdio, MaxInFlight is also the reader's bound on the lines and
	// answers not yet dealt with: the reader never waits for a slot, so
	// the client's cancellations and answers always get through; it waits
	// only while the client does not read.
	session.Options
	// Intensity and Period bound the root supervisor's restarts
	// (0: supervisor defaults). Past them the server gives up and exits 1.
	Intensity int
	Period    time.Duration
	// EventHook observes every supervision event of the tree. It runs on a
	// supervisor's goroutine and must not block.
	EventHook func(supervisor.Event)
	// MemoryLimit is the soft limit on the Go runtime's memory, in bytes,
	// that Serve sets while it runs (debug.SetMemoryLimit); the process's
	// previous limit and GOGC are restored when Serve returns. 0:
	// DefaultMemoryLimit, unless the GOMEMLIMIT environment variable is
	// set, which then wins; > 0: this limit, over GOMEMLIMIT too;
	// math.MaxInt64: no limit, over GOMEMLIMIT too; < 0: Serve leaves the
	// limit and GOGC alone. Under a limit other than math.MaxInt64, the
	// collector is paced at GOGC=gcPercentUnderLimit unless GOGC is set.
	// Start ignores it: it changes no global state.
	MemoryLimit int64
	// Tasks, when set, turns tasks on for Serve (see TasksOptions);
	// Start ignores it (see StartTasks).
	Tasks *TasksOptions
	// HTTP, when set, is the address (host:port; port 0 picks one) that
	// Serve serves Streamable HTTP on, at /mcp, instead of stdin and
	// stdout: both protocol eras, the same options per session, and the
	// same graceful stop (SIGINT, SIGTERM or ctx: requests in flight are
	// answered, then every session ends). It logs the address it serves
	// at info level. For origins, authorization, health and metrics, give
	// a Transport, or put the server behind mcprt gateway -http.
	// Start ignores it.
	HTTP string
	// Transport, when set, serves the clients in place of stdin and
	// stdout: a *streamhttp.Server with options of the caller's, say. As
	// with HTTP, Serve then claims no standard stream, builds no log
	// pipeline and sets no memory limit, and a signal or ctx stops the
	// tree, the transport first. When Serve returns, a Transport that is
	// an io.Closer (a *streamhttp.Server) has been closed. Start ignores
	// it.
	Transport Part
	// Parts are more children of the process's one tree, such as a
	// gateway's backends (gateway.Gateway), started in this order before
	// the tasks and the transport, and stopped in reverse after them:
	// they are up before a client is served, and outlive every request
	// and task that uses them. If one ends, the process does. Serve's
	// tree is then: Parts..., tasks (with Tasks), then the transport
	// ("stdio", or "http"). Start ignores them.
	Parts []Part
}

// Instance is a running server tree.
type Instance struct {
	root    *supervisor.Root
	session *supervisor.Inbox

	stopRead   chan struct{}
	readerDone chan struct{}
	interrupt  func()

	done chan struct{}
	err  error
	once sync.Once
}

// Start runs srv's tree inside engine e over in and out. It touches no file
// descriptor and changes no global state, so one engine may hold several.
//
// The reader goroutine reading in is owned by the Instance: Done is closed
// only after it has returned. When the tree ends, the reader is interrupted
// with SetReadDeadline if in has it (os.File pipes, net.Conn) or else with
// Close if in is an io.Closer (io.PipeReader); an in with neither must reach
// EOF or fail on its own before Done is closed.
func Start(e *actor.Engine, srv *handlers.Server, in io.Reader, out io.Writer, opts Options) (*Instance, error) {
	return start(e, srv, in, out, opts, nil)
}

// start is Start with parts before the stdio tree: with none, the stdio
// tree is the root; with some, it is the last child of the process's
// root ("stdio"), after them.
func start(e *actor.Engine, srv *handlers.Server, in io.Reader, out io.Writer, opts Options, parts []Part) (*Instance, error) {
	if srv == nil {
		return nil, errors.New("runtime: nil server")
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	maxInFlight := opts.MaxInFlight
	if maxInFlight <= 0 {
		maxInFlight = session.DefaultMaxInFlight
	}
	name := processName()
	rootPID := supervisor.RootPID(e, name)
	stdioName, stdioPID := name, rootPID
	if len(parts) > 0 {
		stdioName, stdioPID = name+"/stdio", supervisor.ChildPID(rootPID, "stdio")
	}
	handlersPID := supervisor.ChildPID(stdioPID, "handlers")
	// The writer's and the session's inboxes outlive their restarts, and the
	// reader, the workers and the answering goroutines send to them
	// directly.
	writerInbox, sessionInbox := supervisor.NewInbox(), supervisor.NewInbox()
	backlog := wire.NewBacklog(maxInFlight)

	var handlersStarts atomic.Int64
	hook := func(ev supervisor.Event) {
		// Started, not Restarted: the restart event comes before the new
		// handler supervisor exists, and the session would find nothing
		// to start workers under.
		if r, ok := ev.(supervisor.EventChildStarted); ok && r.Supervisor == stdioName && r.Child == "handlers" && handlersStarts.Add(1) > 1 {
			sessionInbox.Send(sessionactor.WorkersLost{})
		}
		if opts.EventHook != nil {
			opts.EventHook(ev)
		}
	}
	sessionConfig := sessionactor.Config{Options: opts.Options}
	sessionConfig.Server, sessionConfig.Writer, sessionConfig.Inbox = srv, writerInbox, sessionInbox
	sessionConfig.Handlers, sessionConfig.Backlog, sessionConfig.Logger = handlersPID, backlog, log
	sessionConfig.MaxInFlight = maxInFlight
	sessionConfig.Runners = supervisor.NewRunners()
	spec := supervisor.Spec{
		Name:      stdioName,
		Strategy:  supervisor.OneForOne,
		Intensity: opts.Intensity,
		Period:    opts.Period,
		EventHook: hook,
		Logger:    log,
		Children: []supervisor.ChildSpec{
			{ID: "writer", Start: stdio.NewWriter(out, writerInbox), Restart: supervisor.Transient, Significant: true, Shutdown: 2 * time.Second},
			// The goroutines the handler actors' calls run on: stopped
			// after them.
			{ID: "runners", Start: sessionConfig.Runners.Actor(), Restart: supervisor.Permanent, Shutdown: 2 * time.Second},
			{ID: "handlers", Start: supervisor.New(supervisor.Spec{
				Name:      stdioName + "/handlers",
				Strategy:  supervisor.OneForOne,
				EventHook: opts.EventHook,
				Logger:    log,
			}), Restart: supervisor.Permanent, Shutdown: 2 * time.Second},
			{ID: "session", Start: sessionactor.New(sessionConfig), Restart: supervisor.Transient, Significant: true, Shutdown: 2 * time.Second},
		},
	}
	if len(parts) > 0 {
		stdio := func(*actor.PID) supervisor.ChildSpec {
			// The sum of its children's shutdowns, and a little.
			return supervisor.ChildSpec{ID: "stdio", Start: supervisor.New(spec), Shutdown: 7 * time.Second}
		}
		spec = processSpec(e, name, parts, stdio, log, opts.EventHook)
	}
	root, err := supervisor.Start(e, name, spec)
	if err != nil {
		return nil, err
	}
	inst := &Instance{
		root:       root,
		session:    sessionInbox,
		stopRead:   make(chan struct{}),
		readerDone: make(chan struct{}),
		interrupt:  interrupter(in),
		done:       make(chan struct{}),
	}
	go inst.read(in, opts.MaxLineBytes, backlog)
	go inst.wait()
	return inst, nil
}

// read is the reader goroutine: the only reader of in. It waits only on
// the backlog, that is, only while the client is not reading. It hands the
// session what it reads in the session's own terms (sessionactor.Raw,
// Oversized, Closed): stdio knows lines, the session no transport.
func (i *Instance) read(in io.Reader, maxLine int, backlog *wire.Backlog) {
	defer close(i.readerDone)
	stopped := false
	hand := func(msg any) bool {
		if !backlog.Wait(i.stopRead) {
			stopped = true
			return false
		}
		backlog.Add(1)
		select {
		case <-i.stopRead:
			stopped = true
			return false
		default:
		}
		i.session.Send(msg)
		return true
	}
	err := stdio.ScanLines(in, maxLine, func(line []byte) bool {
		return hand(&sessionactor.Raw{Data: line})
	}, func(t stdio.LineTooLong) bool {
		return hand(&sessionactor.Oversized{Size: t.Size, Max: t.Max, Head: t.Head})
	})
	if stopped {
		return
	}
	select {
	case <-i.stopRead:
	default:
		i.session.Send(sessionactor.Closed{Err: err})
	}
}

func (i *Instance) wait() {
	<-i.root.Done()
	close(i.stopRead)
	i.interrupt()
	<-i.readerDone
	i.err = i.root.Err()
	close(i.done)
}

// interrupter returns how to make a blocked Read on in return.
func interrupter(in io.Reader) func() {
	if d, ok := in.(interface{ SetReadDeadline(time.Time) error }); ok {
		return func() {
			if d.SetReadDeadline(time.Now()) != nil {
				if c, ok := in.(io.Closer); ok {
					c.Close()
				}
			}
		}
	}
	if c, ok := in.(io.Closer); ok {
		return func() { c.Close() }
	}
	return func() {}
}

// Done is closed when the tree has stopped and the reader has returned.
func (i *Instance) Done() <-chan struct{} { return i.done }

// Err is why the tree stopped, valid after Done: nil after stdin EOF or a
// drain, a reason that errors.Is supervisor.ErrShutdown when the client went
// away or Stop was called, and a *supervisor.GaveUpError when a restart
// intensity was exceeded.
func (i *Instance) Err() error {
	<-i.done
	return i.err
}

// Log sends a log record to the client as notifications/message, where the
// protocol lets a server send one unasked (see sessionactor.Log). Safe from any
// goroutine; level is one of mcp.LogLevels (handlers/mcp), data any JSON value.
func (i *Instance) Log(level, logger string, data any) {
	i.session.Send(sessionactor.Log{Level: level, Logger: logger, Data: data})
}

// Notify sends a custom notification to the client under the same rules
// as Log. Safe from any goroutine. Progress belongs to a request: use
// handlers.Request.Progress, which is also safe from any goroutine.
func (i *Instance) Notify(method string, params any) {
	i.session.Send(sessionactor.Notify{Method: method, Params: params})
}

// Drain asks the session to stop taking requests, answer those in flight
// (bounded by DrainTimeout) and end the tree normally: what SIGTERM does.
func (i *Instance) Drain() { i.session.Send(sessionactor.Drain{}) }

// Stop drains the server and waits for it to end, or for ctx. When ctx ends
// first, the tree is shut down without waiting for in-flight requests.
func (i *Instance) Stop(ctx context.Context) error {
	i.Drain()
	select {
	case <-i.done:
		return nil
	case <-ctx.Done():
	}
	_ = i.root.Stop(context.Background())
	<-i.done
	return ctx.Err()
}
