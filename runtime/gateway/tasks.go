package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/session/client"
)

// Tasks through the gateway are the gateway's own: its server serves them
// (handlers.Server.ServeTasks, with a manager the gateway's runner
// starts), and a task's Work is the tool's handler, which, seeing it runs
// in a task, asks the backend for a task of its own and awaits it
// (taskCall). The client only ever sees the gateway's task ids (bound to
// the client's session or caller, as every server's are), never a
// backend's: no id is mapped, so none can be guessed or shown to another
// client, and each side speaks its own revision, which bridges the eras
// (a 2026-07-28 client polling a task a 2025-11-25 backend runs, and the
// reverse).

// taskCall runs a tools/call the gateway's server made a task of: as a
// task at the backend when the backend's session lets the tool run as one
// (client.CallToolTask; else a plain call, which the gateway's task waits
// for without the backend's Timeout), awaited to its end. Cancelling
// the gateway's task cancels the backend's. The backend's progress goes on
// to the client where its revision allows (2025-11-25 tasks).
func (b *backend) taskCall(ctx context.Context, req *handlers.Request, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	w := &startWait{parent: ctx, d: b.cfg.Timeout}
	cl, err := b.acquire(w)
	w.stop()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return toolError(err)
	}
	c := &call{req: req, ctx: ctx, cancel: func() {}}
	defer b.track(c)()
	// The call itself is bounded by the task's life, not the backend's
	// Timeout: a backend that makes no task of it answers when done.
	// Each poll of a backend's task is bounded as any request.
	callOpts := []client.CallOption{noTimeout}
	pollOpts := []client.CallOption{client.WithTimeout(b.cfg.Timeout)}
	if fn := b.progress(req); fn != nil {
		callOpts = append(callOpts, client.WithProgress(fn))
	}
	var params any
	if len(args) > 0 {
		params = args
	}
	// The gateway's task may be cancelled while the backend makes its
	// own: the call is let finish (for up to the backend's Timeout) so
	// that the backend's task, once its id is known, is cancelled too,
	// rather than left running for no one.
	callCtx, stopCall := context.WithCancel(context.WithoutCancel(ctx))
	defer stopCall()
	var grace *time.Timer
	var graceMu sync.Mutex
	defer context.AfterFunc(ctx, func() {
		graceMu.Lock()
		grace = time.AfterFunc(b.cfg.Timeout, stopCall)
		graceMu.Unlock()
	})()
	defer func() {
		graceMu.Lock()
		if grace != nil {
			grace.Stop()
		}
		graceMu.Unlock()
	}()
	task, raw, err := cl.CallToolTask(&callContext{callCtx, c}, name, params, callOpts...)
	switch {
	case task != nil && ctx.Err() != nil:
		b.cancelTask(ctx, cl, task.ID)
		return nil, ctx.Err()
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err == nil && task == nil:
		return b.toolAnswer(raw) // the backend made no task: its answer
	case err != nil:
		return toolError(b.forwardError("tools/call", err, ctx, nil, cl, c))
	}
	raw, cl, err = b.awaitTask(ctx, c, cl, task, pollOpts)
	var re *client.RPCError
	var u *unavailable
	switch {
	case err == nil:
		return b.toolAnswer(raw)
	case ctx.Err() != nil:
		// The gateway's task was cancelled, or the gateway is stopping:
		// the backend's ends too, rather than run on for no one.
		b.cancelTask(ctx, cl, task.ID)
		return nil, ctx.Err()
	case errors.Is(err, client.ErrTaskCancelled):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("backend %q cancelled its task for the call", b.name)}
	case errors.As(err, &re):
		return nil, re.Err // the backend's task failed with this error
	case errors.As(err, &u):
		return toolError(u) // awaitTask's own
	}
	return toolError(b.forwardError("tools/call", err, ctx, nil, cl, c))
}

// awaitTask awaits the backend's task to its end (client.AwaitTask) and
// returns its outcome and the client it last polled with. A remote
// backend whose connection breaks meanwhile may still hold the task, and
// finish it for no one: a 2026-07-28 backend with a journal keeps it
// through its own restart, and its id binds it, not the connection. So
// the backend is reconnected (connectionLost) and the task polled again
// through the new client, until it ends, the backend's ttl for it runs
// out, or ctx ends (the gateway's task's own ttl, or its cancellation).
// A backend that no longer knows the task once reconnected says so.
func (b *backend) awaitTask(ctx context.Context, c *call, cl *client.Client, task *client.Task, opts []client.CallOption) (json.RawMessage, *client.Client, error) {
	var until time.Time // zero: no ttl known, ctx alone bounds the wait
	if task.TTL > 0 {
		until = time.Now().Add(task.TTL)
	}
	wait := max(b.cfg.Backoff, 50*time.Millisecond)
	for reconnected := false; ; {
		raw, err := cl.AwaitTask(&callContext{ctx, c}, task, nil, opts...)
		var re *client.RPCError
		switch {
		case err == nil || ctx.Err() != nil || errors.Is(err, client.ErrTaskCancelled):
			return raw, cl, err
		case errors.As(err, &re):
			if reconnected && re.Method == "tasks/get" && re.Err.Code == jsonrpc.CodeInvalidParams {
				return nil, cl, &unavailable{backend: b.name, why: fmt.Sprintf("lost its task for the call when the connection to it broke (it keeps no tasks across a reconnect): %s", re.Err.Message)}
			}
			return raw, cl, err
		case b.cfg.URL == "" || !(connectionGone(err) || errors.Is(err, client.ErrClosed) || errors.Is(err, client.ErrSessionEnded)):
			return raw, cl, err
		case !until.IsZero() && time.Now().After(until):
			return nil, cl, &unavailable{backend: b.name, why: fmt.Sprintf("could not be reached before its task for the call outlived its ttl: %v", err)}
		}
		b.connectionLost(cl, fmt.Errorf("awaiting a task: %w", err))
		b.g.log.Info("gateway: the connection to a remote backend broke while a task awaits it; polling the task again once reconnected",
			"backend", b.name, "task", task.ID, "err", err)
		for {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, cl, ctx.Err()
			case <-t.C:
			}
			wait = max(min(2*wait, b.cfg.MaxBackoff, 5*time.Second), 50*time.Millisecond)
			sw := &startWait{parent: ctx, d: b.cfg.Timeout}
			next, aerr := b.acquire(sw)
			sw.stop()
			if aerr == nil {
				cl, reconnected = next, true
				break
			}
			if ctx.Err() != nil {
				return nil, cl, ctx.Err()
			}
			var u *unavailable
			if errors.As(aerr, &u) && u.state == Stopped || !until.IsZero() && time.Now().After(until) {
				return nil, cl, aerr // gone for good (a reload removed it), or too late
			}
		}
	}
}

// cancelTask cancels the backend's task id, for the gateway's task whose
// context ctx has ended.
func (b *backend) cancelTask(ctx context.Context, cl *client.Client, id string) {
	cancelCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.Timeout)
	defer cancel()
	if _, err := cl.CancelTask(cancelCtx, id); err != nil {
		b.g.log.Debug("gateway: cancelling a backend's task", "backend", b.name, "task", id, "err", err)
	}
}

// inTask reports whether ctx is a task's Work (the gateway's server made
// a task of the call).
func inTask(ctx context.Context) bool { return tasks.IDFrom(ctx) != "" }

// anyTask is a tool's execution with taskSupport "optional" unless it is
// "required" already (Options.TaskAnyTool); the rest of it is kept.
func anyTask(execution json.RawMessage) json.RawMessage {
	e := map[string]json.RawMessage{}
	if len(execution) > 0 && json.Unmarshal(execution, &e) != nil {
		return execution // not an object: left as the backend gave it
	}
	if e == nil {
		e = map[string]json.RawMessage{}
	}
	switch string(e["taskSupport"]) {
	case `"optional"`, `"required"`:
		return execution
	}
	e["taskSupport"] = json.RawMessage(`"optional"`)
	out, err := json.Marshal(e)
	if err != nil {
		return execution
	}
	return out
}
